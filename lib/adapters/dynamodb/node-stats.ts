/**
 * A node's newest stats: their own item in the pool's stats partition,
 * outside the pool index, so a report is one write (not two) and never
 * changes the node's version:
 *
 *   STATS#<pool> / NODE#<nodeId>    (expiresAt: TTL, 30 days after the report)
 *
 * DynamoDbStateStore delegates the writes to this module; `send` is its error
 * translation, so a failed condition arrives as `ConflictError` with the item.
 */
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../../errors.js';
import type { NodeStats, PoolId } from '../../domain/model.js';
import type { Send } from './items.js';
import { TABLE_KEYS } from './table-keys.js';

const { partition: PK, sort: SK, ttl: TTL } = TABLE_KEYS;
/** Stats items of nodes that stopped reporting go after this long (a terminated node's at once). */
const STATS_KEPT_S = 30 * 86_400;

export const statsKey = (pool: PoolId, nodeId: string) => ({ [PK]: `STATS#${pool}`, [SK]: `NODE#${nodeId}` });

export class DynamoDbNodeStats {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly send: Send,
  ) {}

  /** Stores stats in the node's stats item unless it holds stats reported at or after them (`ConflictError` with the item). */
  async write(pool: PoolId, nodeId: string, stats: NodeStats): Promise<void> {
    await this.send(
      () =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: statsKey(pool, nodeId),
            UpdateExpression: 'SET #stats = :stats, #ttl = :ttl',
            ConditionExpression: 'attribute_not_exists(#stats) OR #stats.#reportedAt < :reportedAt',
            ExpressionAttributeNames: { '#stats': 'stats', '#reportedAt': 'reportedAt', '#ttl': TTL },
            ExpressionAttributeValues: { ':stats': stats, ':reportedAt': stats.reportedAt, ':ttl': Math.floor(Date.parse(stats.reportedAt) / 1000) + STATS_KEPT_S },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      `node ${nodeId} holds newer stats`,
    );
  }

  /** Removes stats kept inside a node item (the layout before stats had their own item); a node gone meanwhile is fine. */
  async dropInline(nodeKey: Record<string, string>): Promise<void> {
    await this.send(() =>
      this.client.send(
        new UpdateCommand({ TableName: this.tableName, Key: nodeKey, UpdateExpression: 'REMOVE #stats', ConditionExpression: `attribute_exists(${PK})`, ExpressionAttributeNames: { '#stats': 'stats' } }),
      ),
    ).catch((error: unknown) => {
      if (!(error instanceof ConflictError)) throw error;
    });
  }

  /**
   * A terminated node's stats go: emptied and left to TTL (nothing here
   * deletes, as the operators' policy grants no DeleteItem). Best effort: a
   * left-over stats item is never listed with a live node, and its TTL removes it too.
   */
  async expire(pool: PoolId, nodeId: string, now: Date): Promise<void> {
    await this.send(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: statsKey(pool, nodeId),
          UpdateExpression: 'REMOVE #stats SET #ttl = :now',
          ConditionExpression: `attribute_exists(${PK})`,
          ExpressionAttributeNames: { '#stats': 'stats', '#ttl': TTL },
          ExpressionAttributeValues: { ':now': Math.floor(now.getTime() / 1000) },
        }),
      ),
    ).catch(() => undefined);
  }
}
