/**
 * A node's newest stats: their own item in the pool's stats partition,
 * outside the pool index, so a report is one write (not two) and never
 * changes the node's version:
 *
 *   STATS#<pool> / NODE#<nodeId>    (expiresAt: TTL, 30 days after the report)
 *
 * The agent's gear list is an item of its own, read with one node
 * (`getNode`) or many in batches (`getGearLists`), never with a pool's
 * listing, written only when its digest changed (`stats.listed`), and
 * gzipped: some 9 KB of JSON a 100-gear node, it made every report and
 * every listing of the pool nine times dearer when it rode with the stats.
 *
 *   GEARS#<nodeId> / LIST           (digest, reportedAt, gz; TTL as its stats)
 *
 * DynamoDbStateStore delegates the writes to this module; `send` is its error
 * translation, so a failed condition arrives as `ConflictError` with the item.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../../errors.js';
import type { GearInfo, NodeStats, PoolId } from '../../domain/model.js';
import { gearListSummary, withoutGearList, withPrior } from '../../domain/node-stats.js';
import { batchGetAll, type Send } from './items.js';
import type { StoredGearList } from '../../ports/state-store.js';
import { TABLE_KEYS } from './table-keys.js';

const { partition: PK, sort: SK, ttl: TTL } = TABLE_KEYS;
/** Stats items of nodes that stopped reporting go after this long (a terminated node's at once). */
const STATS_KEPT_S = 30 * 86_400;

export const statsKey = (pool: PoolId, nodeId: string) => ({ [PK]: `STATS#${pool}`, [SK]: `NODE#${nodeId}` });
export const gearListKey = (nodeId: string) => ({ [PK]: `GEARS#${nodeId}`, [SK]: 'LIST' });

const unpack = (gz: Uint8Array) => JSON.parse(gunzipSync(gz).toString('utf8')) as GearInfo[];

/** The report before the stored one, beside it (one write keeps both: `SET` reads the replaced stats as operands). */
const PRIOR_GEARS = 'priorGears';
const PRIOR_AT = 'priorAt';

/** The stats of a stats item (a query's, a read's or a failed condition's), with their prior when the item kept one. */
export function statsOfItem(item: Record<string, unknown> | undefined): NodeStats | undefined {
  const stats = item?.stats as NodeStats | undefined;
  if (!stats) return undefined;
  const gears = item![PRIOR_GEARS];
  const at = item![PRIOR_AT];
  if (typeof gears !== 'number' || typeof at !== 'string' || !(at < stats.reportedAt)) return stats;
  return { ...stats, prior: { activeGears: gears, reportedAt: at } };
}

const ttlOf = (stats: Pick<NodeStats, 'reportedAt'>) => Math.floor(Date.parse(stats.reportedAt) / 1000) + STATS_KEPT_S;

export class DynamoDbNodeStats {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly send: Send,
  ) {}

  /** The node's stats item as stored (strongly consistent), its gear list not read. */
  async read(pool: PoolId, nodeId: string): Promise<NodeStats | undefined> {
    const result = await this.send(() => this.client.send(new GetCommand({ TableName: this.tableName, Key: statsKey(pool, nodeId), ConsistentRead: true })));
    return statsOfItem(result.Item);
  }

  /**
   * Stores stats unless the item holds stats reported at or after them (`ConflictError` with the item). Their gear
   * list goes to its own item first, when `held` (the stats stored now) counted another: a crash between the two
   * writes leaves the list a report ahead of its counts, and the next report writes it again.
   */
  async write(pool: PoolId, nodeId: string, stats: NodeStats, held?: NodeStats): Promise<void> {
    let stored = stats;
    if (stats.gears) {
      stored = { ...withoutGearList(stats), listed: stats.listed ?? gearListSummary(stats.gears) };
      if (held?.listed?.digest !== stored.listed!.digest) await this.writeGearList(nodeId, stats.gears, stored);
    }
    await this.send(
      () =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: statsKey(pool, nodeId),
            // The report replaced becomes the prior (operands read the item as it was); the first report is its own.
            UpdateExpression:
              'SET #priorGears = if_not_exists(#stats.#activeGears, :activeGears), #priorAt = if_not_exists(#stats.#reportedAt, :reportedAt), #stats = :stats, #ttl = :ttl',
            ConditionExpression: 'attribute_not_exists(#stats) OR #stats.#reportedAt < :reportedAt',
            ExpressionAttributeNames: { '#stats': 'stats', '#reportedAt': 'reportedAt', '#activeGears': 'activeGears', '#priorGears': PRIOR_GEARS, '#priorAt': PRIOR_AT, '#ttl': TTL },
            ExpressionAttributeValues: { ':stats': withPrior(stored, undefined), ':activeGears': stats.activeGears, ':reportedAt': stats.reportedAt, ':ttl': ttlOf(stats) },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      `node ${nodeId} holds newer stats`,
    );
  }

  /** The stored gear lists of these nodes with their digests, in batches. */
  async readGearLists(nodeIds: readonly string[]): Promise<Map<string, StoredGearList>> {
    const read = { ConsistentRead: true, ProjectionExpression: '#pk, #gz, #digest', ExpressionAttributeNames: { '#pk': PK, '#gz': 'gz', '#digest': 'digest' } };
    const items = await batchGetAll(this.client, this.tableName, this.send, [...new Set(nodeIds)].map(gearListKey), 'gear lists', read);
    const found = new Map<string, StoredGearList>();
    for (const item of items) {
      const gz = item.gz as Uint8Array | undefined;
      if (gz && typeof item.digest === 'string') found.set(String(item[PK]).slice('GEARS#'.length), { digest: item.digest, gears: unpack(gz) });
    }
    return found;
  }

  /** Stores the list unless a newer one is there already (then that one stands: the condition failing is no error). */
  private async writeGearList(nodeId: string, gears: readonly GearInfo[], stats: NodeStats): Promise<void> {
    try {
      await this.send(
        () =>
          this.client.send(
            new UpdateCommand({
              TableName: this.tableName,
              Key: gearListKey(nodeId),
              UpdateExpression: 'SET #gz = :gz, #digest = :digest, #reportedAt = :reportedAt, #ttl = :ttl',
              ConditionExpression: 'attribute_not_exists(#reportedAt) OR #reportedAt < :reportedAt',
              ExpressionAttributeNames: { '#gz': 'gz', '#digest': 'digest', '#reportedAt': 'reportedAt', '#ttl': TTL },
              ExpressionAttributeValues: { ':gz': gzipSync(JSON.stringify(gears)), ':digest': stats.listed!.digest, ':reportedAt': stats.reportedAt, ':ttl': ttlOf(stats) },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
          ),
        `node ${nodeId} holds a newer gear list`,
      );
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
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
    const expireItem = (Key: Record<string, string>, field: string) =>
      this.send(() =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key,
            UpdateExpression: 'REMOVE #field SET #ttl = :now',
            ConditionExpression: `attribute_exists(${PK})`,
            ExpressionAttributeNames: { '#field': field, '#ttl': TTL },
            ExpressionAttributeValues: { ':now': Math.floor(now.getTime() / 1000) },
          }),
        ),
      ).catch(() => undefined);
    await Promise.all([expireItem(statsKey(pool, nodeId), 'stats'), expireItem(gearListKey(nodeId), 'gz')]);
  }
}
