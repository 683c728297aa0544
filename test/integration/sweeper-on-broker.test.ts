/**
 * Issue 18, item 2e: `sweeper.terminateOrphans` terminated hosts the state
 * table did not know without asking the platform; after a table restore it
 * terminated two hosts holding 5 gears each. An orphan is now terminated only
 * when the broker lists no gear on its node, after remove-node. State on
 * dynalite, the broker through its adapter over the emulator, EC2 mocked at
 * the SDK.
 */
import { EC2Client, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { Ec2Cloud } from '../../lib/adapters/ec2/cloud.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { NodeProvisioner } from '../../lib/app/provision.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { brokerOnEmulator, ec2OnBrokerConfig } from '../support/broker-platform.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { FakeEc2 } from '../support/fake-ec2.js';

const MIN = 60_000;
const config = ec2OnBrokerConfig({ sweeper: { terminateOrphans: true } });

describe('the sweeper asks the broker before it terminates an orphan (dynalite, broker emulator)', () => {
  const harness = dynaliteHarness();
  let clock: VirtualClock;
  let fake: FakeEc2;
  let store: StateStore;

  beforeEach(async () => {
    clock = new VirtualClock(new Date('2026-11-24T01:00:00Z'));
    fake ??= new FakeEc2({ now: () => clock.now() });
    fake.reset();
    fake.mock.on(TerminateInstancesCommand).resolves({});
    store = await harness.create();
  });
  afterAll(async () => {
    fake.restore();
    await harness.close();
  });

  const orphan = (instanceId: string, node?: string) => ({
    InstanceId: instanceId,
    State: { Name: 'running' as const, Code: 16 },
    LaunchTime: new Date(clock.now().getTime() - 3 * 60 * MIN),
    Tags: [
      { Key: 'nodescaler:stage', Value: 'test' },
      { Key: 'nodescaler:pool', Value: 'd1/small' },
      { Key: 'nodescaler:district', Value: 'd1' },
      ...(node ? [{ Key: 'nodescaler:node', Value: node }] : []),
    ],
  });

  it('after a table restore: keeps the hosts whose nodes hold gears, and the one it cannot ask about; removes and terminates the empty one', async () => {
    const { broker, platform } = brokerOnEmulator(clock);
    broker.createDistrict('d1', 'small');
    for (const node of ['d1-small-1.example.com', 'd1-small-2.example.com', 'd1-small-3.example.com']) {
      broker.addNodeHost(node, 'small', 100);
      broker.joinDistrict('d1', node);
    }
    for (let g = 0; g < 5; g++) {
      broker.placeGear('d1-small-1.example.com', { uuid: `a${g}`, app: 'shop-ns', size: 'small' });
      broker.placeGear('d1-small-2.example.com', { uuid: `b${g}`, app: 'blog-ns', size: 'small' });
    }
    fake.extra.push(
      orphan('i-000000000000000a1', 'd1-small-1.example.com'),
      orphan('i-000000000000000a2', 'd1-small-2.example.com'),
      orphan('i-000000000000000a3', 'd1-small-3.example.com'),
      orphan('i-000000000000000a4'),
    );
    const metrics = new InMemoryMetrics();
    const provisioner = new NodeProvisioner(
      {
        store,
        cloud: new Ec2Cloud(new EC2Client({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }), config, { stage: 'test' }),
        platform,
        clock,
        metrics,
        log: new MemoryLog(),
        sleep: async (ms) => void clock.advance(ms),
        random: () => 0.5,
      },
      config,
    );

    const report = await provisioner.tick();

    expect(report.orphans).toEqual([
      { instanceId: 'i-000000000000000a1', terminated: false, reason: 'node d1-small-1.example.com holds 5 gear(s) on the platform; it is adopted when its agent reports' },
      { instanceId: 'i-000000000000000a2', terminated: false, reason: 'node d1-small-2.example.com holds 5 gear(s) on the platform; it is adopted when its agent reports' },
      { instanceId: 'i-000000000000000a3', terminated: true },
      { instanceId: 'i-000000000000000a4', terminated: false, reason: 'no nodescaler:node tag: the platform cannot be asked whether it holds gears' },
    ]);
    expect(fake.inputsOf(TerminateInstancesCommand)).toStrictEqual([{ InstanceIds: ['i-000000000000000a3'] }]);
    expect(broker.membership('d1-small-3.example.com')).toBeUndefined();
    expect(broker.membership('d1-small-1.example.com')).toEqual({ district: 'd1', active: true });
    expect(broker.gearsOn('d1-small-1.example.com')).toHaveLength(5);
    expect(metrics.sum('OrphanHostsKept')).toBe(3);
  });
});
