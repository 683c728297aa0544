/**
 * Scale-up rounds on the state table (dynalite): a pool full again after a
 * full-pool scale-up doubles, decided while the first decision's nodes are
 * recorded, and no decision, however often delivered, is provisioned twice.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { SimulatedCloud } from '../../lib/adapters/local/simulated-cloud.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { ThresholdEvaluator } from '../../lib/app/evaluate.js';
import { NodeProvisioner } from '../../lib/app/provision.js';
import { parseConfig } from '../../lib/config/index.js';
import type { ScaleUpMessage } from '../../lib/messages/index.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { RecordingQueue } from '../support/recording-queue.js';

const config = parseConfig({
  handler: 'ec2',
  limits: { maxNodesTotal: 200 },
  scaleUp: { headroomGears: 1, doubleWhenFull: true, observedHeadroom: { enabled: false }, forecast: { enabled: false, bootDelay: '2m' } },
  pools: [{ district: 'd1', profile: 'small', min: 1, max: 100, gearsPerNode: 100, naming: { base: 'small' }, template: { imageId: 'ami-1', instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }], subnets: ['subnet-1'] } }],
});

describe('scale-up rounds while demand outruns the boot delay (dynalite)', () => {
  const harness = dynaliteHarness();
  afterAll(async () => harness.close());

  it('doubles a pool that stays full, and provisions each decision once whatever is redelivered', async () => {
    const store = await harness.create();
    const clock = new VirtualClock('2026-11-21T10:00:00Z');
    const cloud = new SimulatedCloud(clock, { bootDelayMs: 120_000 });
    const queue = new RecordingQueue({ fifo: ['scale', 'drain'] });
    const ports = { store, clock, metrics: new InMemoryMetrics(), log: new MemoryLog() };
    const evaluator = new ThresholdEvaluator({ ...ports, queue }, config);
    const provisioner = new NodeProvisioner({ ...ports, cloud, sleep: async (ms) => void clock.advance(ms) }, config);
    const report = (nodeIds: string[]) =>
      evaluator.handleBatch(
        nodeIds.map((nodeId, i) => ({
          id: `m${i}`,
          message: { type: 'node-stats' as const, v: 1 as const, nodeId, district: 'd1', profile: 'small', activeGears: 100, maxActiveGears: 100, reportedAt: clock.now().toISOString() },
        })),
      );
    const poolNodes = async () => (await store.listNodes('d1/small')).filter((n) => n.state !== 'failed');

    // Ten adopted nodes, full (no free slot, below headroomGears 1): the first full-pool scale-up, sized to what the pool sees.
    const first10 = Array.from({ length: 10 }, (_, i) => `small-${100 + i}.example.com`);
    const [one] = (await report(first10)).outcomes;
    expect(one).toMatchObject({ kind: 'scale-up' });
    expect(one!.reason).toContain('demand outran the boot delay');
    const decision1 = queue.sent('scale').at(-1) as ScaleUpMessage;
    expect(decision1.count).toBe(1);
    await provisioner.scaleUp(decision1);
    await provisioner.scaleUp(decision1); // redelivered: the claim is found, nothing more
    expect((await poolNodes()).length).toBe(11);
    expect((await store.getPool('d1/small'))?.outran).toMatchObject({ rounds: 1, count: 1 });

    // While its node boots, the pool has free slots (the booting ones): no decision.
    clock.advance(60_000);
    expect((await report(first10)).outcomes[0]).toMatchObject({ kind: 'no-action' });

    // The node joins and is full at once: full again, so the pool doubles (11 nodes, past the default 10 a decision).
    clock.advance(90_000);
    const joined = (await poolNodes()).map((n) => n.nodeId);
    const [two] = (await report(joined)).outcomes;
    expect(two).toMatchObject({ kind: 'scale-up' });
    expect(two!.reason).toContain('full again after +1 (round 2): gears wait unseen, so the pool doubles');
    const decision2 = queue.sent('scale').at(-1) as ScaleUpMessage;
    expect(decision2.count).toBe(11);
    await provisioner.scaleUp(decision2);
    await provisioner.scaleUp(decision1); // a late copy of the first decision: still its one node
    await provisioner.scaleUp(decision2);
    const after = await poolNodes();
    expect(after.length).toBe(22);
    expect(after.filter((n) => n.decisionId === decision1.decisionId)).toHaveLength(1);
    expect(after.filter((n) => n.decisionId === decision2.decisionId)).toHaveLength(11);
    expect(cloud.hosts()).toHaveLength(12);
    expect((await store.getPool('d1/small'))?.outran).toMatchObject({ rounds: 2, count: 11 });
  });
});
