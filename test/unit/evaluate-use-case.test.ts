import { beforeEach, describe, expect, it } from 'vitest';
import { ThresholdEvaluator } from '../../lib/app/evaluate.js';
import { RecordingQueue } from '../support/recording-queue.js';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { parseConfig } from '../../lib/config/index.js';
import type { NodeStatsMessage } from '../../lib/messages/index.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';

const config = parseConfig({
  pools: [{ district: 'd1', profile: 'small', min: 1, max: 10, gearsPerNode: 100, naming: { base: 'small' } }],
  // The rule thresholds this test was written with (the product defaults run pools fuller).
  scaleUp: { threshold: 0.8, target: 0.7, headroomGears: 0, forecast: { enabled: false } },
  scaleDown: { utilizationThreshold: 0.5 },
});

function statsOf(nodeId: string, activeGears: number, reportedAt: Date, profile = 'small'): NodeStatsMessage {
  return { type: 'node-stats', v: 1, nodeId, district: 'd1', profile, activeGears, maxActiveGears: 100, reportedAt: reportedAt.toISOString() };
}

describe('ThresholdEvaluator use case (in-memory store, recording queue)', () => {
  let now: Date;
  let store: InMemoryStateStore;
  let queue: RecordingQueue;
  let log: MemoryLog;
  let evaluator: ThresholdEvaluator;
  const advance = (seconds: number) => (now = new Date(now.getTime() + seconds * 1000));
  const report = (activeGears: number[]) =>
    evaluator.handleBatch(activeGears.map((gears, i) => ({ id: `m${i}`, message: statsOf(`small-${i + 1}.example.com`, gears, now) })));

  beforeEach(() => {
    now = new Date('2026-11-21T10:00:00Z');
    store = new InMemoryStateStore();
    queue = new RecordingQueue({ fifo: ['scale', 'drain'] });
    log = new MemoryLog();
    evaluator = new ThresholdEvaluator({ store, queue, clock: { now: () => now }, metrics: new InMemoryMetrics(), log }, config);
  });

  it('activates a provisioning node when it first reports, recording when it joined', async () => {
    await store.createNode(
      { nodeId: 'small-7.example.com', pool: 'd1/small', district: 'd1', profile: 'small', state: 'provisioning', createdAt: now.toISOString(), origin: 'provisioned', protected: false, decisionId: 'up:d1_small:1' },
      now,
    );
    advance(150);
    await evaluator.handleBatch([{ id: 'a', message: statsOf('small-7.example.com', 0, now) }]);
    const node = await store.getNode('small-7.example.com');
    expect(node).toMatchObject({ state: 'active', origin: 'provisioned', joinedAt: now.toISOString() });
  });

  it('adopts nodes of pools it does not scale without evaluating them', async () => {
    const { outcomes } = await evaluator.handleBatch([{ id: 'a', message: statsOf('big-1.example.com', 5, now, 'large') }]);
    expect(outcomes).toEqual([]);
    expect(await store.getNode('big-1.example.com')).toMatchObject({ pool: 'd1/large', state: 'active', origin: 'adopted' });
  });

  it('evaluates a pool at most once per evaluationInterval, on stats or on the tick', async () => {
    const first = await report([50, 50]);
    expect(first.outcomes.map((o) => o.kind)).toEqual(['no-action']);
    advance(10);
    const second = await report([51, 51]);
    expect(second.outcomes.map((o) => o.kind)).toEqual(['skipped']);
    expect((await evaluator.tick()).map((o) => o.kind)).toEqual(['skipped']);
    advance(20);
    expect((await evaluator.tick()).map((o) => o.kind)).toEqual(['no-action']);
  });

  it('reads the pool\'s nodes only for an evaluation that runs: not for stats batches within evaluationInterval', async () => {
    const listed: string[] = [];
    const listNodes = store.listNodes.bind(store);
    store.listNodes = async (pool) => {
      listed.push(pool);
      return listNodes(pool);
    };
    await report([50, 50]);
    expect(listed).toEqual(['d1/small']);
    for (let batch = 0; batch < 5; batch++) {
      advance(5);
      expect((await report([51, 51])).outcomes.map((o) => o.kind)).toEqual(['skipped']);
    }
    expect(listed).toEqual(['d1/small']);
    advance(60);
    await evaluator.tick();
    expect(listed).toEqual(['d1/small', 'd1/small']);
  });

  it("records a one-minute crest whole though each minute's reports come in two batches and it evaluates on the first", async () => {
    const batch = (from: number, gears: number) =>
      evaluator.handleBatch([0, 1].map((i) => ({ id: `m${from + i}`, message: statsOf(`small-${from + i + 1}.example.com`, gears, now) })));
    const minuteOf = (at: Date) => Math.floor(at.getTime() / 60_000);
    const crestMinute = minuteOf(now) + 1;
    for (const gears of [50, 80, 50]) {
      expect((await batch(0, gears)).outcomes.map((o) => o.kind)).not.toContain('skipped');
      expect((await batch(2, gears)).outcomes.map((o) => o.kind)).toEqual(['skipped']);
      if (gears === 80) expect((await store.getPool('d1/small'))?.demandHistory?.at(-1)).toEqual([crestMinute, 260]);
      advance(60);
    }
    // The crest's minute, evaluated with half its reports in, is recorded again a minute later as the nodes measured it.
    expect((await store.getPool('d1/small'))?.demandHistory?.slice(-2)).toEqual([
      [crestMinute, 320],
      [crestMinute + 1, 260],
    ]);
  });

  it('fails the whole evaluation, to be retried, when the nodes cannot be read', async () => {
    store.listNodes = async () => {
      throw new Error('table unavailable');
    };
    await expect(evaluator.tick()).rejects.toThrow('table unavailable');
    expect(log.lines.some((line) => line.message === 'pool evaluation failed')).toBe(false);
  });

  it('sends the very same decision again when the queue did not take it, and marks it sent', async () => {
    await report([90, 90]);
    advance(125);
    queue.failNext(1);
    const [failed] = await evaluator.tick();
    expect(failed).toMatchObject({ kind: 'scale-up', sent: false });
    expect(queue.sent('scale')).toEqual([]);
    const stuck = await store.getPool('d1/small');
    expect(stuck?.lease?.sentAt).toBeUndefined();
    expect(stuck?.lease?.message).toMatchObject({ decisionId: failed!.decisionId, count: 1 });

    advance(60);
    const [retried] = await evaluator.tick();
    expect(retried?.kind).toBe('no-action');
    expect(queue.recorded('scale')).toEqual([
      { message: stuck!.lease!.message, groupId: 'd1/small', deduplicationId: failed!.decisionId },
    ]);
    expect((await store.getPool('d1/small'))?.lease?.sentAt).toBe(now.toISOString());
    expect(log.lines.some((line) => line.level === 'warn' && /re-sending/.test(line.message))).toBe(true);
  });

  it('sends a decision again when no consumer has taken it up leaseResendAfter after it was sent, and stops once one has', async () => {
    await report([90, 90]);
    advance(125);
    const [decided] = await evaluator.tick();
    expect(decided).toMatchObject({ kind: 'scale-up', sent: true });
    const message = (await store.getPool('d1/small'))!.lease!.message;
    const sent = { message, groupId: 'd1/small', deduplicationId: decided!.decisionId };
    advance(5 * 60);
    await evaluator.tick();
    expect(queue.recorded('scale')).toEqual([sent]);

    // Its message dead-lettered: 6 minutes after it was sent no consumer has claimed it.
    advance(60);
    await evaluator.tick();
    expect(queue.recorded('scale')).toEqual([sent, sent]);
    expect((await store.getPool('d1/small'))?.lease).toMatchObject({ holder: decided!.decisionId, sentAt: now.toISOString() });
    expect(log.lines.some((line) => line.level === 'warn' && line.message === 're-sending a decision no consumer has taken up')).toBe(true);

    // The provisioner claims it: the lease is its to release, nothing is sent again.
    await store.claimScaleUp({ decisionId: decided!.decisionId!, pool: 'd1/small', requested: 1, slots: [], createdAt: now.toISOString() }, config.decisionLogTtl);
    advance(6 * 60);
    await evaluator.tick();
    expect(queue.recorded('scale')).toHaveLength(2);
  });

  it('sends a scale-down again when no drain exists for it', async () => {
    const decisionId = 'down:d1_small:1';
    const message = { type: 'scale-down', v: 1, decisionId, pool: 'd1/small', nodeId: 'small-1.example.com', reason: 'test', decidedAt: now.toISOString() };
    await store.ensurePool('d1/small');
    await store.acquireLease('d1/small', { holder: decisionId, kind: 'scale-down', ttlMs: config.leaseTtl, message }, now);
    await store.markLeaseSent('d1/small', decisionId, now);
    advance(6 * 60);
    await evaluator.tick();
    expect(queue.recorded('drain')).toEqual([{ message, groupId: 'd1/small', deduplicationId: decisionId }]);
  });

  it('emits utilization, nodes and decision latency per pool, one series each; the count by state goes in the log line', async () => {
    const metrics = new InMemoryMetrics();
    evaluator = new ThresholdEvaluator({ store, queue, clock: { now: () => now }, metrics, log }, config);
    await report([50, 60]);
    expect(metrics.points.filter((p) => p.name !== 'NodesAdopted')).toEqual([
      { name: 'PoolUtilization', value: 55, unit: 'Percent', dimensions: { pool: 'd1/small' } },
      { name: 'Nodes', value: 2, unit: 'Count', dimensions: { pool: 'd1/small' } },
      { name: 'DecisionLatency', value: 0, unit: 'Milliseconds', dimensions: { pool: 'd1/small' } },
    ]);
    expect(log.lines.filter((line) => line.attributes.pool === 'd1/small' && line.attributes.nodesByState).at(-1)?.attributes.nodesByState).toEqual({ active: 2 });
  });

  it('lets only one of two concurrent evaluations of a pool decide', async () => {
    await report([90, 90]);
    advance(125);
    const results = await Promise.all([evaluator.tick(), evaluator.tick()]);
    const kinds = results.map(([outcome]) => outcome!.kind).sort();
    expect(kinds).toEqual(['scale-up', 'skipped']);
    expect(queue.sent('scale')).toHaveLength(1);
  });
});
