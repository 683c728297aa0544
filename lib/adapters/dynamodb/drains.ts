/**
 * A drain's items in the state table: a small header and one item per gear
 * move, under the drain's partition, so a drain of any size fits (an item
 * holds at most 400 KB; a move is about 250 bytes) and a move's transition
 * writes that move alone:
 *
 *   DRAIN#<drainId> / DRAIN          the header (gsi1: POOL#<pool> / DRAIN#<state>#<drainId>)
 *   DRAIN#<drainId> / MOVE#<uuid>    one move, with its own version (in no index)
 *
 * An ended drain's items expire (TTL) `keepEndedFor` after it ends, when the
 * caller gives it: its moves are stamped before its header.
 *
 * A drain written before moves had their own items keeps them in its header
 * (`moves`); it is read as it is (`movesInline`) and split on its first move
 * write (`split`). DynamoDbStateStore delegates to this module; `send` is its
 * error translation, so a failed condition arrives as `ConflictError`.
 */
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DrainRecord, DrainState, GearMove, PoolId } from '../../domain/model.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import type { DrainHeader, DrainPatch, MoveWrite, NewDrain } from '../../ports/state-store.js';
import { queryAll, strip, type Send } from './items.js';
import { TABLE_KEYS } from './table-keys.js';

const { partition: PK, sort: SK, poolIndex: INDEX, poolIndexPartition: GPK, poolIndexSort: GSK, ttl: TTL } = TABLE_KEYS;
const HEADER = 'DRAIN';
const MOVE = 'MOVE#';
/** Move writes in flight at once: a 6,000-gear plan is 6,000 conditional puts. */
const PARALLEL_WRITES = 16;

const partitionOf = (drainId: string) => `DRAIN#${drainId}`;
const headerKey = (drainId: string) => ({ [PK]: partitionOf(drainId), [SK]: HEADER });
const moveKey = (drainId: string, uuid: string) => ({ [PK]: partitionOf(drainId), [SK]: `${MOVE}${uuid}` });
const indexSortKey = (state: DrainState, drainId: string) => `DRAIN#${state}#${drainId}`;

type StoredHeader = DrainHeader & { moves?: GearMove[] };

export class DynamoDbDrains {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly send: Send,
  ) {}

  async create(drain: NewDrain, now: Date): Promise<DrainRecord> {
    const { moves, ...fields } = drain;
    const header: DrainHeader = { ...fields, state: 'active', version: 1, updatedAt: now.toISOString() };
    await this.send(
      () =>
        this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: { ...headerKey(drain.drainId), [GPK]: `POOL#${drain.pool}`, [GSK]: indexSortKey('active', drain.drainId), ...header },
            ConditionExpression: `attribute_not_exists(${PK})`,
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      `drain ${drain.drainId} exists`,
    );
    const written = await this.writeMoves(drain.drainId, moves.map((move) => ({ kind: 'create', move })));
    return { ...header, moves: written };
  }

  /** The header and every move, in one (paged) strongly consistent query of the drain's partition. */
  async get(drainId: string): Promise<DrainRecord | undefined> {
    const items = await queryAll(this.client, this.send, {
      TableName: this.tableName,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': PK },
      ExpressionAttributeValues: { ':pk': partitionOf(drainId) },
      ConsistentRead: true,
    });
    const headerItem = items.find((item) => item[SK] === HEADER);
    if (!headerItem) return undefined;
    const moves = items.filter((item) => String(item[SK]).startsWith(MOVE)).map((item) => strip<GearMove>(item)!);
    return assemble(strip<StoredHeader>(headerItem)!, moves);
  }

  /** With `startedSince`, the headers of older drains are read (they are small) but not their moves. */
  async list(pool: PoolId, state: DrainState, startedSince?: string): Promise<DrainRecord[]> {
    const all = await queryAll(this.client, this.send, {
      TableName: this.tableName,
      IndexName: INDEX,
      KeyConditionExpression: '#gpk = :gpk AND begins_with(#gsk, :prefix)',
      ExpressionAttributeNames: { '#gpk': GPK, '#gsk': GSK },
      ExpressionAttributeValues: { ':gpk': `POOL#${pool}`, ':prefix': `DRAIN#${state}#` },
    });
    const headers = startedSince === undefined ? all : all.filter((item) => String(item.startedAt) >= startedSince);
    const drains = await Promise.all(
      headers.map(async (item) => {
        const header = strip<StoredHeader>(item)!;
        if (header.moves) return assemble(header, []);
        return assemble(header, await this.movesOf(header.drainId));
      }),
    );
    return drains.sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.drainId.localeCompare(b.drainId));
  }

  async update(drainId: string, expectedVersion: number, patch: DrainPatch, now: Date, keepEndedFor?: number): Promise<DrainHeader> {
    const fields: Record<string, unknown> = { ...patch, updatedAt: now.toISOString() };
    if (patch.state) fields[GSK] = indexSortKey(patch.state, drainId);
    if (patch.state !== undefined && patch.state !== 'active' && keepEndedFor !== undefined) {
      const expiresAt = Math.floor((now.getTime() + keepEndedFor) / 1000);
      await this.expireMoves(drainId, expiresAt);
      fields[TTL] = expiresAt;
    }
    const names: Record<string, string> = { '#version': 'version' };
    const values: Record<string, unknown> = { ':expected': expectedVersion, ':one': 1 };
    const set = ['#version = #version + :one'];
    const remove: string[] = [];
    Object.entries(fields).forEach(([field, value], i) => {
      names[`#p${i}`] = field;
      if (value === undefined) remove.push(`#p${i}`);
      else {
        values[`:p${i}`] = value;
        set.push(`#p${i} = :p${i}`);
      }
    });
    try {
      const result = await this.send(
        () =>
          this.client.send(
            new UpdateCommand({
              TableName: this.tableName,
              Key: headerKey(drainId),
              UpdateExpression: `SET ${set.join(', ')}${remove.length ? ` REMOVE ${remove.join(', ')}` : ''}`,
              ConditionExpression: `attribute_exists(${PK}) AND #version = :expected`,
              ExpressionAttributeNames: names,
              ExpressionAttributeValues: values,
              ReturnValues: 'ALL_NEW',
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
          ),
        `drain ${drainId} is not at version ${expectedVersion}`,
      );
      const { moves: _inline, ...header } = strip<StoredHeader>(result.Attributes)!;
      return header;
    } catch (error) {
      if (error instanceof ConflictError && error.current === undefined) throw new NotFoundError('drain', drainId);
      throw error;
    }
  }

  /** Each write a conditional put or delete of one move item, up to PARALLEL_WRITES at once; the first lost race is thrown once those in flight settle. */
  async writeMoves(drainId: string, writes: readonly MoveWrite[]): Promise<GearMove[]> {
    const written: GearMove[] = [];
    for (let start = 0; start < writes.length; start += PARALLEL_WRITES) {
      const results = await Promise.allSettled(writes.slice(start, start + PARALLEL_WRITES).map((write) => this.writeMove(drainId, write)));
      for (const result of results) if (result.status === 'fulfilled' && result.value) written.push(result.value);
      const lost = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
      if (lost) throw lost.reason;
    }
    return written;
  }

  /**
   * Old layout -> one item per move: each inline move is put (unless an
   * earlier, interrupted split put it), then the header drops its copy and
   * moves its version on, on condition of `expectedVersion`.
   */
  async split(drainId: string, expectedVersion: number): Promise<DrainRecord> {
    const result = await this.send(() => this.client.send(new GetCommand({ TableName: this.tableName, Key: headerKey(drainId), ConsistentRead: true })));
    const header = strip<StoredHeader>(result.Item);
    if (!header) throw new NotFoundError('drain', drainId);
    if (header.version !== expectedVersion) throw new ConflictError(`drain ${drainId} is not at version ${expectedVersion}`, await this.get(drainId));
    if (header.moves) {
      try {
        await this.writeMoves(drainId, header.moves.map((move) => ({ kind: 'create', move })));
      } catch (error) {
        // Put by an interrupted split: the inline copy has not changed since (nothing writes it any more).
        if (!(error instanceof ConflictError)) throw error;
        await this.putMissing(drainId, header.moves);
      }
      await this.send(
        () =>
          this.client.send(
            new UpdateCommand({
              TableName: this.tableName,
              Key: headerKey(drainId),
              UpdateExpression: 'REMOVE #moves SET #version = #version + :one',
              ConditionExpression: '#version = :expected',
              ExpressionAttributeNames: { '#moves': 'moves', '#version': 'version' },
              ExpressionAttributeValues: { ':expected': expectedVersion, ':one': 1 },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
          ),
        `drain ${drainId} is not at version ${expectedVersion}`,
      );
    }
    const split = await this.get(drainId);
    if (!split) throw new NotFoundError('drain', drainId);
    return split;
  }

  private async putMissing(drainId: string, moves: readonly GearMove[]): Promise<void> {
    for (const move of moves) {
      try {
        await this.writeMove(drainId, { kind: 'create', move });
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
      }
    }
  }

  /**
   * Stamps every move item of the drain to expire at `expiresAt` (epoch seconds), PARALLEL_WRITES at once. A move
   * deleted since the query is left deleted (the condition keeps the update from writing it back).
   */
  private async expireMoves(drainId: string, expiresAt: number): Promise<void> {
    const keys = await queryAll(this.client, this.send, {
      TableName: this.tableName,
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :move)',
      ProjectionExpression: '#pk, #sk',
      ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
      ExpressionAttributeValues: { ':pk': partitionOf(drainId), ':move': MOVE },
      ConsistentRead: true,
    });
    const expire = async (key: Record<string, unknown>) => {
      try {
        await this.send(() =>
          this.client.send(
            new UpdateCommand({
              TableName: this.tableName,
              Key: { [PK]: key[PK], [SK]: key[SK] },
              UpdateExpression: 'SET #ttl = :ttl',
              ConditionExpression: `attribute_exists(${PK})`,
              ExpressionAttributeNames: { '#ttl': TTL },
              ExpressionAttributeValues: { ':ttl': expiresAt },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
          ),
        );
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
      }
    };
    for (let start = 0; start < keys.length; start += PARALLEL_WRITES) await Promise.all(keys.slice(start, start + PARALLEL_WRITES).map(expire));
  }

  private async movesOf(drainId: string): Promise<GearMove[]> {
    const items = await queryAll(this.client, this.send, {
      TableName: this.tableName,
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :move)',
      ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
      ExpressionAttributeValues: { ':pk': partitionOf(drainId), ':move': MOVE },
    });
    return items.map((item) => strip<GearMove>(item)!);
  }

  private async writeMove(drainId: string, write: MoveWrite): Promise<GearMove | undefined> {
    const uuid = write.kind === 'delete' ? write.uuid : write.move.gear.uuid;
    const conflict = `move of gear ${uuid} in drain ${drainId} ${write.kind === 'create' ? 'exists' : `is not at version ${write.expectedVersion}`}`;
    if (write.kind === 'delete') {
      await this.send(
        () =>
          this.client.send(
            new DeleteCommand({
              TableName: this.tableName,
              Key: moveKey(drainId, uuid),
              ConditionExpression: '#version = :expected',
              ExpressionAttributeNames: { '#version': 'version' },
              ExpressionAttributeValues: { ':expected': write.expectedVersion },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
          ),
        conflict,
      );
      return undefined;
    }
    const { version: _version, ...move } = write.move;
    const stored: GearMove = { ...move, version: write.kind === 'create' ? 1 : write.expectedVersion + 1 };
    const condition =
      write.kind === 'create'
        ? { ConditionExpression: `attribute_not_exists(${PK})` }
        : { ConditionExpression: '#version = :expected', ExpressionAttributeNames: { '#version': 'version' }, ExpressionAttributeValues: { ':expected': write.expectedVersion } };
    await this.send(
      () =>
        this.client.send(
          new PutCommand({ TableName: this.tableName, Item: { ...moveKey(drainId, uuid), ...stored }, ...condition, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }),
        ),
      conflict,
    );
    return stored;
  }
}

function assemble(header: StoredHeader, moves: GearMove[]): DrainRecord {
  const { moves: inline, ...rest } = header;
  if (inline) return { ...rest, moves: inline, movesInline: true };
  return { ...rest, moves };
}
