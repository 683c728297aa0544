import { DescribeInstancesCommand, EC2Client, type Instance } from '@aws-sdk/client-ec2';
import type { Settings } from '../../config/index.js';
import { TransientError, ValidationError } from '../../errors.js';
import type { Cloud, HostInfo } from '../../ports/cloud.js';
import { awsClientConfig } from '../aws-clients.js';
import { awsErrorInfo } from '../aws-errors.js';

/**
 * The one cloud read the threshold evaluator makes: who is the instance that
 * sent these node-stats (its state and tags), on first sight of it
 * (lib/app/stats-sender.ts caches the answer). Only `DescribeInstances`, so
 * the evaluator's bundle and role hold no other EC2 action; apart from
 * lib/adapters/ec2/cloud.ts, which a stage without handler ec2 leaves out.
 *
 * Contract: an instance EC2 does not know is absent from the result (a
 * filter, not `InstanceIds`, which would fail the whole call). Errors:
 * `TransientError` (throttling, 5xx, network: the message is redelivered),
 * `ValidationError` (access denied, a bad request).
 */
export class Ec2SenderHosts implements Pick<Cloud, 'describeHosts'> {
  constructor(private readonly client: EC2Client) {}

  async describeHosts(instanceIds: readonly string[]): Promise<Map<string, HostInfo>> {
    const found = new Map<string, HostInfo>();
    if (instanceIds.length === 0) return found;
    let page;
    try {
      page = await this.client.send(new DescribeInstancesCommand({ Filters: [{ Name: 'instance-id', Values: [...instanceIds] }] }));
    } catch (error) {
      const info = awsErrorInfo(error);
      if (!info.transient && info.clientFault) throw new ValidationError({ path: '', message: `EC2 rejected the request (${info.detail})` }, 'DescribeInstances of a node-stats sender');
      throw new TransientError(`DescribeInstances of a node-stats sender failed: ${info.detail}`, { cause: error });
    }
    for (const reservation of page.Reservations ?? []) {
      for (const instance of reservation.Instances ?? []) if (instance.InstanceId) found.set(instance.InstanceId, senderHost(instance));
    }
    return found;
  }
}

function senderHost(instance: Instance): HostInfo {
  const info: HostInfo = { instanceId: instance.InstanceId!, state: (instance.State?.Name ?? 'pending') as HostInfo['state'] };
  info.tags = Object.fromEntries((instance.Tags ?? []).filter((tag) => tag.Key !== undefined).map((tag) => [tag.Key!, tag.Value ?? '']));
  return info;
}

/** The evaluator's sender lookup for a stage (only built with statsAuth on: lib/config/adapters.ts). */
export function ec2SenderHostsFor(settings: Settings): Ec2SenderHosts {
  return new Ec2SenderHosts(new EC2Client(awsClientConfig(settings.deployment.region, { retry: 'caller' })));
}
