/**
 * Refused gear creations on the state table (dynalite): the broker-side
 * reporter's gears-refused makes the evaluator scale up at once, for every
 * waiting gear plus headroom in one decision (every open slot counted as
 * taken, whatever older reports say), with the reason in the decision log; the reports that keep coming while those nodes boot buy
 * nothing more; and a report from anyone but the broker's reporter, for a
 * pool nobody configured, or too old, changes nothing. The same reporter's
 * district-capacity is kept on the pool, and refusals the district's UIDs
 * caused, not its nodes, buy nothing.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { SimulatedCloud } from '../../lib/adapters/local/simulated-cloud.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { ThresholdEvaluator, type StatsItem } from '../../lib/app/evaluate.js';
import { NodeProvisioner } from '../../lib/app/provision.js';
import { parseConfig } from '../../lib/config/index.js';
import { ValidationError } from '../../lib/errors.js';
import type { DistrictCapacityMessage, GearsRefusedMessage, ScaleUpMessage } from '../../lib/messages/index.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { RecordingQueue } from '../support/recording-queue.js';

const BROKER_ROLE = 'AROABROKERREPORTER01';
const NODE_ROLE = 'AROANODEHOSTROLE0001';
const template = { imageId: 'ami-1', instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }], subnets: ['subnet-1'] };
const input = {
  handler: 'ec2' as const,
  limits: { maxNodesTotal: 200 },
  statsAuth: { nodeRoleIds: [NODE_ROLE], reporterIds: [BROKER_ROLE] },
  scaleUp: { threshold: 0.98, target: 0.96, headroomGears: 30, observedHeadroom: { enabled: false }, forecast: { enabled: false, bootDelay: '2m' } },
  pools: [
    { district: 'd1', profile: 'small', min: 1, max: 100, gearsPerNode: 100, naming: { base: 'small' }, template },
    { district: 'd2', profile: 'small', min: 1, max: 100, gearsPerNode: 100, naming: { base: 'smalltwo' }, template },
  ],
};
const config = parseConfig(input);

describe('gears-refused through the threshold evaluator (dynalite)', () => {
  const harness = dynaliteHarness();
  afterAll(async () => harness.close());

  let store: StateStore;
  let clock: VirtualClock;
  let queue: RecordingQueue;
  let log: MemoryLog;
  let metrics: InMemoryMetrics;
  let evaluator: ThresholdEvaluator;
  let provisioner: NodeProvisioner;
  const nodeIds = Array.from({ length: 10 }, (_, i) => `small-${100 + i}.example.com`);

  const stats = (gears: number): StatsItem[] =>
    nodeIds.map((nodeId, i) => ({
      id: `s${i}`,
      message: { type: 'node-stats', v: 1, nodeId, district: 'd1', profile: 'small', activeGears: gears, maxActiveGears: 100, reportedAt: clock.now().toISOString() },
    }));
  const refused = (gears: number, over: Partial<GearsRefusedMessage> = {}, senderId = `${BROKER_ROLE}:i-0b0b0b0b0b0b0b0b0`): StatsItem => ({
    id: 'r1',
    senderId,
    message: {
      type: 'gears-refused',
      v: 1,
      district: 'd1',
      profile: 'small',
      refused: gears,
      windowStart: new Date(clock.nowMs() - 60_000).toISOString(),
      windowEnd: clock.now().toISOString(),
      ...over,
    },
  });

  const districtCapacity = (availableCapacity: number, over: Partial<DistrictCapacityMessage> = {}, senderId = `${BROKER_ROLE}:i-0b0b0b0b0b0b0b0b0`): StatsItem => ({
    id: 'c1',
    senderId,
    message: { type: 'district-capacity', v: 1, district: 'd1', profile: 'small', maxCapacity: 6000, availableCapacity, readAt: new Date(clock.nowMs() - 60_000).toISOString(), ...over },
  });

  beforeEach(async () => {
    store = await harness.create();
    clock = new VirtualClock('2026-11-24T10:00:00Z');
    queue = new RecordingQueue({ fifo: ['scale', 'drain'] });
    log = new MemoryLog();
    metrics = new InMemoryMetrics();
    const ports = { store, clock, metrics, log };
    evaluator = new ThresholdEvaluator({ ...ports, queue }, config);
    provisioner = new NodeProvisioner({ ...ports, cloud: new SimulatedCloud(clock, { bootDelayMs: 120_000 }), sleep: async (ms) => void clock.advance(ms) }, config);
    // Ten adopted nodes at 95 of 100 gears: 0.95 and 50 free slots, nothing to do.
    expect((await evaluator.handleBatch(stats(95))).outcomes).toEqual([expect.objectContaining({ pool: 'd1/small', kind: 'no-action' })]);
  });

  it('scales up at once for the waiting gears plus headroom, in one decision, and logs why; the reports during the boot buy nothing more', async () => {
    clock.advance(10_000); // within evaluationInterval (30 s) of the last evaluation: evaluated anyway, gears wait
    const { failures, outcomes } = await evaluator.handleBatch([refused(400)]);
    expect(failures).toEqual([]);
    expect(outcomes).toEqual([expect.objectContaining({ pool: 'd1/small', kind: 'scale-up' })]);
    // 950 placed + 400 waiting = 1,350 gears / 0.96 = 1,407 slots: 5 nodes beyond the 1,000 slots, past the sustain window.
    const decision = queue.sent('scale').at(-1) as ScaleUpMessage;
    expect(decision.count).toBe(5);
    expect(decision.reason).toContain('400 gear creations refused in the last 1m (broker), 400 not placed yet: sized for them + headroomGears 30 at once');
    const [logged] = await store.listDecisions('d1/small', 1);
    expect(logged).toMatchObject({ kind: 'scale-up', decisionId: decision.decisionId });
    expect(logged!.reason).toContain('400 gear creations refused in the last 1m (broker)');
    expect((await store.getPool('d1/small'))?.refused).toEqual({ gears: 400, windowStart: '2026-11-24T09:59:10.000Z', windowEnd: '2026-11-24T10:00:10.000Z' });
    expect(metrics.sum('GearsRefused')).toBe(400);

    await provisioner.scaleUp(decision);
    expect((await store.listNodes('d1/small')).filter((n) => n.state === 'provisioning')).toHaveLength(5);

    // The broker keeps refusing while they boot: capacity on the way covers it, no second decision.
    for (let minute = 1; minute <= 2; minute++) {
      clock.advance(60_000);
      const later = await evaluator.handleBatch([...stats(95), refused(400)]);
      expect(later.outcomes).toEqual([expect.objectContaining({ pool: 'd1/small', kind: 'no-action' })]);
      expect(later.outcomes[0]!.reason).not.toContain('action in flight'); // decided by the rule, not held by a lease
    }
    expect(queue.sent('scale')).toHaveLength(1);
  });

  it('counts every open slot taken when the broker refused, though two nodes last reported before the spike: one decision for all of it', async () => {
    clock.advance(60_000);
    await evaluator.handleBatch(stats(60)); // 600 placed, 400 free: nothing to do
    clock.advance(60_000);
    // The spike fills every slot; eight nodes report 100, two have not reported since they showed 60.
    const fresh = stats(100).slice(0, 8);
    const { outcomes } = await evaluator.handleBatch([...fresh, refused(100)]);
    expect(outcomes).toEqual([expect.objectContaining({ pool: 'd1/small', kind: 'scale-up' })]);
    // 1,000 full slots + 100 refused = 1,100 / 0.96 = 1,146 slots: 2 nodes. The reports alone (920 + 100) asked for 1.
    const decision = queue.sent('scale').at(-1) as ScaleUpMessage;
    expect(decision.count).toBe(2);
    expect(decision.reason).toContain('demand outran the boot delay: 100 gears over capacity');
    const [logged] = await store.listDecisions('d1/small', 1);
    expect(logged).toMatchObject({ kind: 'scale-up', decisionId: decision.decisionId });
  });

  it('with scaleUp.waitingRise, keeps what it saw of the waiting demand and buys, a minute on, the pace the gears kept arriving at', async () => {
    const rising = new ThresholdEvaluator({ store, clock, metrics, log, queue }, parseConfig({ ...input, scaleUp: { ...input.scaleUp, waitingRise: true } }));
    clock.advance(10_000);
    await rising.handleBatch([refused(200)]);
    // The first refused minute has no pace: every slot taken, 1,000 + 200 = 1,200 gears / 0.96 = 1,250 slots, +3 nodes.
    const first = queue.sent('scale').at(-1) as ScaleUpMessage;
    expect(first.count).toBe(3);
    expect(first.reason).not.toContain('the pace they kept arriving at');
    expect((await store.getPool('d1/small'))?.waitingSeen).toEqual({ at: '2026-11-24T10:00:10.000Z', gears: 1200, since: '2026-11-24T10:00:10.000Z' });
    await provisioner.scaleUp(first);

    clock.advance(60_000);
    await rising.handleBatch([...stats(100), refused(500)]);
    // 1,000 full slots + 500 refused = 1,500, 300 more than a minute ago; gears have waited a minute, so a minute of
    // that pace comes on top: 1,800 / 0.96 = 1,875 slots, 19 nodes, 6 beyond the 13 running and booting.
    const second = queue.sent('scale').at(-1) as ScaleUpMessage;
    expect(second.decisionId).not.toBe(first.decisionId);
    expect(second.count).toBe(6);
    expect(second.reason).toContain('500 gear creations refused in the last 1m (broker), 500 not placed yet: sized for them + 300 more over the next 2m, the pace they kept arriving at');
    expect((await store.getPool('d1/small'))?.waitingSeen).toEqual({ at: '2026-11-24T10:01:10.000Z', gears: 1500, since: '2026-11-24T10:00:10.000Z' });
  });

  it('shares a report without a district among the pools of its profile', async () => {
    const { district: _none, ...message } = refused(401).message as GearsRefusedMessage;
    await evaluator.handleBatch([{ ...refused(401), message }]);
    expect((await store.getPool('d1/small'))?.refused?.gears).toBe(201);
    expect((await store.getPool('d2/small'))?.refused?.gears).toBe(201);
  });

  it('refuses a report sent by a node host, naming SenderId: dead-lettered, security log, metric, pool unchanged', async () => {
    const before = await store.getPool('d1/small');
    const { failures, outcomes } = await evaluator.handleBatch([refused(400, {}, `${NODE_ROLE}:i-0123456789abcdef0`)]);
    expect(failures).toHaveLength(1);
    expect(failures[0]!.error).toBeInstanceOf(ValidationError);
    expect((failures[0]!.error as ValidationError).field).toBe('SenderId');
    expect((failures[0]!.error as ValidationError).message).toContain(`${NODE_ROLE}:i-0123456789abcdef0`);
    expect(outcomes).toEqual([]);
    expect(log.lines.some((l) => l.level === 'error' && l.message.startsWith('security: gears-refused rejected'))).toBe(true);
    expect(metrics.sum('StatsRejected')).toBe(1);
    expect(await store.getPool('d1/small')).toEqual(before);
    expect(queue.sent('scale')).toHaveLength(0);
  });

  it('refuses a report for a pool the configuration lacks, naming the field and value; drops a stale one; keeps a newer one', async () => {
    const unknown = await evaluator.handleBatch([refused(5, { district: 'd9' })]);
    expect((unknown.failures[0]!.error as ValidationError).field).toBe('district');
    expect((unknown.failures[0]!.error as ValidationError).message).toContain('"d9"');

    const stale = await evaluator.handleBatch([refused(5, { windowStart: '2026-11-24T09:40:00Z', windowEnd: '2026-11-24T09:41:00Z' })]);
    expect(stale).toEqual({ failures: [], outcomes: [] });
    expect((await store.getPool('d1/small'))?.refused).toBeUndefined();

    await evaluator.handleBatch([refused(0)]);
    const older = await evaluator.handleBatch([refused(300, { windowStart: '2026-11-24T09:58:00Z', windowEnd: '2026-11-24T09:59:00Z' })]);
    expect(older.outcomes).toEqual([]);
    expect((await store.getPool('d1/small'))?.refused?.gears).toBe(0);
    expect(queue.sent('scale')).toHaveLength(0);
  });

  it('keeps the district read on the pool; refusals for want of UIDs then buy no node, and the decision log says why', async () => {
    const { failures } = await evaluator.handleBatch([districtCapacity(0)]);
    expect(failures).toEqual([]);
    expect((await store.getPool('d1/small'))?.districtCapacity).toEqual({ maxCapacity: 6000, availableCapacity: 0, readAt: '2026-11-24T09:59:00.000Z' });
    expect(metrics.sum('DistrictUidsLeft')).toBe(0);
    expect(metrics.sum('DistrictUidsLow')).toBe(1); // DistrictUidsLowAlarm
    expect(log.lines.some((l) => l.level === 'warn' && l.message.startsWith('district d1 has 0 of 6000 UIDs left: the broker refuses every new gear there'))).toBe(true);

    clock.advance(10_000);
    const { outcomes } = await evaluator.handleBatch([refused(400)]);
    expect(outcomes).toEqual([expect.objectContaining({ pool: 'd1/small', kind: 'no-action' })]);
    expect(queue.sent('scale')).toHaveLength(0);
    const [logged] = await store.listDecisions('d1/small', 1);
    expect(logged!.reason).toContain('400 gear creations refused in the last 1m (broker), district d1 has 0 of 6000 UIDs left (read 1m10s ago): no node would place them');

    // The operator adds UIDs: the next read evaluates the pool, and the refusals still waiting buy their nodes.
    clock.advance(60_000);
    const after = await evaluator.handleBatch([districtCapacity(2000)]);
    expect(after.outcomes).toEqual([expect.objectContaining({ pool: 'd1/small', kind: 'scale-up' })]);
    expect((queue.sent('scale').at(-1) as ScaleUpMessage).count).toBe(5);
  });

  it('refusals asking for a node in a zone buy none for a pool that names no region (its nodes would join in none), and page; with openshiftRegion they buy as any', async () => {
    clock.advance(10_000);
    const { outcomes } = await evaluator.handleBatch([refused(400, { zonesRequired: true })]);
    expect(outcomes).toEqual([expect.objectContaining({ pool: 'd1/small', kind: 'no-action' })]);
    expect(queue.sent('scale')).toHaveLength(0);
    expect((await store.getPool('d1/small'))?.refused).toMatchObject({ gears: 400, zonesRequired: true });
    const [logged] = await store.listDecisions('d1/small', 1);
    expect(logged!.reason).toContain('the broker requires zones for new gears (its refusals ask for a "gear size/zone combination") and pool d1/small names no openshiftRegion');
    expect(metrics.sum('RefusedForZones')).toBe(400); // ZonesUnnamedAlarm
    expect(log.lines.some((l) => l.level === 'warn' && l.message.startsWith('the broker requires zones for new gears and the pool names no openshiftRegion'))).toBe(true);

    const zoned = parseConfig({ ...input, pools: input.pools.map((pool) => (pool.district === 'd1' ? { ...pool, openshiftRegion: { name: 'east' } } : pool)) });
    const placing = new ThresholdEvaluator({ store, clock, metrics, log, queue }, zoned);
    clock.advance(20_000);
    const after = await placing.handleBatch([refused(400, { zonesRequired: true })]);
    expect(after.outcomes).toEqual([expect.objectContaining({ pool: 'd1/small', kind: 'scale-up' })]);
    expect((queue.sent('scale').at(-1) as ScaleUpMessage).count).toBe(5);
    expect(metrics.sum('RefusedForZones')).toBe(400);
  });

  it('refuses a district read sent by a node host (dead-lettered, pool unchanged); drops one for an unmanaged district, a stale one and an older one', async () => {
    const before = await store.getPool('d1/small');
    const forged = await evaluator.handleBatch([districtCapacity(0, {}, `${NODE_ROLE}:i-0123456789abcdef0`)]);
    expect((forged.failures[0]!.error as ValidationError).field).toBe('SenderId');
    expect(log.lines.some((l) => l.level === 'error' && l.message.startsWith('security: district-capacity rejected'))).toBe(true);
    expect(await store.getPool('d1/small')).toEqual(before);

    expect(await evaluator.handleBatch([districtCapacity(0, { district: 'd9' })])).toEqual({ failures: [], outcomes: [] });
    expect(await store.getPool('d9/small')).toBeUndefined();
    expect(await evaluator.handleBatch([districtCapacity(0, { readAt: '2026-11-24T09:40:00Z' })])).toEqual({ failures: [], outcomes: [] });
    expect(metrics.sum('StatsDropped')).toBe(2);
    expect((await store.getPool('d1/small'))?.districtCapacity).toBeUndefined();

    await evaluator.handleBatch([districtCapacity(100)]);
    expect(metrics.sum('DistrictUidsLow')).toBe(1); // 100 of 6,000 is under a tenth
    await evaluator.handleBatch([districtCapacity(0, { readAt: '2026-11-24T09:58:00Z' })]);
    expect((await store.getPool('d1/small'))?.districtCapacity?.availableCapacity).toBe(100);
  });

  describe('refusals that go on for half an hour while the district has no UID left', () => {
    /** Each minute: the ten nodes at 95 of 100, the nodes bought since at 0 (no UID for a gear), 50 refusals; the scale-ups provisioned. */
    const halfHour = async (read: boolean) => {
      for (let minute = 0; minute < 30; minute++) {
        clock.advance(60_000);
        const bought = (await store.listNodes('d1/small')).filter((n) => !nodeIds.includes(n.nodeId) && (n.state === 'active' || n.state === 'provisioning'));
        // A bought node reports once it booted (2 minutes): no gear reaches it.
        const booted = bought.filter((n) => clock.nowMs() - Date.parse(n.createdAt) >= 120_000);
        const items: StatsItem[] = [
          ...stats(95),
          ...booted.map((n, i): StatsItem => ({ id: `b${i}`, message: { type: 'node-stats', v: 1, nodeId: n.nodeId, district: 'd1', profile: 'small', activeGears: 0, maxActiveGears: 100, reportedAt: clock.now().toISOString() } })),
          refused(50),
        ];
        if (read && minute % 5 === 0) items.push(districtCapacity(0, { readAt: clock.now().toISOString() }));
        const before = queue.sent('scale').length;
        await evaluator.handleBatch(items);
        for (const decision of queue.sent('scale').slice(before)) await provisioner.scaleUp(decision as ScaleUpMessage);
      }
      return (await store.listNodes('d1/small')).filter((n) => !nodeIds.includes(n.nodeId)).length;
    };

    it('without the district read, buy node after node that stays empty (the hazard: 18 in the half hour)', async () => {
      expect(await halfHour(false)).toBeGreaterThanOrEqual(10);
    });

    it('with the reporter reading the district every 5 minutes, buy none, and every decision says why', async () => {
      expect(await halfHour(true)).toBe(0);
      expect(queue.sent('scale')).toHaveLength(0);
      const logged = await store.listDecisions('d1/small', 10);
      expect(logged.length).toBeGreaterThan(0);
      for (const entry of logged) expect(entry.reason).toContain('UIDs left');
    });
  });
});
