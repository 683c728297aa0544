import { createHash } from 'node:crypto';
import { PublishCommand, type PublishCommandInput, type SNSClient } from '@aws-sdk/client-sns';
import { NodescalerError, TransientError, ValidationError } from '../../errors.js';
import { awsErrorInfo } from '../aws-errors.js';

/**
 * One SNS `Publish` to `topicArn`. A FIFO topic (`.fifo`) gets the pool as
 * `MessageGroupId` and a hash of `dedupKey` as `MessageDeduplicationId`, so
 * a retried publish is delivered once. Throttling, 5xx, network ->
 * `TransientError`; a missing topic or denied access -> `ValidationError`.
 */
export async function publish(
  client: SNSClient,
  topicArn: string,
  message: { subject: string; text: string; group?: string; dedupKey?: string },
): Promise<void> {
  const input: PublishCommandInput = { TopicArn: topicArn, Subject: message.subject, Message: message.text };
  if (topicArn.endsWith('.fifo')) {
    input.MessageGroupId = message.group ?? 'nodescaler';
    input.MessageDeduplicationId = createHash('sha256')
      .update(message.dedupKey ?? `${message.subject}\n${message.text}`)
      .digest('hex')
      .slice(0, 64);
  }
  try {
    await client.send(new PublishCommand(input));
  } catch (error) {
    throw translateSnsError(error, `Publish to ${topicArn}`);
  }
}

export function translateSnsError(error: unknown, operation: string): NodescalerError {
  if (error instanceof NodescalerError) return error;
  const info = awsErrorInfo(error);
  if (info.transient || info.name === 'KMSThrottlingException') return new TransientError(`${operation} failed: ${info.detail}`, { cause: error });
  if (info.name === 'NotFound' || info.name === 'NotFoundException') {
    return new ValidationError({ path: 'notify.topicArn', message: `SNS has no such topic (${info.detail})` }, operation);
  }
  if (info.clientFault) return new ValidationError({ path: '', message: `SNS rejected the request (${info.detail})` }, operation);
  return new TransientError(`${operation} failed: ${info.detail}`, { cause: error });
}
