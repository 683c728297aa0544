import { afterAll, describe, expect, it } from 'vitest';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
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
