/**
 * The node provisioner's test bed: the real state table protocol (dynalite), EC2 and Route 53 mocked at the SDK,
 * a virtual clock. Each test starts from a fresh table, clock and fake; the test files read the bed's fields
 * after its beforeEach has run.
 */
import { EC2Client } from '@aws-sdk/client-ec2';
import { ChangeResourceRecordSetsCommand, Route53Client } from '@aws-sdk/client-route-53';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeEach, expect } from 'vitest';
import { Ec2Cloud } from '../../lib/adapters/ec2/cloud.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { Route53Dns } from '../../lib/adapters/route53/dns.js';
import { NodeProvisioner, type ProvisionerPorts } from '../../lib/app/provision.js';
import { parseConfig, type Config, type ConfigInput } from '../../lib/config/index.js';
import { decisionIdFor } from '../../lib/domain/decision-message.js';
import type { ScaleUpMessage } from '../../lib/messages/index.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { dynaliteHarness } from './dynalite.js';
import { FakeEc2 } from './fake-ec2.js';
import { RecordingNotifier } from './recording-notifier.js';

export const POOL = 'd1/small';
export const T0 = new Date('2026-11-21T10:00:00.000Z');
export const MIN = 60_000;

export function configWith(overrides: Partial<ConfigInput> = {}, pool: Record<string, unknown> = {}): Config {
  return parseConfig({
    handler: 'ec2',
    dns: { hostedZoneId: 'Z0NODESCALER', ttl: 60 },
    cloudRetry: { attempts: 4, baseDelay: '1s', maxDelay: '8s' },
    ...overrides,
    pools: [
      {
        district: 'd1',
        profile: 'small',
        max: 10,
        naming: { base: 'd1-small', domain: 'example.com' },
        template: {
          imageId: 'ami-0abc',
          instanceTypes: [
            { name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 },
            { name: 'm5a.xlarge', vcpus: 4, memoryGiB: 16 },
          ],
          subnets: ['subnet-aaa', 'subnet-bbb'],
          securityGroups: ['sg-111'],
          instanceProfile: 'nodescaler-node',
          keyName: 'ops',
          userData: 'echo hello > /etc/motd\n',
          volume: { sizeGiB: 50, type: 'gp3', device: '/dev/xvdc' },
          tags: { team: 'paas' },
        },
        ...pool,
      },
    ],
  });
}

export const tags = (n: number, decisionId: string) => [
  { Key: 'team', Value: 'paas' },
  { Key: 'Name', Value: `d1-small_${n}` },
  { Key: 'nodescaler:pool', Value: 'd1/small' },
  { Key: 'nodescaler:district', Value: 'd1' },
  { Key: 'nodescaler:profile', Value: 'small' },
  { Key: 'nodescaler:decision', Value: decisionId },
  { Key: 'nodescaler:node', Value: `d1-small-${n}.example.com` },
  { Key: 'nodescaler:stage', Value: 'test' },
];

export const userData = (n: number) =>
  [
    '#!/bin/bash',
    '# Written by nodescaler: the identity of this node.',
    'mkdir -p /etc/nodescaler',
    "cat > /etc/nodescaler/node.env <<'NODESCALER_ENV'",
    "NODESCALER_POOL='d1/small'",
    "NODESCALER_DISTRICT='d1'",
    "NODESCALER_PROFILE='small'",
    `NODESCALER_HOST_NAME='d1-small-${n}.example.com'`,
    `NODESCALER_CLOUD_NAME='d1-small_${n}'`,
    'NODESCALER_ENV',
    `hostnamectl set-hostname 'd1-small-${n}.example.com' || hostname 'd1-small-${n}.example.com'`,
    '',
    '# From the pool template:',
    'echo hello > /etc/motd',
    '',
  ].join('\n');

const mockRoute53 = () => mockClient(Route53Client);

export interface ProvisionerBed {
  clock: VirtualClock;
  fake: FakeEc2;
  r53: ReturnType<typeof mockRoute53>;
  store: StateStore;
  metrics: InMemoryMetrics;
  log: MemoryLog;
  notifier: RecordingNotifier;
  /** What the provisioner slept between retries (ms); the clock advances by as much. */
  sleeps: number[];
  /** Assign before building the provisioner to change its configuration for one test. */
  config: Config;
  ports(over?: Partial<ProvisionerPorts>): ProvisionerPorts;
  provisioner(over?: Partial<ProvisionerPorts>): NodeProvisioner;
  /** The evaluator's side: a decision taken now, with the pool lease it holds. */
  decide(count: number, at?: Date): Promise<ScaleUpMessage>;
  nodesOf(): Promise<Awaited<ReturnType<StateStore['listNodes']>>>;
  r53Changes(): unknown[];
}

/** Registers the hooks of one test file and returns the bed they fill. */
export function provisionerBed(): ProvisionerBed {
  const harness = dynaliteHarness();
  const credentials = { accessKeyId: 'x', secretAccessKey: 'x' };
  const bed = { r53: mockRoute53() } as ProvisionerBed;
  bed.ports = (over = {}) => ({
    store: bed.store,
    cloud: new Ec2Cloud(new EC2Client({ region: 'us-east-1', credentials }), bed.config, { stage: 'test' }),
    dns: new Route53Dns(new Route53Client({ region: 'us-east-1', credentials }), bed.config.dns!),
    clock: bed.clock,
    metrics: bed.metrics,
    log: bed.log,
    notifier: bed.notifier,
    sleep: async (ms) => {
      bed.sleeps.push(ms);
      bed.clock.advance(ms);
    },
    random: () => 0.5,
    ...over,
  });
  bed.provisioner = (over = {}) => new NodeProvisioner(bed.ports(over), bed.config);
  bed.decide = async (count, at = bed.clock.now()) => {
    const decisionId = decisionIdFor('scale-up', POOL, at);
    const message: ScaleUpMessage = { type: 'scale-up', v: 1, decisionId, pool: POOL, count, reason: `utilization 0.91 >= 0.80; +${count}`, decidedAt: at.toISOString() };
    await bed.store.acquireLease(POOL, { holder: decisionId, kind: 'scale-up', ttlMs: bed.config.leaseTtl, message: { ...message } }, at);
    await bed.store.markLeaseSent(POOL, decisionId, at);
    return message;
  };
  bed.nodesOf = async () => bed.store.listNodes(POOL);
  bed.r53Changes = () => bed.r53.commandCalls(ChangeResourceRecordSetsCommand).map((call) => call.args[0].input);

  beforeEach(async () => {
    bed.clock = new VirtualClock(T0);
    bed.fake ??= new FakeEc2({ now: () => bed.clock.now() });
    bed.fake.reset();
    bed.r53.reset();
    bed.r53.on(ChangeResourceRecordSetsCommand).resolves({ ChangeInfo: { Id: '/change/C1', Status: 'PENDING', SubmittedAt: T0 } });
    bed.store = await harness.create();
    bed.metrics = new InMemoryMetrics();
    bed.log = new MemoryLog();
    bed.notifier = new RecordingNotifier();
    bed.sleeps = [];
    bed.config = configWith();
  });

  afterEach(() => {
    expect(bed.fake.runInputs().every((input) => input.ClientToken !== undefined)).toBe(true);
  });

  afterAll(async () => {
    bed.fake.restore();
    bed.r53.restore();
    await harness.close();
  });

  return bed;
}
