/**
 * The drain's decisions as pure functions: identifiers, which moves start now,
 * what a move's result does to it (retry with backoff, give up, re-plan),
 * when a drain must stop, and how the platform's gear list reconciles with the
 * plan. The use case (lib/app/drain.ts) carries them out one conditional
 * write at a time.
 */
import type { DrainKind, DrainRecord, GearInfo, GearMove, NodeRecord, PoolId } from './model.js';
import type { Placement } from './drain-plan.js';
import type { Config, PoolConfig } from '../config/index.js';
import { isRenewalDrain } from './controls.js';
import { formatDuration } from './duration.js';
import { clampScaleUp } from './scale-up-limits.js';
import { forEachSlotHolder } from './utilization.js';

/** The message field rules for an operation id (decisionId, drainId): 1..128 of letters, digits, `_ : . -`. */
const OPERATION_ID_MAX = 128;
const NOT_ALLOWED = /[^A-Za-z0-9_:.-]/g;

/**
 * `text` as a valid operation id: characters outside the allowed set become
 * `_`; a text longer than 128 keeps its first 111 characters and ends with a
 * hash of the whole, so distinct inputs stay distinct.
 */
export function operationId(text: string): string {
  const clean = text.replace(NOT_ALLOWED, '_');
  if (clean.length > 0 && clean.length <= OPERATION_ID_MAX) return clean;
  return `${clean.slice(0, OPERATION_ID_MAX - 17)}:${fnv1a64(text)}`;
}

/** FNV-1a, 64 bits, as 16 hex digits: a stable short name for a long text (not a security hash). */
export function fnv1a64(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) {
    hash ^= BigInt(text.charCodeAt(i));
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16).padStart(16, '0');
}

/** The drain a scale-down decision starts: a redelivered or duplicated decision finds the same drain. */
export function drainIdFor(decisionId: string): string {
  return operationId(`drain:${decisionId}`);
}

/** The drain of a further node of one scale-down decision (its `alsoNodeIds`): a redelivered decision finds the same. */
export function alsoDrainIdFor(decisionId: string, nodeId: string): string {
  return operationId(`drain:${decisionId}:${nodeId}`);
}

/** The drain an EC2 event starts: a redelivered event finds the same drain. */
export function urgentDrainIdFor(eventId: string): string {
  return operationId(`drain:event:${eventId}`);
}

/** The drain that finishes a node handed back (`drained -> draining`): one per hand-back, whoever notices it first. */
export function redrainIdFor(node: Pick<NodeRecord, 'nodeId' | 'stateChangedAt'>): string {
  return operationId(`drain:again:${Date.parse(node.stateChangedAt)}:${node.nodeId}`);
}

/** The idempotency key of one attempt of one gear's move. */
export function moveKey(drainId: string, uuid: string, attempt: number): string {
  return `${drainId}/${uuid}/${attempt}`;
}

export function isUrgent(drain: Pick<DrainRecord, 'urgentSince'>): boolean {
  return drain.urgentSince !== undefined;
}

/** Held to the disruption budget's gear rules (do-not-move, maxMovesPerGear): nodescaler's own drains, the evaluator's scale-downs and its renewals, unless urgent. */
export function isBudgeted(drain: Pick<DrainRecord, 'kind' | 'decisionId' | 'urgentSince'>): boolean {
  return !isUrgent(drain) && (drainKind(drain) === 'scale-down' || isRenewalDrain(drain));
}

export function drainKind(drain: Pick<DrainRecord, 'kind'>): DrainKind {
  return drain.kind ?? 'scale-down';
}

/** Urgent drains first, then the oldest. */
export function drainOrder(a: DrainRecord, b: DrainRecord): number {
  const ua = isUrgent(a) ? 0 : 1;
  const ub = isUrgent(b) ? 0 : 1;
  return ua - ub || a.startedAt.localeCompare(b.startedAt) || a.drainId.localeCompare(b.drainId);
}

// ---------------------------------------------------------------------------
// Moves.

export interface MoveRetryPolicy {
  /** Attempts of one move before it fails for good. */
  attempts: number;
  /** Wait before the second attempt; doubles per attempt, at most 10x. */
  delayMs: number;
}

/** Wait after failed attempt number `attempt` (1-based): delay, 2 x delay, 4 x delay, ... at most 10 x delay. */
export function retryDelay(attempt: number, policy: Pick<MoveRetryPolicy, 'delayMs'>): number {
  return Math.min(policy.delayMs * 2 ** Math.max(0, attempt - 1), policy.delayMs * 10);
}

/** Moves that hold a slot on their target (the reservations). */
export function isPending(move: Pick<GearMove, 'state'>): boolean {
  return move.state === 'planned' || move.state === 'moving';
}

export interface Progress {
  total: number;
  planned: number;
  moving: number;
  moved: number;
  failed: number;
}

export function progressOf(moves: readonly GearMove[]): Progress {
  const progress: Progress = { total: moves.length, planned: 0, moving: 0, moved: 0, failed: 0 };
  for (const move of moves) progress[move.state]++;
  return progress;
}

/**
 * The planned moves to start now: up to `maxConcurrent` in flight, whose
 * backoff has passed and whose target is still good, in plan order.
 */
export function movesToStart(moves: readonly GearMove[], now: Date, maxConcurrent: number): GearMove[] {
  let inFlight = 0;
  // One move per application at a time: the broker runs each move in the application's lock, and a second one
  // waits on it 50 s, then fails (LockUnavailableException) while the first copies its gear for minutes.
  const appsMoving = new Set<string>();
  for (const move of moves) {
    if (move.state !== 'moving') continue;
    inFlight++;
    appsMoving.add(move.gear.app);
  }
  const room = maxConcurrent - inFlight;
  if (room <= 0) return [];
  const nowIso = now.toISOString();
  const ready: GearMove[] = [];
  for (const move of moves) {
    if (ready.length >= room) break;
    if (move.state !== 'planned' || move.retarget || appsMoving.has(move.gear.app)) continue;
    if (move.nextAttemptAt !== undefined && move.nextAttemptAt > nowIso) continue;
    ready.push(move);
    appsMoving.add(move.gear.app);
  }
  return ready;
}

/** A planned move turned into an attempt in flight (written before the platform is asked). */
export function beginAttempt(move: GearMove, now: Date): GearMove {
  const next: GearMove = { ...move, state: 'moving', attempts: move.attempts + 1, startedAt: now.toISOString() };
  delete next.commandId;
  delete next.nextAttemptAt;
  return next;
}

export type MoveOutcome =
  | { kind: 'succeeded' }
  | { kind: 'failed'; error: string }
  /** The target had no room: the gear is still on its source and goes elsewhere; no attempt is spent. */
  | { kind: 'target-full'; error: string }
  /**
   * Another operation held the application (a tenant's deploy, another move of its gears): nothing was done to the
   * gear and the same move is tried again after the retry delay; no attempt is spent. `drainTimeout` still bounds
   * a lock that is never released (no gear moved for that long).
   */
  | { kind: 'busy'; error: string };

/** What a finished attempt does to its move. */
export function settleAttempt(move: GearMove, outcome: MoveOutcome, now: Date, policy: MoveRetryPolicy): GearMove {
  const nowIso = now.toISOString();
  const next: GearMove = { ...move };
  delete next.commandId;
  if (outcome.kind === 'succeeded') {
    next.state = 'moved';
    next.finishedAt = nowIso;
    delete next.lastError;
    return next;
  }
  next.lastError = outcome.error.length > 500 ? `${outcome.error.slice(0, 497)}...` : outcome.error;
  if (outcome.kind === 'target-full') {
    next.state = 'planned';
    next.retarget = true;
    // Not the gear's fault: give the attempt back.
    next.attempts = Math.max(0, move.attempts - 1);
    return next;
  }
  if (outcome.kind === 'busy') {
    next.state = 'planned';
    next.attempts = Math.max(0, move.attempts - 1);
    next.nextAttemptAt = new Date(now.getTime() + retryDelay(1, policy)).toISOString();
    return next;
  }
  if (move.attempts >= policy.attempts) {
    next.state = 'failed';
    next.finishedAt = nowIso;
    return next;
  }
  next.state = 'planned';
  next.nextAttemptAt = new Date(now.getTime() + retryDelay(move.attempts, policy)).toISOString();
  return next;
}

/** A move given a new target by the planner. */
export function retargeted(move: GearMove, target: string): GearMove {
  const next: GearMove = { ...move, target, state: 'planned', replans: (move.replans ?? 0) + 1 };
  delete next.retarget;
  delete next.commandId;
  return next;
}

/** New planned moves for placements. */
export function plannedMoves(placements: readonly Placement[]): GearMove[] {
  return placements.map((placement) => ({ gear: placement.gear, target: placement.target, state: 'planned', attempts: 0 }));
}

/** An attempt the platform never saw (no move under its key): planned again, its attempt given back. */
export function attemptNeverStarted(move: GearMove): GearMove {
  const next: GearMove = { ...move, state: 'planned', attempts: Math.max(0, move.attempts - 1) };
  delete next.commandId;
  delete next.startedAt;
  return next;
}

/** A `moving` move with no recorded handle, old enough that the invocation that started it cannot still be recording it. */
export function isOrphanedAttempt(move: GearMove, now: Date, graceMs: number): boolean {
  if (move.state !== 'moving' || move.commandId !== undefined) return false;
  const started = move.startedAt === undefined ? NaN : Date.parse(move.startedAt);
  return !Number.isFinite(started) || now.getTime() - started >= graceMs;
}

// ---------------------------------------------------------------------------
// Reconciling the plan with the platform.

export interface Reconciled {
  /** The moves to keep, updated. */
  moves: GearMove[];
  /** Gears on the node that need a (new) target. */
  toPlan: GearInfo[];
  /** Planned moves dropped because their gear is no longer on the node (deleted, or moved by someone else). */
  dropped: GearMove[];
  /** Moves recorded `moved` whose gear is on the node again. */
  returned: GearMove[];
}

/**
 * Lines the plan up with the gears the platform lists on the node. A gear
 * with no move, or whose move says `moved` although the gear is still there,
 * needs planning; a planned (not started) move whose gear left the node is
 * dropped. Moves in flight and failed moves are kept as they are.
 */
export function reconcile(moves: readonly GearMove[], onNode: readonly GearInfo[]): Reconciled {
  const present = new Map(onNode.map((gear) => [gear.uuid, gear]));
  const kept: GearMove[] = [];
  const dropped: GearMove[] = [];
  const returned: GearMove[] = [];
  const covered = new Set<string>();
  for (const move of moves) {
    const gear = present.get(move.gear.uuid);
    if (move.state === 'planned' && gear === undefined) {
      dropped.push(move);
      continue;
    }
    if (move.state === 'moved' && gear !== undefined) {
      returned.push(move);
      kept.push({ ...move, state: 'planned', retarget: true, lastError: 'the platform still lists the gear on the node after its move' });
      covered.add(move.gear.uuid);
      continue;
    }
    kept.push(move);
    covered.add(move.gear.uuid);
  }
  const toPlan = onNode.filter((gear) => !covered.has(gear.uuid));
  for (const move of kept) if (move.retarget) toPlan.push(move.gear);
  return { moves: kept, toPlan, dropped, returned };
}

/**
 * Reservations of every active drain except the moves of `except` for the gears in `replanning` (an idle gear's move
 * holds no slot), and the applications
 * headed to each node; given the pool's `nodes`, gears that landed on a node after its last report count too
 * (utilization.ts `forEachSlotHolder`).
 */
export function reservationsExcept(
  drains: readonly DrainRecord[],
  except: string,
  replanning: ReadonlySet<string>,
  nodes?: readonly NodeRecord[],
): { reserved: Map<string, number>; incomingApps: Map<string, Map<string, number>> } {
  const reserved = new Map<string, number>();
  const incomingApps = new Map<string, Map<string, number>>();
  forEachSlotHolder(drains, nodes, (move, drain, pending) => {
    if (pending && drain.drainId === except && replanning.has(move.gear.uuid)) return;
    if (!move.gear.idle) reserved.set(move.target, (reserved.get(move.target) ?? 0) + 1);
    let apps = incomingApps.get(move.target);
    if (!apps) incomingApps.set(move.target, (apps = new Map()));
    apps.set(move.gear.app, (apps.get(move.gear.app) ?? 0) + 1);
  });
  return { reserved, incomingApps };
}

// ---------------------------------------------------------------------------
// Stopping.

/**
 * Why a normal drain must stop now, or undefined: a gear that failed all its
 * attempts, or the drain timeout. Urgent drains stop only on the timeout
 * (their failed gears are reported, the others keep moving).
 */
export function abortCause(drain: DrainRecord, now: Date, drainTimeoutMs: number): string | undefined {
  const failed = stoppingMove(drain);
  if (failed?.noRoom) {
    return `no room for gear ${failed.gear.uuid} (${failed.gear.app}): ${failed.replans ?? 0} target(s) in a row filled or left before it could land (last ${failed.target}: ${failed.lastError ?? 'full'})`;
  }
  if (failed) {
    return `gear ${failed.gear.uuid} (${failed.gear.app}) could not be moved to ${failed.target} after ${failed.attempts} attempt(s): ${failed.lastError ?? 'failed'}`;
  }
  return timeoutCause(drain, now, drainTimeoutMs);
}

/**
 * True when a normal drain stops because the rest of the pool has no room
 * for one of its gears: demand rose while it ran. The scaler following
 * demand, like a call-off, not a fault an operator is paged for.
 */
export function stopsForRoom(drain: DrainRecord): boolean {
  return stoppingMove(drain)?.noRoom === true;
}

/** The failed move that stops a normal drain (urgent drains report failed gears and go on). */
function stoppingMove(drain: DrainRecord): GearMove | undefined {
  return isUrgent(drain) ? undefined : drain.moves.find((move) => move.state === 'failed');
}

/**
 * Why a drain has run out of time, or undefined: it moved no gear for
 * drainTimeout (since it started, its node closed, or its last gear moved).
 * Checked before every step of a drain, whatever its phase: a step that keeps
 * failing (a close the broker refuses) must not keep the drain, and the
 * pool's scale-down, past it. A drain that keeps moving gears is not stopped:
 * its moves are tenant restarts already paid for, and an abort re-opens the
 * node with nothing saved (on `npm start`, 37 drains were aborted after 30m
 * with 87 of about 90 gears moved). It still ends: its node is closed, so it
 * holds fewer gears after every move.
 */
export function timeoutCause(drain: Pick<DrainRecord, 'startedAt' | 'closedAt' | 'moves'>, now: Date, drainTimeoutMs: number): string | undefined {
  const since = lastProgressAt(drain);
  if (now.getTime() - since < drainTimeoutMs) return undefined;
  const progress = progressOf(drain.moves);
  return `drain timed out: no gear moved for ${formatDuration(drainTimeoutMs)} (${progress.moved} of ${progress.total} gear(s) moved)`;
}

/** When the drain last made progress (ms): its start, its node's close, or its latest completed move. */
export function lastProgressAt(drain: Pick<DrainRecord, 'startedAt' | 'closedAt' | 'moves'>): number {
  let latest = Date.parse(drain.startedAt);
  const closed = drain.closedAt ? Date.parse(drain.closedAt) : NaN;
  if (closed > latest) latest = closed;
  for (const move of drain.moves) {
    if (move.state !== 'moved' || !move.finishedAt) continue;
    const at = Date.parse(move.finishedAt);
    if (at > latest) latest = at;
  }
  return latest;
}

/** A one-line summary of gears for logs: `uuid (app)`, the first `limit` of them and how many more. */
export function describeGears(gears: readonly GearInfo[], limit = 10): string {
  const shown = gears.slice(0, limit).map((gear) => `${gear.uuid} (${gear.app})`);
  const more = gears.length - shown.length;
  return `${shown.join(', ')}${more > 0 ? `, and ${more} more` : ''}`;
}

// ---------------------------------------------------------------------------
// Replacement of an interrupted node.

export interface ReplacementInput {
  /** Gears of the interrupted node that found no target. */
  unplaced: number;
  /** Nodes of the pool (the interrupted one included). */
  nodes: readonly NodeRecord[];
  /** The interrupted node. */
  nodeId: string;
  gearsPerNode: number;
  config: Config;
  poolConfig: PoolConfig;
  /** Nodes of every pool, for the global limits. */
  allNodes: readonly NodeRecord[];
}

/**
 * How many nodes replace an interrupted one: enough for the gears that found
 * no room, less what is already provisioning, and at least what keeps the
 * pool at its `min` once the interrupted node is gone (an empty node leaves
 * too); within every limit the evaluator keeps (maxNodesPerDecision,
 * pool.max, maxNodesTotal, maxCores, maxMemoryGiB). The interrupted node
 * still counts against the limits: it holds an instance until it is
 * released, and a limit is the most the operator pays for. Zero when
 * everything fits elsewhere and the minimum holds.
 */
export function replacementCount(input: ReplacementInput): { count: number; wanted: number; clampedBy?: string } {
  let provisioning = 0;
  let poolNodes = 0;
  let serving = 0;
  for (const node of input.nodes) {
    if (node.state === 'provisioning') provisioning++;
    if (node.state === 'provisioning' || node.state === 'active' || node.state === 'draining') poolNodes++;
    if ((node.state === 'provisioning' || node.state === 'active') && node.nodeId !== input.nodeId) serving++;
  }
  const perNode = Math.max(1, input.gearsPerNode);
  const deficit = input.unplaced - provisioning * perNode;
  const wanted = Math.max(deficit > 0 ? Math.ceil(deficit / perNode) : 0, input.poolConfig.min - serving);
  if (wanted <= 0) return { count: 0, wanted: 0 };
  const clamp = clampScaleUp(wanted, input, poolNodes);
  const first = clamp.clampedBy[0];
  return first === undefined ? { count: clamp.count, wanted } : { count: clamp.count, wanted, clampedBy: `${first.limit}=${first.value}` };
}

/** The decision id of the replacement for an interrupted node (one per interruption event). */
export function replacementDecisionId(pool: PoolId, nodeId: string, eventId: string): string {
  return operationId(`replace:${pool.replace(/[^A-Za-z0-9_.-]/g, '_')}:${fnv1a64(`${nodeId}|${eventId}`)}`);
}
