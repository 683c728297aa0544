/**
 * EC2 behind `aws-sdk-client-mock`: RunInstances idempotent on ClientToken
 * (the same token returns the same instance, as EC2 does), DescribeInstances
 * by `instance-id` or by our stage tag, TerminateInstances and DeleteVolume
 * that change the state, and scripted errors per offering or per call. The
 * tests read the exact requests from `ec2.commandCalls(...)`.
 */
import {
  DeleteVolumeCommand,
  DescribeInstancesCommand,
  EC2Client,
  EC2ServiceException,
  RunInstancesCommand,
  TerminateInstancesCommand,
  type DescribeInstancesCommandInput,
  type Instance,
  type RunInstancesCommandInput,
} from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import type { Clock } from '../../lib/ports/clock.js';

/** An EC2 error as the SDK throws it. */
export function ec2Error(name: string, status = 400, message = `${name} (simulated)`): EC2ServiceException {
  return new EC2ServiceException({ name, $fault: status >= 500 ? 'server' : 'client', message, $metadata: { httpStatusCode: status, requestId: 'req-test' } });
}

/** EC2 returns InsufficientInstanceCapacity with HTTP 500: it must still be a capacity error, not a transient one. */
export const SERVER_SIDE_CAPACITY = new Set(['InsufficientInstanceCapacity']);

interface FakeInstance {
  instance: Instance;
  token: string;
  volumeId: string;
  terminated: boolean;
}

export class FakeEc2 {
  readonly mock = mockClient(EC2Client);
  /** Instances actually created (distinct tokens). */
  readonly created: FakeInstance[] = [];
  private readonly byToken = new Map<string, FakeInstance>();
  /** Errors for RunInstances, by `<type>@<subnet>`: each entry is used `times` times (Infinity = always). */
  private readonly offeringErrors = new Map<string, { name: string; times: number; after: number }>();
  private readonly runErrors: string[] = [];
  private readonly deleteErrors: string[] = [];
  readonly deletedVolumes = new Set<string>();
  /** Extra instances DescribeInstances shows (e.g. orphans). */
  readonly extra: Instance[] = [];
  /** The zone of each subnet (default us-east-1a). */
  readonly zones = new Map<string, string>();
  /** Whether RunInstances reports the private address (EC2 does; a test may hide it). */
  reportIp = true;

  constructor(
    private readonly clock: Clock,
    private readonly device = '/dev/xvdc',
  ) {
    this.install();
  }

  reset(): void {
    this.mock.reset();
    this.created.length = 0;
    this.byToken.clear();
    this.offeringErrors.clear();
    this.runErrors.length = 0;
    this.deleteErrors.length = 0;
    this.deletedVolumes.clear();
    this.zones.clear();
    this.extra.length = 0;
    this.reportIp = true;
    this.install();
  }

  restore(): void {
    this.mock.restore();
  }

  /** RunInstances for this offering fails with `name`, `times` times, after `after` calls that succeed. */
  failOffering(instanceType: string, subnetId: string, name: string, times = Infinity, after = 0): void {
    this.offeringErrors.set(`${instanceType}@${subnetId}`, { name, times, after });
  }

  /** The next RunInstances calls fail with these codes, in order, whatever the offering. */
  failRuns(...names: string[]): void {
    this.runErrors.push(...names);
  }

  failDeletes(...names: string[]): void {
    this.deleteErrors.push(...names);
  }

  runInputs(): RunInstancesCommandInput[] {
    return this.mock.commandCalls(RunInstancesCommand).map((call) => call.args[0].input);
  }

  /** `<type>@<subnet>#<ClientToken>` of every RunInstances call, in order. */
  runs(): string[] {
    return this.runInputs().map((input) => `${input.InstanceType}@${input.SubnetId}#${input.ClientToken}`);
  }

  inputsOf<C extends typeof TerminateInstancesCommand | typeof DeleteVolumeCommand | typeof DescribeInstancesCommand>(command: C): unknown[] {
    return this.mock.commandCalls(command as typeof TerminateInstancesCommand).map((call) => call.args[0].input as unknown);
  }

  private install(): void {
    this.mock.on(RunInstancesCommand).callsFake((input: RunInstancesCommandInput) => this.run(input));
    this.mock.on(DescribeInstancesCommand).callsFake((input: DescribeInstancesCommandInput) => this.describe(input));
    this.mock.on(TerminateInstancesCommand).callsFake((input: { InstanceIds: string[] }) => {
      for (const id of input.InstanceIds) {
        const found = this.created.find((candidate) => candidate.instance.InstanceId === id);
        if (!found) throw ec2Error('InvalidInstanceID.NotFound');
        found.terminated = true;
      }
      return { TerminatingInstances: input.InstanceIds.map((id) => ({ InstanceId: id, CurrentState: { Name: 'shutting-down' } })) };
    });
    this.mock.on(DeleteVolumeCommand).callsFake((input: { VolumeId: string }) => {
      const error = this.deleteErrors.shift();
      if (error) throw ec2Error(error);
      if (this.deletedVolumes.has(input.VolumeId)) throw ec2Error('InvalidVolume.NotFound');
      this.deletedVolumes.add(input.VolumeId);
      return {};
    });
  }

  private run(input: RunInstancesCommandInput): { Instances: Instance[] } {
    const scripted = this.runErrors.shift();
    if (scripted) throw ec2Error(scripted, SERVER_SIDE_CAPACITY.has(scripted) || scripted === 'RequestLimitExceeded' ? 503 : 400);
    const key = `${input.InstanceType}@${input.SubnetId}`;
    const failure = this.offeringErrors.get(key);
    if (failure && failure.after > 0) failure.after -= 1;
    else if (failure && failure.times > 0) {
      failure.times -= 1;
      throw ec2Error(failure.name, SERVER_SIDE_CAPACITY.has(failure.name) ? 500 : 400);
    }
    const token = input.ClientToken!;
    const known = this.byToken.get(token);
    if (known) {
      if (`${known.instance.InstanceType}@${known.instance.SubnetId}` !== key) throw ec2Error('IdempotentParameterMismatch');
      return { Instances: [this.view(known, false)] };
    }
    const n = this.created.length + 1;
    const fake: FakeInstance = {
      token,
      volumeId: `vol-${String(n).padStart(17, '0')}`,
      terminated: false,
      instance: {
        InstanceId: `i-${String(n).padStart(17, '0')}`,
        InstanceType: input.InstanceType as Instance['InstanceType'],
        SubnetId: input.SubnetId,
        // EC2 places an instance in its subnet's zone.
        Placement: { AvailabilityZone: this.zones.get(input.SubnetId ?? '') ?? 'us-east-1a' },
        PrivateIpAddress: `10.0.0.${n}`,
        LaunchTime: this.clock.now(),
        ClientToken: token,
        Tags: input.TagSpecifications?.find((spec) => spec.ResourceType === 'instance')?.Tags ?? [],
      },
    };
    this.created.push(fake);
    this.byToken.set(token, fake);
    return { Instances: [this.view(fake, false)] };
  }

  private view(fake: FakeInstance, described: boolean): Instance {
    const instance: Instance = { ...fake.instance, State: { Name: fake.terminated ? 'terminated' : described ? 'running' : 'pending', Code: 0 } };
    if (!this.reportIp && !described) delete instance.PrivateIpAddress;
    // The volume mapping shows once the instance is described, and is gone after termination.
    instance.BlockDeviceMappings =
      described && !fake.terminated ? [{ DeviceName: '/dev/xvda', Ebs: { VolumeId: 'vol-root' } }, { DeviceName: this.device, Ebs: { VolumeId: fake.volumeId } }] : [];
    return instance;
  }

  private describe(input: DescribeInstancesCommandInput): { Reservations: Array<{ Instances: Instance[] }> } {
    const filters = new Map((input.Filters ?? []).map((filter) => [filter.Name!, filter.Values ?? []]));
    let instances = [...this.created.map((fake) => this.view(fake, true)), ...this.extra];
    const ids = filters.get('instance-id');
    if (ids) instances = instances.filter((instance) => ids.includes(instance.InstanceId!));
    const stage = [...filters.entries()].find(([name]) => name.startsWith('tag:'));
    if (stage) {
      const key = stage[0].slice(4);
      instances = instances.filter((instance) => instance.Tags?.some((tag) => tag.Key === key && stage[1].includes(tag.Value!)));
    }
    const states = filters.get('instance-state-name');
    if (states) instances = instances.filter((instance) => states.includes(instance.State?.Name ?? ''));
    return { Reservations: instances.length === 0 ? [] : [{ Instances: instances }] };
  }
}
