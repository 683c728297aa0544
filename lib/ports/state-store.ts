import type {
  DecisionLogEntry,
  DrainRecord,
  DrainState,
  GearInfo,
  GearMove,
  NodeRecord,
  NodeState,
  NodeStats,
  PoolLease,
  PoolId,
  PoolRecord,
  ScaleUpRecord,
} from '../domain/model.js';
import type { Controls, OverrideRecord, PauseActions, PauseRecord, PendingDrain } from '../domain/controls.js';
import type { CapacityRecord } from '../domain/capacity-claims.js';

/**
 * Fields a caller may change on a node; identity, state and version are the store's, stats are `putNodeStats`'s.
 * An `instanceId` is never empty (it keys the instance index): `ValidationError` naming it.
 */
export type NodePatch = Partial<Omit<NodeRecord, 'nodeId' | 'pool' | 'district' | 'profile' | 'state' | 'version' | 'createdAt' | 'stats'>>;
export type PoolPatch = Partial<Omit<PoolRecord, 'pool' | 'district' | 'profile' | 'version' | 'lease'>>;
/** The drain's own fields; its moves are written by `writeMoves`. */
export type DrainPatch = Partial<Omit<DrainRecord, 'drainId' | 'decisionId' | 'nodeId' | 'pool' | 'version' | 'startedAt' | 'moves' | 'movesInline'>>;
/** A drain without its moves: what `updateDrain` returns. */
export type DrainHeader = Omit<DrainRecord, 'moves' | 'movesInline'>;

export type NewNode = Omit<NodeRecord, 'version' | 'stateChangedAt'>;
/** A new drain and its first moves (usually none), each stored as its own item. */
export type NewDrain = Omit<DrainRecord, 'version' | 'state' | 'updatedAt' | 'movesInline'>;

/**
 * One change of one move of a drain. Every move is its own item with its own
 * version, so recording a move's transition writes that move only, and a
 * drain's size is not bounded by an item's (400 KB in DynamoDB).
 */
export type MoveWrite =
  /** The gear gets its first move; `ConflictError` (with the move held) when it has one. */
  | { kind: 'create'; move: GearMove }
  /** Replaces the gear's move; `ConflictError` (with the move as it is) unless it is at `expectedVersion`. */
  | { kind: 'update'; move: GearMove; expectedVersion: number }
  /** Removes the gear's move; `ConflictError` unless it is at `expectedVersion`. */
  | { kind: 'delete'; uuid: string; expectedVersion: number };

export interface LeaseRequest {
  holder: string;
  kind: PoolLease['kind'];
  ttlMs: number;
  /** The decision message to keep with the lease until it is confirmed sent. */
  message?: Record<string, unknown>;
}

/** A gear moved by a drain: when, and a key naming the move, so recording it again counts it once. */
export interface GearMoveRecord {
  uuid: string;
  at: string;
  key: string;
}

export type StatsWrite =
  | { applied: true; node: NodeRecord }
  /** The table already holds stats reported at or after these; nothing was written. */
  | { applied: false; node: NodeRecord };

/**
 * The state table. Every change is a single-item conditional write: a caller
 * that lost a race gets a `ConflictError` whose `current` is the item as it is
 * now (or undefined when it does not exist), never a silent overwrite.
 * Reads are strongly consistent on items and eventually consistent on
 * per-pool lists (a GSI in DynamoDB). Throws `TransientError` for throttling.
 *
 * A node's stats and a drain's moves live apart from the node and the drain
 * (their own items in DynamoDB, outside the pool index): reads put them
 * together, writes of a node or a drain's own fields return the record
 * without them (a node without `stats`, a drain header without `moves`).
 */
export interface StateStore {
  getNode(nodeId: string): Promise<NodeRecord | undefined>;
  /**
   * The node recorded on EC2 instance `instanceId`, in whatever state, read as
   * `getNode` reads it; undefined when no node names the instance. One lookup
   * on an index of node instances (sparse: only nodes with an `instanceId`),
   * never a read of the pools: EventBridge hands the gear mover every EC2
   * interruption in the account, most of them for hosts nodescaler does not
   * own. The index follows node writes eventually, like the pool lists.
   * Should two nodes name one instance, a live (not terminated) one is returned.
   */
  findNodeByInstance(instanceId: string): Promise<NodeRecord | undefined>;
  /** Nodes of one pool, ordered by nodeId; terminated nodes leave the list (a sparse index), `getNode` still finds them. */
  listNodes(pool: PoolId): Promise<NodeRecord[]>;
  /** Creates a node; `ConflictError` (with the existing node) when the id is taken. */
  createNode(node: NewNode, now: Date): Promise<NodeRecord>;
  /**
   * Moves a node from one of `from` to `to`, applying `patch` in the same write.
   * `ValidationError` when no state in `from` may move to `to` (lifecycle);
   * `ConflictError` when the node is not in `from` (or not at `expectedVersion`);
   * `NotFoundError` when there is no such node.
   */
  transitionNode(
    nodeId: string,
    change: { from: NodeState | readonly NodeState[]; to: NodeState; expectedVersion?: number; patch?: NodePatch },
    now: Date,
  ): Promise<NodeRecord>;
  /** Changes fields without a state change; `ConflictError` unless the node is at `expectedVersion`. The node returned has no `stats`. */
  updateNode(nodeId: string, expectedVersion: number, patch: NodePatch): Promise<NodeRecord>;
  /**
   * Stores stats only if they were reported strictly after the ones held, so
   * out-of-order delivery never overwrites newer figures. `NotFoundError` for
   * an unknown node (the caller adopts it with `createNode`). Stats do not
   * change the node's version: a stats report never makes a node write conflict.
   */
  putNodeStats(nodeId: string, stats: NodeStats): Promise<StatsWrite>;

  getPool(pool: PoolId): Promise<PoolRecord | undefined>;
  listPools(): Promise<PoolRecord[]>;
  /** Creates the pool item if it is missing; returns it either way. */
  ensurePool(pool: PoolId): Promise<PoolRecord>;
  /**
   * Takes the pool's single action lease. Succeeds when the pool has no lease,
   * the lease expired at `now`, or `holder` already holds it (a retry is
   * idempotent). `ConflictError` with the pool when someone else holds it.
   */
  acquireLease(pool: PoolId, lease: LeaseRequest, now: Date): Promise<PoolRecord>;
  /** Records that the lease's message was accepted by its queue; `ConflictError` unless `holder` holds the lease. */
  markLeaseSent(pool: PoolId, holder: string, now: Date): Promise<PoolRecord>;
  /**
   * Releases the lease if `holder` holds it. A no-op (returning the pool) when
   * it does not: already released, or taken over after expiry, so a retried
   * release is harmless. `NotFoundError` for an unknown pool.
   */
  releaseLease(pool: PoolId, holder: string): Promise<PoolRecord>;
  /** `ConflictError` unless the pool is at `expectedVersion`. */
  updatePool(pool: PoolId, expectedVersion: number, patch: PoolPatch): Promise<PoolRecord>;

  /** Creates an `active` drain and its first moves; `ConflictError` (with the existing drain) when the id is taken. */
  createDrain(drain: NewDrain, now: Date): Promise<DrainRecord>;
  /**
   * The drain with every move (ordered by gear uuid, each with its `version`).
   * A drain written before moves had their own items comes with `movesInline`
   * (its moves without versions): `splitDrainMoves` before writing a move of it.
   */
  getDrain(drainId: string): Promise<DrainRecord | undefined>;
  /**
   * Drains of a pool in one state (default `active`), oldest first, with their moves; with `startedSince` only those
   * started at or after it (ended drains stay in the table: a report of the last days reads the moves of those alone).
   */
  listDrains(pool: PoolId, state?: DrainState, startedSince?: string): Promise<DrainRecord[]>;
  /**
   * Changes the drain's own fields (its version goes up; its moves are not touched); `ConflictError` unless at
   * `expectedVersion`. With `keepEndedFor` (ms) and a patch that ends the drain (`completed`, `aborted`), the drain
   * expires that long after `now`, its moves first, then its header (DynamoDB TTL; the memory store keeps it): a crash
   * between leaves moves due to expire on a drain that resumes and ends again, never a header gone with moves left.
   */
  updateDrain(drainId: string, expectedVersion: number, patch: DrainPatch, now: Date, keepEndedFor?: number): Promise<DrainHeader>;
  /**
   * Applies each write to its move by conditional write on the move's own
   * version; the drain's version does not change. Returns the moves created or
   * updated, at their new versions. On a lost race, `ConflictError` with the
   * move as it is: the writes before it stay applied (each is whole and
   * consistent alone). `NotFoundError` for an unknown drain is not checked:
   * the caller writes moves of a drain it has read.
   */
  writeMoves(drainId: string, writes: readonly MoveWrite[]): Promise<GearMove[]>;
  /**
   * Upgrades a drain whose moves are inside its item (the layout before moves
   * had their own items) to one item per move; the drain's version goes up.
   * `ConflictError` unless it is at `expectedVersion`. A drain already split
   * is returned as it is.
   */
  splitDrainMoves(drainId: string, expectedVersion: number): Promise<DrainRecord>;

  /** Atomically allocates the next number for a naming base: 1, 2, 3, ... never twice. */
  allocateNameNumber(base: string): Promise<number>;

  /**
   * Records the node names a scale-up decision claimed, unless the decision
   * already has a record: the first writer wins, and every caller gets the
   * record as stored (`created` tells which). Never overwrites; expires after
   * `ttlMs` (DynamoDB TTL), long after SQS could redeliver the decision.
   */
  claimScaleUp(claim: ScaleUpRecord, ttlMs: number): Promise<{ record: ScaleUpRecord; created: boolean }>;
  /** The claim of a scale-up decision, if one was recorded. */
  getScaleUp(decisionId: string): Promise<ScaleUpRecord | undefined>;

  /**
   * The global capacity record (lib/domain/capacity-claims.ts), read strongly
   * consistent; `{ version: 0, reservations: {} }` when none is stored yet.
   */
  getCapacity(): Promise<CapacityRecord>;
  /**
   * Replaces the capacity record's reservations, at version
   * `expectedVersion + 1`: the one write that claims room under the global
   * limits, so two claims that read the same room cannot both take it.
   * `ConflictError` (with the record as it is) unless the stored record is at
   * `expectedVersion`, 0 meaning none is stored yet: another claim wrote
   * since the room was read, and the caller reads the room again.
   */
  putCapacity(reservations: CapacityRecord['reservations'], expectedVersion: number): Promise<CapacityRecord>;

  /** Appends to the pool's decision log; entries expire after `ttlMs`. */
  appendDecision(entry: DecisionLogEntry, ttlMs: number): Promise<void>;
  /** The latest entries first. */
  listDecisions(pool: PoolId, limit: number): Promise<DecisionLogEntry[]>;
  /** Every entry of the pool's log at or after `since` (ISO), oldest first, however many. */
  listDecisionsSince(pool: PoolId, since: string): Promise<DecisionLogEntry[]>;

  /**
   * Every pause and every pool's overrides, in one read: the evaluator reads
   * them once per batch, the provisioner and gear mover once per decision.
   * Pauses past their `until` may still be listed (they expire by TTL); the
   * caller's rules (lib/domain/controls.ts) ignore them.
   */
  listControls(): Promise<Controls>;
  /** Creates or replaces the pause of its pool (or `*`) and actions; pausing again updates reason, who and until. */
  putPause(pause: PauseRecord): Promise<PauseRecord>;
  /** Removes a pause; the pause removed, or undefined when there was none (a repeated resume is harmless). */
  deletePause(pool: PoolId, actions: PauseActions): Promise<PauseRecord | undefined>;
  /**
   * Replaces a pool's overrides, at version `expectedVersion + 1`.
   * `ConflictError` (with the record as it is) unless the stored record is at
   * `expectedVersion`, 0 meaning none is stored yet.
   */
  putOverrides(record: Omit<OverrideRecord, 'version'>, expectedVersion: number): Promise<OverrideRecord>;
  /** Records a drain that waits for its replacement; `ConflictError` (with it) when the node already has one. */
  createPendingDrain(pending: PendingDrain): Promise<PendingDrain>;
  /** Removes it; true when this call removed it (exactly one of concurrent callers gets true). */
  deletePendingDrain(nodeId: string): Promise<boolean>;
  /**
   * Records that its drain's message was sent (`sentAt`): `marked` for exactly one of concurrent callers, `already`
   * when it was marked before (its `sentAt` kept), `gone` when the node waits for no replacement. Throws nothing else.
   */
  markPendingDrainSent(nodeId: string, sentAt: string): Promise<'marked' | 'already' | 'gone'>;
  /**
   * Records an operator's cancel of the node's pending drain (`cancelledAt`, by, reason): `cancelled` for exactly one of
   * concurrent callers, `already` when it was cancelled before (the first cancel kept), `gone` when the node has none
   * (its drain began, or was given up). Throws nothing else.
   */
  cancelPendingDrain(nodeId: string, cancel: { at: string; by: string; reason: string }): Promise<'cancelled' | 'already' | 'gone'>;

  /**
   * Records completed gear moves, one small item per gear kept `ttlMs` after
   * its latest move (the disruption budget's maxMovesPerGear); idempotent per
   * move `key`.
   */
  recordGearMoves(moves: readonly GearMoveRecord[], ttlMs: number): Promise<void>;
  /** The recorded move times (ISO, oldest first) of these gears, by uuid; a gear without any is absent. Expired ones may remain. */
  getGearMoves(uuids: readonly string[]): Promise<Map<string, string[]>>;
  /**
   * The stored gear lists of these nodes, by node id, each with the digest it was stored under (`NodeStats.listed`:
   * a list may be a report ahead of the stats, never behind); a node without one is absent. Batched reads, not one
   * per node. `TransientError` when the table keeps some unread.
   */
  getGearLists(nodeIds: readonly string[]): Promise<Map<string, StoredGearList>>;
}

/** An agent's gear list as stored apart from its stats. */
export interface StoredGearList {
  digest: string;
  gears: GearInfo[];
}
