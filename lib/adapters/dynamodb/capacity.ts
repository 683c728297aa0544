/**
 * The global capacity record of the state table (lib/domain/capacity-claims.ts):
 *
 *   CAPACITY / CAPACITY      (versioned; reservations by decisionId)
 *
 * One item, outside the pool index, written whole by a conditional put on
 * its version: every claim of room under the global limits goes through
 * it, so of two claims that read the same room one wins and the other gets
 * `ConflictError` with the record as it is (ReturnValuesOnConditionCheckFailure
 * ALL_OLD). DynamoDbStateStore delegates to this module; `send` is its error
 * translation.
 */
import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { EMPTY_CAPACITY, type CapacityRecord } from '../../domain/capacity-claims.js';
import { strip, type Send } from './items.js';
import { TABLE_KEYS } from './table-keys.js';

const { partition: PK, sort: SK } = TABLE_KEYS;
const KEY = { [PK]: 'CAPACITY', [SK]: 'CAPACITY' };

export class DynamoDbCapacity {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly send: Send,
  ) {}

  async get(): Promise<CapacityRecord> {
    const result = await this.send(() => this.client.send(new GetCommand({ TableName: this.tableName, Key: KEY, ConsistentRead: true })));
    return strip<CapacityRecord>(result.Item) ?? EMPTY_CAPACITY;
  }

  async put(reservations: CapacityRecord['reservations'], expectedVersion: number): Promise<CapacityRecord> {
    const next: CapacityRecord = { version: expectedVersion + 1, reservations };
    await this.send(
      () =>
        this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: { ...KEY, ...next },
            ConditionExpression: expectedVersion === 0 ? `attribute_not_exists(${PK})` : '#version = :expected',
            ...(expectedVersion === 0 ? {} : { ExpressionAttributeNames: { '#version': 'version' }, ExpressionAttributeValues: { ':expected': expectedVersion } }),
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      `the capacity record is not at version ${expectedVersion}`,
    );
    return next;
  }
}
