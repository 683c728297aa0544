import { SQSClient } from '@aws-sdk/client-sqs';
import type { Deployment } from '../../config/index.js';
import { SqsQueue } from './queue.js';

export function sqsQueueFor(deployment: Deployment): SqsQueue {
  return new SqsQueue(new SQSClient({ region: deployment.region }), deployment.queues);
}
