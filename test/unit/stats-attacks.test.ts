/**
 * The two attacks of issue 18 (item 3), replayed minute by minute through the
 * threshold evaluator: a node host of the pool, compromised, sends node-stats
 * for a node that is not its own. Each fails without the sender check (the
 * last test turns it off and shows the attack working).
 */
import { describe, expect, it } from 'vitest';
import { ThresholdEvaluator, type StatsItem } from '../../lib/app/evaluate.js';
import { SimulatedCloud } from '../../lib/adapters/local/simulated-cloud.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { parseConfig, type ConfigInput } from '../../lib/config/index.js';
import { RecordingQueue } from '../support/recording-queue.js';

const NODE_ROLE = 'AROANODEROLE00000001';
const POOL = 'd1/small';

async function cluster(options: { statsAuth?: ConfigInput['statsAuth']; realGears: number }) {
  let now = new Date('2026-11-24T10:00:00Z');
  const clock = { now: () => now };
  const config = parseConfig({
    statsAuth: options.statsAuth ?? { nodeRoleIds: [NODE_ROLE] },
    scaleUp: { threshold: 0.8, target: 0.7, headroomGears: 0, sustain: '1m', forecast: { enabled: false } },
    scaleDown: { utilizationThreshold: 0.3 },
    pools: [{ district: 'd1', profile: 'small', min: 1, max: 4, gearsPerNode: 10 }],
  });
  const cloud = new SimulatedCloud(clock, { bootDelayMs: 0 });
  const store = new InMemoryStateStore();
  const queue = new RecordingQueue({ fifo: ['scale', 'drain'] });
  const log = new MemoryLog();
  const metrics = new InMemoryMetrics();
  const senders = new Map<string, string>();
  for (const name of ['n-1.example.com', 'n-2.example.com']) {
    const host = await cloud.createHost({ pool: POOL, district: 'd1', profile: 'small', cloudName: name, hostName: name, decisionId: 'initial', idempotencyToken: name });
    senders.set(name, `${NODE_ROLE}:${host.instanceId}`);
    await store.createNode(
      { nodeId: name, pool: POOL, district: 'd1', profile: 'small', state: 'active', createdAt: now.toISOString(), origin: 'provisioned', protected: false, instanceId: host.instanceId! },
      now,
    );
  }
  const evaluator = new ThresholdEvaluator({ store, queue, clock, log, metrics, hosts: cloud }, config);
  let sequence = 0;
  const stats = (nodeId: string, activeGears: number, maxActiveGears: number, reportedAt: Date, senderId: string): StatsItem => ({
    id: `m${++sequence}`,
    senderId,
    message: { type: 'node-stats', v: 1, nodeId, district: 'd1', profile: 'small', activeGears, maxActiveGears, reportedAt: reportedAt.toISOString() },
  });
  /** One minute: the real nodes report (and whatever the attacker sends), then the tick. */
  const minute = async (attack: (now: Date) => StatsItem[] = () => []) => {
    const real = [...senders].map(([name, sender]) => stats(name, options.realGears, 10, now, sender));
    const { failures } = await evaluator.handleBatch([...real, ...attack(now)]);
    await evaluator.tick();
    now = new Date(now.getTime() + 60_000);
    return failures;
  };
  const attacker = senders.get('n-2.example.com')!;
  return { store, queue, log, metrics, minute, stats, attacker, scaleUps: () => queue.sent('scale').length };
}

describe('issue 18: node-stats bound to their sender', () => {
  it('a message dated in the past, from another node\'s host, no longer holds the pool at max: dropped, no ghost node, no scale-up in an hour of low load', async () => {
    const c = await cluster({ realGears: 2 });
    const hourAgo = (now: Date) => new Date(now.getTime() - 55 * 60_000);
    const failures = await c.minute((now) => [c.stats('ghost.example.com', 12_000, 6_000, hourAgo(now), c.attacker)]);
    for (let i = 0; i < 60; i++) await c.minute();
    expect(c.scaleUps()).toBe(0);
    expect(await c.store.getNode('ghost.example.com')).toBeUndefined();
    // Dropped as stale before the sender is even judged: either defence stops it.
    expect(failures).toEqual([]);
    expect(c.metrics.sum('StatsDropped')).toBe(1);
  });

  it('the same message with the sender check off (no instance profiles) is still dropped as stale, naming reportedAt', async () => {
    const c = await cluster({ realGears: 2, statsAuth: { enabled: false } });
    await c.minute((now) => [c.stats('ghost.example.com', 12_000, 6_000, new Date(now.getTime() - 55 * 60_000), c.attacker)]);
    for (let i = 0; i < 60; i++) await c.minute();
    expect(c.scaleUps()).toBe(0);
    expect(await c.store.getNode('ghost.example.com')).toBeUndefined();
    expect(c.log.lines.find((l) => l.message === 'node-stats dropped: too old to count')?.attributes).toMatchObject({ field: 'reportedAt', nodeId: 'ghost.example.com' });
  });

  it('a fake roomy node reported every minute by another node\'s host no longer cuts a needed scale-up: rejected with a security line, the pool scales up at once', async () => {
    const c = await cluster({ realGears: 10 });
    const failed: string[] = [];
    for (let i = 0; i < 35; i++) {
      const failures = await c.minute((now) => [c.stats('roomy.example.com', 0, 6_000, now, c.attacker)]);
      failed.push(...failures.map((f) => (f.error as Error).message));
    }
    expect(c.scaleUps()).toBeGreaterThanOrEqual(1);
    expect(c.queue.sent('scale')[0]).toMatchObject({ type: 'scale-up', pool: POOL });
    expect(await c.store.getNode('roomy.example.com')).toBeUndefined();
    expect(failed).toHaveLength(35);
    expect(failed[0]).toContain(`SenderId: instance ${c.attacker.split(':')[1]} is node n-2.example.com (tag nodescaler:node), not roomy.example.com`);
    expect(c.log.lines.filter((l) => l.message.startsWith('security: node-stats rejected'))).toHaveLength(35);
    expect(c.metrics.sum('StatsRejected')).toBe(35);
  });

  it('with the sender check off, the roomy node is adopted and no scale-up comes for 35 minutes: the attack the check stops', async () => {
    const c = await cluster({ realGears: 10, statsAuth: { enabled: false } });
    for (let i = 0; i < 35; i++) await c.minute((now) => [c.stats('roomy.example.com', 0, 6_000, now, c.attacker)]);
    expect(c.scaleUps()).toBe(0);
    expect(await c.store.getNode('roomy.example.com')).toMatchObject({ origin: 'adopted', state: 'active' });
  });
});
