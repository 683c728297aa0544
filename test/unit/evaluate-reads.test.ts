/**
 * Issue 18, item 2h: every stats batch read every node of every pool, even
 * for pools skipped for evaluationInterval. A batch now reads the nodes of
 * the pools it evaluates, and all nodes only for a scale-up (maxNodesTotal and
 * the resource limits count them all). 2,000 nodes in 20 pools, reads metered
 * (lib/adapters/memory/metered-store.ts); `npm run bench -- stats-batch`
 * prints the RCUs and bytes per batch.
 */
import { describe, expect, it } from 'vitest';
import { emptyMeter, meteredStore } from '../../lib/adapters/memory/metered-store.js';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { ThresholdEvaluator } from '../../lib/app/evaluate.js';
import { parseConfig } from '../../lib/config/index.js';
import type { NodeStatsMessage } from '../../lib/messages/index.js';
import { RecordingQueue } from '../support/recording-queue.js';

const POOLS = Array.from({ length: 20 }, (_, i) => `p${i}`);
const T0 = new Date('2026-11-24T04:00:00.000Z');

async function cluster() {
  const store = new InMemoryStateStore();
  const config = parseConfig({
    limits: { maxNodesTotal: 5_000 },
    scaleUp: { forecast: { enabled: false } },
    pools: [...POOLS.map((profile) => ({ district: 'd1', profile, max: 200, gearsPerNode: 100, naming: { base: profile } })), { district: 'd1', profile: 'hot', max: 10, gearsPerNode: 100, naming: { base: 'hot' } }],
  });
  const stats = (nodeId: string, profile: string, activeGears: number, at: Date): NodeStatsMessage => ({
    type: 'node-stats', v: 1, nodeId, district: 'd1', profile, activeGears, maxActiveGears: 100, reportedAt: at.toISOString(),
  });
  for (const profile of POOLS) {
    for (let n = 0; n < 100; n++) {
      const nodeId = `${profile}-${n}.example.com`;
      await store.createNode(
        { nodeId, pool: `d1/${profile}`, district: 'd1', profile, state: 'active', createdAt: T0.toISOString(), origin: 'provisioned', protected: false },
        T0,
      );
    }
  }
  for (let n = 0; n < 2; n++) {
    await store.createNode({ nodeId: `hot-${n}.example.com`, pool: 'd1/hot', district: 'd1', profile: 'hot', state: 'active', createdAt: T0.toISOString(), origin: 'provisioned', protected: false }, T0);
  }
  let now = new Date(T0.getTime() + 60_000);
  const meter = emptyMeter();
  const evaluator = new ThresholdEvaluator({ store: meteredStore(store, meter), queue: new RecordingQueue({ fifo: ['scale', 'drain'] }), clock: { now: () => now }, metrics: new InMemoryMetrics(), log: new MemoryLog() }, config);
  const batch = (profile: string, count: number, gears: number) =>
    Array.from({ length: count }, (_, n) => ({ id: `m${n}`, message: stats(`${profile}-${n}.example.com`, profile, gears, now) }));
  const reset = () => Object.assign(meter, emptyMeter());
  return { meter, evaluator, batch, reset, advance: (ms: number) => (now = new Date(now.getTime() + ms)) };
}

describe('a stats batch reads only the pools it evaluates (2,000 nodes, 20 pools)', () => {
  it('one due pool: its nodes only; a pool evaluated within evaluationInterval: no node at all; a scale-up: every pool once', async () => {
    const c = await cluster();
    const { outcomes } = await c.evaluator.handleBatch(c.batch('p3', 10, 50));
    expect(outcomes.map((o) => o.pool)).toEqual(['d1/p3']);
    expect([...c.meter.nodeLists]).toEqual([['d1/p3', 1]]);
    expect(c.meter.calls.get('listNodes')).toBe(1);

    c.reset();
    c.advance(10_000);
    const skipped = await c.evaluator.handleBatch(c.batch('p3', 10, 50));
    expect(skipped.outcomes).toEqual([{ pool: 'd1/p3', kind: 'skipped', reason: expect.stringMatching(/^evaluated at /) }]);
    expect(c.meter.nodeLists.size).toBe(0);

    c.reset();
    const up = await c.evaluator.handleBatch(c.batch('hot', 2, 99));
    expect(up.outcomes).toMatchObject([{ pool: 'd1/hot', kind: 'scale-up' }]);
    // The pool's own list, then every pool once (the configured 21 and none twice).
    expect(c.meter.nodeLists.get('d1/hot')).toBe(2);
    expect(c.meter.nodeLists.size).toBe(21);
    for (const profile of POOLS) expect(c.meter.nodeLists.get(`d1/${profile}`)).toBe(1);
  });
});
