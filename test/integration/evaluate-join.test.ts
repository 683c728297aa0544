import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { RecordingQueue } from '../support/recording-queue.js';
import { ThresholdEvaluator } from '../../lib/app/evaluate.js';
import { parseConfig } from '../../lib/config/index.js';
import { TransientError } from '../../lib/errors.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { FakePlatform } from '../support/fake-platform.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';

const config = parseConfig({ pools: [{ district: 'd1', profile: 'small', max: 10, gearsPerNode: 100 }], scaleUp: { forecast: { enabled: false } } });
const T0 = new Date('2026-11-21T10:00:00.000Z');

/** Issue 4, item 7: a provisioned node joins its district through the Platform port when it first reports. */
describe('ThresholdEvaluator: a joining node is added to its district (dynalite)', () => {
  const harness = dynaliteHarness();
  let store: StateStore;
  let platform: FakePlatform;
  let log: MemoryLog;
  let now: Date;
  const evaluator = () => new ThresholdEvaluator({ store, queue: new RecordingQueue(), clock: { now: () => now }, metrics: new InMemoryMetrics(), log, platform }, config);
  const stats = (nodeId: string, reportedAt: Date) => ({
    id: `m-${reportedAt.getTime()}`,
    message: { type: 'node-stats' as const, v: 1 as const, nodeId, district: 'd1', profile: 'small', activeGears: 0, maxActiveGears: 100, reportedAt: reportedAt.toISOString() },
  });

  beforeEach(async () => {
    store = await harness.create();
    platform = new FakePlatform();
    log = new MemoryLog();
    now = T0;
    await store.createNode(
      { nodeId: 'small-7.example.com', pool: 'd1/small', district: 'd1', profile: 'small', state: 'provisioning', createdAt: T0.toISOString(), origin: 'provisioned', protected: false, decisionId: 'up:d1_small:1' },
      T0,
    );
  });
  afterAll(async () => harness.close());

  it('calls addNode once, on the first stats, and activates the node', async () => {
    now = new Date(T0.getTime() + 150_000);
    await evaluator().handleBatch([stats('small-7.example.com', now)]);
    now = new Date(T0.getTime() + 210_000);
    await evaluator().handleBatch([stats('small-7.example.com', now)]);
    expect(platform.ops('addNode')).toEqual([{ op: 'addNode', nodeId: 'small-7.example.com', district: 'd1' }]);
    expect(await store.getNode('small-7.example.com')).toMatchObject({ state: 'active', joinedAt: new Date(T0.getTime() + 150_000).toISOString() });
  });

  it('keeps a node whose addNode failed provisioning, and adds it on its next stats (issue 18, 2c)', async () => {
    platform.failNext('addNode', new TransientError('broker unreachable'));
    now = new Date(T0.getTime() + 150_000);
    const { failures } = await evaluator().handleBatch([stats('small-7.example.com', now)]);
    expect(failures).toEqual([]);
    expect(await store.getNode('small-7.example.com')).toMatchObject({ state: 'provisioning', reason: 'joining: add-node to district d1 failed: TransientError: broker unreachable' });
    expect(log.lines.find((line) => line.level === 'error')).toMatchObject({
      message: 'node not added to its district; it stays provisioning and add-node is tried again on its next stats',
      attributes: { nodeId: 'small-7.example.com', district: 'd1' },
    });
    now = new Date(T0.getTime() + 210_000);
    await evaluator().handleBatch([stats('small-7.example.com', now)]);
    expect(platform.ops('addNode')).toHaveLength(2);
    expect(await store.getNode('small-7.example.com')).toMatchObject({ state: 'active', joinedAt: now.toISOString() });
  });

  it('does not call the platform for adopted nodes', async () => {
    await evaluator().handleBatch([stats('other-1.example.com', T0)]);
    expect(platform.ops('addNode')).toEqual([]);
  });
});
