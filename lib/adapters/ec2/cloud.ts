import {
  DeleteVolumeCommand,
  DescribeInstancesCommand,
  RunInstancesCommand,
  TerminateInstancesCommand,
  EC2Client,
  type Instance,
  type RunInstancesCommandInput,
  type Tag,
} from '@aws-sdk/client-ec2';
import type { Config, NodeTemplate, Settings } from '../../config/index.js';
import { findPoolConfig } from '../../config/index.js';
import { CAPACITY_ERROR_SCOPES, NODE_TAG, nodeUserData, type StatsAgentSettings } from '../../domain/provisioning.js';
import { CapacityUnavailableError, ConflictError, NodescalerError, NotFoundError, TransientError, ValidationError } from '../../errors.js';
import type { Cloud, HostInfo, HostSpec, Offering, ReleasingCloud } from '../../ports/cloud.js';
import { awsClientConfig } from '../aws-clients.js';
import { awsErrorInfo } from '../aws-errors.js';

/** The tags nodescaler writes on every instance and volume it launches. */
export const TAGS = {
  pool: 'nodescaler:pool',
  district: 'nodescaler:district',
  profile: 'nodescaler:profile',
  decision: 'nodescaler:decision',
  node: NODE_TAG,
  stage: 'nodescaler:stage',
} as const;

const LIVE_INSTANCE_STATES = ['pending', 'running', 'stopping', 'stopped'];
/** DescribeInstances: at most 200 values in one filter. */
const FILTER_VALUES = 200;

/**
 * What releasing hosts needs of EC2 (`ReleasingCloud`: terminate, describe,
 * list our instances, delete a volume), apart from `Ec2Cloud`'s launch code:
 * the decommissioner builds this one (`ec2HostsFor`), so its bundle holds no
 * RunInstances request, user data or stats agent.
 */
export class Ec2Hosts implements ReleasingCloud {
  constructor(
    protected readonly client: EC2Client,
    protected readonly config: Pick<Config, 'pools'>,
    protected readonly options: { stage: string },
  ) {}

  async terminateHost(instanceId: string): Promise<void> {
    try {
      await this.client.send(new TerminateInstancesCommand({ InstanceIds: [instanceId] }));
    } catch (error) {
      const translated = translateEc2Error(error, `TerminateInstances ${instanceId}`);
      if (translated instanceof NotFoundError) return;
      throw translated;
    }
  }

  async describeHosts(instanceIds: readonly string[]): Promise<Map<string, HostInfo>> {
    const found = new Map<string, HostInfo>();
    for (let start = 0; start < instanceIds.length; start += FILTER_VALUES) {
      const ids = instanceIds.slice(start, start + FILTER_VALUES);
      for (const instance of await this.describe([{ Name: 'instance-id', Values: [...ids] }])) {
        found.set(instance.InstanceId!, hostInfo(instance, this.deviceOf(instance)));
      }
    }
    return found;
  }

  async listManagedHosts(): Promise<HostInfo[]> {
    const instances = await this.describe([
      { Name: `tag:${TAGS.stage}`, Values: [this.options.stage] },
      { Name: 'instance-state-name', Values: LIVE_INSTANCE_STATES },
    ]);
    return instances.map((instance) => hostInfo(instance, this.deviceOf(instance)));
  }

  async deleteVolume(volumeId: string): Promise<void> {
    try {
      await this.client.send(new DeleteVolumeCommand({ VolumeId: volumeId }));
    } catch (error) {
      const translated = translateEc2Error(error, `DeleteVolume ${volumeId}`);
      if (translated instanceof NotFoundError) return;
      throw translated;
    }
  }

  private async describe(filters: Array<{ Name: string; Values: string[] }>): Promise<Instance[]> {
    const instances: Instance[] = [];
    let nextToken: string | undefined;
    do {
      let page;
      try {
        page = await this.client.send(new DescribeInstancesCommand({ Filters: filters, MaxResults: 1000, ...(nextToken ? { NextToken: nextToken } : {}) }));
      } catch (error) {
        throw translateEc2Error(error, 'DescribeInstances');
      }
      for (const reservation of page.Reservations ?? []) {
        for (const instance of reservation.Instances ?? []) if (instance.InstanceId) instances.push(instance);
      }
      nextToken = page.NextToken;
    } while (nextToken);
    return instances;
  }

  /** The gear volume's device of the instance's pool (from its pool tag). */
  private deviceOf(instance: Instance): string | undefined {
    const pool = instance.Tags?.find((tag) => tag.Key === TAGS.pool)?.Value;
    return pool === undefined ? undefined : findPoolConfig(this.config, pool)?.template.volume?.device;
  }
}

/** The exact `RunInstances` request for one host: pure, so the tests can read it whole. */
/**
 * `Cloud` on EC2. One `RunInstances` per host from the pool's template, with
 * the offering the provisioner chose, `ClientToken` = the spec's
 * idempotency token, user data carrying the node's identity, the gear volume
 * (kept on termination, so that the decommissioner deletes it once
 * detached) and our tags on the instance and its volumes. Instances are
 * also tagged with the deployment stage: the orphan sweeper lists only its
 * own stage's instances.
 *
 * Errors: capacity and quota codes -> `CapacityUnavailableError` (with the
 * code as `reason` and the offering); throttling, 5xx, network ->
 * `TransientError`; a volume still attached -> `ConflictError`; any other
 * client fault -> `ValidationError`. Termination of an instance, and deletion
 * of a volume, that no longer exists is success.
 */
export class Ec2Cloud extends Ec2Hosts implements Cloud {
  constructor(
    client: EC2Client,
    config: Pick<Config, 'pools'>,
    /** `statsAgent`: when given, the user data installs the node stats agent (infra/agent/) reporting to that queue. */
    protected override readonly options: { stage: string; statsAgent?: StatsAgentSettings },
  ) {
    super(client, config, options);
  }

  async createHost(spec: HostSpec): Promise<HostInfo> {
    const poolConfig = findPoolConfig(this.config, spec.pool);
    if (!poolConfig) throw new ValidationError({ path: 'pool', message: `pool ${spec.pool} is not configured`, value: spec.pool });
    const input = runInstancesInput(poolConfig.template, spec, this.options.stage, this.options.statsAgent);
    let instance: Instance | undefined;
    try {
      const result = await this.client.send(new RunInstancesCommand(input));
      instance = result.Instances?.[0];
    } catch (error) {
      const translated = translateEc2Error(error, `RunInstances for ${spec.hostName}`, spec.offering);
      // A launch that names something missing (image, subnet, group, profile) is a template error.
      if (translated instanceof NotFoundError) {
        throw new ValidationError({ path: `pools.${spec.pool}.template`, message: `EC2 rejected the launch (${awsErrorInfo(error).detail})` }, translated.id);
      }
      throw translated;
    }
    if (!instance?.InstanceId) throw new TransientError(`RunInstances for ${spec.hostName} returned no instance`);
    return hostInfo(instance, poolConfig.template.volume?.device);
  }
}

export function runInstancesInput(template: NodeTemplate, spec: HostSpec, stage: string, statsAgent?: StatsAgentSettings): RunInstancesCommandInput {
  const offering = spec.offering ?? {};
  const tags: Tag[] = [
    ...Object.entries(template.tags)
      .filter(([key]) => key !== 'Name' && !key.startsWith('nodescaler:'))
      .map(([Key, Value]) => ({ Key, Value })),
    { Key: 'Name', Value: spec.cloudName },
    { Key: TAGS.pool, Value: spec.pool },
    { Key: TAGS.district, Value: spec.district },
    { Key: TAGS.profile, Value: spec.profile },
    { Key: TAGS.decision, Value: spec.decisionId },
    { Key: TAGS.node, Value: spec.hostName },
    { Key: TAGS.stage, Value: stage },
  ];
  const userData = nodeUserData(
    { pool: spec.pool, district: spec.district, profile: spec.profile, hostName: spec.hostName, cloudName: spec.cloudName },
    template.userData,
    statsAgent,
  );
  const input: RunInstancesCommandInput = {
    MinCount: 1,
    MaxCount: 1,
    ClientToken: spec.idempotencyToken,
    UserData: Buffer.from(userData, 'utf8').toString('base64'),
    TagSpecifications: [
      { ResourceType: 'instance', Tags: tags },
      { ResourceType: 'volume', Tags: tags },
    ],
  };
  if (template.launchTemplate) {
    const { id, name } = template.launchTemplate;
    const version = spec.launchTemplateVersion ?? template.launchTemplate.version;
    input.LaunchTemplate = id !== undefined ? { LaunchTemplateId: id, Version: version } : { LaunchTemplateName: name!, Version: version };
  }
  if (template.imageId !== undefined) input.ImageId = template.imageId;
  if (offering.instanceType !== undefined) input.InstanceType = offering.instanceType as RunInstancesCommandInput['InstanceType'];
  if (offering.subnetId !== undefined) input.SubnetId = offering.subnetId;
  if (template.securityGroups.length > 0) input.SecurityGroupIds = [...template.securityGroups];
  if (template.instanceProfile !== undefined) {
    input.IamInstanceProfile = template.instanceProfile.startsWith('arn:') ? { Arn: template.instanceProfile } : { Name: template.instanceProfile };
  }
  if (template.keyName !== undefined) input.KeyName = template.keyName;
  if (template.volume) {
    const { device, sizeGiB, type, iops } = template.volume;
    input.BlockDeviceMappings = [
      {
        DeviceName: device,
        Ebs: { VolumeSize: sizeGiB, VolumeType: type, ...(iops === undefined ? {} : { Iops: iops }), Encrypted: true, DeleteOnTermination: false },
      },
    ];
  }
  if (template.spot) {
    input.InstanceMarketOptions = { MarketType: 'spot', SpotOptions: { SpotInstanceType: 'one-time', InstanceInterruptionBehavior: 'terminate' } };
  }
  return input;
}

/** `HostInfo` of an EC2 instance; the gear volume is the one mapped at `device`. */
export function hostInfo(instance: Instance, device: string | undefined): HostInfo {
  const info: HostInfo = { instanceId: instance.InstanceId!, state: (instance.State?.Name ?? 'pending') as HostInfo['state'] };
  if (instance.InstanceType !== undefined) info.instanceType = instance.InstanceType;
  if (instance.SubnetId !== undefined) info.subnetId = instance.SubnetId;
  if (instance.Placement?.AvailabilityZone !== undefined) info.zone = instance.Placement.AvailabilityZone;
  if (instance.PrivateIpAddress !== undefined) info.privateIp = instance.PrivateIpAddress;
  if (instance.LaunchTime !== undefined) info.launchedAt = new Date(instance.LaunchTime).toISOString();
  const volumeId = device === undefined ? undefined : instance.BlockDeviceMappings?.find((mapping) => mapping.DeviceName === device)?.Ebs?.VolumeId;
  if (volumeId !== undefined) info.volumeId = volumeId;
  if (instance.Tags) info.tags = Object.fromEntries(instance.Tags.filter((tag) => tag.Key !== undefined).map((tag) => [tag.Key!, tag.Value ?? '']));
  return info;
}

const NOT_FOUND = /^Invalid[A-Za-z]*ID\.NotFound$|^InvalidVolume\.NotFound$|^InvalidInstanceID\.NotFound$/;
const IN_USE = new Set(['VolumeInUse', 'IncorrectState', 'IncorrectInstanceState']);

/** An EC2 SDK error as the project's typed error; the project's own errors pass through. */
export function translateEc2Error(error: unknown, operation: string, offering?: Offering): NodescalerError {
  if (error instanceof NodescalerError) return error;
  const info = awsErrorInfo(error);
  if (CAPACITY_ERROR_SCOPES[info.name] !== undefined) {
    return new CapacityUnavailableError(`${operation}: ${info.detail}`, info.name, offering ?? {}, { cause: error });
  }
  if (info.transient) return new TransientError(`${operation} failed: ${info.detail}`, { cause: error });
  if (NOT_FOUND.test(info.name)) return new NotFoundError(info.name.split('.')[0]!.replace(/^Invalid/, '').replace(/ID$/, '') || 'resource', operation);
  if (IN_USE.has(info.name)) return new ConflictError(`${operation}: ${info.detail}`, undefined);
  if (info.clientFault) return new ValidationError({ path: '', message: `EC2 rejected the request (${info.detail})` }, operation);
  return new TransientError(`${operation} failed: ${info.detail}`, { cause: error });
}

/**
 * The `ec2` handler's cloud for a stage. With the stats queue known, every
 * host launched installs the stats agent that reports to it. lib/adapters/cloud/from-settings.ts
 * calls it; the client is built here, so a bundle without this module has no EC2 client.
 */
export function ec2CloudFor(settings: Settings): Ec2Cloud {
  const { config, deployment } = settings;
  return new Ec2Cloud(new EC2Client(awsClientConfig(deployment.region, { retry: 'caller' })), config, {
    stage: deployment.stage,
    ...(deployment.queues.stats !== undefined && { statsAgent: { queueUrl: deployment.queues.stats, region: deployment.region } }),
  });
}

/** `Ec2Hosts` for a stage, for a function that releases hosts but never launches one (the decommissioner). */
export function ec2HostsFor(settings: Settings): Ec2Hosts {
  const { config, deployment } = settings;
  return new Ec2Hosts(new EC2Client(awsClientConfig(deployment.region, { retry: 'caller' })), config, { stage: deployment.stage });
}
