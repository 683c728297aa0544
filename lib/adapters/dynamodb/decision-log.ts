/**
 * Reads of the decision log over a time range (LOG#<pool> / <at>#<id>), for
 * `nodescaler shadow-report` and the audit trail: every page of the range,
 * oldest first. DynamoDbStateStore delegates to it; `send` is its error translation.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DecisionLogEntry, PoolId } from '../../domain/model.js';
import { queryAll, strip, type Send } from './items.js';
import { TABLE_KEYS } from './table-keys.js';

export class DynamoDbDecisionLog {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly send: Send,
  ) {}

  async since(pool: PoolId, since: string): Promise<DecisionLogEntry[]> {
    const items = await queryAll(this.client, this.send, {
      TableName: this.tableName,
      KeyConditionExpression: '#pk = :pk AND #sk >= :since',
      ExpressionAttributeNames: { '#pk': TABLE_KEYS.partition, '#sk': TABLE_KEYS.sort },
      ExpressionAttributeValues: { ':pk': `LOG#${pool}`, ':since': since },
    });
    const entries = items.map((item) => strip<DecisionLogEntry>(item)!);
    return entries;
  }
}
