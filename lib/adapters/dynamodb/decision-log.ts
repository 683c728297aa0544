/**
 * Reads of the decision log (LOG#<pool> / <at>#<id>): the latest entries, and
 * a time range for `nodescaler shadow-report` and the audit trail (every page
 * of the range, oldest first). DynamoDbStateStore delegates to it; `send` is its error translation.
 */
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
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

  async latest(pool: PoolId, limit: number): Promise<DecisionLogEntry[]> {
    const result = await this.send(() =>
      this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': TABLE_KEYS.partition },
          ExpressionAttributeValues: { ':pk': `LOG#${pool}` },
          ScanIndexForward: false,
          Limit: limit,
        }),
      ),
    );
    return (result.Items ?? []).map((item) => strip<DecisionLogEntry>(item)!);
  }
}
