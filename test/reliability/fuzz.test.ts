/**
 * Bad input through every handler and queue: generated malformed SQS bodies
 * and EventBridge events (broken JSON, wrong types, huge numbers, NaN, empty
 * and unicode strings, missing fields, bodies over 256 KiB, deep nesting),
 * in batches through the real handlers on dynalite. Every bad record must be
 * reported failed (the dead-letter path) with one error naming its field and
 * value, change nothing in the state table, send nothing, touch no host; the
 * good record of the same batch must still be processed.
 */
import { BatchWriteItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbStateStore } from '../../lib/adapters/dynamodb/state-store.js';
import { startLocalDynamo, type LocalDynamo } from '../../lib/adapters/local/dynalite.js';
import { LocalSqs } from '../../lib/adapters/local/local-sqs.js';
import { SimulatedCloud } from '../../lib/adapters/local/simulated-cloud.js';
import { SimulatedPlatform } from '../../lib/adapters/local/simulated-platform.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import type { ConfigInput } from '../../lib/config/index.js';
import { parseMessage } from '../../lib/messages/index.js';
import { LOCAL_SENDER } from '../../lib/domain/stats-sender.js';
import type { LogAttributes } from '../../lib/ports/log.js';
import type { OutgoingMessage, QueueName } from '../../lib/ports/queue.js';
import { LOCAL_QUEUES, LocalRuntime, type FunctionName } from '../../lib/sim/runtime.js';
import { reportTally, scaled, soakRuns } from './support/tally.js';

const NOW = '2026-03-01T12:00:00.000Z';
const DISTRICT = 'd1';
const PROFILE = 'small';
const POOL = `${DISTRICT}/${PROFILE}`;

const config = {
  handler: 'ec2',
  limits: { maxNodesTotal: 10_000 },
  naming: { base: 'node', domain: 'example.com' },
  pools: [
    {
      district: DISTRICT,
      profile: PROFILE,
      min: 0,
      max: 10_000,
      gearsPerNode: 100,
      template: { imageId: 'ami-0123456789abcdef0', instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }], subnets: ['subnet-0123456789abcdef0'] },
    },
  ],
} as ConfigInput;

/** What each queue's consumer is sent when all goes well: the valid messages malformed ones are made from. */
const VALID: Record<string, object> = {
  stats: {
    type: 'node-stats',
    v: 1,
    nodeId: 'node-3.example.com',
    district: DISTRICT,
    profile: PROFILE,
    activeGears: 3,
    maxActiveGears: 100,
    gears: [{ uuid: '5f3c9a1e2b7d4c0e8a6f1d2c3b4a5968', app: 'shop', size: 'small' }],
    cpu: 37.5,
    memory: 62.1,
    reportedAt: NOW,
  },
  scale: { type: 'scale-up', v: 1, decisionId: `up:d1_small:${NOW}`, pool: POOL, count: 2, reason: 'utilization 91%', decidedAt: NOW },
  drain: { type: 'scale-down', v: 1, decisionId: `down:d1_small:${NOW}`, pool: POOL, nodeId: 'node-3.example.com', reason: 'utilization 22%', decidedAt: NOW },
  events: {
    version: '0',
    id: '12345678-1234-1234-1234-123456789012',
    'detail-type': 'EC2 Spot Instance Interruption Warning',
    source: 'aws.ec2',
    account: '123456789012',
    time: '2026-03-01T11:59:05Z',
    region: 'us-east-1',
    resources: ['arn:aws:ec2:us-east-1a:instance/i-1234567890abcdef0'],
    detail: { 'instance-id': 'i-1234567890abcdef0', 'instance-action': 'terminate' },
  },
  decommission: { type: 'drain-complete', v: 1, drainId: `drain:node-3.example.com:${NOW}`, nodeId: 'node-3.example.com', pool: POOL, completedAt: NOW },
};

const CONSUMER: Record<string, FunctionName> = { stats: 'thresholdEvaluator', scale: 'nodeProvisioner', drain: 'gearMover', events: 'gearMover', decommission: 'decommissioner' };

// ---------------------------------------------------------------------------
// Malformed bodies.

const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom('', ' ', '\u0000', 'NaN', 'Infinity', '-1', '1e309', 'null', '🚀🚀🚀', '\u202Enode\u202C', 'ǹöđé', '../../etc/passwd', '<script>'),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(-1, 0, -0, 0.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 2 ** 31, 1e-320),
  fc.double(),
  fc.integer(),
  fc.constantFrom(null, true, false, [], {}, [[[]]], { nested: { deeper: {} } }),
  fc.array(fc.anything({ maxDepth: 2 }), { maxLength: 4 }),
);

/** A key path of a JSON value (objects and arrays), for mutations anywhere in the message. */
function paths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (value === null || typeof value !== 'object') return [];
  const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return entries.flatMap(([key, child]) => [[...prefix, key], ...paths(child, [...prefix, key])]);
}

function mutate(valid: object, path: Array<string | number>, change: { remove: true } | { value: unknown }): string {
  const copy = structuredClone(valid) as Record<string | number, unknown>;
  let at: Record<string | number, unknown> = copy;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  if ('remove' in change) {
    if (Array.isArray(at)) at.splice(last as number, 1);
    else delete at[last];
  } else {
    at[last] = change.value;
  }
  return JSON.stringify(copy);
}

/** Bodies no consumer may accept, whatever its message type. */
const garbage: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', 'null', 'true', '42', '"text"', '[]', '{', '{"type":', 'undefined', 'NaN', '\u0000', '\uFEFF{}'),
  fc.string({ unit: 'grapheme', maxLength: 200 }).map((text) => `<${text}`),
  fc.string({ unit: 'binary', maxLength: 200 }).map((text) => `\u0001${text}`),
  fc.integer({ min: 1_000, max: 200_000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
  fc.integer({ min: 1_000, max: 50_000 }).map((depth) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)),
  fc.json({ maxDepth: 3 }).filter((text) => !text.startsWith('{')),
);

type Malformed = { body: string; kind: string };

function malformedFor(queue: string): fc.Arbitrary<Malformed> {
  const valid = VALID[queue]!;
  const keyPaths = paths(valid);
  return fc.oneof(
    garbage.map((body) => ({ body, kind: 'garbage' })),
    fc.constantFrom(...keyPaths).map((path) => ({ body: mutate(valid, path, { remove: true }), kind: 'missing field' })),
    fc.tuple(fc.constantFrom(...keyPaths), oddValue).map(([path, value]) => ({ body: mutate(valid, path, { value }), kind: 'odd value' })),
    fc.constantFrom(...keyPaths.filter((path) => path.length === 1)).map((path) => ({
      body: mutate(valid, path, { value: 'x'.repeat(262_144) }),
      kind: 'over 256 KiB',
    })),
    fc.constantFrom(...keyPaths).map((path) => ({
      body: JSON.stringify(valid).replace(new RegExp(`"${String(path.at(-1))}":("[^"]*"|-?\\d[^,}]*)`), `"${String(path.at(-1))}":NaN`),
      kind: 'NaN literal',
    })),
    fc.json({ maxDepth: 4 }).map((body) => ({ body, kind: 'random JSON' })),
  );
}

// ---------------------------------------------------------------------------
// The world the handlers run in.

let dynamo: LocalDynamo;
let store: DynamoDbStateStore;
let runtime: LocalRuntime;
let clock: VirtualClock;
let platform: SimulatedPlatform;
let cloud: SimulatedCloud;
const sent: Array<{ queue: QueueName; body: Record<string, unknown> }> = [];
const errors: LogAttributes[] = [];
let platformCalls = 0;
let goodCounter = 0;

beforeAll(async () => {
  dynamo = await startLocalDynamo({ tableName: 'nodescaler-fuzz' });
  store = new DynamoDbStateStore(DynamoDbStateStore.documentClient(dynamo.client), dynamo.tableName);
  clock = new VirtualClock(NOW);
  const sqs = new LocalSqs(clock, LOCAL_QUEUES);
  platform = new SimulatedPlatform(clock, { moveDurationMs: 0, moveFailureRate: 0 });
  cloud = new SimulatedCloud(clock, { bootDelayMs: 60_000 });
  runtime = new LocalRuntime(clock, sqs);
  const countingPlatform = new Proxy(platform, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        platformCalls += 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  await runtime.load(config, {
    store,
    clock,
    cloud,
    platform: countingPlatform,
    queue: {
      async send(queue, messages: readonly OutgoingMessage[]) {
        for (const message of messages) sent.push({ queue, body: message.body as unknown as Record<string, unknown> });
        return { failed: [] };
      },
    },
    log: {
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: (message, attributes) => errors.push({ message, ...attributes }),
    },
    metrics: { record: () => undefined },
    sleep: async () => undefined,
  });
});

afterAll(async () => {
  await dynamo?.close();
});

/** The table's items, a page at a time (`projection`: only those attributes). */
async function* scanPages(projection?: string): AsyncGenerator<Array<Record<string, unknown>>> {
  let start: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.client.send(
      new ScanCommand({ TableName: dynamo.tableName, ...(projection ? { ProjectionExpression: projection } : {}), ...(start ? { ExclusiveStartKey: start as never } : {}) }),
    );
    yield page.Items ?? [];
    start = page.LastEvaluatedKey as Record<string, unknown> | undefined;
  } while (start);
}

async function tableItems(): Promise<string[]> {
  const items: string[] = [];
  for await (const page of scanPages()) for (const item of page) items.push(JSON.stringify(item, Object.keys(item).sort()));
  return items.sort();
}

/**
 * Deletes every item. A run with a good record leaves that record's node,
 * drain or decision behind, and each "changed nothing" check scans the whole
 * table: a table that only grew made every later scan slower (half the file's
 * time by default, and the soak's ten-fold runs quadratic). Bad records are
 * refused before any state is read, so an empty table tests them as well.
 */
async function emptyTable(): Promise<void> {
  for await (const keys of scanPages('pk, sk')) {
    for (let i = 0; i < keys.length; i += 25) {
      const deletes = keys.slice(i, i + 25).map((Key) => ({ DeleteRequest: { Key: Key as never } }));
      const written = await dynamo.client.send(new BatchWriteItemCommand({ RequestItems: { [dynamo.tableName]: deletes } }));
      expect(written.UnprocessedItems?.[dynamo.tableName] ?? []).toEqual([]);
    }
  }
  expect(await tableItems()).toEqual([]);
}

let recordCounter = 0;
function record(queue: string, body: string, groupId?: string, senderId = LOCAL_SENDER): SQSRecord {
  recordCounter += 1;
  const fifo = LOCAL_QUEUES[queue as keyof typeof LOCAL_QUEUES].fifo;
  return {
    messageId: `fuzz-${recordCounter}`,
    receiptHandle: `fuzz-${recordCounter}#1`,
    body,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(clock.nowMs()),
      SenderId: senderId,
      ApproximateFirstReceiveTimestamp: String(clock.nowMs()),
      ...(fifo ? { MessageGroupId: groupId ?? `bad-${recordCounter}`, SequenceNumber: String(recordCounter) } : {}),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:local:000000000000:nodescaler-fuzz-${queue}${fifo ? '.fifo' : ''}`,
    awsRegion: 'local',
  };
}

/** A valid message for `queue` with a visible effect once processed, and the check of that effect. */
async function goodMessage(queue: string): Promise<{ body: string; groupId?: string; processed: () => Promise<boolean> }> {
  goodCounter += 1;
  const at = new Date(clock.nowMs() - 1000 + goodCounter).toISOString();
  const nodeId = `good-${goodCounter}.example.com`;
  switch (queue) {
    case 'stats':
      return {
        body: JSON.stringify({ type: 'node-stats', v: 1, nodeId, district: DISTRICT, profile: PROFILE, activeGears: 0, maxActiveGears: 100, reportedAt: at }),
        processed: async () => (await store.getNode(nodeId))?.stats?.reportedAt === at,
      };
    case 'scale': {
      const decisionId = `up:d1_small:${at}`;
      return {
        body: JSON.stringify({ type: 'scale-up', v: 1, decisionId, pool: POOL, count: 1, reason: 'fuzz', decidedAt: at }),
        groupId: POOL,
        processed: async () => (await store.getScaleUp(decisionId)) !== undefined,
      };
    }
    case 'drain':
    case 'events':
    case 'decommission': {
      // An empty active node: a scale-down drains it at once, and its drain-complete releases it.
      platform.registerNode(DISTRICT, PROFILE, nodeId, 100);
      const host = await cloud.createHost({ pool: POOL, district: DISTRICT, profile: PROFILE, cloudName: `good_${goodCounter}`, hostName: nodeId, decisionId: 'fuzz', idempotencyToken: `fuzz-${goodCounter}` });
      await store.createNode({ nodeId, pool: POOL, district: DISTRICT, profile: PROFILE, state: 'active', createdAt: at, origin: 'provisioned', protected: false, instanceId: host.instanceId! }, clock.now());
      if (queue === 'events') {
        const event = { ...VALID.events, id: `fuzz-${goodCounter}`, time: at.replace(/\.\d{3}Z$/, 'Z'), detail: { 'instance-id': host.instanceId, 'instance-action': 'terminate' } };
        return { body: JSON.stringify(event), processed: async () => (await store.getNode(nodeId))?.state !== 'active' };
      }
      const decisionId = `down:d1_small:${at}`;
      const scaleDownMessage = { type: 'scale-down', v: 1, decisionId, pool: POOL, nodeId, reason: 'fuzz', decidedAt: at };
      const scaleDown = JSON.stringify(scaleDownMessage);
      // As the evaluator does: a scale-down acts under the pool lease its decision holds.
      await store.acquireLease(POOL, { holder: decisionId, kind: 'scale-down', ttlMs: 15 * 60_000, message: scaleDownMessage }, clock.now());
      if (queue === 'drain') return { body: scaleDown, groupId: POOL, processed: async () => (await store.getNode(nodeId))?.state !== 'active' };
      // The gear mover drains the empty node and announces it; that announcement is the decommissioner's good message.
      const response = (await runtime.invoke('gearMover', { Records: [record('drain', scaleDown, POOL)] })) as SQSBatchResponse;
      expect(response.batchItemFailures).toEqual([]);
      const complete = sent.find((m) => m.queue === 'decommission' && m.body.nodeId === nodeId);
      expect(complete, `drain-complete for ${nodeId}`).toBeDefined();
      return { body: JSON.stringify(complete!.body), processed: async () => ['terminating', 'terminated'].includes((await store.getNode(nodeId))?.state ?? '') };
    }
    default:
      throw new Error(`no good message for ${queue}`);
  }
}

const tally = { inputs: 0, rejected: 0, acceptedOddities: 0, batches: 0, byKind: {} as Record<string, number> };

describe.each(Object.keys(CONSUMER))('malformed bodies on the %s queue', (queue) => {
  const name = CONSUMER[queue]!;

  it(`are rejected one by one by ${name}, change nothing, and leave the good record of the batch processed`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(malformedFor(queue), { minLength: 1, maxLength: 9 }), fc.boolean(), async (candidates, withGood) => {
        // Only what the message parser rejects counts as malformed; a mutation that happens to be valid is left out.
        const bad = candidates.filter((candidate) => !parseMessage(candidate.body, { now: clock.now() }).ok);
        for (const candidate of candidates) if (candidate.kind === 'garbage') expect(bad).toContain(candidate);
        tally.acceptedOddities += candidates.length - bad.length;
        if (bad.length === 0) return;
        tally.batches += 1;
        const badRecords = bad.map((candidate) => record(queue, candidate.body));
        const good = withGood ? await goodMessage(queue) : undefined;
        const goodRecord = good ? record(queue, good.body, good.groupId) : undefined;
        const records = goodRecord ? [...badRecords.slice(0, 4), goodRecord, ...badRecords.slice(4)] : badRecords;

        // With a good record the table changes: the check below is for batches of bad records only.
        const tableBefore = good ? undefined : await tableItems();
        const sentBefore = sent.length;
        const hostsBefore = cloud.calls.length;
        const platformBefore = platformCalls;
        const errorsBefore = errors.length;

        const response = (await runtime.invoke(name, { Records: records })) as SQSBatchResponse;

        const failed = response.batchItemFailures.map((failure) => failure.itemIdentifier);
        expect(failed.sort()).toEqual(badRecords.map((r) => r.messageId).sort());
        const lines = errors.slice(errorsBefore);
        for (const badRecord of badRecords) {
          const line = lines.filter((l) => l.messageId === badRecord.messageId);
          expect(line, `one error line for ${badRecord.messageId}`).toHaveLength(1);
          expect(line[0]!.message).toBe('message rejected: invalid body');
          expect(typeof line[0]!.field).toBe('string');
          const field = String(line[0]!.field);
          expect(String(line[0]!.error)).toContain(field === '' ? '(root)' : field);
        }
        if (good) {
          expect(await good.processed()).toBe(true);
          await emptyTable();
        } else {
          expect(await tableItems()).toEqual(tableBefore);
          expect(sent.length).toBe(sentBefore);
          expect(cloud.calls.length).toBe(hostsBefore);
          expect(platformCalls).toBe(platformBefore);
        }
        tally.inputs += bad.length;
        tally.rejected += bad.length;
        for (const candidate of bad) tally.byKind[candidate.kind] = (tally.byKind[candidate.kind] ?? 0) + 1;
        clock.advance(1000);
      }),
      // The default suite tries the same inputs every run (reproducible CI); the soak mode draws new ones.
      { numRuns: scaled(queue === 'events' || queue === 'decommission' ? 90 : 120), ...(soakRuns() === undefined ? { seed: 20_261_121 } : {}) },
    );
  }, soakRuns() === undefined ? 300_000 : 24 * 3_600_000);
});

const HOSTILE_ROLE = 'AROAFUZZNODEROLE0001';
const hostileTally: Record<string, number> = {};

/**
 * Valid-but-hostile node-stats (issue 18, item 6): well-formed, from a real
 * node host of the pool (its own SenderId: it cannot choose another), about a
 * node that is not its own, or dated to mislead. Each is refused (SenderId,
 * reportedAt) or dropped as stale, and changes nothing.
 */
describe('valid-but-hostile node-stats on the stats queue', () => {
  const hostileKind = fc.constantFrom('spoofed-node', 'ghost-node', 'untagged-host', 'past-date', 'future-date', 'unconfigured-pool', 'huge-gear-list', 'refused-flood');
  let hosts = 0;
  const launch = async (pool: string) => {
    hosts += 1;
    const hostName = `hostile-${hosts}.example.com`;
    const [district, profile] = pool.split('/') as [string, string];
    return cloud.createHost({ pool, district, profile, cloudName: `hostile_${hosts}`, hostName, decisionId: 'fuzz', idempotencyToken: `hostile-${hosts}` });
  };

  it('are refused by the threshold evaluator (a security line naming SenderId, or reportedAt), or dropped when stale, and change nothing', async () => {
    // The victim: a node of the pool, recorded on its instance. The attacker: another host of the pool.
    const victim = await launch(POOL);
    await store.createNode({ nodeId: victim.tags!['nodescaler:node']!, pool: POOL, district: DISTRICT, profile: PROFILE, state: 'active', createdAt: NOW, origin: 'provisioned', protected: false, instanceId: victim.instanceId! }, clock.now());
    const attacker = await launch(POOL);
    const stranger = await launch('d9/large');
    await fc.assert(
      fc.asyncProperty(fc.array(hostileKind, { minLength: 1, maxLength: 6 }), async (kinds) => {
        const now = clock.now();
        const at = (minutes: number) => new Date(now.getTime() + minutes * 60_000).toISOString();
        const base = { type: 'node-stats', v: 1, district: DISTRICT, profile: PROFILE, activeGears: 0, maxActiveGears: 6_000, reportedAt: at(0) };
        const from = (host: { instanceId?: string }) => `${HOSTILE_ROLE}:${host.instanceId}`;
        const cases = kinds.map((kind, i) => {
          const ghost = `ghost-${recordCounter + i}.example.com`;
          switch (kind) {
            case 'spoofed-node':
              return { kind, body: { ...base, nodeId: victim.tags!['nodescaler:node'] }, sender: from(attacker), refused: 'SenderId' };
            case 'ghost-node':
              return { kind, body: { ...base, nodeId: ghost }, sender: from(attacker), refused: 'SenderId' };
            case 'untagged-host':
              return { kind, body: { ...base, nodeId: ghost }, sender: from(stranger), refused: 'SenderId' };
            case 'past-date':
              return { kind, body: { ...base, nodeId: ghost, activeGears: 12_000, reportedAt: at(-55) }, sender: from(attacker), refused: undefined };
            case 'future-date':
              return { kind, body: { ...base, nodeId: victim.tags!['nodescaler:node'], reportedAt: at(30) }, sender: from(victim), refused: 'reportedAt' };
            case 'unconfigured-pool':
              return { kind, body: { ...base, nodeId: ghost, district: 'd9', profile: 'large' }, sender: from(attacker), refused: 'SenderId' };
            case 'refused-flood': // a node host posing as the broker's reporter: every pool of the profile would buy nodes
              return {
                kind,
                body: { type: 'gears-refused', v: 1, district: DISTRICT, profile: PROFILE, refused: 6_000, windowStart: at(-1), windowEnd: at(0) },
                sender: from(attacker),
                refused: 'SenderId',
              };
            default:
              return {
                kind,
                body: { ...base, nodeId: ghost, activeGears: 1_500, gears: Array.from({ length: 1_500 }, (_, g) => ({ uuid: g.toString(16).padStart(32, '0'), app: `app-${g}`, size: PROFILE })) },
                sender: from(attacker),
                refused: 'SenderId',
              };
          }
        });
        const records = cases.map((c) => record('stats', JSON.stringify(c.body), undefined, c.sender));
        const tableBefore = await tableItems();
        const sentBefore = sent.length;
        const launchesBefore = cloud.calls.filter((c) => c.op !== 'describeHosts').length;
        const platformBefore = platformCalls;
        const errorsBefore = errors.length;

        const response = (await runtime.invoke('thresholdEvaluator', { Records: records })) as SQSBatchResponse;

        const refused = records.filter((_, i) => cases[i]!.refused !== undefined).map((r) => r.messageId);
        expect(response.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(refused.sort());
        const lines = errors.slice(errorsBefore);
        cases.forEach((c, i) => {
          if (c.refused === undefined) return;
          const line = lines.filter((l) => l.messageId === records[i]!.messageId);
          expect(line, `${c.kind}: one error line`).toHaveLength(1);
          expect(String(line[0]!.error), c.kind).toContain(c.refused);
        });
        const security = lines.filter((l) => /^security: (node-stats|gears-refused) rejected/.test(String(l.message)));
        expect(security).toHaveLength(cases.filter((c) => c.refused === 'SenderId').length);
        expect(await tableItems()).toEqual(tableBefore);
        expect(sent.length).toBe(sentBefore);
        expect(cloud.calls.filter((c) => c.op !== 'describeHosts').length).toBe(launchesBefore);
        expect(platformCalls).toBe(platformBefore);
        for (const c of cases) hostileTally[c.kind] = (hostileTally[c.kind] ?? 0) + 1;
        clock.advance(1000);
      }),
      { numRuns: scaled(40), ...(soakRuns() === undefined ? { seed: 20_261_124 } : {}) },
    );
  }, soakRuns() === undefined ? 300_000 : 24 * 3_600_000);
});

describe('the tally', () => {
  it('counts the malformed inputs tried', () => {
    // Scaled as the properties' runs are: a soak with fewer scenarios than the default tries fewer inputs.
    expect(tally.inputs).toBeGreaterThan(scaled(2000));
    const hostileMessages = Object.values(hostileTally).reduce((sum, n) => sum + n, 0);
    expect(hostileMessages).toBeGreaterThan(scaled(50));
    reportTally({
      name: 'fuzz',
      malformedInputs: tally.inputs,
      hostileMessages,
      violations: 0,
      details: { batches: tally.batches, validMutationsLeftOut: tally.acceptedOddities, ...tally.byKind, ...Object.fromEntries(Object.entries(hostileTally).map(([k, n]) => [`hostile ${k}`, n])) },
    });
  });
});
