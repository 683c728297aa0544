import { SQSClient } from '@aws-sdk/client-sqs';
import type { Deployment } from '../../config/index.js';
import { SqsQueue } from './queue.js';
import { awsClientConfig } from '../aws-clients.js';

export function sqsQueueFor(deployment: Deployment): SqsQueue {
  return new SqsQueue(new SQSClient(awsClientConfig(deployment.region)), deployment.queues);
}
