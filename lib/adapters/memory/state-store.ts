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
import { MemoryControls } from './controls.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import { EMPTY_CAPACITY, type CapacityRecord } from '../../domain/capacity-claims.js';
import type { DrainHeader, DrainPatch, GearMoveRecord, LeaseRequest, MoveWrite, NewDrain, NewNode, NodePatch, PoolPatch, StateStore, StatsWrite, StoredGearList } from '../../ports/state-store.js';
import { copy, deepFreeze, FrozenMap } from './frozen.js';
import { withPrior } from '../../domain/node-stats.js';
import { MemoryGearLists } from './gear-lists.js';
import { assertInstanceId, assertLegalTransition, decisionExpiry, grantLease, liveFirst, sourcesOf } from '../state-rules.js';

/** Applies a patch the way the DynamoDB adapter does: `undefined` removes the field. */
function applyPatch<T extends object>(record: T, patch: object): T {
  const next = { ...record } as Record<string, unknown>;
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined) delete next[field];
    else next[field] = copy(value);
  }
  return next as T;
}

/** A node as a write returns it: stats are their own item in DynamoDB, so writes of the node do not carry them. */
function withoutStats(node: NodeRecord): NodeRecord {
  if (node.stats === undefined) return node;
  const { stats: _stats, ...rest } = node;
  return rest;
}

function byUuid(a: GearMove, b: GearMove): number {
  return a.gear.uuid < b.gear.uuid ? -1 : a.gear.uuid > b.gear.uuid ? 1 : 0;
}

function drainKey(pool: PoolId, state: DrainState): string {
  return `${pool}\u0000${state}`;
}

/**
 * `StateStore` in process memory, for unit tests and long simulations. It
 * passes the same contract suite as the DynamoDB adapter; every method is
 * atomic because nothing in it awaits between its read and its write.
 */
export class InMemoryStateStore implements StateStore {
  private readonly nodes = new FrozenMap<string, NodeRecord>();
  /** Live (not terminated) node ids by pool: the pool index. */
  private readonly poolIndex = new Map<PoolId, Set<string>>();
  /** The pool index's ids in order, rebuilt only after a node joined or left (listNodes runs every minute, membership changes rarely). */
  private readonly sortedPoolIndex = new Map<PoolId, string[]>();
  /** Node ids by instance id, kept in step with every node write: the instance index. */
  private readonly instanceIndex = new Map<string, Set<string>>();
  private readonly pools = new FrozenMap<PoolId, PoolRecord>();
  /** Drain headers (no moves); each drain's moves by gear uuid, as DynamoDB keeps one item per move. */
  private readonly drains = new FrozenMap<string, DrainHeader>();
  private readonly moves = new Map<string, Map<string, GearMove>>();
  /** Each drain's moves in uuid order, rebuilt after a write of its moves. */
  private readonly sortedMoves = new Map<string, readonly GearMove[]>();
  /** Drain ids by pool and state: finished drains pile up over a long run, and listDrains asks for the active ones. */
  private readonly drainIndex = new Map<string, Set<string>>();
  private readonly counters = new Map<string, number>();
  private readonly scaleUps = new FrozenMap<string, ScaleUpRecord>();
  private capacity: CapacityRecord = EMPTY_CAPACITY;
  private readonly decisions = new Map<PoolId, Array<DecisionLogEntry & { expiresAt: number }>>();
  private readonly controls = new MemoryControls();
  /** Per gear: its moves by key (`at`), and when the item expires (epoch seconds), as the table's GEAR# items. */
  private readonly gearMoves = new Map<string, { moves: Map<string, string>; expiresAt: number }>();
  /** The agents' gear lists, apart from the stats. */
  private readonly gearLists = new MemoryGearLists();

  async getNode(nodeId: string): Promise<NodeRecord | undefined> {
    const node = this.nodes.get(nodeId);
    return node && this.gearLists.attach(node);
  }

  async findNodeByInstance(instanceId: string): Promise<NodeRecord | undefined> {
    const node = liveFirst([...(this.instanceIndex.get(instanceId) ?? [])].map((nodeId) => this.nodes.get(nodeId)!));
    return node && this.gearLists.attach(node);
  }

  async listNodes(pool: PoolId): Promise<NodeRecord[]> {
    const live: NodeRecord[] = [];
    for (const nodeId of this.sortedMembers(pool)) {
      const node = this.nodes.get(nodeId)!;
      if (node.state !== 'terminated') live.push(node);
    }
    return live;
  }

  async createNode(node: NewNode, now: Date): Promise<NodeRecord> {
    assertInstanceId(node.nodeId, node);
    const existing = this.nodes.get(node.nodeId);
    if (existing) throw new ConflictError(`node ${node.nodeId} exists`, copy(existing));
    const record: NodeRecord = { ...copy(node), version: 1, stateChangedAt: now.toISOString() };
    if (node.stats) record.stats = this.gearLists.keep(node.nodeId, node.stats);
    this.putNode(record);
    const members = this.poolIndex.get(node.pool) ?? new Set<string>();
    members.add(node.nodeId);
    this.poolIndex.set(node.pool, members);
    this.sortedPoolIndex.delete(node.pool);
    return copy(node.stats ? { ...record, stats: node.stats } : record);
  }


  async transitionNode(
    nodeId: string,
    change: { from: NodeState | readonly NodeState[]; to: NodeState; expectedVersion?: number; patch?: NodePatch },
    now: Date,
  ): Promise<NodeRecord> {
    const from = sourcesOf(change.from);
    assertLegalTransition(nodeId, from, change.to);
    assertInstanceId(nodeId, change.patch);
    const node = this.requireNode(nodeId);
    if (!from.includes(node.state) || (change.expectedVersion !== undefined && node.version !== change.expectedVersion)) {
      throw new ConflictError(`node ${nodeId} is not ${from.join('|')} -> ${change.to}`, copy(node));
    }
    const next = applyPatch(node, change.patch ?? {});
    Object.assign(next, { state: change.to, stateChangedAt: now.toISOString(), version: node.version + 1 });
    // As in DynamoDB: a terminated node leaves its pool's list (sparse index) and its stats item goes.
    if (change.to === 'terminated') {
      delete (next as Partial<NodeRecord>).stats;
      this.gearLists.drop(nodeId);
      if (this.poolIndex.get(node.pool)?.delete(nodeId)) this.sortedPoolIndex.delete(node.pool);
    }
    this.putNode(next, node);
    return copy(withoutStats(next));
  }

  async updateNode(nodeId: string, expectedVersion: number, patch: NodePatch): Promise<NodeRecord> {
    assertInstanceId(nodeId, patch);
    const node = this.requireNode(nodeId);
    if (node.version !== expectedVersion) throw new ConflictError(`node ${nodeId} is not at version ${expectedVersion}`, copy(node));
    const next = { ...applyPatch(node, patch), version: node.version + 1 };
    this.putNode(next, node);
    return copy(withoutStats(next));
  }

  async putNodeStats(nodeId: string, stats: NodeStats): Promise<StatsWrite> {
    const node = this.requireNode(nodeId);
    if (node.stats && !(node.stats.reportedAt < stats.reportedAt)) return { applied: false, node: copy(node) };
    const reported = withPrior(stats, node.stats);
    this.nodes.set(nodeId, { ...node, stats: this.gearLists.keep(nodeId, reported, node.stats) });
    return { applied: true, node: copy({ ...node, stats: withPrior(stats, undefined) }) };
  }

  async getPool(pool: PoolId): Promise<PoolRecord | undefined> {
    const record = this.pools.get(pool);
    return record && copy(record);
  }

  async listPools(): Promise<PoolRecord[]> {
    return [...this.pools.values()].sort((a, b) => a.pool.localeCompare(b.pool)).map(copy);
  }

  async ensurePool(pool: PoolId): Promise<PoolRecord> {
    return copy(this.poolOrNew(pool));
  }

  async acquireLease(pool: PoolId, lease: LeaseRequest, now: Date): Promise<PoolRecord> {
    const record = this.pools.get(pool);
    const held = record?.lease;
    if (record && held && held.expiresAt > now.toISOString() && held.holder !== lease.holder) {
      throw new ConflictError(`pool ${pool} lease is held by another action`, copy(record));
    }
    const base = record ?? { pool, ...splitPoolId(pool), version: 0 };
    const next: PoolRecord = {
      ...base,
      lease: grantLease(lease, now),
      version: base.version + 1,
    };
    this.pools.set(pool, next);
    return copy(next);
  }

  async markLeaseSent(pool: PoolId, holder: string, now: Date): Promise<PoolRecord> {
    const record = this.pools.get(pool);
    if (!record) throw new NotFoundError('pool', pool);
    if (record.lease?.holder !== holder) throw new ConflictError(`pool ${pool} lease is not held by ${holder}`, copy(record));
    const next: PoolRecord = { ...record, lease: { ...record.lease, sentAt: now.toISOString() }, version: record.version + 1 };
    this.pools.set(pool, next);
    return copy(next);
  }

  async releaseLease(pool: PoolId, holder: string): Promise<PoolRecord> {
    const record = this.pools.get(pool);
    if (!record) throw new NotFoundError('pool', pool);
    if (record.lease?.holder !== holder) return copy(record);
    const { lease: _released, ...rest } = record;
    const next: PoolRecord = { ...rest, version: record.version + 1 };
    this.pools.set(pool, next);
    return copy(next);
  }

  async updatePool(pool: PoolId, expectedVersion: number, patch: PoolPatch): Promise<PoolRecord> {
    const record = this.pools.get(pool);
    if (!record) throw new NotFoundError('pool', pool);
    if (record.version !== expectedVersion) throw new ConflictError(`pool ${pool} is not at version ${expectedVersion}`, copy(record));
    const next = { ...applyPatch(record, patch), version: record.version + 1 };
    this.pools.set(pool, next);
    return copy(next);
  }

  async createDrain(drain: NewDrain, now: Date): Promise<DrainRecord> {
    const existing = this.drains.get(drain.drainId);
    if (existing) throw new ConflictError(`drain ${drain.drainId} exists`, this.assemble(existing));
    const { moves, ...header } = drain;
    const record: DrainHeader = { ...copy(header), state: 'active', version: 1, updatedAt: now.toISOString() };
    this.drains.set(drain.drainId, record);
    this.moves.set(drain.drainId, new Map());
    this.indexDrain(record);
    await this.writeMoves(drain.drainId, moves.map((move) => ({ kind: 'create', move })));
    return this.assemble(record);
  }

  async getDrain(drainId: string): Promise<DrainRecord | undefined> {
    const drain = this.drains.get(drainId);
    return drain && this.assemble(drain);
  }

  async listDrains(pool: PoolId, state: DrainState = 'active', startedSince?: string): Promise<DrainRecord[]> {
    return [...(this.drainIndex.get(drainKey(pool, state)) ?? [])]
      .map((drainId) => this.drains.get(drainId)!)
      .filter((drain) => startedSince === undefined || drain.startedAt >= startedSince)
      .sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.drainId.localeCompare(b.drainId))
      .map((drain) => this.assemble(drain));
  }

  /** `keepEndedFor` is DynamoDB's TTL: the memory store keeps an ended drain for its life. */
  async updateDrain(drainId: string, expectedVersion: number, patch: DrainPatch, now: Date, _keepEndedFor?: number): Promise<DrainHeader> {
    const drain = this.drains.get(drainId);
    if (!drain) throw new NotFoundError('drain', drainId);
    if (drain.version !== expectedVersion) throw new ConflictError(`drain ${drainId} is not at version ${expectedVersion}`, this.assemble(drain));
    const next = { ...applyPatch(drain, patch), updatedAt: now.toISOString(), version: drain.version + 1 };
    this.drains.set(drainId, next);
    if (next.state !== drain.state) {
      this.drainIndex.get(drainKey(drain.pool, drain.state))?.delete(drainId);
      this.indexDrain(next);
    }
    return copy(next);
  }

  async writeMoves(drainId: string, writes: readonly MoveWrite[]): Promise<GearMove[]> {
    const moves = this.moves.get(drainId) ?? new Map<string, GearMove>();
    this.moves.set(drainId, moves);
    const written: GearMove[] = [];
    try {
      for (const write of writes) {
        const uuid = write.kind === 'delete' ? write.uuid : write.move.gear.uuid;
        const held = moves.get(uuid);
        if (write.kind === 'create' ? held !== undefined : held?.version !== write.expectedVersion) {
          throw new ConflictError(`move of gear ${uuid} in drain ${drainId} ${held ? `is at version ${held.version}` : 'does not exist'}`, held && copy(held));
        }
        if (write.kind === 'delete') {
          moves.delete(uuid);
          continue;
        }
        const next = deepFreeze({ ...copy(write.move), version: (held?.version ?? 0) + 1 });
        moves.set(uuid, next);
        written.push(next);
      }
    } finally {
      this.sortedMoves.delete(drainId);
    }
    return written;
  }

  async splitDrainMoves(drainId: string, expectedVersion: number): Promise<DrainRecord> {
    // This store never holds moves inside a drain: nothing to split, only the version to check.
    const drain = this.drains.get(drainId);
    if (!drain) throw new NotFoundError('drain', drainId);
    if (drain.version !== expectedVersion) throw new ConflictError(`drain ${drainId} is not at version ${expectedVersion}`, this.assemble(drain));
    return this.assemble(drain);
  }

  async allocateNameNumber(base: string): Promise<number> {
    const next = (this.counters.get(base) ?? 0) + 1;
    this.counters.set(base, next);
    return next;
  }

  async claimScaleUp(claim: ScaleUpRecord, _ttlMs: number): Promise<{ record: ScaleUpRecord; created: boolean }> {
    const existing = this.scaleUps.get(claim.decisionId);
    if (existing) return { record: copy(existing), created: false };
    this.scaleUps.set(claim.decisionId, copy(claim));
    return { record: copy(claim), created: true };
  }

  async getScaleUp(decisionId: string): Promise<ScaleUpRecord | undefined> {
    const record = this.scaleUps.get(decisionId);
    return record && copy(record);
  }

  async getCapacity(): Promise<CapacityRecord> {
    return copy(this.capacity);
  }

  async putCapacity(reservations: CapacityRecord['reservations'], expectedVersion: number): Promise<CapacityRecord> {
    if (this.capacity.version !== expectedVersion) {
      throw new ConflictError(`the capacity record is not at version ${expectedVersion}`, this.capacity.version === 0 ? undefined : copy(this.capacity));
    }
    this.capacity = deepFreeze({ version: expectedVersion + 1, reservations: copy(reservations) });
    return copy(this.capacity);
  }

  async appendDecision(entry: DecisionLogEntry, ttlMs: number): Promise<void> {
    const log = this.decisions.get(entry.pool) ?? [];
    log.push({ ...copy(entry), expiresAt: decisionExpiry(entry.at, ttlMs) });
    this.decisions.set(entry.pool, log);
  }

  async listDecisions(pool: PoolId, limit: number): Promise<DecisionLogEntry[]> {
    const log = this.decisions.get(pool) ?? [];
    return log
      .slice()
      .sort((a, b) => b.at.localeCompare(a.at))
      .slice(0, limit)
      .map(({ expiresAt: _ttl, ...entry }) => copy(entry));
  }

  async listDecisionsSince(pool: PoolId, since: string): Promise<DecisionLogEntry[]> {
    return (this.decisions.get(pool) ?? [])
      .filter((entry) => entry.at >= since)
      .sort((a, b) => a.at.localeCompare(b.at))
      .map(({ expiresAt: _ttl, ...entry }) => copy(entry));
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

  async recordGearMoves(moves: readonly GearMoveRecord[], ttlMs: number): Promise<void> {
    for (const move of moves) {
      const item = this.gearMoves.get(move.uuid) ?? { moves: new Map<string, string>(), expiresAt: 0 };
      item.moves.set(`${move.at}|${move.key}`, move.at);
      item.expiresAt = decisionExpiry(move.at, ttlMs);
      this.gearMoves.set(move.uuid, item);
    }
  }

  async getGearLists(nodeIds: readonly string[]): Promise<Map<string, StoredGearList>> {
    return this.gearLists.read(nodeIds);
  }

  async getGearMoves(uuids: readonly string[]): Promise<Map<string, string[]>> {
    const found = new Map<string, string[]>();
    for (const uuid of uuids) {
      const item = this.gearMoves.get(uuid);
      if (item) found.set(uuid, [...item.moves.values()].sort());
    }
    return found;
  }

  private sortedMembers(pool: PoolId): readonly string[] {
    let sorted = this.sortedPoolIndex.get(pool);
    if (!sorted) {
      sorted = [...(this.poolIndex.get(pool) ?? [])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      this.sortedPoolIndex.set(pool, sorted);
    }
    return sorted;
  }

  /** The drain with its moves in uuid order (the order DynamoDB's sort key gives). */
  private assemble(drain: DrainHeader): DrainRecord {
    let sorted = this.sortedMoves.get(drain.drainId);
    if (!sorted) {
      sorted = Object.freeze([...(this.moves.get(drain.drainId)?.values() ?? [])].sort(byUuid));
      this.sortedMoves.set(drain.drainId, sorted);
    }
    return { ...drain, moves: sorted as GearMove[] };
  }

  private indexDrain(drain: DrainHeader): void {
    const key = drainKey(drain.pool, drain.state);
    const ids = this.drainIndex.get(key) ?? new Set<string>();
    ids.add(drain.drainId);
    this.drainIndex.set(key, ids);
  }

  /** Stores a node written over `before`, moving it in the instance index when its instanceId changed. */
  private putNode(next: NodeRecord, before?: NodeRecord): void {
    this.nodes.set(next.nodeId, next);
    if (before?.instanceId === next.instanceId) return;
    if (before?.instanceId !== undefined) {
      const ids = this.instanceIndex.get(before.instanceId);
      ids?.delete(next.nodeId);
      if (ids?.size === 0) this.instanceIndex.delete(before.instanceId);
    }
    if (next.instanceId !== undefined) this.instanceIndex.set(next.instanceId, (this.instanceIndex.get(next.instanceId) ?? new Set()).add(next.nodeId));
  }

  private requireNode(nodeId: string): NodeRecord {
    const node = this.nodes.get(nodeId);
    if (!node) throw new NotFoundError('node', nodeId);
    return node;
  }

  private poolOrNew(pool: PoolId): PoolRecord {
    let record = this.pools.get(pool);
    if (!record) {
      record = { pool, ...splitPoolId(pool), version: 1 };
      this.pools.set(pool, record);
    }
    return record;
  }
}
