/**
 * The operator controls' items of the state table (pauses and per-pool
 * overrides), under one partition so that every function reads all of them
 * with one query:
 *
 *   CONTROLS / PAUSE#<pool or *>#<actions>     (expiresAt: TTL a day after `until`)
 *   CONTROLS / OVERRIDES#<pool>                 (versioned)
 *   CONTROLS / DRAINAFTER#<nodeId>              (a drain waiting for its replacement)
 *
 * Nothing is deleted (the operators' policy grants no DeleteItem): a
 * resumed pause or a finished pending drain is marked `endedAt`, left out of
 * every read and removed by TTL a day later.
 *
 * DynamoDbStateStore delegates to this module; `send` is its error
 * translation, so a failed condition arrives as `ConflictError` with the item.
 */
import { PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../../errors.js';
import { pauseKey, type Controls, type OverrideRecord, type PauseActions, type PauseRecord, type PendingDrain } from '../../domain/controls.js';
import type { PoolId } from '../../domain/model.js';
import { queryAll, type Send } from './items.js';
import { TABLE_KEYS } from './table-keys.js';

const { partition: PK, sort: SK, ttl: TTL } = TABLE_KEYS;
const PARTITION = 'CONTROLS';
const PAUSE = 'PAUSE#';
const OVERRIDES = 'OVERRIDES#';
const PENDING_DRAIN = 'DRAINAFTER#';
const ENDED = 'endedAt';
/** How long an ended item stays (for a look in the console) before TTL removes it. */
const ENDED_KEPT_S = 86_400;
/** An expired pause stays readable (for status) a day past its `until` before DynamoDB's TTL removes it. */
const PAUSE_KEPT_AFTER_UNTIL_S = 86_400;

export type { Send } from './items.js';

export class DynamoDbControls {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly send: Send,
  ) {}

  async list(): Promise<Controls> {
    const controls: Controls = { pauses: [], overrides: [], pendingDrains: [] };
    const items = await queryAll(this.client, this.send, {
      TableName: this.tableName,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': PK },
      ExpressionAttributeValues: { ':pk': PARTITION },
      ConsistentRead: true,
    });
    for (const item of items) {
      const sk = String(item[SK]);
      const { [PK]: _pk, [SK]: _sk, [TTL]: _ttl, ...record } = item;
      if (record[ENDED] !== undefined) continue;
      if (sk.startsWith(PAUSE)) controls.pauses.push(record as PauseRecord);
      else if (sk.startsWith(OVERRIDES)) controls.overrides.push(record as OverrideRecord);
      else if (sk.startsWith(PENDING_DRAIN)) controls.pendingDrains.push(record as PendingDrain);
    }
    return controls;
  }

  async putPause(pause: PauseRecord): Promise<PauseRecord> {
    const ttl = pause.until === undefined ? {} : { [TTL]: Math.floor(Date.parse(pause.until) / 1000) + PAUSE_KEPT_AFTER_UNTIL_S };
    await this.send(() => this.client.send(new PutCommand({ TableName: this.tableName, Item: { [PK]: PARTITION, [SK]: `${PAUSE}${pauseKey(pause)}`, ...ttl, ...pause } })));
    return pause;
  }

  async deletePause(pool: PoolId, actions: PauseActions): Promise<PauseRecord | undefined> {
    return this.end<PauseRecord>(`${PAUSE}${pauseKey({ pool, actions })}`);
  }

  async putOverrides(record: Omit<OverrideRecord, 'version'>, expectedVersion: number): Promise<OverrideRecord> {
    const next: OverrideRecord = { ...record, version: expectedVersion + 1 };
    await this.send(
      () =>
        this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: { [PK]: PARTITION, [SK]: `${OVERRIDES}${record.pool}`, ...next },
            ConditionExpression: expectedVersion === 0 ? `attribute_not_exists(${PK})` : '#version = :expected',
            ...(expectedVersion === 0 ? {} : { ExpressionAttributeNames: { '#version': 'version' }, ExpressionAttributeValues: { ':expected': expectedVersion } }),
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      `overrides of pool ${record.pool} are not at version ${expectedVersion}`,
    );
    return next;
  }

  async createPendingDrain(pending: PendingDrain): Promise<PendingDrain> {
    await this.send(
      () =>
        this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: { [PK]: PARTITION, [SK]: `${PENDING_DRAIN}${pending.nodeId}`, ...pending },
            ConditionExpression: `attribute_not_exists(${PK}) OR attribute_exists(#ended)`,
            ExpressionAttributeNames: { '#ended': ENDED },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      `node ${pending.nodeId} already waits for a replacement`,
    );
    return pending;
  }

  async deletePendingDrain(nodeId: string): Promise<boolean> {
    return (await this.end<PendingDrain>(`${PENDING_DRAIN}${nodeId}`)) !== undefined;
  }

  async markPendingDrainSent(nodeId: string, sentAt: string): Promise<'marked' | 'already' | 'gone'> {
    const outcome = await this.setPendingOnce(nodeId, 'sentAt', { sentAt });
    return outcome === 'set' ? 'marked' : outcome;
  }

  async cancelPendingDrain(nodeId: string, cancel: { at: string; by: string; reason: string }): Promise<'cancelled' | 'already' | 'gone'> {
    const outcome = await this.setPendingOnce(nodeId, 'cancelledAt', { cancelledAt: cancel.at, cancelledBy: cancel.by, cancelReason: cancel.reason });
    return outcome === 'set' ? 'cancelled' : outcome;
  }

  /**
   * Sets `fields` on a node's pending drain unless `once` is set already (`already`) or the item is missing or ended
   * (`gone`): exactly one of concurrent callers gets `set`.
   */
  private async setPendingOnce(nodeId: string, once: keyof PendingDrain, fields: Partial<PendingDrain>): Promise<'set' | 'already' | 'gone'> {
    const names = Object.keys(fields);
    try {
      await this.send(() =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { [PK]: PARTITION, [SK]: `${PENDING_DRAIN}${nodeId}` },
            UpdateExpression: `SET ${names.map((_, i) => `#f${i} = :f${i}`).join(', ')}`,
            ConditionExpression: `attribute_exists(${PK}) AND attribute_not_exists(#ended) AND attribute_not_exists(#once)`,
            ExpressionAttributeNames: { '#ended': ENDED, '#once': once, ...Object.fromEntries(names.map((name, i) => [`#f${i}`, name])) },
            ExpressionAttributeValues: Object.fromEntries(names.map((name, i) => [`:f${i}`, fields[name as keyof PendingDrain]])),
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      return 'set';
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      const current = error.current as Record<string, unknown> | undefined;
      return current === undefined || current[ENDED] !== undefined ? 'gone' : 'already';
    }
  }

  /** Marks an item ended unless it is missing or ended already; the item as it was, or undefined. */
  private async end<T>(sortKey: string): Promise<T | undefined> {
    const now = new Date();
    try {
      const result = await this.send(() =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { [PK]: PARTITION, [SK]: sortKey },
            UpdateExpression: 'SET #ended = :now, #ttl = :ttl',
            ConditionExpression: `attribute_exists(${PK}) AND attribute_not_exists(#ended)`,
            ExpressionAttributeNames: { '#ended': ENDED, '#ttl': TTL },
            ExpressionAttributeValues: { ':now': now.toISOString(), ':ttl': Math.floor(now.getTime() / 1000) + ENDED_KEPT_S },
            ReturnValues: 'ALL_OLD',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      const { [PK]: _pk, [SK]: _sk, [TTL]: _ttl, ...record } = result.Attributes ?? {};
      return record as T;
    } catch (error) {
      if (error instanceof ConflictError) return undefined;
      throw error;
    }
  }
}
