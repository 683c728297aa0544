import { afterAll, describe, expect, it } from 'vitest';
import { GetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { ConflictError } from '../../lib/errors.js';
import { readStateTableResource, TABLE_KEYS } from '../../lib/adapters/dynamodb/table-definition.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { instanceLookupContract } from '../support/instance-lookup-contract.js';
import { newNode, stateStoreContract } from '../support/state-store-contract.js';

stateStoreContract('DynamoDB (dynalite)', dynaliteHarness());
instanceLookupContract('DynamoDB (dynalite)', dynaliteHarness());

describe('state table definition', () => {
  const harness = dynaliteHarness();
  afterAll(() => harness.close());

  it('declares the keys, index and TTL attribute the adapter uses', () => {
    const table = readStateTableResource();
    expect(table.KeySchema).toEqual([
      { AttributeName: TABLE_KEYS.partition, KeyType: 'HASH' },
      { AttributeName: TABLE_KEYS.sort, KeyType: 'RANGE' },
    ]);
    expect(table.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: TABLE_KEYS.poolIndex,
        KeySchema: [
          { AttributeName: TABLE_KEYS.poolIndexPartition, KeyType: 'HASH' },
          { AttributeName: TABLE_KEYS.poolIndexSort, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
      {
        IndexName: TABLE_KEYS.instanceIndex,
        KeySchema: [{ AttributeName: TABLE_KEYS.instanceIndexPartition, KeyType: 'HASH' }],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ]);
    expect(table.AttributeDefinitions).toContainEqual({ AttributeName: TABLE_KEYS.instanceIndexPartition, AttributeType: 'S' });
    expect(table.TimeToLiveSpecification).toEqual({ AttributeName: TABLE_KEYS.ttl, Enabled: true });
    expect(table.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(table.BillingMode).toBe('PAY_PER_REQUEST');
  });

  it('stores a node under its key with the pool index attributes, and decision log entries with a TTL', async () => {
    const store = await harness.create();
    const tableName = (store as unknown as { tableName: string }).tableName;
    await store.createNode(newNode({ nodeId: 'keyed.example.com' }), new Date('2026-11-21T10:00:00Z'));
    const raw = await harness.local!.client.send(
      new GetItemCommand({ TableName: tableName, Key: { pk: { S: 'NODE#keyed.example.com' }, sk: { S: 'NODE' } } }),
    );
    expect(raw.Item?.gsi1pk).toEqual({ S: 'POOL#d1/small' });
    expect(raw.Item?.gsi1sk).toEqual({ S: 'NODE#keyed.example.com' });

    // A gear list is an item of its own, gzipped, written again only when it changes (a heartbeat's is not).
    const gears = [{ uuid: 'a'.repeat(32), app: 'shop', size: 'small' }];
    const listItem = async () =>
      (await harness.local!.client.send(new GetItemCommand({ TableName: tableName, Key: { pk: { S: 'GEARS#keyed.example.com' }, sk: { S: 'LIST' } } }))).Item;
    await store.putNodeStats('keyed.example.com', { activeGears: 1, maxActiveGears: 100, reportedAt: '2026-11-21T10:01:00.000Z', gears });
    expect((await listItem())?.reportedAt).toEqual({ S: '2026-11-21T10:01:00.000Z' });
    expect((await listItem())?.gz?.B).toBeInstanceOf(Uint8Array);
    await store.putNodeStats('keyed.example.com', { activeGears: 1, maxActiveGears: 100, reportedAt: '2026-11-21T10:05:00.000Z', gears });
    expect((await listItem())?.reportedAt).toEqual({ S: '2026-11-21T10:01:00.000Z' });
    const statsItem = await harness.local!.client.send(new GetItemCommand({ TableName: tableName, Key: { pk: { S: 'STATS#d1/small' }, sk: { S: 'NODE#keyed.example.com' } } }));
    expect(statsItem.Item?.stats?.M?.gears).toBeUndefined();
    expect(statsItem.Item?.stats?.M?.reportedAt).toEqual({ S: '2026-11-21T10:05:00.000Z' });
    expect((await store.getNode('keyed.example.com'))?.stats?.gears).toEqual(gears);

    await store.appendDecision({ pool: 'd1/small', at: '2026-11-21T10:00:00.000Z', kind: 'no-action', reason: 'idle' }, 3_600_000);
    const [entry] = await store.listDecisions('d1/small', 1);
    expect(entry).toEqual({ pool: 'd1/small', at: '2026-11-21T10:00:00.000Z', kind: 'no-action', reason: 'idle' });
  });
});

describe('ended drains expire', () => {
  const harness = dynaliteHarness();
  afterAll(() => harness.close());
  const NINETY_DAYS = 90 * 86_400_000;
  const ENDED = new Date('2026-11-21T12:00:00Z');
  const move = (uuid: string) => ({ gear: { uuid, app: 'shop', size: 'small' }, target: 'node-2.example.com', state: 'planned' as const, attempts: 0 });
  const newDrain = (drainId: string, uuids: string[]) => ({
    drainId,
    decisionId: `dec-${drainId}`,
    nodeId: `${drainId}.example.com`,
    pool: 'd1/small',
    startedAt: '2026-11-21T10:00:00.000Z',
    reason: 'pool under-used',
    moves: uuids.map(move),
  });
  /** Each item of the drain's partition: its sort key and its TTL attribute (undefined without one). */
  const expiries = async (tableName: string, drainId: string) => {
    const out = await harness.local!.client.send(
      new QueryCommand({ TableName: tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: `DRAIN#${drainId}` } }, ConsistentRead: true }),
    );
    return Object.fromEntries((out.Items ?? []).map((item) => [item.sk!.S!, item[TABLE_KEYS.ttl]?.N]));
  };

  it('stamps the header and every move to expire keepEndedFor after the end, and nothing before it ends', async () => {
    const store = await harness.create();
    const tableName = (store as unknown as { tableName: string }).tableName;
    const created = await store.createDrain(newDrain('dr-ttl', ['g1', 'g2', 'g3']), new Date('2026-11-21T10:00:00Z'));
    // A change that does not end it keeps every item, whatever keepEndedFor says.
    const running = await store.updateDrain('dr-ttl', created.version, { closedAt: '2026-11-21T10:01:00.000Z' }, new Date('2026-11-21T10:01:00Z'), NINETY_DAYS);
    expect(await expiries(tableName, 'dr-ttl')).toEqual({ DRAIN: undefined, 'MOVE#g1': undefined, 'MOVE#g2': undefined, 'MOVE#g3': undefined });

    await store.updateDrain('dr-ttl', running.version, { state: 'completed' }, ENDED, NINETY_DAYS);
    const due = String(Math.floor((ENDED.getTime() + NINETY_DAYS) / 1000));
    expect(await expiries(tableName, 'dr-ttl')).toEqual({ DRAIN: due, 'MOVE#g1': due, 'MOVE#g2': due, 'MOVE#g3': due });
    // Still read back until DynamoDB removes it.
    expect((await store.getDrain('dr-ttl'))?.moves).toHaveLength(3);
    expect((await store.listDrains('d1/small', 'completed')).map((d) => d.drainId)).toEqual(['dr-ttl']);
  });

  it('keeps an ended drain without keepEndedFor, and leaves a header it could not end without a TTL', async () => {
    const store = await harness.create();
    const tableName = (store as unknown as { tableName: string }).tableName;
    const kept = await store.createDrain(newDrain('dr-kept', ['g1']), new Date('2026-11-21T10:00:00Z'));
    await store.updateDrain('dr-kept', kept.version, { state: 'aborted', abortReason: 'operator' }, ENDED);
    expect(await expiries(tableName, 'dr-kept')).toEqual({ DRAIN: undefined, 'MOVE#g1': undefined });

    // A lost race on the header: the moves are stamped first (a crash there leaves the same), the header is not.
    const raced = await store.createDrain(newDrain('dr-raced', ['g1']), new Date('2026-11-21T10:00:00Z'));
    await store.updateDrain('dr-raced', raced.version, { abortRequestedAt: '2026-11-21T11:00:00.000Z' }, new Date('2026-11-21T11:00:00Z'));
    await expect(store.updateDrain('dr-raced', raced.version, { state: 'completed' }, ENDED, NINETY_DAYS)).rejects.toBeInstanceOf(ConflictError);
    const due = String(Math.floor((ENDED.getTime() + NINETY_DAYS) / 1000));
    expect(await expiries(tableName, 'dr-raced')).toEqual({ DRAIN: undefined, 'MOVE#g1': due });
  });
});
