/**
 * Two pools of one batch scale up at once against one global limit
 * (maxNodesTotal): each decision is clamped by the nodes read once for the
 * batch, before any of its decisions is carried out (and a decision creates no
 * node), so two pools evaluated together may each claim the last room, as
 * they did when evaluated one after the other. The provisioner's claim-time
 * check (lib/workflows/launch/claim.ts, on the capacity record) keeps the limit. The real
 * state table protocol (dynalite), the simulated cloud, a virtual clock.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { SimulatedCloud } from '../../lib/adapters/local/simulated-cloud.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { ThresholdEvaluator } from '../../lib/app/evaluate.js';
import { NodeProvisioner } from '../../lib/app/provision.js';
import { parseConfig } from '../../lib/config/index.js';
import { LIVE_STATES } from '../../lib/domain/provisioning.js';
import type { ScaleUpMessage } from '../../lib/messages/index.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { RecordingQueue } from '../support/recording-queue.js';

const harness = dynaliteHarness();
afterAll(() => harness.close());

const PROFILES = ['a', 'b'];
const MAX_NODES_TOTAL = 5;

describe('two pools scaling up at once against maxNodesTotal', () => {
  it('each decides on the same room; the provisioner grants it once and the limit is never exceeded', async () => {
    const store = await harness.create();
    const clock = new VirtualClock('2026-11-21T10:00:00Z');
    const template = { imageId: 'ami-1', instanceTypes: [{ name: 'sim.large', vcpus: 2, memoryGiB: 8 }], subnets: ['subnet-1'] };
    const config = parseConfig({
      handler: 'ec2',
      limits: { maxNodesTotal: MAX_NODES_TOTAL },
      scaleUp: { forecast: { enabled: false } },
      pools: PROFILES.map((profile) => ({ district: 'd1', profile, max: 10, gearsPerNode: 100, naming: { base: profile }, template })),
    });
    const created = clock.now().toISOString();
    for (const profile of PROFILES) {
      for (let n = 1; n <= 2; n++) {
        await store.createNode({ nodeId: `${profile}-${n}.example.com`, pool: `d1/${profile}`, district: 'd1', profile, state: 'active', createdAt: created, origin: 'provisioned', protected: false }, clock.now());
      }
    }
    const queue = new RecordingQueue({ fifo: ['scale', 'drain'] });
    const evaluator = new ThresholdEvaluator({ store, queue, clock, metrics: new InMemoryMetrics(), log: new MemoryLog() }, config);
    const full = PROFILES.flatMap((profile) =>
      [1, 2].map((n) => ({
        id: `${profile}${n}`,
        message: { type: 'node-stats' as const, v: 1 as const, nodeId: `${profile}-${n}.example.com`, district: 'd1', profile, activeGears: 99, maxActiveGears: 100, reportedAt: clock.now().toISOString() },
      })),
    );

    const { outcomes } = await evaluator.handleBatch(full);

    // Both pools decided a scale-up of one node, each within the one node of room it saw: together two.
    expect(outcomes).toMatchObject([
      { pool: 'd1/a', kind: 'scale-up' },
      { pool: 'd1/b', kind: 'scale-up' },
    ]);
    const decisions = queue.sent('scale') as ScaleUpMessage[];
    expect(decisions.map((m) => m.count)).toEqual([1, 1]);

    const provisioner = new NodeProvisioner(
      { store, cloud: new SimulatedCloud(clock, { bootDelayMs: 120_000 }), clock, metrics: new InMemoryMetrics(), log: new MemoryLog(), sleep: async (ms) => void clock.advance(ms) },
      config,
    );
    const provisioned = await provisioner.handleBatch(decisions.map((message, i) => ({ id: `s${i}`, message })));

    expect(provisioned.failures).toEqual([]);
    expect(provisioned.outcomes.map((o) => o.nodes.length).sort()).toEqual([0, 1]);
    expect(provisioned.outcomes.find((o) => o.nodes.length === 0)?.reason).toContain('maxNodesTotal=5 (5 live in all pools)');
    const live = (await Promise.all(PROFILES.map((p) => store.listNodes(`d1/${p}`)))).flat().filter((node) => LIVE_STATES.has(node.state));
    expect(live).toHaveLength(MAX_NODES_TOTAL);
  });
});
