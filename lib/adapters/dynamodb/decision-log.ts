/**
 * Reads of the decision log over a time range (LOG#<pool> / <at>#<id>), for
 * `nodescaler shadow-report` and the audit trail: every page of the range,
 * oldest first. DynamoDbStateStore delegates to it; `send` is its error translation.
 */
import { QueryCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { DecisionLogEntry, PoolId } from '../../domain/model.js';
import type { Send } from './controls.js';
import { strip } from './items.js';
import { TABLE_KEYS } from './table-keys.js';

export class DynamoDbDecisionLog {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly send: Send,
  ) {}

  async since(pool: PoolId, since: string): Promise<DecisionLogEntry[]> {
    const entries: DecisionLogEntry[] = [];
    let startKey: QueryCommandInput['ExclusiveStartKey'];
    do {
      const page = await this.send(() =>
        this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: '#pk = :pk AND #sk >= :since',
            ExpressionAttributeNames: { '#pk': TABLE_KEYS.partition, '#sk': TABLE_KEYS.sort },
            ExpressionAttributeValues: { ':pk': `LOG#${pool}`, ':since': since },
            ExclusiveStartKey: startKey,
          }),
        ),
      );
      for (const item of page.Items ?? []) entries.push(strip<DecisionLogEntry>(item)!);
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return entries;
  }
}
