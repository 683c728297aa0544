import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Deployment } from '../../config/index.js';
import { awsClientConfig } from '../aws-clients.js';
import { DynamoDbStateStore } from './state-store.js';

/** The state table of a deployment (or of dynalite, when an endpoint is set). */
export function stateStoreFor(deployment: Deployment): DynamoDbStateStore {
  const client = new DynamoDBClient(awsClientConfig(deployment.region, deployment.dynamodbEndpoint ? { endpoint: deployment.dynamodbEndpoint } : {}));
  return new DynamoDbStateStore(DynamoDbStateStore.documentClient(client), deployment.tableName);
}
