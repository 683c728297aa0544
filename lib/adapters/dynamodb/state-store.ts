import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type {
  DecisionLogEntry,
  DrainRecord,
  DrainState,
  GearMove,
  NodeRecord,
  NodeState,
  NodeStats,
  PoolId,
  PoolRecord,
  ScaleUpRecord,
} from '../../domain/model.js';
import { splitPoolId } from '../../domain/model.js';
import type { Controls, OverrideRecord, PauseActions, PauseRecord, PendingDrain } from '../../domain/controls.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import type { DrainHeader, DrainPatch, GearMoveRecord, LeaseRequest, MoveWrite, NewDrain, NewNode, NodePatch, PoolPatch, StateStore, StatsWrite, StoredGearList } from '../../ports/state-store.js';
import { assertInstanceId, assertLegalTransition, decisionExpiry, liveFirst, sourcesOf } from '../state-rules.js';
import type { CapacityRecord } from '../../domain/capacity-claims.js';
import { DynamoDbCapacity } from './capacity.js';
import { DynamoDbControls, type Send } from './controls.js';
import { DynamoDbDecisionLog } from './decision-log.js';
import { DynamoDbDrains } from './drains.js';
import { DynamoDbGearMoves } from './gear-moves.js';
import { DynamoDbNodeStats, statsKey, statsOfItem } from './node-stats.js';
import { withoutGearList, withPrior } from '../../domain/node-stats.js';
import { DynamoDbPoolLeases } from './pool-lease.js';
import { conditionalUpdate, patchExpression, queryAll, strip, translateError, updateExpression } from './items.js';
import { TABLE_KEYS } from './table-keys.js';

const { partition: PK, sort: SK, poolIndex: INDEX, poolIndexPartition: GPK, poolIndexSort: GSK, ttl: TTL, instanceIndex: INSTANCE_INDEX, instanceIndexPartition: INSTANCE } = TABLE_KEYS;

const key = {
  node: (nodeId: string) => ({ [PK]: `NODE#${nodeId}`, [SK]: 'NODE' }),
  pool: (pool: PoolId) => ({ [PK]: `POOL#${pool}`, [SK]: 'POOL' }),
  /** A node's stats: their own item in the pool's stats partition, outside the pool index, so a report is one write (not two). */
  stats: statsKey,
  counter: (base: string) => ({ [PK]: `COUNTER#${base}`, [SK]: 'COUNTER' }),
  scaleUp: (decisionId: string) => ({ [PK]: `SCALEUP#${decisionId}`, [SK]: 'SCALEUP' }),
  log: (pool: PoolId) => `LOG#${pool}`,
};
const poolPartition = (pool: PoolId) => `POOL#${pool}`;

/** The node with `stats` (its own item's), or without any when there are none (a write's result). */
function withStats(node: NodeRecord, stats: NodeStats | undefined): NodeRecord {
  if (stats) return { ...node, stats };
  if (node.stats === undefined) return node;
  const { stats: _stats, ...rest } = node;
  return rest;
}

/**
 * `StateStore` over one DynamoDB table (see infra/state-table.yml). Every
 * mutation is a single-item conditional write with
 * `ReturnValuesOnConditionCheckFailure: ALL_OLD`, so a lost race costs no
 * second read: the `ConflictError` carries the item as the winner left it.
 */
export class DynamoDbStateStore implements StateStore {
  private readonly capacity: DynamoDbCapacity;
  private readonly controls: DynamoDbControls;
  private readonly decisionLog: DynamoDbDecisionLog;
  private readonly drains: DynamoDbDrains;
  private readonly gearMoves: DynamoDbGearMoves;
  private readonly leases: DynamoDbPoolLeases;
  private readonly stats: DynamoDbNodeStats;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    const send: Send = (call, conflict) => this.send(call, conflict);
    this.capacity = new DynamoDbCapacity(client, tableName, send);
    this.controls = new DynamoDbControls(client, tableName, send);
    this.decisionLog = new DynamoDbDecisionLog(client, tableName, send);
    this.drains = new DynamoDbDrains(client, tableName, send);
    this.gearMoves = new DynamoDbGearMoves(client, tableName, send);
    this.leases = new DynamoDbPoolLeases(client, tableName, send);
    this.stats = new DynamoDbNodeStats(client, tableName, send);
  }

  /** The document client this adapter expects: `undefined` fields are dropped, not rejected. */
  static documentClient(client: DynamoDBClient): DynamoDBDocumentClient {
    return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  }

  async getNode(nodeId: string): Promise<NodeRecord | undefined> {
    const node = await this.get<NodeRecord>(key.node(nodeId));
    if (!node) return undefined;
    const stats = (await this.stats.read(node.pool, nodeId)) ?? node.stats;
    const gears = stats?.listed ? (await this.stats.readGearLists([nodeId])).get(nodeId)?.gears : undefined;
    return withStats(node, gears && stats ? { ...stats, gears } : stats);
  }

  /** One query on the instance index (keys only), then the node as `getNode` reads it. */
  async findNodeByInstance(instanceId: string): Promise<NodeRecord | undefined> {
    const keys = await queryAll(this.client, this.send.bind(this) as Send, {
      TableName: this.tableName,
      IndexName: INSTANCE_INDEX,
      KeyConditionExpression: '#instance = :instance',
      ExpressionAttributeNames: { '#instance': INSTANCE },
      ExpressionAttributeValues: { ':instance': instanceId },
    });
    const nodeIds = keys.map((item) => String(item[PK])).filter((pk) => pk.startsWith('NODE#')).map((pk) => pk.slice('NODE#'.length));
    const nodes = await Promise.all(nodeIds.map((nodeId) => this.getNode(nodeId)));
    return liveFirst(nodes.filter((node): node is NodeRecord => node?.instanceId === instanceId));
  }

  /** The pool index's nodes and the pool's stats partition, two queries whatever the pool's size, put together. */
  async listNodes(pool: PoolId): Promise<NodeRecord[]> {
    const [nodes, stats] = await Promise.all([
      this.queryPoolIndex<NodeRecord>(poolPartition(pool), 'NODE#'),
      queryAll(this.client, this.send.bind(this) as Send, {
        TableName: this.tableName,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': PK },
        ExpressionAttributeValues: { ':pk': key.stats(pool, '').pk },
      }),
    ]);
    const byNode = new Map(stats.map((item) => [String(item[SK]).slice('NODE#'.length), statsOfItem(item)]));
    // Stats stored before gear lists had their own item may still hold one: a listing never carries it.
    return nodes.map((node) => {
      const stats = byNode.get(node.nodeId) ?? node.stats;
      return withStats(node, stats && withoutGearList(stats));
    });
  }

  async createNode(node: NewNode, now: Date): Promise<NodeRecord> {
    assertInstanceId(node.nodeId, node);
    const { stats, ...fields } = node;
    const record: NodeRecord = { ...fields, version: 1, stateChangedAt: now.toISOString() };
    await this.putNew({ ...key.node(node.nodeId), [GPK]: poolPartition(node.pool), [GSK]: `NODE#${node.nodeId}`, ...record }, `node ${node.nodeId} exists`);
    if (stats) await this.stats.write(node.pool, node.nodeId, stats);
    return stats ? { ...record, stats } : record;
  }

  async transitionNode(
    nodeId: string,
    change: { from: NodeState | readonly NodeState[]; to: NodeState; expectedVersion?: number; patch?: NodePatch },
    now: Date,
  ): Promise<NodeRecord> {
    const from = sourcesOf(change.from);
    assertLegalTransition(nodeId, from, change.to);
    assertInstanceId(nodeId, change.patch);
    const names: Record<string, string> = { '#state': 'state', '#version': 'version', '#changed': 'stateChangedAt' };
    const values: Record<string, unknown> = { ':to': change.to, ':one': 1, ':now': now.toISOString() };
    const { set, remove } = patchExpression({ ...change.patch }, names, values);
    from.forEach((state, i) => (values[`:from${i}`] = state));
    let condition = `attribute_exists(${PK}) AND #state IN (${from.map((_, i) => `:from${i}`).join(', ')})`;
    if (change.expectedVersion !== undefined) {
      values[':expected'] = change.expectedVersion;
      condition += ' AND #version = :expected';
    }
    // A terminated node leaves the pool index (sparse GSI): pool lists stay the size of the live pool.
    if (change.to === 'terminated') {
      names['#gpk'] = GPK;
      names['#gsk'] = GSK;
      remove.push('#gpk', '#gsk');
    }
    const node = await this.update<NodeRecord>(
      {
        Key: key.node(nodeId),
        UpdateExpression: updateExpression(['#state = :to', '#changed = :now', '#version = #version + :one', ...set], remove),
        ConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
      { kind: 'node', id: nodeId, conflict: `node ${nodeId} is not ${from.join('|')} -> ${change.to}` },
    );
    // A terminated node's stats leave the pool's stats partition with it (the partition stays the size of the live pool).
    if (change.to === 'terminated') await this.stats.expire(node.pool, nodeId, now);
    return withStats(node, undefined);
  }

  async updateNode(nodeId: string, expectedVersion: number, patch: NodePatch): Promise<NodeRecord> {
    assertInstanceId(nodeId, patch);
    return withStats(await this.updateVersioned<NodeRecord>(key.node(nodeId), expectedVersion, { ...patch }, { kind: 'node', id: nodeId }), undefined);
  }

  async putNodeStats(nodeId: string, stats: NodeStats): Promise<StatsWrite> {
    const node = await this.get<NodeRecord>(key.node(nodeId));
    if (!node) throw new NotFoundError('node', nodeId);
    const { stats: inline, ...fields } = node;
    // A node item of the layout before stats had their own item: its stats count until the first report after the upgrade.
    if (inline && !(inline.reportedAt < stats.reportedAt)) return { applied: false, node: withStats(fields, withoutGearList(inline)) };
    // A report with a gear list reads the stats held: they say whether the list changed (a heartbeat's does not: no
    // list write), and an older report than theirs writes nothing. Without a list the conditional write decides alone.
    const held = stats.gears ? await this.stats.read(node.pool, nodeId) : undefined;
    if (held && !(held.reportedAt < stats.reportedAt)) return { applied: false, node: withStats(fields, held) };
    try {
      await this.stats.write(node.pool, nodeId, stats, held);
    } catch (error) {
      if (error instanceof ConflictError) return { applied: false, node: withStats(fields, statsOfItem(error.current as Record<string, unknown> | undefined)) };
      throw error;
    }
    if (inline) await this.stats.dropInline(key.node(nodeId));
    // The prior of a report without a list is the item's, unread: a write's result carries the report alone.
    return { applied: true, node: { ...fields, stats: withPrior(stats, undefined) } };
  }

  async getPool(pool: PoolId): Promise<PoolRecord | undefined> {
    return this.get<PoolRecord>(key.pool(pool));
  }

  async listPools(): Promise<PoolRecord[]> {
    return this.queryPoolIndex<PoolRecord>('POOLS', 'POOL#');
  }

  async ensurePool(pool: PoolId): Promise<PoolRecord> {
    const record: PoolRecord = { pool, ...splitPoolId(pool), version: 1 };
    try {
      await this.putNew({ ...key.pool(pool), [GPK]: 'POOLS', [GSK]: `POOL#${pool}`, ...record }, `pool ${pool} exists`);
      return record;
    } catch (error) {
      if (error instanceof ConflictError) return error.current as PoolRecord;
      throw error;
    }
  }

  acquireLease(pool: PoolId, lease: LeaseRequest, now: Date): Promise<PoolRecord> {
    return this.leases.acquire(pool, lease, now);
  }
  markLeaseSent(pool: PoolId, holder: string, now: Date): Promise<PoolRecord> {
    return this.leases.markSent(pool, holder, now);
  }
  releaseLease(pool: PoolId, holder: string): Promise<PoolRecord> {
    return this.leases.release(pool, holder);
  }

  async updatePool(pool: PoolId, expectedVersion: number, patch: PoolPatch): Promise<PoolRecord> {
    return this.updateVersioned<PoolRecord>(key.pool(pool), expectedVersion, { ...patch }, { kind: 'pool', id: pool });
  }

  createDrain(drain: NewDrain, now: Date): Promise<DrainRecord> {
    return this.drains.create(drain, now);
  }

  getDrain(drainId: string): Promise<DrainRecord | undefined> {
    return this.drains.get(drainId);
  }

  listDrains(pool: PoolId, state: DrainState = 'active', startedSince?: string): Promise<DrainRecord[]> {
    return this.drains.list(pool, state, startedSince);
  }

  updateDrain(drainId: string, expectedVersion: number, patch: DrainPatch, now: Date, keepEndedFor?: number): Promise<DrainHeader> {
    return this.drains.update(drainId, expectedVersion, patch, now, keepEndedFor);
  }

  writeMoves(drainId: string, writes: readonly MoveWrite[]): Promise<GearMove[]> {
    return this.drains.writeMoves(drainId, writes);
  }

  splitDrainMoves(drainId: string, expectedVersion: number): Promise<DrainRecord> {
    return this.drains.split(drainId, expectedVersion);
  }

  async allocateNameNumber(base: string): Promise<number> {
    const result = await this.send(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key.counter(base),
          UpdateExpression: 'ADD #next :one',
          ExpressionAttributeNames: { '#next': 'next' },
          ExpressionAttributeValues: { ':one': 1 },
          ReturnValues: 'UPDATED_NEW',
        }),
      ),
    );
    return Number(result.Attributes?.next);
  }

  async claimScaleUp(claim: ScaleUpRecord, ttlMs: number): Promise<{ record: ScaleUpRecord; created: boolean }> {
    try {
      await this.putNew(
        { ...key.scaleUp(claim.decisionId), [TTL]: decisionExpiry(claim.createdAt, ttlMs), ...claim },
        `scale-up ${claim.decisionId} is claimed`,
      );
      return { record: claim, created: true };
    } catch (error) {
      if (error instanceof ConflictError && error.current) return { record: error.current as ScaleUpRecord, created: false };
      throw error;
    }
  }

  async getScaleUp(decisionId: string): Promise<ScaleUpRecord | undefined> {
    return this.get<ScaleUpRecord>(key.scaleUp(decisionId));
  }

  getCapacity(): Promise<CapacityRecord> {
    return this.capacity.get();
  }
  putCapacity(reservations: CapacityRecord['reservations'], expectedVersion: number): Promise<CapacityRecord> {
    return this.capacity.put(reservations, expectedVersion);
  }

  async appendDecision(entry: DecisionLogEntry, ttlMs: number): Promise<void> {
    await this.putNew(
      { [PK]: key.log(entry.pool), [SK]: `${entry.at}#${randomUUID()}`, [TTL]: decisionExpiry(entry.at, ttlMs), ...entry },
      `decision log entry exists`,
    );
  }

  listDecisions(pool: PoolId, limit: number): Promise<DecisionLogEntry[]> {
    return this.decisionLog.latest(pool, limit);
  }

  listDecisionsSince(pool: PoolId, since: string): Promise<DecisionLogEntry[]> {
    return this.decisionLog.since(pool, since);
  }

  listControls(): Promise<Controls> {
    return this.controls.list();
  }
  putPause(pause: PauseRecord): Promise<PauseRecord> {
    return this.controls.putPause(pause);
  }
  deletePause(pool: PoolId, actions: PauseActions): Promise<PauseRecord | undefined> {
    return this.controls.deletePause(pool, actions);
  }
  putOverrides(record: Omit<OverrideRecord, 'version'>, expectedVersion: number): Promise<OverrideRecord> {
    return this.controls.putOverrides(record, expectedVersion);
  }
  createPendingDrain(pending: PendingDrain): Promise<PendingDrain> {
    return this.controls.createPendingDrain(pending);
  }
  deletePendingDrain(nodeId: string): Promise<boolean> {
    return this.controls.deletePendingDrain(nodeId);
  }
  markPendingDrainSent(nodeId: string, sentAt: string): Promise<'marked' | 'already' | 'gone'> {
    return this.controls.markPendingDrainSent(nodeId, sentAt);
  }
  cancelPendingDrain(nodeId: string, cancel: { at: string; by: string; reason: string }): Promise<'cancelled' | 'already' | 'gone'> {
    return this.controls.cancelPendingDrain(nodeId, cancel);
  }

  private async get<T>(itemKey: Record<string, string>): Promise<T | undefined> {
    const result = await this.send(() => this.client.send(new GetCommand({ TableName: this.tableName, Key: itemKey, ConsistentRead: true })));
    return strip<T>(result.Item);
  }

  private async queryPoolIndex<T>(partitionValue: string, sortPrefix: string): Promise<T[]> {
    const items = await queryAll(this.client, this.send.bind(this) as Send, {
      TableName: this.tableName,
      IndexName: INDEX,
      KeyConditionExpression: '#gpk = :gpk AND begins_with(#gsk, :prefix)',
      ExpressionAttributeNames: { '#gpk': GPK, '#gsk': GSK },
      ExpressionAttributeValues: { ':gpk': partitionValue, ':prefix': sortPrefix },
    });
    return items.map((item) => strip<T>(item)!);
  }

  private async putNew(item: Record<string, unknown>, conflict: string): Promise<void> {
    await this.send(
      () =>
        this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: item,
            ConditionExpression: `attribute_not_exists(${PK})`,
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      conflict,
    );
  }

  private async updateVersioned<T>(
    itemKey: Record<string, string>,
    expectedVersion: number,
    patch: Record<string, unknown>,
    subject: { kind: string; id: string },
  ): Promise<T> {
    const names: Record<string, string> = { '#version': 'version' };
    const values: Record<string, unknown> = { ':expected': expectedVersion, ':one': 1 };
    const { set, remove } = patchExpression(patch, names, values);
    return this.update<T>(
      {
        Key: itemKey,
        UpdateExpression: updateExpression(['#version = #version + :one', ...set], remove),
        ConditionExpression: `attribute_exists(${PK}) AND #version = :expected`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
      { ...subject, conflict: `${subject.kind} ${subject.id} is not at version ${expectedVersion}` },
    );
  }

  private update<T>(input: Omit<UpdateCommandInput, 'TableName'>, subject: { kind: string; id: string; conflict: string }): Promise<T> {
    return conditionalUpdate<T>(this.client, this.tableName, this.send.bind(this) as Send, input, subject);
  }

  async recordGearMoves(moves: readonly GearMoveRecord[], ttlMs: number): Promise<void> {
    return this.gearMoves.record(moves, ttlMs);
  }

  async getGearMoves(uuids: readonly string[]): Promise<Map<string, string[]>> {
    return this.gearMoves.read(uuids);
  }

  getGearLists(nodeIds: readonly string[]): Promise<Map<string, StoredGearList>> {
    return this.stats.readGearLists(nodeIds);
  }

  /** Runs one SDK call and translates its errors into the project's error family. */
  private async send<R>(call: () => Promise<R>, conflict = 'conditional write lost'): Promise<R> {
    try {
      return await call();
    } catch (error) {
      throw translateError(error, conflict, this.tableName);
    }
  }
}
