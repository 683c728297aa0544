import {
  DeleteVolumeCommand,
  DescribeInstancesCommand,
  EC2Client,
  RunInstancesCommand,
  TerminateInstancesCommand,
  type DescribeInstancesCommandInput,
} from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { cloudFor, releasingCloudFor } from '../../lib/adapters/cloud/from-settings.js';
import { Ec2Cloud, Ec2Hosts, runInstancesInput, translateEc2Error } from '../../lib/adapters/ec2/cloud.js';
import { parseConfig, parseDeployment } from '../../lib/config/index.js';
import { CapacityUnavailableError, ConflictError, NotFoundError, TransientError, ValidationError } from '../../lib/errors.js';
import type { HostSpec } from '../../lib/ports/cloud.js';
import { ec2Error } from '../support/fake-ec2.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';

const ec2 = mockClient(EC2Client);
afterAll(() => ec2.restore());
const config = parseConfig({
  handler: 'ec2',
  pools: [
    {
      district: 'd1',
      profile: 'small',
      max: 5,
      template: {
        imageId: 'ami-1',
        instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }],
        subnets: ['subnet-a'],
        volume: { sizeGiB: 200, type: 'io2', iops: 3000, device: '/dev/xvdf' },
      },
    },
  ],
});
const spec: HostSpec = {
  pool: 'd1/small',
  district: 'd1',
  profile: 'small',
  cloudName: 'node_1',
  hostName: 'node-1.example.com',
  decisionId: 'up:d1_small:1',
  idempotencyToken: 'up:d1_small:1#0',
  offering: { instanceType: 'm5.xlarge', subnetId: 'subnet-a' },
};
const cloud = () => new Ec2Cloud(new EC2Client({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }), config, { stage: 'prod' });

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

beforeEach(() => ec2.reset());

describe('runInstancesInput: template variants', () => {
  const template = config.pools[0]!.template;

  it('uses a launch template by name or id with its version, and an instance-profile ARN', () => {
    const byName = runInstancesInput({ ...template, imageId: undefined, launchTemplate: { name: 'node-lt', version: '$Default' }, instanceProfile: 'arn:aws:iam::123456789012:instance-profile/node' }, spec, 'prod');
    expect(byName.LaunchTemplate).toStrictEqual({ LaunchTemplateName: 'node-lt', Version: '$Default' });
    expect(byName.ImageId).toBeUndefined();
    expect(byName.IamInstanceProfile).toStrictEqual({ Arn: 'arn:aws:iam::123456789012:instance-profile/node' });
    const byId = runInstancesInput({ ...template, launchTemplate: { id: 'lt-0abc', version: '7' } }, spec, 'prod');
    expect(byId.LaunchTemplate).toStrictEqual({ LaunchTemplateId: 'lt-0abc', Version: '7' });
    expect(byId.ImageId).toBe('ami-1');
  });

  it('asks for spot one-time capacity, and provisioned IOPS on the gear volume', () => {
    const input = runInstancesInput({ ...template, spot: true }, spec, 'prod');
    expect(input.InstanceMarketOptions).toStrictEqual({ MarketType: 'spot', SpotOptions: { SpotInstanceType: 'one-time', InstanceInterruptionBehavior: 'terminate' } });
    expect(input.BlockDeviceMappings).toStrictEqual([
      { DeviceName: '/dev/xvdf', Ebs: { VolumeSize: 200, VolumeType: 'io2', Iops: 3000, Encrypted: true, DeleteOnTermination: false } },
    ]);
  });

  it('never lets template tags override the tags nodescaler relies on', () => {
    const input = runInstancesInput({ ...template, tags: { Name: 'evil', 'nodescaler:pool': 'other', team: 'paas' } }, spec, 'prod');
    const tags = input.TagSpecifications![0]!.Tags!;
    expect(tags.filter((tag) => tag.Key === 'Name')).toEqual([{ Key: 'Name', Value: 'node_1' }]);
    expect(tags.filter((tag) => tag.Key === 'nodescaler:pool')).toEqual([{ Key: 'nodescaler:pool', Value: 'd1/small' }]);
    expect(tags[0]).toEqual({ Key: 'team', Value: 'paas' });
  });
});

describe('Ec2Cloud', () => {
  it('returns the launched host, with the volume at the template device', async () => {
    ec2.on(RunInstancesCommand).resolves({
      Instances: [
        {
          InstanceId: 'i-0123456789abcdef0',
          InstanceType: 'm5.xlarge',
          SubnetId: 'subnet-a',
          Placement: { AvailabilityZone: 'us-east-1b' },
          PrivateIpAddress: '10.1.2.3',
          State: { Name: 'pending', Code: 0 },
          LaunchTime: new Date('2026-11-21T10:00:00Z'),
          BlockDeviceMappings: [
            { DeviceName: '/dev/xvda', Ebs: { VolumeId: 'vol-root' } },
            { DeviceName: '/dev/xvdf', Ebs: { VolumeId: 'vol-gears' } },
          ],
          Tags: [{ Key: 'Name', Value: 'node_1' }],
        },
      ],
    });
    expect(await cloud().createHost(spec)).toStrictEqual({
      instanceId: 'i-0123456789abcdef0',
      instanceType: 'm5.xlarge',
      subnetId: 'subnet-a',
      zone: 'us-east-1b',
      privateIp: '10.1.2.3',
      state: 'pending',
      launchedAt: '2026-11-21T10:00:00.000Z',
      volumeId: 'vol-gears',
      tags: { Name: 'node_1' },
    });
    expect(ec2.commandCalls(RunInstancesCommand)[0]!.args[0].input).toStrictEqual(runInstancesInput(config.pools[0]!.template, spec, 'prod'));
  });

  it.each(['InsufficientInstanceCapacity', 'InstanceLimitExceeded', 'VcpuLimitExceeded', 'MaxSpotInstanceCountExceeded', 'InsufficientFreeAddressesInSubnet', 'Unsupported'])(
    'turns %s into CapacityUnavailableError with the code and offering, whatever its HTTP status',
    async (code) => {
      ec2.on(RunInstancesCommand).rejects(ec2Error(code, code === 'InsufficientInstanceCapacity' ? 500 : 400));
      const error = await rejection(cloud().createHost(spec));
      expect(error).toBeInstanceOf(CapacityUnavailableError);
      expect(error).toMatchObject({ reason: code, offering: { instanceType: 'm5.xlarge', subnetId: 'subnet-a' }, retryable: true });
    },
  );

  it('turns throttling and server faults into TransientError, a bad template into ValidationError', async () => {
    for (const [code, status] of [['RequestLimitExceeded', 503], ['InternalError', 500], ['Unavailable', 503]] as const) {
      ec2.reset();
      ec2.on(RunInstancesCommand).rejects(ec2Error(code, status));
      expect(await rejection(cloud().createHost(spec))).toBeInstanceOf(TransientError);
    }
    for (const code of ['InvalidParameterValue', 'InvalidAMIID.NotFound', 'InvalidSubnetID.NotFound', 'UnauthorizedOperation', 'IdempotentParameterMismatch']) {
      ec2.reset();
      ec2.on(RunInstancesCommand).rejects(ec2Error(code, 400));
      const error = await rejection(cloud().createHost(spec));
      expect(error, code).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).message).toContain(code);
    }
    const network = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    expect(translateEc2Error(network, 'RunInstances')).toBeInstanceOf(TransientError);
  });

  it('terminates with one TerminateInstances; an instance already gone is success', async () => {
    ec2.on(TerminateInstancesCommand).resolvesOnce({}).rejectsOnce(ec2Error('InvalidInstanceID.NotFound'));
    await cloud().terminateHost('i-1');
    await cloud().terminateHost('i-2');
    expect(ec2.commandCalls(TerminateInstancesCommand).map((call) => call.args[0].input)).toStrictEqual([{ InstanceIds: ['i-1'] }, { InstanceIds: ['i-2'] }]);
    ec2.on(TerminateInstancesCommand).rejects(ec2Error('RequestLimitExceeded', 503));
    expect(await rejection(cloud().terminateHost('i-3'))).toBeInstanceOf(TransientError);
  });

  it('deletes a volume: attached is ConflictError, gone is success', async () => {
    ec2.on(DeleteVolumeCommand).rejectsOnce(ec2Error('VolumeInUse')).resolvesOnce({}).rejectsOnce(ec2Error('InvalidVolume.NotFound'));
    expect(await rejection(cloud().deleteVolume('vol-1'))).toBeInstanceOf(ConflictError);
    await cloud().deleteVolume('vol-1');
    await cloud().deleteVolume('vol-1');
    expect(ec2.commandCalls(DeleteVolumeCommand).map((call) => call.args[0].input)).toStrictEqual([{ VolumeId: 'vol-1' }, { VolumeId: 'vol-1' }, { VolumeId: 'vol-1' }]);
  });

  it('describes hosts by an instance-id filter in chunks of 200, following NextToken; unknown ids are absent', async () => {
    const ids = Array.from({ length: 250 }, (_, i) => `i-${String(i).padStart(17, '0')}`);
    ec2.on(DescribeInstancesCommand).callsFake((input: DescribeInstancesCommandInput) => {
      const values = input.Filters![0]!.Values!;
      const page = input.NextToken === undefined ? 0 : 1;
      const known = values.filter((_, i) => i % 2 === page);
      return {
        Reservations: [{ Instances: known.slice(0, 2).map((InstanceId) => ({ InstanceId, State: { Name: 'running' as const, Code: 16 }, Tags: [{ Key: 'nodescaler:pool', Value: 'd1/small' }], BlockDeviceMappings: [{ DeviceName: '/dev/xvdf', Ebs: { VolumeId: `vol-${InstanceId}` } }] })) }],
        ...(page === 0 ? { NextToken: 'more' } : {}),
      };
    });
    const found = await cloud().describeHosts(ids);
    const inputs = ec2.commandCalls(DescribeInstancesCommand).map((call) => call.args[0].input);
    expect(inputs.map((input) => [input.Filters![0]!.Values!.length, input.NextToken])).toEqual([
      [200, undefined],
      [200, 'more'],
      [50, undefined],
      [50, 'more'],
    ]);
    expect([...found.keys()]).toHaveLength(8);
    expect(found.get(ids[0]!)).toMatchObject({ state: 'running', volumeId: `vol-${ids[0]}` });
    expect(found.has('i-unknown')).toBe(false);
  });

  it('lists only its own stage\'s live instances for the sweeper', async () => {
    ec2.on(DescribeInstancesCommand).resolves({ Reservations: [] });
    expect(await cloud().listManagedHosts()).toEqual([]);
    expect(ec2.commandCalls(DescribeInstancesCommand)[0]!.args[0].input).toStrictEqual({
      Filters: [
        { Name: 'tag:nodescaler:stage', Values: ['prod'] },
        { Name: 'instance-state-name', Values: ['pending', 'running', 'stopping', 'stopped'] },
      ],
      MaxResults: 1000,
    });
  });

  it('refuses a pool that is not configured', async () => {
    expect(await rejection(cloud().createHost({ ...spec, pool: 'd9/x' }))).toBeInstanceOf(ValidationError);
    expect(ec2.calls()).toHaveLength(0);
    expect(translateEc2Error(new NotFoundError('x', 'y'), 'op')).toBeInstanceOf(NotFoundError);
  });
});

describe('releasingCloudFor (the decommissioner) and cloudFor (the provisioner) with handler ec2', () => {
  const settings = { config, deployment: parseDeployment({ NODESCALER_STAGE: 'prod', AWS_REGION: 'eu-west-1' }) };

  it('gives the decommissioner EC2 hosts without the launch code, with the same release calls', async () => {
    const releasing = releasingCloudFor(settings, new MemoryLog());
    expect(releasing).toBeInstanceOf(Ec2Hosts);
    expect(releasing).not.toBeInstanceOf(Ec2Cloud);
    expect('createHost' in releasing).toBe(false);
    ec2.on(TerminateInstancesCommand).resolves({});
    await releasing.terminateHost('i-0abc');
    expect(ec2.commandCalls(TerminateInstancesCommand)[0]!.args[0].input).toEqual({ InstanceIds: ['i-0abc'] });
    expect(cloudFor(settings, new MemoryLog())).toBeInstanceOf(Ec2Cloud);
  });
});
