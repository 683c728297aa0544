import { SNSClient } from '@aws-sdk/client-sns';
import type { Config, Settings } from '../../config/index.js';
import { ValidationError } from '../../errors.js';
import type { HostInfo, HostSpec, ReleaseSpec } from '../../ports/cloud.js';
import { RequestOnlyCloud, addNodeRequest, removeNodeRequest, requestSubject, requestText } from '../cloud/host-request.js';
import { publish } from './publish.js';
import { awsClientConfig } from '../aws-clients.js';

/**
 * Handler `notify`: publishes a readable message to an SNS topic (an
 * operator's e-mail subscription) saying which node is needed, where and
 * why, and later which host may be released. Creates no instance.
 */
export class SnsNotifyCloud extends RequestOnlyCloud {
  constructor(
    private readonly client: SNSClient,
    private readonly topicArn: string,
    private readonly config: Pick<Config, 'pools'>,
  ) {
    super();
  }

  async createHost(spec: HostSpec): Promise<HostInfo> {
    const request = addNodeRequest(this.config, spec);
    await publish(this.client, this.topicArn, { subject: requestSubject(request), text: requestText(request), group: spec.pool, dedupKey: spec.idempotencyToken });
    const info: HostInfo = { state: 'requested' };
    if (spec.offering?.instanceType !== undefined) info.instanceType = spec.offering.instanceType;
    return info;
  }

  async reportRelease(spec: ReleaseSpec): Promise<void> {
    const request = removeNodeRequest(spec);
    await publish(this.client, this.topicArn, { subject: requestSubject(request), text: requestText(request), group: spec.pool, dedupKey: `release:${spec.hostName}` });
  }

}

/** The `notify` handler's cloud for a stage (the client is built here: see ec2CloudFor). */
export function snsNotifyCloudFor(settings: Settings): SnsNotifyCloud {
  const { config, deployment } = settings;
  if (!config.notify) throw new ValidationError({ path: 'notify.topicArn', message: 'handler notify needs notify.topicArn' }, 'configuration');
  return new SnsNotifyCloud(new SNSClient(awsClientConfig(deployment.region, { retry: 'caller' })), config.notify.topicArn, config);
}
