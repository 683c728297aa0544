/**
 * A node that gears reach after its release began: the broker refuses its
 * remove-node ("some apps in mongo are still using it"), and before this
 * the node stayed `terminating` for good, remove-node failing every tick.
 * The release now hands it back before its host goes: `draining` for the
 * gear mover, or `active` when the pool wants capacity, through the stored
 * `handingBack` phase, with a metric and a decision-log entry. The
 * decommissioner (lib/app), the state table (dynalite), the broker adapter
 * over the broker emulator are the real ones; EC2 is mocked at the SDK.
 */
import { EC2Client, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { Ec2Cloud } from '../../lib/adapters/ec2/cloud.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { OpenShiftBrokerPlatform } from '../../lib/adapters/platform/openshift-broker.js';
import { Decommissioner } from '../../lib/app/decommission.js';
import type { GearInfo, NodeRecord } from '../../lib/domain/model.js';
import type { DrainCompleteMessage } from '../../lib/messages/index.js';
import type { Platform } from '../../lib/ports/platform.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { BrokerEmulator } from '../support/broker-emulator.js';
import { BROKER, DOCUMENT, ec2OnBrokerConfig } from '../support/broker-platform.js';
import { Crash, crashingStore } from '../support/crash.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { RecordingDns } from '../support/recording-dns.js';
import { RecordingNotifier } from '../support/recording-notifier.js';

const POOL = 'd1/small';
const NODE = 'd1-small-3.example.com';
const NEIGHBOUR = 'd1-small-1.example.com';
const INSTANCE = 'i-0000000000000000c';
const DRAIN = 'drain:d1-small-3.example.com:1';
const T0 = new Date('2026-11-24T01:00:00.000Z');
const config = ec2OnBrokerConfig();
const landed: GearInfo = { uuid: '5f0c0ffee0000000000000000000a001', app: 'shop', size: 'small' };

describe('a release that finds gears before the host goes hands the node back (dynalite, broker emulator)', () => {
  const harness = dynaliteHarness();
  const ec2 = mockClient(EC2Client);
  let clock: VirtualClock;
  let store: StateStore;
  let broker: BrokerEmulator;
  let metrics: InMemoryMetrics;
  let notifier: RecordingNotifier;

  beforeEach(async () => {
    clock = new VirtualClock(T0);
    store = await harness.create();
    broker = new BrokerEmulator({ clock, brokerInstanceId: BROKER, documentName: DOCUMENT });
    broker.createDistrict('d1', 'small');
    for (const name of [NODE, NEIGHBOUR]) {
      broker.addNodeHost(name, 'small', 100);
      broker.joinDistrict('d1', name);
    }
    broker.placeGear(NEIGHBOUR, landed);
    // The drain deactivated the node it emptied.
    expect(broker.ctlDistrict('deactivate-node', 'd1', NODE).exitCode).toBe(0);
    metrics = new InMemoryMetrics();
    notifier = new RecordingNotifier();
    ec2.reset();
    ec2.on(TerminateInstancesCommand).resolves({ TerminatingInstances: [{ InstanceId: INSTANCE, CurrentState: { Name: 'shutting-down', Code: 32 } }] });
    await store.ensurePool(POOL);
    await store.createNode(
      {
        nodeId: NODE, pool: POOL, district: 'd1', profile: 'small', state: 'drained', createdAt: new Date(T0.getTime() - 7_200_000).toISOString(),
        joinedAt: new Date(T0.getTime() - 7_000_000).toISOString(), origin: 'provisioned', protected: false, instanceId: INSTANCE, drainId: DRAIN,
        reason: `drained by ${DRAIN}`,
      },
      new Date(T0.getTime() - 60_000),
    );
  });
  afterAll(async () => {
    ec2.restore();
    await harness.close();
  });

  const sleep = async (ms: number) => void clock.advance(ms);
  const brokerPlatform = () => new OpenShiftBrokerPlatform(broker.client(), { brokerInstanceId: BROKER, documentName: DOCUMENT, commandTimeoutMs: 600_000, brokerDir: '/var/www/openshift/broker', sleep, clock });
  /** The broker adapter, but a gear lands on the node (an operator's oo-admin-move) after the last check, just before remove-node. */
  const landingBeforeRemove = (): Platform => {
    const inner = brokerPlatform();
    return new Proxy(inner, {
      get(target, property, receiver) {
        if (property === 'removeNode') {
          return async (district: string, nodeId: string) => {
            if (broker.whereIs(landed.uuid) !== nodeId) {
              broker.removeGear(landed.uuid);
              broker.placeGear(nodeId, landed);
            }
            return target.removeNode(district, nodeId);
          };
        }
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  };
  /**
   * The broker adapter, but the node is in no district when its release first removes it, and joins its district with
   * a gear right after (a host still booting when its launch was failed; found by a soak run).
   */
  const joiningAfterRemoval = (): Platform => {
    const inner = brokerPlatform();
    let removals = 0;
    return new Proxy(inner, {
      get(target, property, receiver) {
        if (property === 'removeNode') {
          return async (district: string, nodeId: string) => {
            removals++;
            try {
              return await target.removeNode(district, nodeId);
            } finally {
              if (removals === 1) {
                broker.joinDistrict('d1', nodeId);
                broker.removeGear(landed.uuid);
                broker.placeGear(nodeId, landed);
              }
            }
          };
        }
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  };
  const decommissioner = (platform: Platform, over: { store?: StateStore; dns?: RecordingDns } = {}) =>
    new Decommissioner(
      {
        ...(over.dns ? { dns: over.dns } : {}),
        store: over.store ?? store,
        cloud: new Ec2Cloud(new EC2Client({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }), config, { stage: 'test' }),
        platform, clock, metrics, log: new MemoryLog(), notifier, sleep, random: () => 0.5,
      },
      config,
    );
  const message: DrainCompleteMessage = { type: 'drain-complete', v: 1, drainId: DRAIN, nodeId: NODE, pool: POOL, completedAt: T0.toISOString() };
  const removeNodes = () => broker.sent.filter((input) => input.Parameters?.action?.[0] === 'remove-node').length;

  it('hands the node back to the gear mover, its host kept, with the gear named in its reason, the decision log and a metric', async () => {
    const outcome = await decommissioner(landingBeforeRemove()).drainComplete(message);

    expect(outcome.kind).toBe('refused');
    expect(ec2.commandCalls(TerminateInstancesCommand)).toHaveLength(0);
    const node = (await store.getNode(NODE))!;
    expect(node.state).toBe('draining');
    expect(node.reason).toMatch(/^release of d1-small-3\.example\.com stopped before its host was terminated: the platform refused remove-node \(node .* still holds gears .*\); the platform lists 1 gear on it \(5f0c0ffee0000000000000000000a001 \(shop\)\); handed back to the gear mover/);
    // The release's own steps are gone, so a later release starts afresh; the hand-back is on record.
    expect(node.releasePhase).toBeUndefined();
    expect(node.steps?.releaseFor).toBeUndefined();
    expect(node.steps?.handBackTo).toBeUndefined();
    expect(node.steps?.handedBackAt).toBe(clock.now().toISOString());
    // Still in its district, closed to new gears, for the gear mover's redrain to empty.
    expect(broker.membership(NODE)).toEqual({ district: 'd1', active: false });
    expect(broker.whereIs(landed.uuid)).toBe(NODE);
    expect(metrics.sum('ReleasesHandedBack')).toBe(1);
    const [entry] = (await store.listDecisions(POOL, 20)).filter((d) => d.kind === 'refused');
    expect(entry).toMatchObject({ kind: 'refused', reason: node.reason, details: { nodeId: NODE, handedBackAs: 'draining', releaseFor: 'decommission' } });
    expect(notifier.notices.map((n) => n.subject)).toContain(`nodescaler: release of ${NODE} called off`);

    // Nothing more happens to it on the decommissioner's side: the tick leaves a draining node alone.
    const removes = removeNodes();
    const report = await decommissioner(landingBeforeRemove()).tick();
    expect(report).toMatchObject({ terminated: [], refused: [], errors: [] });
    expect(removeNodes()).toBe(removes);
  });

  it('hands the node back as active, opened on the platform again, when the pool has been at its scale-up threshold', async () => {
    const pool = (await store.getPool(POOL))!;
    await store.updatePool(POOL, pool.version, { highSince: new Date(T0.getTime() - 30_000).toISOString() });

    await decommissioner(landingBeforeRemove()).drainComplete(message);

    const node = (await store.getNode(NODE)) as NodeRecord;
    expect(node.state).toBe('active');
    expect(node.drainId).toBeUndefined();
    expect(node.reason).toMatch(/handed back as active: the pool has been at its scale-up threshold since/);
    expect(broker.membership(NODE)).toEqual({ district: 'd1', active: true });
    expect(ec2.commandCalls(TerminateInstancesCommand)).toHaveLength(0);
    expect((await store.listDecisions(POOL, 20)).find((d) => d.kind === 'refused')?.details).toMatchObject({ handedBackAs: 'active' });
  });

  it('resumes a hand-back cut short by a crash from its stored phase, without asking remove-node again', async () => {
    const crashing = crashingStore(store);
    crashing.crashBefore((write) => write.to === 'draining', 'the hand-back transition');
    await expect(decommissioner(landingBeforeRemove(), { store: crashing }).drainComplete(message)).rejects.toBeInstanceOf(Crash);
    const stuck = (await store.getNode(NODE))!;
    expect(stuck).toMatchObject({ state: 'terminating', releasePhase: 'handingBack' });
    expect(stuck.steps?.handBackTo).toBe('draining');
    expect(removeNodes()).toBe(1);

    clock.advance(60_000);
    const report = await decommissioner(brokerPlatform()).tick();

    expect(report.refused).toEqual([NODE]);
    expect((await store.getNode(NODE))?.state).toBe('draining');
    expect(removeNodes()).toBe(1);
    expect(metrics.sum('ReleasesHandedBack')).toBe(1);
    expect(ec2.commandCalls(TerminateInstancesCommand)).toHaveLength(0);
  });

  it('removes a node found in no district again before its host goes, and hands it back if it joined and took a gear', async () => {
    expect(broker.ctlDistrict('remove-node', 'd1', NODE).exitCode).toBe(0);
    const asked = removeNodes();

    const outcome = await decommissioner(joiningAfterRemoval()).drainComplete(message);

    expect(outcome.kind).toBe('refused');
    expect(ec2.commandCalls(TerminateInstancesCommand)).toHaveLength(0);
    const node = (await store.getNode(NODE))!;
    expect(node.state).toBe('draining');
    expect(node.reason).toMatch(/^release of d1-small-3\.example\.com stopped before its host was terminated: the platform refused remove-node .*; the platform lists 1 gear on it/);
    // Every release step goes with the hand-back, so a later release removes the node from its district again.
    expect(node.steps?.removedFromDistrict).toBeUndefined();
    expect(node.steps?.volumeResolved).toBeUndefined();
    expect(node.steps?.removalFoundNoNode).toBeUndefined();
    expect(broker.whereIs(landed.uuid)).toBe(NODE);
    expect(broker.membership(NODE)).toEqual({ district: 'd1', active: false });
    // Once in no district, then twice more: refused while active, deactivated, refused for its gear.
    expect(removeNodes() - asked).toBe(3);
    expect(metrics.sum('ReleasesHandedBack')).toBe(1);
  });

  it('restores the DNS record its release deleted when it hands back a node that joined after its removal', async () => {
    expect(broker.ctlDistrict('remove-node', 'd1', NODE).exitCode).toBe(0);
    const node = (await store.getNode(NODE))!;
    await store.updateNode(NODE, node.version, { privateIp: '10.0.3.7', steps: { ...node.steps, dnsRegistered: node.joinedAt! } });
    const dns = new RecordingDns();
    dns.records.set(NODE, '10.0.3.7');

    await decommissioner(joiningAfterRemoval(), { dns }).drainComplete(message);

    expect((await store.getNode(NODE))?.state).toBe('draining');
    expect(dns.calls.map(({ call }) => call)).toEqual(['deleteHost', 'upsertHost']);
    expect(dns.records.get(NODE)).toBe('10.0.3.7');
    expect((await store.getNode(NODE))?.steps?.dnsDeleted).toBeUndefined();
  });

  it('terminates a node found in no district that stays out of it, after asking remove-node once more', async () => {
    expect(broker.ctlDistrict('remove-node', 'd1', NODE).exitCode).toBe(0);
    const asked = removeNodes();

    const outcome = await decommissioner(brokerPlatform()).drainComplete(message);

    expect(outcome.kind).toBe('terminated');
    expect(ec2.commandCalls(TerminateInstancesCommand).map((call) => call.args[0].input)).toEqual([{ InstanceIds: [INSTANCE] }]);
    expect(removeNodes() - asked).toBe(2);
    // Recorded on the node with the removal, before the host went.
    const steps = (await store.getNode(NODE))!.steps!;
    expect(steps.removalFoundNoNode).toBe(steps.removedFromDistrict);
    expect(steps.removalFoundNoNode! <= steps.instanceTerminated!).toBe(true);
  });

  it('releases the node as before when nothing lands on it', async () => {
    const outcome = await decommissioner(brokerPlatform()).drainComplete(message);
    expect(outcome.kind).toBe('terminated');
    expect(ec2.commandCalls(TerminateInstancesCommand).map((call) => call.args[0].input)).toEqual([{ InstanceIds: [INSTANCE] }]);
    expect(broker.membership(NODE)).toBeUndefined();
    expect(metrics.sum('ReleasesHandedBack')).toBe(0);
  });
});
