/**
 * The broker's refused gears and attrition-closed nodes on the state table
 * (dynalite): a burst refused while closed nodes have room reopens every
 * closed node the waiting gears need in that one evaluation (platform and
 * records), buys no node, and leaves the rest closed.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { ThresholdEvaluator, type StatsItem } from '../../lib/app/evaluate.js';
import { parseConfig } from '../../lib/config/index.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { FakePlatform } from '../support/fake-platform.js';
import { RecordingQueue } from '../support/recording-queue.js';

const BROKER_ROLE = 'AROABROKERREPORTER01';
const template = { imageId: 'ami-1', instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }], subnets: ['subnet-1'] };
const config = parseConfig({
  handler: 'ec2',
  limits: { maxNodesTotal: 200 },
  statsAuth: { reporterIds: [BROKER_ROLE] },
  scaleUp: { threshold: 0.98, target: 0.96, headroomGears: 30, observedHeadroom: { enabled: false }, forecast: { enabled: false, bootDelay: '2m' } },
  pools: [{ district: 'd1', profile: 'small', min: 1, max: 100, gearsPerNode: 100, naming: { base: 'small' }, template }],
});

describe('gears-refused with attrition-closed nodes (dynalite)', () => {
  const harness = dynaliteHarness();
  afterAll(async () => harness.close());

  let store: StateStore;
  let clock: VirtualClock;
  let queue: RecordingQueue;
  let platform: FakePlatform;
  let evaluator: ThresholdEvaluator;
  // Three open nodes and four closed ones (20 gears each, 80 free slots each).
  const open = ['small-1.example.com', 'small-2.example.com', 'small-3.example.com'];
  const closed = ['small-4.example.com', 'small-5.example.com', 'small-6.example.com', 'small-7.example.com'];
  const stats = (gears: (nodeId: string) => number): StatsItem[] =>
    [...open, ...closed].map((nodeId, i) => ({
      id: `s${i}`,
      message: { type: 'node-stats', v: 1, nodeId, district: 'd1', profile: 'small', activeGears: gears(nodeId), maxActiveGears: 100, reportedAt: clock.now().toISOString() },
    }));

  beforeEach(async () => {
    store = await harness.create();
    clock = new VirtualClock('2026-11-24T10:00:00Z');
    queue = new RecordingQueue({ fifo: ['scale', 'drain'] });
    platform = new FakePlatform();
    evaluator = new ThresholdEvaluator({ store, clock, queue, platform, metrics: new InMemoryMetrics(), log: new MemoryLog() }, config);
    await evaluator.handleBatch(stats((id) => (open.includes(id) ? 60 : 20)));
    for (const nodeId of closed) {
      const node = (await store.getNode(nodeId))!;
      await store.updateNode(nodeId, node.version, { attritionSince: '2026-11-24T09:00:00.000Z' });
    }
  });

  it('reopens every closed node the waiting gears need in one evaluation and buys none', async () => {
    // A burst: the open nodes fill (300 gears), 180 creations refused in the minute.
    clock.advance(60_000);
    const refused: StatsItem = {
      id: 'r1',
      senderId: `${BROKER_ROLE}:i-0b0b0b0b0b0b0b0b0`,
      message: { type: 'gears-refused', v: 1, district: 'd1', profile: 'small', refused: 180, windowStart: new Date(clock.nowMs() - 60_000).toISOString(), windowEnd: clock.now().toISOString() },
    };
    const { failures, outcomes } = await evaluator.handleBatch([...stats((id) => (open.includes(id) ? 100 : 20)), refused]);
    expect(failures).toEqual([]);
    expect(outcomes).toEqual([expect.objectContaining({ pool: 'd1/small', kind: 'no-action' })]);
    // 180 waiting + 30 headroom = 210 free slots: three closed nodes (80 each), not one an evaluation.
    expect(platform.ops('activateNode').map((op) => op.nodeId)).toHaveLength(3);
    const records = await store.listNodes('d1/small');
    expect(records.filter((n) => closed.includes(n.nodeId) && n.attritionSince === undefined)).toHaveLength(3);
    expect(records.filter((n) => n.attritionSince !== undefined)).toHaveLength(1);
    expect(outcomes[0]!.reason).toContain('keep 0 free slots (+0 booting) for 180 waiting gears + headroomGears 30');
    const [logged] = await store.listDecisions('d1/small', 1);
    expect(logged!.reason).toContain('for 180 waiting gears');
    expect(queue.sent('scale')).toHaveLength(0);
  });
});
