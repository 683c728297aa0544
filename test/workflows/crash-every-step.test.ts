/**
 * The three workflows on the engine (lib/workflows), on the real state table
 * protocol (dynalite): an invocation killed before or after any step (a
 * state-table write, a cloud, DNS or platform call, a queue send) leaves
 * records the next delivery or tick resumes from, with no effect that must
 * not repeat repeated: one host per node for a launch, each gear moved once
 * for a drain, one release per node for a release.
 */
import { EC2Client } from '@aws-sdk/client-ec2';
import { ChangeResourceRecordSetsCommand, Route53Client } from '@aws-sdk/client-route-53';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, describe, expect, it } from 'vitest';
import { Ec2Cloud } from '../../lib/adapters/ec2/cloud.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { Route53Dns } from '../../lib/adapters/route53/dns.js';
import { NodeProvisioner, type ProvisionerPorts } from '../../lib/app/provision.js';
import { parseConfig } from '../../lib/config/index.js';
import { decisionIdFor } from '../../lib/domain/decision-message.js';
import { drainIdFor } from '../../lib/domain/drain.js';
import type { DrainCompleteMessage, ScaleUpMessage } from '../../lib/messages/index.js';
import type { Platform } from '../../lib/ports/platform.js';
import type { Queue } from '../../lib/ports/queue.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { HostReleaser } from '../../lib/workflows/release/release.js';
import { Crash, Injector } from '../support/crash.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { FakeEc2 } from '../support/fake-ec2.js';
import { POOL as DRAIN_POOL, World, apps } from '../support/gear-mover-world.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';

const POOL = 'd1/small';
const T0 = new Date('2026-11-21T10:00:00.000Z');
const STORE_WRITES = new Set([
  'createNode',
  'transitionNode',
  'updateNode',
  'updatePool',
  'ensurePool',
  'claimScaleUp',
  'allocateNameNumber',
  'createDrain',
  'updateDrain',
  'acquireLease',
  'releaseLease',
  'markLeaseSent',
  'appendDecision',
]);
const CLOUD_CALLS = new Set(['createHost', 'describeHosts', 'terminateHost', 'deleteVolume', 'listManagedHosts']);
const DNS_CALLS = new Set(['upsertHost', 'deleteHost']);
const PLATFORM_ACTIONS = new Set(['deactivateNode', 'activateNode', 'startMove', 'moveStatus', 'listGears']);
const SENDS = new Set(['send']);

const config = parseConfig({
  handler: 'ec2',
  dns: { hostedZoneId: 'Z0NODESCALER', ttl: 60 },
  cloudRetry: { attempts: 2, baseDelay: '1s', maxDelay: '2s' },
  pools: [
    {
      district: 'd1',
      profile: 'small',
      max: 10,
      naming: { base: 'd1-small', domain: 'example.com' },
      template: {
        imageId: 'ami-0abc',
        instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }],
        subnets: ['subnet-aaa', 'subnet-bbb'],
        volume: { sizeGiB: 50, type: 'gp3', device: '/dev/xvdc' },
      },
    },
  ],
});

const harness = dynaliteHarness();
const r53 = mockClient(Route53Client);
let fake: FakeEc2 | undefined;
/** The running scenario's clock: the one FakeEc2 (it owns the SDK mock) reads it. */
let currentClock = new VirtualClock(T0);

afterAll(async () => {
  fake?.restore();
  r53.restore();
  await harness.close();
});

/** A fresh table, clock and EC2 for one scenario; `wrap` puts the injector between the workflow and its ports. */
async function cloudWorld() {
  const clock = new VirtualClock(T0);
  currentClock = clock;
  fake ??= new FakeEc2({ now: () => currentClock.now() });
  const ec2 = fake;
  ec2.reset();
  r53.reset();
  r53.on(ChangeResourceRecordSetsCommand).resolves({ ChangeInfo: { Id: '/change/C1', Status: 'PENDING', SubmittedAt: T0 } });
  const store = await harness.create();
  const credentials = { accessKeyId: 'x', secretAccessKey: 'x' };
  const ports = (injector?: Injector): ProvisionerPorts => {
    const cloud = new Ec2Cloud(new EC2Client({ region: 'us-east-1', credentials }), config, { stage: 'test' });
    const dns = new Route53Dns(new Route53Client({ region: 'us-east-1', credentials }), config.dns!);
    return {
      store: injector ? injector.wrap(store, STORE_WRITES) : store,
      cloud: injector ? injector.wrap(cloud, CLOUD_CALLS) : cloud,
      dns: injector ? injector.wrap(dns, DNS_CALLS) : dns,
      clock,
      metrics: new InMemoryMetrics(),
      log: new MemoryLog(),
      sleep: async (ms) => {
        clock.advance(ms);
      },
      random: () => 0.5,
    };
  };
  const decide = async (count: number): Promise<ScaleUpMessage> => {
    const decisionId = decisionIdFor('scale-up', POOL, clock.now());
    const message: ScaleUpMessage = { type: 'scale-up', v: 1, decisionId, pool: POOL, count, reason: 'test', decidedAt: clock.now().toISOString() };
    await store.acquireLease(POOL, { holder: decisionId, kind: 'scale-up', ttlMs: config.leaseTtl, message: { ...message } }, clock.now());
    await store.markLeaseSent(POOL, decisionId, clock.now());
    return message;
  };
  return { clock, ec2, store, ports, decide };
}

/** Runs `scenario` clean (counting its steps), then crashing at every `stride`-th step, before and after it takes effect; returns the step count. */
async function everyStep(scenario: (injector: Injector) => Promise<{ crashed: boolean }>, stride = 1): Promise<number> {
  const clean = new Injector(Number.MAX_SAFE_INTEGER, 'after');
  expect((await scenario(clean)).crashed).toBe(false);
  const total = clean.steps;
  for (const when of ['before', 'after'] as const) {
    for (let at = 1; at <= total; at += stride) {
      const { crashed } = await scenario(new Injector(at, when));
      expect(crashed, `${when} step ${at}`).toBe(true);
    }
  }
  return total;
}

async function crashes(work: () => Promise<unknown>, injector: Injector): Promise<boolean> {
  try {
    await work();
  } catch (error) {
    if (!(error instanceof Crash)) throw error;
    return true;
  }
  return injector.dead;
}

describe('a crash at any step of a workflow resumes with no repeated effect (dynalite)', () => {
  it('launch: two nodes of a scale-up get one host each, recorded, and the lease goes', async () => {
    const steps = await everyStep(async (injector) => {
      const w = await cloudWorld();
      const message = await w.decide(2);
      const crashed = await crashes(() => new NodeProvisioner(w.ports(injector), config).scaleUp(message), injector);
      // The message is redelivered (it failed); a crash leaves nothing the redelivery cannot finish.
      const outcome = await new NodeProvisioner(w.ports(), config).scaleUp(message);
      const label = `${injector.steps} steps`;
      expect(outcome.kind, label).toBe('provisioned');
      const nodes = await w.store.listNodes(POOL);
      const ours = nodes.filter((node) => node.decisionId === message.decisionId);
      expect(ours, label).toHaveLength(2);
      // One RunInstances per node took effect: a resumed attempt reused its token and got the same host.
      expect(w.ec2.created, label).toHaveLength(2);
      expect(new Set(ours.map((node) => node.instanceId)), label).toEqual(new Set(w.ec2.created.map((c) => c.instance.InstanceId)));
      expect(ours.every((node) => node.launchPhase === 'requested' && node.steps?.dnsRegistered !== undefined), label).toBe(true);
      expect((await w.store.getPool(POOL))?.lease, label).toBeUndefined();
      return { crashed };
    });
    expect(steps).toBeGreaterThan(10);
  }, 600_000);

  it('release: a failed node is released once: out of DNS, instance terminated, volume deleted, terminated', async () => {
    const steps = await everyStep(async (injector) => {
      const w = await cloudWorld();
      await new NodeProvisioner(w.ports(), config).scaleUp(await w.decide(1));
      const [launched] = await w.store.listNodes(POOL);
      const failed = await w.store.transitionNode(launched!.nodeId, { from: 'provisioning', to: 'failed', patch: { steps: { ...launched!.steps, releaseFor: 'failed' } } }, w.clock.now());
      const release = async (ports: ProvisionerPorts) => {
        const releaser = new HostReleaser(ports, config);
        let node = (await ports.store.getNode(failed.nodeId))!;
        if (node.state === 'failed') node = await releaser.begin(node, 'failed', 'releasing: test');
        return releaser.advance(node);
      };
      const crashed = await crashes(() => release(w.ports(injector)), injector);
      const result = await release(w.ports());
      const label = `${injector.steps} steps`;
      expect(result.status, label).toBe('terminated');
      const node = (await w.store.getNode(failed.nodeId))!;
      expect(node.state, label).toBe('terminated');
      expect(w.ec2.created.every((c) => c.terminated), label).toBe(true);
      expect([...w.ec2.deletedVolumes], label).toEqual([w.ec2.created[0]!.volumeId]);
      expect(['removedFromDistrict', 'dnsDeleted', 'instanceTerminated', 'volumeDeleted'].filter((step) => node.steps?.[step] !== undefined), label).toEqual([
        'dnsDeleted',
        'instanceTerminated',
        'volumeDeleted',
      ]);
      return { crashed };
    });
    expect(steps).toBeGreaterThan(5);
  }, 600_000);

  it('drain: each gear moved once, the node drained, drain-complete sent for one drain, the lease released', async () => {
    const steps = await everyStep(async (injector) => {
      const w = new World(await harness.create(), { config: { scaleDown: { maxConcurrentMoves: 2 } } });
      await w.node('src.example.com', { gears: apps(1, 2) });
      await w.node('t1.example.com', { gears: [] });
      const message = w.scaleDown('src.example.com');
      await w.leaseFor(message);
      const faulty = w.mover(injector.wrap(w.checkedPlatform(), PLATFORM_ACTIONS) as Platform, injector.wrap(w.store, STORE_WRITES) as StateStore);
      (faulty as unknown as { ports: { queue: Queue } }).ports.queue = injector.wrap(w.queue, SENDS) as Queue;
      const crashed = await crashes(async () => {
        await faulty.handleScaleDown(message);
        await faulty.run(w.budget());
      }, injector);
      w.clock.advance(60_000);
      const fresh = () => w.mover();
      await fresh().handleScaleDown(message);
      await w.tickUntilIdle(fresh, 30);
      const label = `${injector.steps} steps`;
      expect(w.sim.moveHistory().map((move) => move.uuid).sort(), label).toEqual(['g0x0', 'g0x1']);
      w.checkGears();
      const drains = await w.store.listDrains(DRAIN_POOL, 'completed');
      expect(drains.map((drain) => [drain.drainId, drain.phase]), label).toEqual([[drainIdFor(message.decisionId), 'completed']]);
      expect((await w.store.getNode('src.example.com'))?.state, label).toBe('drained');
      expect(new Set((w.queue.sent('decommission') as DrainCompleteMessage[]).map((sent) => sent.drainId)).size, label).toBe(1);
      expect((await w.store.getPool(DRAIN_POOL))?.lease, label).toBeUndefined();
      return { crashed };
    }, 3);
    expect(steps).toBeGreaterThan(10);
  }, 600_000);
});
