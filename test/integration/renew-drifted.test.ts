/**
 * Renewing a drifted (or expired) node end to end on the real state table protocol (dynalite): the evaluator asks for a
 * replacement (one node, through the pool lease) and records the drifted node's drain as pending; the provisioner
 * launches the replacement from today's template; once it has joined, the evaluator sends the drain. Never two at once.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { SimulatedCloud } from '../../lib/adapters/local/simulated-cloud.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { ThresholdEvaluator } from '../../lib/app/evaluate.js';
import { NodeProvisioner } from '../../lib/app/provision.js';
import { RENEWAL_BY } from '../../lib/app/replace-drain.js';
import { readSnapshot } from '../../lib/cli/snapshot.js';
import { statusView } from '../../lib/cli/status.js';
import { parseConfig } from '../../lib/config/index.js';
import { ValidationError } from '../../lib/errors.js';
import { driftOf, launchedFromTemplate, templateIdentity } from '../../lib/domain/drift.js';
import { drainIdFor } from '../../lib/domain/drain.js';
import type { ScaleDownMessage, ScaleUpMessage } from '../../lib/messages/index.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { ScriptedLaunchTemplates } from '../support/markets.js';
import { RecordingQueue } from '../support/recording-queue.js';

const harness = dynaliteHarness();
afterAll(() => harness.close());

const POOL = 'd1/small';
const MIN = 60_000;

/**
 * A pool of three active nodes of 100 slots on the state table, renewal on (thresholds 0.80 / 0.50), each node
 * launched from the template's image or, where `drifted(i)`, from an older one; the evaluator over a recording queue.
 */
async function renewingPool(drifted: (index: number) => boolean, budget: Record<string, unknown> = {}, expiry?: { expireAfter: string; ageDays: (index: number) => number }, scaleDown: Record<string, unknown> = {}) {
  const store = await harness.create();
  const clock = new VirtualClock('2026-11-21T10:00:00Z');
  const template = { imageId: 'ami-0new', instanceTypes: [{ name: 'sim.large', vcpus: 2, memoryGiB: 8 }], subnets: ['subnet-1'] };
  const config = parseConfig({
    handler: 'ec2',
    scaleUp: { threshold: 0.8, target: 0.7, headroomGears: 0, forecast: { enabled: false } },
    scaleDown: { utilizationThreshold: 0.5, renewDrifted: !expiry, payoff: { enabled: false }, budget, ...(expiry ? { expireAfter: expiry.expireAfter } : {}), ...scaleDown },
    pools: [{ district: 'd1', profile: 'small', max: 10, gearsPerNode: 100, naming: { base: 'd1-small', domain: 'example.com' }, template }],
  });
  const current = launchedFromTemplate(config.pools[0]!.template);
  const ids = [1, 2, 3].map((n) => `d1-small-${n}.example.com`);
  for (const [i, nodeId] of ids.entries()) {
    const launchedFrom = drifted(i) ? { ...current, image: 'ami-0old' } : current;
    const createdAt = new Date(clock.now().getTime() - (expiry?.ageDays(i) ?? 0) * 86_400_000).toISOString();
    await store.createNode({ nodeId, pool: POOL, district: 'd1', profile: 'small', state: 'active', createdAt, origin: 'provisioned', protected: false, launchedFrom }, clock.now());
    await store.allocateNameNumber('d1-small');
  }
  const queue = new RecordingQueue({ fifo: ['scale', 'drain'] });
  const evaluator = new ThresholdEvaluator({ store, queue, clock, metrics: new InMemoryMetrics(), log: new MemoryLog() }, config);
  return { store, clock, config, current, ids, queue, evaluator };
}

describe('scaleDown.renewDrifted on the state table', () => {
  it('replacement first, the drifted node drained once it joined, nothing more renewed meanwhile', async () => {
    const { store, clock, config, current, ids, queue, evaluator } = await renewingPool((i) => i === 0);
    const report = (nodeIds: string[]) =>
      evaluator.handleBatch(
        nodeIds.map((nodeId) => ({ id: nodeId, message: { type: 'node-stats' as const, v: 1 as const, nodeId, district: 'd1', profile: 'small', activeGears: 60, maxActiveGears: 100, idleGears: 0, disruptiveGears: 60, reportedAt: clock.now().toISOString() } })),
      );

    // 180 gears on 300 slots: neither high nor low. The drifted node is renewed.
    const first = await report(ids);
    expect(first.outcomes).toMatchObject([{ pool: POOL, kind: 'scale-up', sent: true }]);
    const [replacement] = queue.sent('scale') as ScaleUpMessage[];
    expect(replacement).toMatchObject({ type: 'scale-up', pool: POOL, count: 1, reason: expect.stringContaining('renew d1-small-1.example.com (60 gears, 60 restart a tenant; drifted: image ami-0old -> ami-0new)') });
    expect((await store.listControls()).pendingDrains).toEqual([
      { nodeId: ids[0], pool: POOL, replacementDecisionId: replacement!.decisionId, reason: replacement!.reason, by: RENEWAL_BY, at: clock.now().toISOString() },
    ]);
    expect((await store.getPool(POOL))?.lease).toMatchObject({ holder: replacement!.decisionId, kind: 'scale-up' });

    // The replacement, launched from today's template.
    const provisioner = new NodeProvisioner({ store, cloud: new SimulatedCloud(clock, { bootDelayMs: 2 * MIN }), clock, metrics: new InMemoryMetrics(), log: new MemoryLog(), sleep: async (ms) => void clock.advance(ms) }, config);
    expect((await provisioner.handleBatch([{ id: 's1', message: replacement! }])).failures).toEqual([]);
    const added = (await store.listNodes(POOL)).find((node) => !ids.includes(node.nodeId))!;
    expect(added).toMatchObject({ state: 'provisioning', launchedFrom: current });
    expect(driftOf(added, config.pools[0]!.template)).toBeUndefined();

    // While it boots, nothing else is renewed (the lease is released: the pending drain holds the next renewal).
    clock.advance(MIN);
    const booting = await report(ids);
    expect(booting.outcomes[0]).toMatchObject({ kind: 'no-action', reason: expect.stringContaining('renewal of 1 drifted node(s) waits') });
    expect(queue.sent('scale')).toHaveLength(1);
    expect(queue.sent('drain')).toHaveLength(0);

    // It joins; the next evaluation sends the drifted node's drain, once.
    clock.advance(MIN);
    await evaluator.handleBatch([{ id: 'new', message: { type: 'node-stats', v: 1, nodeId: added.nodeId, district: 'd1', profile: 'small', activeGears: 0, maxActiveGears: 100, reportedAt: clock.now().toISOString() } }]);
    expect((await store.getNode(added.nodeId))?.state).toBe('active');
    clock.advance(MIN);
    await report([...ids, added.nodeId].slice(0, 3));
    clock.advance(MIN);
    await report(ids);
    const drains = queue.sent('drain') as ScaleDownMessage[];
    expect(drains).toEqual([
      expect.objectContaining({
        type: 'scale-down',
        pool: POOL,
        nodeId: ids[0],
        decisionId: expect.stringMatching(new RegExp(`^manual:renew:${replacement!.decisionId}:[0-9a-f]{8}$`)),
        reason: expect.stringContaining(`manual drain (${RENEWAL_BY}): renew d1-small-1.example.com`),
      }),
    ]);
    // Kept until the gear mover has begun the drain (finding 17).
    expect((await store.listControls()).pendingDrains).toMatchObject([{ nodeId: ids[0], sentAt: expect.any(String) }]);
  });

  it('no scale-down drains the replacement while the renewal\'s drain is on its way: the renewed node counts as draining until the drain begins', async () => {
    // Found by a soak run (RELIABILITY, finding 17): the evaluation that sent the renewal's drain, or one before the gear
    // mover began it, saw the renewed node still active beside its empty replacement, the pool low, and drained the
    // replacement; the renewal's drain then had nowhere to move its gears and aborted.
    const { store, clock, config, ids, queue, evaluator } = await renewingPool((i) => i === 0, {}, undefined, { delayAfterAdd: '1m', unneededTime: '1m' });
    const report = (nodeIds: string[], gears: (nodeId: string) => number = () => 60) =>
      evaluator.handleBatch(
        nodeIds.map((nodeId) => ({ id: nodeId, message: { type: 'node-stats' as const, v: 1 as const, nodeId, district: 'd1', profile: 'small', activeGears: gears(nodeId), maxActiveGears: 100, idleGears: 0, disruptiveGears: gears(nodeId), reportedAt: clock.now().toISOString() } })),
      );
    await report(ids);
    const [replacement] = queue.sent('scale') as ScaleUpMessage[];
    const provisioner = new NodeProvisioner({ store, cloud: new SimulatedCloud(clock, { bootDelayMs: 2 * MIN }), clock, metrics: new InMemoryMetrics(), log: new MemoryLog(), sleep: async (ms) => void clock.advance(ms) }, config);
    expect((await provisioner.handleBatch([{ id: 's1', message: replacement! }])).failures).toEqual([]);
    const added = (await store.listNodes(POOL)).find((node) => !ids.includes(node.nodeId))!;
    const all = [...ids, added.nodeId];
    const gears = (nodeId: string) => (nodeId === added.nodeId ? 0 : 60);

    // It joins empty: 180 gears on 400 slots, below the 0.5 of scale-down, for minutes, past delayAfterAdd.
    clock.advance(3 * MIN);
    await report([added.nodeId], gears);
    expect((await store.getNode(added.nodeId))?.state).toBe('active');
    for (let minute = 0; minute < 4; minute++) {
      clock.advance(MIN);
      const { outcomes } = await report(all, gears);
      expect(outcomes[0]?.kind).not.toBe('scale-down');
    }
    expect((queue.sent('drain') as ScaleDownMessage[]).map((message) => message.nodeId)).toEqual([ids[0]]);
    expect((await store.listControls()).pendingDrains).toMatchObject([{ nodeId: ids[0], sentAt: expect.any(String) }]);
    expect((await store.getNode(added.nodeId))?.state).toBe('active');

    // The gear mover begins the drain: the pending item goes, and the node is draining on its own record now.
    const [sent] = queue.sent('drain') as ScaleDownMessage[];
    const drainId = drainIdFor(sent!.decisionId);
    await store.createDrain({ drainId, decisionId: sent!.decisionId, nodeId: ids[0]!, pool: POOL, startedAt: clock.now().toISOString(), reason: sent!.reason, moves: [], kind: 'manual' }, clock.now());
    await store.transitionNode(ids[0]!, { from: 'active', to: 'draining', expectedVersion: (await store.getNode(ids[0]!))!.version, patch: { drainId } }, clock.now());
    clock.advance(MIN);
    const after = await report(all, gears);
    expect(after.outcomes[0]?.kind).not.toBe('scale-down');
    expect((await store.listControls()).pendingDrains).toEqual([]);
    expect(queue.sent('drain')).toHaveLength(1);
  });

  it('renews past a drifted node whose gear moved its maxMovesPerGear this week, with every pool\'s nodes counted', async () => {
    const { store, clock, ids, queue, evaluator } = await renewingPool(() => true);
    // Node 1's gear moved twice in the last 7 days (maxMovesPerGear 2): renewing node 1 would move it a third time.
    await store.recordGearMoves([1, 2].map((days) => ({ uuid: 'g-1', at: new Date(clock.now().getTime() - days * 86_400_000).toISOString(), key: `old-${days}` })), 7 * 86_400_000);
    // Node 1 restarts the fewest tenants (its gears idle), so it is the first renewal candidate.
    const gears = (n: number) => Array.from({ length: 60 }, (_, i) => ({ uuid: i === 0 ? `g-${n}` : `g-${n}-${i}`, app: `app-${n}-${i}`, size: 'small' }));
    const { outcomes } = await evaluator.handleBatch(
      ids.map((nodeId, i) => ({
        id: nodeId,
        message: { type: 'node-stats' as const, v: 1 as const, nodeId, district: 'd1', profile: 'small', activeGears: 60, maxActiveGears: 100, idleGears: i === 0 ? 60 : 0, gears: gears(i + 1), reportedAt: clock.now().toISOString() },
      })),
    );
    expect(outcomes).toMatchObject([{ pool: POOL, kind: 'scale-up' }]);
    expect(queue.sent('scale')).toEqual([expect.objectContaining({ reason: expect.stringContaining('renew d1-small-2.example.com') })]);
    expect((await store.listControls()).pendingDrains.map((pending) => pending.nodeId)).toEqual([ids[1]]);
  });

  it('a batch: one scale-up for both replacements, and a drain for each drifted node once both joined', async () => {
    // maxDraining 4: a decision may drain 2, so a batch of 2.
    const { store, clock, config, ids, queue, evaluator } = await renewingPool((i) => i < 2, { maxDraining: 4 });
    const report = (nodeIds: string[], gears = 60) =>
      evaluator.handleBatch(nodeIds.map((nodeId) => ({ id: nodeId, message: { type: 'node-stats' as const, v: 1 as const, nodeId, district: 'd1', profile: 'small', activeGears: gears, maxActiveGears: 100, reportedAt: clock.now().toISOString() } })));
    await report(ids);
    const [replacements] = queue.sent('scale') as ScaleUpMessage[];
    expect(replacements).toMatchObject({ count: 2, reason: expect.stringMatching(/^renew 2 drifted nodes, d1-small-1.example.com .*, d1-small-2.example.com /) });
    expect((await store.listControls()).pendingDrains.map((pending) => [pending.nodeId, pending.replacementDecisionId])).toEqual([
      [ids[0], replacements!.decisionId],
      [ids[1], replacements!.decisionId],
    ]);
    const provisioner = new NodeProvisioner({ store, cloud: new SimulatedCloud(clock, { bootDelayMs: 2 * MIN }), clock, metrics: new InMemoryMetrics(), log: new MemoryLog(), sleep: async (ms) => void clock.advance(ms) }, config);
    await provisioner.handleBatch([{ id: 's1', message: replacements! }]);
    const added = (await store.listNodes(POOL)).filter((node) => !ids.includes(node.nodeId)).map((node) => node.nodeId);
    expect(added).toHaveLength(2);
    // One joined: neither drain starts.
    clock.advance(MIN);
    await report([added[0]!], 0);
    clock.advance(MIN);
    await report(ids);
    expect(queue.sent('drain')).toHaveLength(0);
    // Both joined: a drain for each, under ids of their own (one scale-up, two drains).
    clock.advance(MIN);
    await report([added[1]!], 0);
    clock.advance(MIN);
    await report(ids);
    const drains = queue.sent('drain') as ScaleDownMessage[];
    expect(drains.map((drain) => drain.nodeId)).toEqual([ids[0], ids[1]]);
    expect(new Set(drains.map((drain) => drain.decisionId)).size).toBe(2);
  });

  it('scaleDown.expireAfter: the node launched 40 days ago is renewed the same way, its replacement young and not renewed again', async () => {
    const expiry = { expireAfter: '30d', ageDays: (i: number) => (i === 1 ? 40 : 3) };
    const { store, clock, config, ids, queue, evaluator } = await renewingPool(() => false, {}, expiry);
    const report = (nodeIds: string[], gears = 60) =>
      evaluator.handleBatch(
        nodeIds.map((nodeId) => ({ id: nodeId, message: { type: 'node-stats' as const, v: 1 as const, nodeId, district: 'd1', profile: 'small', activeGears: gears, maxActiveGears: 100, idleGears: 0, disruptiveGears: gears, reportedAt: clock.now().toISOString() } })),
      );
    await report(ids);
    const [replacement] = queue.sent('scale') as ScaleUpMessage[];
    expect(replacement).toMatchObject({ count: 1, reason: expect.stringContaining(`renew ${ids[1]} (60 gears, 60 restart a tenant; expired: launched 40d ago (expireAfter 30d))`) });
    expect((await store.listControls()).pendingDrains).toMatchObject([{ nodeId: ids[1], by: RENEWAL_BY }]);

    const provisioner = new NodeProvisioner({ store, cloud: new SimulatedCloud(clock, { bootDelayMs: 2 * MIN }), clock, metrics: new InMemoryMetrics(), log: new MemoryLog(), sleep: async (ms) => void clock.advance(ms) }, config);
    expect((await provisioner.handleBatch([{ id: 's1', message: replacement! }])).failures).toEqual([]);
    const added = (await store.listNodes(POOL)).find((node) => !ids.includes(node.nodeId))!;
    clock.advance(2 * MIN);
    await report([added.nodeId], 0);
    clock.advance(MIN);
    await report([ids[0]!, ids[2]!]);
    const drains = queue.sent('drain') as ScaleDownMessage[];
    expect(drains).toEqual([expect.objectContaining({ nodeId: ids[1], decisionId: expect.stringMatching(new RegExp(`^manual:renew:${replacement!.decisionId}:[0-9a-f]{8}$`)) })]);
    // Past delayAfterAdd: the expired node's drain is on the queue (its renewal asked for already), and the young
    // replacement and the 3-day-old nodes are not due.
    clock.advance(20 * MIN);
    const later = await report([ids[0]!, ids[2]!, added.nodeId]);
    expect(later.outcomes[0]).toMatchObject({ kind: 'no-action' });
    expect(queue.sent('scale')).toHaveLength(1);
  });

  it('a launch template at $Latest: the evaluator reads it as a number, so nodes launched from an older version are drifted and renewed', async () => {
    const store = await harness.create();
    const clock = new VirtualClock('2026-11-21T10:00:00Z');
    const lt = 'lt-0123456789abcdef0';
    const config = parseConfig({
      handler: 'ec2',
      scaleUp: { threshold: 0.8, target: 0.7, headroomGears: 0, forecast: { enabled: false } },
      scaleDown: { utilizationThreshold: 0.5, renewDrifted: true, payoff: { enabled: false } },
      pools: [{ district: 'd1', profile: 'small', max: 10, gearsPerNode: 100, naming: { base: 'd1-small', domain: 'example.com' }, template: { launchTemplate: { id: lt }, instanceTypes: [{ name: 'sim.large', vcpus: 2, memoryGiB: 8 }], subnets: ['subnet-1'] } }],
    });
    const at = (version: number) => ({ ...launchedFromTemplate(config.pools[0]!.template), image: `${lt}@${version}` });
    const ids = [1, 2, 3].map((n) => `d1-small-${n}.example.com`);
    for (const [i, nodeId] of ids.entries()) {
      await store.createNode({ nodeId, pool: POOL, district: 'd1', profile: 'small', state: 'active', createdAt: clock.now().toISOString(), origin: 'provisioned', protected: false, launchedFrom: at(i === 2 ? 6 : 7) }, clock.now());
    }
    const report = (evaluator: ThresholdEvaluator) =>
      evaluator.handleBatch(
        ids.map((nodeId) => ({ id: nodeId, message: { type: 'node-stats' as const, v: 1 as const, nodeId, district: 'd1', profile: 'small', activeGears: 60, maxActiveGears: 100, idleGears: 0, disruptiveGears: 60, reportedAt: clock.now().toISOString() } })),
      );
    const ports = (versions?: ScriptedLaunchTemplates) => ({ store, queue: new RecordingQueue({ fifo: ['scale', 'drain'] }), clock, metrics: new InMemoryMetrics(), log: new MemoryLog(), ...(versions ? { launchTemplateVersions: versions } : {}) });

    // $Latest not read (a refused read): no node is called drifted on a guess.
    const unread = ports(new ScriptedLaunchTemplates().failNext(new ValidationError({ path: 'pools[].template.launchTemplate', message: 'access denied' })));
    const blind = await report(new ThresholdEvaluator(unread, config));
    expect(blind.outcomes[0]).toMatchObject({ kind: 'no-action' });
    expect(unread.queue.sent('scale')).toEqual([]);
    const due = (metrics: InMemoryMetrics) => metrics.points.filter((point) => point.name === 'NodesDueForRenewal').map((point) => [point.value, point.dimensions.pool]);
    expect(due(unread.metrics)).toEqual([[0, POOL]]);

    // Read as 7: the node launched from 6 is renewed.
    clock.advance(MIN);
    const read = ports(new ScriptedLaunchTemplates().set(lt, 7));
    await report(new ThresholdEvaluator(read, config));
    expect(read.queue.sent('scale')).toEqual([expect.objectContaining({ count: 1, reason: expect.stringContaining(`renew ${ids[2]} (60 gears, 60 restart a tenant; drifted: image ${lt}@6 -> ${lt}@7)`) })]);
    expect(due(read.metrics)).toEqual([[1, POOL]]);
    // The read is kept on the pool: `status` (no EC2 permission of its own) shows the same drift.
    expect((await store.getPool(POOL))?.launchTemplateRead).toEqual({ template: `${lt}@$Latest`, version: '7', readAt: clock.now().toISOString() });
    const view = statusView(await readSnapshot(store, config, clock.now()), 'local state');
    expect(view.pools[0]!.driftedNodes).toEqual([ids[2]]);
    expect(view.pools[0]!.nodeList.find((node) => node.nodeId === ids[2])?.drift).toBe(`drifted: image ${lt}@6 -> ${lt}@7`);
    // When the pool's template was first seen as this version (scaleDown.driftGrace counts from it): the unread
    // $Latest was another template to it, and a later read of the same version leaves the time as it was.
    const seenAt = clock.now().toISOString();
    const atVersion = templateIdentity({ ...config.pools[0]!.template, launchTemplate: { id: lt, version: '7' } });
    expect((await store.getPool(POOL))?.templateSeen).toEqual({ identity: atVersion, since: seenAt });
    clock.advance(MIN);
    await report(new ThresholdEvaluator(ports(new ScriptedLaunchTemplates().set(lt, 7)), config));
    expect((await store.getPool(POOL))?.templateSeen).toEqual({ identity: atVersion, since: seenAt });
    expect((await store.getPool(POOL))?.lastEvaluatedAt).toBe(clock.now().toISOString());
  });
});
