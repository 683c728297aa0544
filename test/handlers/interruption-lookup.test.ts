/**
 * Issue 18, item 2j: EventBridge hands the gear mover every EC2 spot
 * interruption and rebalance in the account, and each one read every node of
 * every pool to find its node (then the drains were advanced, reading every
 * pool again). An event for an instance nodescaler does not own now costs one
 * lookup by instance and changes nothing; one for a node it owns finds the
 * node with that lookup and drains it at once. Through the real handler, on
 * the in-memory store with its reads metered (lib/adapters/memory/metered-store.ts).
 */
import type { Context, SQSBatchResponse, SQSEvent, ScheduledEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { SimulatedPlatform } from '../../lib/adapters/local/simulated-platform.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { emptyMeter, meteredStore } from '../../lib/adapters/memory/metered-store.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { parseConfig } from '../../lib/config/index.js';
import { gearMoverHandler } from '../../lib/handlers/gear-mover.js';
import { lambdaContext, sqsEvent, sqsRecord, TEST_ACCOUNT, TEST_REGION } from '../support/sqs-events.js';
import { RecordingQueue } from '../support/recording-queue.js';

type Handler = (event: SQSEvent | ScheduledEvent, context: Context) => Promise<SQSBatchResponse>;
const PROFILES = ['small', 'medium', 'large', 'xlarge', 'gpu'];
const NODES_PER_POOL = 40;
const EVENTS_ARN = `arn:aws:sqs:${TEST_REGION}:${TEST_ACCOUNT}:nodescaler-dev-events`;
const instanceOf = (pool: number, n: number) => `i-0${pool.toString(16)}${n.toString(16).padStart(15, '0')}`;

async function world() {
  const clock = new VirtualClock('2026-11-24T05:00:00Z');
  const store = new InMemoryStateStore();
  const platform = new SimulatedPlatform(clock, { moveDurationMs: 30_000, moveFailureRate: 0 });
  const config = parseConfig({ pools: PROFILES.map((profile) => ({ district: 'd1', profile, min: 0, max: 100, naming: { base: profile } })) }, 'test configuration');
  for (const [p, profile] of PROFILES.entries()) {
    const pool = `d1/${profile}`;
    await store.ensurePool(pool);
    for (let n = 0; n < NODES_PER_POOL; n++) {
      const nodeId = `${profile}-${n}.example.com`;
      platform.registerNode('d1', profile, nodeId, 100);
      await store.createNode(
        { nodeId, pool, district: 'd1', profile, state: 'active', createdAt: clock.now().toISOString(), origin: 'provisioned', protected: false, instanceId: instanceOf(p, n) },
        clock.now(),
      );
      await store.putNodeStats(nodeId, { activeGears: 0, maxActiveGears: 100, reportedAt: clock.now().toISOString() });
    }
  }
  const meter = emptyMeter();
  const queue = new RecordingQueue({ fifo: ['scale', 'drain'] });
  const handler = gearMoverHandler({
    config,
    ports: { store: meteredStore(store, meter), platform, queue, clock, log: new MemoryLog(), metrics: new InMemoryMetrics() },
  }) as unknown as Handler;
  return { clock, store, meter, queue, handler };
}

function interruption(instanceId: string, at: Date) {
  return sqsEvent([
    sqsRecord(
      {
        version: '0',
        id: `ev-${instanceId}`,
        'detail-type': 'EC2 Spot Instance Interruption Warning',
        source: 'aws.ec2',
        account: TEST_ACCOUNT,
        time: at.toISOString().replace(/\.\d{3}Z$/, 'Z'),
        region: TEST_REGION,
        resources: [`arn:aws:ec2:${TEST_REGION}a:instance/${instanceId}`],
        detail: { 'instance-id': instanceId, 'instance-action': 'terminate' },
      },
      { eventSourceARN: EVENTS_ARN },
    ),
  ]);
}

/** Everything an event could change, read past the meter. */
async function snapshot(store: InMemoryStateStore) {
  const pools = await store.listPools();
  return {
    pools,
    nodes: await Promise.all(pools.map((pool) => store.listNodes(pool.pool))),
    drains: await Promise.all(pools.map((pool) => Promise.all((['active', 'completed', 'aborted'] as const).map((state) => store.listDrains(pool.pool, state))))),
    decisions: await Promise.all(pools.map((pool) => store.listDecisions(pool.pool, 100))),
    controls: await store.listControls(),
  };
}

describe('an EC2 event costs one lookup by instance (issue 18, item 2j)', () => {
  it('an interruption of an instance nodescaler does not own, among 200 nodes in 5 pools, reads no node list and changes nothing', async () => {
    const w = await world();
    const before = await snapshot(w.store);
    const response = await w.handler(interruption('i-0feedfacecafe0001', w.clock.now()), lambdaContext());
    expect(response.batchItemFailures).toEqual([]);
    expect(Object.fromEntries(w.meter.calls)).toEqual({ findNodeByInstance: 1 });
    expect(w.meter.nodeLists.size).toBe(0);
    expect(w.meter.records).toBe(0);
    expect(await snapshot(w.store)).toEqual(before);
    expect(w.queue.recorded('scale')).toEqual([]);
    expect(w.queue.recorded('drain')).toEqual([]);
  });

  it('an interruption of a node it owns finds it with that one lookup and drains it at once', async () => {
    const w = await world();
    const response = await w.handler(interruption(instanceOf(3, 17), w.clock.now()), lambdaContext());
    expect(response.batchItemFailures).toEqual([]);
    expect(w.meter.calls.get('findNodeByInstance')).toBe(1);
    // It holds no gears: the drain started at once and finished in the same invocation.
    const node = await w.store.getNode('xlarge-17.example.com');
    expect(node?.state).toBe('drained');
    expect(await w.store.getDrain(node!.drainId!)).toMatchObject({ nodeId: 'xlarge-17.example.com', kind: 'interruption', state: 'completed', urgentCause: 'spot interruption warning (terminate)' });
  });
});
