/**
 * The decommissioner on the real state table protocol (dynalite), with EC2
 * and Route 53 mocked at the SDK and a fake platform: the exact calls of a
 * release, the refusals (gears left, protected, unverifiable), resumption
 * after a crash at either side of the termination, and duplicates.
 */
import { DeleteVolumeCommand, DescribeInstancesCommand, EC2Client, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { ChangeResourceRecordSetsCommand, Route53Client } from '@aws-sdk/client-route-53';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { LogCloud } from '../../lib/adapters/cloud/log-cloud.js';
import { Ec2Cloud } from '../../lib/adapters/ec2/cloud.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { Route53Dns } from '../../lib/adapters/route53/dns.js';
import { Decommissioner, STRANDED_DRAINED_MS, type DecommissionerPorts } from '../../lib/app/decommission.js';
import { parseConfig, type Config } from '../../lib/config/index.js';
import type { GearInfo, NodeRecord } from '../../lib/domain/model.js';
import { TransientError } from '../../lib/errors.js';
import type { DrainCompleteMessage } from '../../lib/messages/index.js';
import type { NewNode, StateStore } from '../../lib/ports/state-store.js';
import { Crash, crashingStore } from '../support/crash.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { ec2Error } from '../support/fake-ec2.js';
import { FakePlatform } from '../support/fake-platform.js';
import { RecordingNotifier } from '../support/recording-notifier.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';

const POOL = 'd1/small';
const NODE = 'd1-small-3.example.com';
const INSTANCE = 'i-0000000000000000c';
const VOLUME = 'vol-0000000000000000c';
const T0 = new Date('2026-11-21T12:00:00.000Z');
const CREATED = new Date(T0.getTime() - 2 * 3600_000);
const DRAIN = 'drain:d1-small-3.example.com:1795262400000';

function configWith(pool: Record<string, unknown> = {}, handler: 'ec2' | 'log' = 'ec2'): Config {
  return parseConfig({
    handler,
    dns: { hostedZoneId: 'Z0NODESCALER', ttl: 60 },
    pools: [
      {
        district: 'd1',
        profile: 'small',
        max: 10,
        naming: { base: 'd1-small' },
        template: { imageId: 'ami-1', instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }], subnets: ['subnet-a'], volume: { device: '/dev/xvdc' } },
        ...pool,
      },
    ],
  });
}

describe('Decommissioner (dynalite; EC2 and Route 53 mocked at the SDK; fake platform)', () => {
  const harness = dynaliteHarness();
  const ec2 = mockClient(EC2Client);
  const r53 = mockClient(Route53Client);
  const credentials = { accessKeyId: 'x', secretAccessKey: 'x' };
  let clock: VirtualClock;
  let store: StateStore;
  let platform: FakePlatform;
  let metrics: InMemoryMetrics;
  let log: MemoryLog;
  let notifier: RecordingNotifier;
  let config: Config;

  const ports = (over: Partial<DecommissionerPorts> = {}): DecommissionerPorts => ({
    store,
    cloud: new Ec2Cloud(new EC2Client({ region: 'us-east-1', credentials }), config, { stage: 'test' }),
    dns: new Route53Dns(new Route53Client({ region: 'us-east-1', credentials }), config.dns!),
    platform,
    clock,
    metrics,
    log,
    notifier,
    sleep: async (ms) => void clock.advance(ms),
    random: () => 0.5,
    ...over,
  });
  const decommissioner = (over: Partial<DecommissionerPorts> = {}) => new Decommissioner(ports(over), config);
  const message = (nodeId = NODE): DrainCompleteMessage => ({ type: 'drain-complete', v: 1, drainId: DRAIN, nodeId, pool: POOL, completedAt: T0.toISOString() });
  const gear = (n: number): GearInfo => ({ uuid: `gear-${n}`, app: `app-${n}`, size: 'small' });

  async function drainedNode(fields: Partial<NewNode> = {}): Promise<NodeRecord> {
    return store.createNode(
      {
        nodeId: NODE,
        pool: POOL,
        district: 'd1',
        profile: 'small',
        state: 'drained',
        createdAt: CREATED.toISOString(),
        joinedAt: new Date(CREATED.getTime() + 150_000).toISOString(),
        origin: 'provisioned',
        protected: false,
        cloudName: 'd1-small_3',
        instanceId: INSTANCE,
        volumeId: VOLUME,
        privateIp: '10.0.0.3',
        decisionId: 'up:d1_small:1',
        steps: { hostRequested: CREATED.toISOString(), dnsRegistered: CREATED.toISOString() },
        reason: `drained by ${DRAIN}: 4 gear(s) moved`,
        ...fields,
      },
      new Date(T0.getTime() - 60_000),
    );
  }

  const calls = () => ({
    terminate: ec2.commandCalls(TerminateInstancesCommand).map((c) => c.args[0].input),
    deleteVolume: ec2.commandCalls(DeleteVolumeCommand).map((c) => c.args[0].input),
    describe: ec2.commandCalls(DescribeInstancesCommand).map((c) => c.args[0].input),
    dns: r53.commandCalls(ChangeResourceRecordSetsCommand).map((c) => c.args[0].input),
  });
  const noCloudCalls = () => expect(ec2.calls().length + r53.calls().length).toBe(0);

  beforeEach(async () => {
    clock = new VirtualClock(T0);
    store = await harness.create();
    platform = new FakePlatform().node(NODE, 'd1');
    metrics = new InMemoryMetrics();
    log = new MemoryLog();
    notifier = new RecordingNotifier();
    config = configWith();
    ec2.reset();
    r53.reset();
    ec2.on(TerminateInstancesCommand).resolves({ TerminatingInstances: [{ InstanceId: INSTANCE, CurrentState: { Name: 'shutting-down', Code: 32 } }] });
    ec2.on(DeleteVolumeCommand).resolves({});
    r53.on(ChangeResourceRecordSetsCommand).resolves({ ChangeInfo: { Id: 'c', Status: 'PENDING', SubmittedAt: T0 } });
  });

  afterAll(async () => {
    ec2.restore();
    r53.restore();
    await harness.close();
  });

  it('releases a drained, empty node with exactly these calls, and records everything', async () => {
    await drainedNode();
    const outcome = await decommissioner().drainComplete(message());

    expect(outcome.kind).toBe('terminated');
    expect(platform.calls).toEqual([
      { op: 'listGears', nodeId: NODE },
      { op: 'removeNode', nodeId: NODE, district: 'd1' },
    ]);
    expect(calls()).toStrictEqual({
      terminate: [{ InstanceIds: [INSTANCE] }],
      deleteVolume: [{ VolumeId: VOLUME }],
      describe: [],
      dns: [
        {
          HostedZoneId: 'Z0NODESCALER',
          ChangeBatch: {
            Comment: `nodescaler: delete ${NODE}`,
            Changes: [{ Action: 'DELETE', ResourceRecordSet: { Name: NODE, Type: 'A', TTL: 60, ResourceRecords: [{ Value: '10.0.0.3' }] } }],
          },
        },
      ],
    });
    const node = await store.getNode(NODE);
    const at = T0.toISOString();
    expect(node).toMatchObject({
      state: 'terminated',
      stateChangedAt: at,
      reason: `decommissioned: removed from district d1, DNS record deleted, instance ${INSTANCE} terminated, volume ${VOLUME} deleted`,
    });
    expect(node?.steps).toMatchObject({ releaseFor: 'decommission', removedFromDistrict: at, dnsDeleted: at, instanceTerminated: at, volumeDeleted: at });
    expect((await store.getPool(POOL))?.lastScaleDownAt).toBe(at);
    expect(metrics.points.filter((p) => p.name === 'NodesTerminated' || p.name === 'NodeLifetime')).toEqual([
      { name: 'NodesTerminated', value: 1, unit: 'Count', dimensions: { pool: POOL } },
    ]);
    expect(log.lines.find((line) => line.message === 'node terminated')?.attributes.lifetimeSeconds).toBe(7200);
    const [logged] = await store.listDecisions(POOL, 1);
    expect(logged).toMatchObject({ kind: 'scale-down', reason: `node ${NODE} terminated: removed from district d1, DNS record deleted, instance ${INSTANCE} terminated, volume ${VOLUME} deleted` });
  });

  it('reads the gear volume from the instance before terminating it, when the table does not have it', async () => {
    await drainedNode({ volumeId: undefined });
    ec2.on(DescribeInstancesCommand).resolves({
      Reservations: [{ Instances: [{ InstanceId: INSTANCE, State: { Name: 'running', Code: 16 }, Tags: [{ Key: 'nodescaler:pool', Value: POOL }], BlockDeviceMappings: [{ DeviceName: '/dev/xvdc', Ebs: { VolumeId: VOLUME } }] }] }],
    });
    await decommissioner().drainComplete(message());
    expect(calls().describe).toStrictEqual([{ Filters: [{ Name: 'instance-id', Values: [INSTANCE] }], MaxResults: 1000 }]);
    expect(calls().deleteVolume).toStrictEqual([{ VolumeId: VOLUME }]);
    const order = ec2.calls().map((call) => (call.args[0] as object).constructor.name);
    expect(order).toEqual(['DescribeInstancesCommand', 'TerminateInstancesCommand', 'DeleteVolumeCommand']);
  });

  it('refuses a node that still holds a gear: names the gear, hands the node back to draining, terminates nothing', async () => {
    await drainedNode();
    platform.gears.set(NODE, [gear(7)]);
    const outcome = await decommissioner().drainComplete(message());

    expect(outcome).toEqual({ nodeId: NODE, kind: 'refused', reason: `decommission refused: the platform lists 1 gear on ${NODE} (gear-7 (app-7))` });
    expect(await store.getNode(NODE)).toMatchObject({ state: 'draining', reason: `decommission refused: the platform lists 1 gear on ${NODE} (gear-7 (app-7)); handed back to the gear mover` });
    noCloudCalls();
    expect(platform.ops('removeNode')).toEqual([]);
    expect(log.lines.find((line) => line.level === 'error')).toMatchObject({ attributes: { nodeId: NODE, gearCount: 1, gears: ['gear-7 (app-7)'] } });
    expect(metrics.sum('DecommissionRefused')).toBe(1);
    expect((await store.listDecisions(POOL, 1))[0]).toMatchObject({ kind: 'refused', details: { nodeId: NODE, gears: 1 } });
    expect(notifier.notices[0]?.subject).toBe(`nodescaler: decommission of ${NODE} refused`);

    // The same drain-complete again: the node is draining now, its drain not completed: retried later, still nothing terminated.
    await expect(decommissioner().drainComplete(message())).rejects.toBeInstanceOf(TransientError);
    noCloudCalls();
  });

  it.each([
    ['its protection flag', { protected: true }, {}],
    ['the pool\'s protectedNodes', {}, { protectedNodes: [NODE] }],
  ])('refuses a protected node (%s): handed back, never terminated, even with a drain-complete', async (_, nodeFields, poolFields) => {
    config = configWith(poolFields);
    await drainedNode(nodeFields);
    const outcome = await decommissioner().drainComplete(message());
    expect(outcome).toMatchObject({ kind: 'refused', reason: `decommission refused: node ${NODE} is protected` });
    expect((await store.getNode(NODE))?.state).toBe('draining');
    noCloudCalls();
    expect(platform.calls).toEqual([]);
  });

  it("refuses a node an operator protected at runtime (the pool's protectedNodes override), never terminated", async () => {
    await drainedNode();
    await store.putOverrides({ pool: POOL, values: { protectedNodes: [NODE] }, updatedAt: clock.now().toISOString(), updatedBy: 'alice', reason: 'canary' }, 0);
    const outcome = await decommissioner().drainComplete(message());
    expect(outcome).toMatchObject({ kind: 'refused', reason: `decommission refused: node ${NODE} is protected` });
    expect((await store.getNode(NODE))?.state).toBe('draining');
    noCloudCalls();
    expect(platform.calls).toEqual([]);
  });

  it('never releases a node whose gears the platform cannot list; the tick checks it again after 10 minutes', async () => {
    await drainedNode();
    platform.districts.delete(NODE);
    platform.gears.delete(NODE);
    const outcome = await decommissioner().drainComplete(message());
    expect(outcome.kind).toBe('refused');
    expect(await store.getNode(NODE)).toMatchObject({ state: 'drained', steps: { decommissionRefused: T0.toISOString() } });
    noCloudCalls();

    clock.advance(STRANDED_DRAINED_MS - 1000);
    expect((await decommissioner().tick()).refused).toEqual([]);
    platform.node(NODE, 'd1');
    clock.advance(1000);
    expect((await decommissioner().tick()).terminated).toEqual([NODE]);
    expect(calls().terminate).toHaveLength(1);
  });

  it('keeps a node drained while another drain moves gears onto it, and hands it back once they landed', async () => {
    // The node was chosen as the target of another drain's moves, then drained itself: the platform lists no gear yet.
    await drainedNode();
    const other = 'drain:d1-small-1.example.com:1';
    const inFlight = { gear: gear(4), target: NODE, state: 'moving' as const, attempts: 1, startedAt: T0.toISOString(), commandId: 'cmd-4' };
    await store.createDrain({ drainId: other, decisionId: 'event:1', nodeId: 'd1-small-1.example.com', pool: POOL, startedAt: T0.toISOString(), reason: 'rebalance', moves: [inFlight] }, T0);

    const outcome = await decommissioner().drainComplete(message());
    const reason = `decommission refused: 1 gear is moving onto ${NODE} (gear-4 (app-4); drain ${other}): it is not empty until they land`;
    expect(outcome).toEqual({ nodeId: NODE, kind: 'refused', reason });
    expect(await store.getNode(NODE)).toMatchObject({ state: 'drained', steps: { decommissionRefused: T0.toISOString() } });
    noCloudCalls();
    expect(platform.ops('removeNode')).toEqual([]);
    expect((await store.listDecisions(POOL, 1))[0]).toMatchObject({ kind: 'refused', reason });

    // The move lands: the tick's next check finds the gear and hands the node back to the gear mover.
    clock.advance(STRANDED_DRAINED_MS);
    const [stored] = (await store.getDrain(other))!.moves;
    await store.writeMoves(other, [{ kind: 'update', move: { ...inFlight, state: 'moved', finishedAt: clock.now().toISOString() }, expectedVersion: stored!.version! }]);
    platform.gears.set(NODE, [gear(4)]);
    expect((await decommissioner().tick()).refused).toEqual([NODE]);
    expect((await store.getNode(NODE))?.state).toBe('draining');
    noCloudCalls();
  });

  describe('resumption after a crash', () => {
    it('between the termination and its record: terminates again (harmless), deletes the volume once', async () => {
      await drainedNode();
      const crashing = crashingStore(store);
      crashing.crashBefore((write) => write.patch.steps?.instanceTerminated !== undefined, 'recording the termination');
      await expect(decommissioner({ store: crashing }).drainComplete(message())).rejects.toBeInstanceOf(Crash);
      expect(calls().deleteVolume).toEqual([]);
      expect((await store.getNode(NODE))?.state).toBe('terminating');

      const outcome = await decommissioner().drainComplete(message());
      expect(outcome.kind).toBe('terminated');
      expect(calls().terminate).toStrictEqual([{ InstanceIds: [INSTANCE] }, { InstanceIds: [INSTANCE] }]);
      expect(calls().deleteVolume).toStrictEqual([{ VolumeId: VOLUME }]);
      expect(platform.ops('removeNode')).toHaveLength(1);
      expect(calls().dns).toHaveLength(1);
    });

    it('between the recorded termination and the volume delete: the tick deletes the volume once, terminates nothing again', async () => {
      await drainedNode();
      const crashing = crashingStore(store);
      crashing.crashBefore((write) => write.pool === POOL && write.patch.lastScaleDownAt !== undefined, 'recording the last delete');
      await expect(decommissioner({ store: crashing }).drainComplete(message())).rejects.toBeInstanceOf(Crash);
      expect(calls().terminate).toHaveLength(1);
      expect(calls().deleteVolume).toEqual([]);

      clock.advance(60_000);
      const report = await decommissioner().tick();
      expect(report.terminated).toEqual([NODE]);
      expect(calls().terminate).toHaveLength(1);
      expect(calls().deleteVolume).toStrictEqual([{ VolumeId: VOLUME }]);
      expect((await store.getPool(POOL))?.lastScaleDownAt).toBe(T0.toISOString());
      expect(metrics.sum('NodesTerminated')).toBe(1);
    });

    it('waits for a volume still attached, and deletes it on a later tick', async () => {
      await drainedNode();
      ec2.on(DeleteVolumeCommand).rejectsOnce(ec2Error('VolumeInUse')).resolves({});
      const outcome = await decommissioner().drainComplete(message());
      expect(outcome).toEqual({ nodeId: NODE, kind: 'waiting', reason: `waiting for volume ${VOLUME} to detach` });
      expect((await store.getNode(NODE))?.state).toBe('terminating');
      expect((await store.getPool(POOL))?.lastScaleDownAt).toBe(T0.toISOString());

      clock.advance(60_000);
      expect((await decommissioner().tick()).terminated).toEqual([NODE]);
      expect(calls().terminate).toHaveLength(1);
      expect(calls().deleteVolume).toHaveLength(2);
      expect(metrics.sum('NodesTerminated')).toBe(1);
    });
  });

  describe('duplicates', () => {
    it('terminates once for a drain-complete delivered twice in a batch and again later', async () => {
      await drainedNode();
      const { failures, outcomes } = await decommissioner().handleBatch([
        { id: 'm1', message: message() },
        { id: 'm2', message: message() },
      ]);
      await decommissioner().drainComplete(message());
      expect(failures).toEqual([]);
      expect(outcomes.map((o) => o.kind)).toEqual(['terminated', 'already-terminated']);
      expect(calls().terminate).toHaveLength(1);
      expect(calls().deleteVolume).toHaveLength(1);
      expect(platform.ops('removeNode')).toHaveLength(1);
      expect(metrics.sum('NodesTerminated')).toBe(1);
    });

    it('terminates once for two deliveries handled at the same time', async () => {
      await drainedNode();
      const outcomes = await Promise.all([decommissioner().drainComplete(message()), decommissioner().drainComplete(message())]);
      expect(outcomes.map((o) => o.kind).sort()).toEqual(['in-progress', 'terminated']);
      expect(calls().terminate).toHaveLength(1);
      expect(calls().deleteVolume).toHaveLength(1);
      expect(metrics.sum('NodesTerminated')).toBe(1);
    });
  });

  describe('other states', () => {
    it('retries an early drain-complete, and takes a draining node whose drain completed', async () => {
      await drainedNode({ state: 'draining' });
      await expect(decommissioner().drainComplete(message())).rejects.toThrow(/still draining/);
      await store.createDrain({ drainId: DRAIN, decisionId: 'down:1', nodeId: NODE, pool: POOL, startedAt: T0.toISOString(), reason: 'test', moves: [] }, T0);
      const drain = await store.getDrain(DRAIN);
      await store.updateDrain(DRAIN, drain!.version, { state: 'completed' }, T0);
      expect((await decommissioner().drainComplete(message())).kind).toBe('terminated');
    });

    it('ignores a drain-complete for an unknown or an active node', async () => {
      expect((await decommissioner().drainComplete(message('nobody.example.com'))).kind).toBe('ignored');
      await drainedNode({ state: 'active' });
      expect(await decommissioner().drainComplete(message())).toEqual({ nodeId: NODE, kind: 'ignored', reason: 'node is active' });
      noCloudCalls();
      expect(platform.calls).toEqual([]);
    });

    it('with handler log: removes the node from its district, logs the host it would release, and only updates the state table', async () => {
      config = configWith({}, 'log');
      await drainedNode({ instanceId: undefined, volumeId: undefined, privateIp: undefined, steps: { hostRequested: CREATED.toISOString() } });
      const outcome = await decommissioner({ cloud: new LogCloud(log, config), dns: undefined }).drainComplete(message());
      expect(outcome.kind).toBe('terminated');
      noCloudCalls();
      expect(log.lines.find((line) => line.message.startsWith('handler log: would release'))).toMatchObject({
        message: `handler log: would release the host of node ${NODE} in pool ${POOL}; nothing was terminated`,
        attributes: { kind: 'remove-node', hostName: NODE, cloudName: 'd1-small_3' },
      });
      expect(await store.getNode(NODE)).toMatchObject({ state: 'terminated', steps: { removedFromDistrict: T0.toISOString(), releaseReported: T0.toISOString() } });
      expect((await store.getPool(POOL))?.lastScaleDownAt).toBe(T0.toISOString());
    });

    it('releases on the tick a node left drained without a drain-complete', async () => {
      await drainedNode();
      expect((await decommissioner().tick()).terminated).toEqual([]);
      clock.advance(STRANDED_DRAINED_MS);
      expect((await decommissioner().tick()).terminated).toEqual([NODE]);
      expect(calls().terminate).toHaveLength(1);
    });
  });
});
