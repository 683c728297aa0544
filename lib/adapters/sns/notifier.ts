import { SNSClient } from '@aws-sdk/client-sns';
import type { Settings } from '../../config/index.js';
import type { Notifier } from '../../ports/notifier.js';
import { publish } from './publish.js';
import { awsClientConfig } from '../aws-clients.js';

/** `Notifier` on an SNS topic (`notify.topicArn`): operator notices such as capacity exhaustion. */
export class SnsNotifier implements Notifier {
  constructor(
    private readonly client: SNSClient,
    private readonly topicArn: string,
  ) {}

  async notify(notice: { subject: string; message: string; pool?: string; dedupKey?: string }): Promise<void> {
    const subject = notice.subject.length > 100 ? `${notice.subject.slice(0, 97)}...` : notice.subject;
    await publish(this.client, this.topicArn, {
      subject,
      text: notice.message,
      ...(notice.pool === undefined ? {} : { group: notice.pool }),
      ...(notice.dedupKey === undefined ? {} : { dedupKey: notice.dedupKey }),
    });
  }
}

/** Operator notices on the stage's `notify.topicArn`, if it has one (the client is built here: see ec2CloudFor). */
export function snsNotifierFor(settings: Settings): SnsNotifier | undefined {
  const { config, deployment } = settings;
  return config.notify ? new SnsNotifier(new SNSClient(awsClientConfig(deployment.region)), config.notify.topicArn) : undefined;
}
