/**
 * What every part of the drain workflow shares: its ports, the
 * configuration, and the writes on a drain record. Every change of a drain
 * goes through `save`, which stores the phase the changed record is in.
 */
import { findPoolConfig, type Config, type PoolConfig } from '../../config/index.js';
import type { MoveRetryPolicy } from '../../domain/drain.js';
import type { DrainRecord, GearMove, PoolId } from '../../domain/model.js';
import { ConflictError, TransientError } from '../../errors.js';
import type { Clock } from '../../ports/clock.js';
import type { Log } from '../../ports/log.js';
import type { Metrics } from '../../ports/metrics.js';
import type { Platform } from '../../ports/platform.js';
import type { Queue } from '../../ports/queue.js';
import type { DrainPatch, StateStore } from '../../ports/state-store.js';
import { moveWrites, movesAfterWrites } from './move-writes.js';
import { describeError, poolIds, releaseLease as releasePoolLease } from '../../app/steps.js';
import { derivedDrainPhase } from './phases.js';

export interface GearMoverPorts {
  store: StateStore;
  platform: Platform;
  queue: Queue;
  clock: Clock;
  metrics: Metrics;
  log: Log;
  /**
   * Waits while moves are in flight: a real timer on AWS (lib/wiring/aws/).
   * Absent: an invocation makes one pass over the drains and leaves the rest
   * to the next tick (the local and simulated environments, whose moves do not
   * progress during an invocation).
   */
  wait?: (ms: number) => Promise<void>;
}

export interface DrainContext {
  ports: GearMoverPorts;
  config: Config;
  retry: MoveRetryPolicy;
  /** Drains created or touched by this instance: the pool index may not list them yet. */
  known: Set<string>;
}

/** What the writes on drain records need: an operator's drain or cancel (the CLI) has no platform or queue. */
export interface RecordContext {
  ports: Pick<GearMoverPorts, 'store' | 'clock' | 'log'>;
  known: Set<string>;
}

export function drainContext(ports: GearMoverPorts, config: Config): DrainContext {
  return { ports, config, retry: { attempts: config.scaleDown.moveAttempts, delayMs: config.scaleDown.moveRetryDelay }, known: new Set() };
}

/** The decisionId prefix of a drain an operator asked for (`nodescaler drain NODE`): its drain is of kind `manual`. */
export const MANUAL_DECISION_PREFIX = 'manual:';
/** A step is begun only with at least this much time left: a gear listing on the broker takes seconds. */
export const MIN_STEP_MS = 5_000;
/** A `moving` attempt without a recorded handle is looked up by its key only after this long (its starter may still be writing). */
export const ORPHAN_GRACE_MS = 60_000;
/** How often a gear may get a new target before its move counts as failed. */
export const MAX_REPLANS = 5;

export type StepResult = 'progressed' | 'waiting' | 'finished';

/** DynamoDB keeps no `undefined`: moves are written without them. */
export function stripUndefined(move: GearMove): GearMove {
  const copy = { ...move } as Record<string, unknown>;
  for (const key of Object.keys(copy)) if (copy[key] === undefined) delete copy[key];
  return copy as unknown as GearMove;
}

export const describe = describeError;

/** A change of a drain: its own fields, and its moves as they should be stored (only the changed ones are written). */
export type DrainChange = DrainPatch & { moves?: GearMove[] };

/**
 * Writes a change of the drain: first the moves that changed, each by
 * conditional write on its own version (a drain of the layout before moves
 * had their own items is split first), then the drain's own fields, if any,
 * by conditional write on the drain's version, with the phase the result is
 * in. A crash between the two leaves moves that are each whole; the next
 * round reads them and carries on. A change that ends the drain passes
 * `keepEndedFor` (drainHistoryTtl), so the table does not grow for ever.
 */
export async function save(ctx: RecordContext, drain: DrainRecord, change: DrainChange, options: { keepEndedFor?: number } = {}): Promise<DrainRecord> {
  const { store, clock } = ctx.ports;
  const { moves: nextMoves, ...patch } = change;
  let current = drain;
  let moves = drain.moves;
  if (nextMoves !== undefined) {
    if (current.movesInline) current = await store.splitDrainMoves(drain.drainId, drain.version);
    const written = await store.writeMoves(current.drainId, moveWrites(current.moves, nextMoves));
    moves = movesAfterWrites(current.moves, nextMoves, written);
  }
  const inline = current.movesInline ? { movesInline: true } : {};
  if (Object.keys(patch).length === 0) return { ...current, moves, ...inline };
  const header = await store.updateDrain(current.drainId, current.version, { ...patch, phase: derivedDrainPhase({ ...current, ...patch }) }, clock.now(), options.keepEndedFor);
  return { ...header, moves, ...inline };
}

/**
 * Checks that the drain's own fields are still as `drain` has them (no abort
 * requested, no other change since it was read) by moving its version on:
 * a move attempt, written before, is started only after this, so an abort
 * requested meanwhile either makes this fail or sees the attempt.
 */
export async function confirmUnchanged(ctx: RecordContext, drain: DrainRecord): Promise<DrainRecord> {
  const header = await ctx.ports.store.updateDrain(drain.drainId, drain.version, {}, ctx.ports.clock.now());
  return { ...header, moves: drain.moves };
}

/** Writes one move's change: that move's item alone (a drain of thousands of gears is not compared move by move). */
export async function updateMove(ctx: DrainContext, drain: DrainRecord, uuid: string, change: (move: GearMove) => GearMove): Promise<DrainRecord> {
  const held = drain.moves.find((move) => move.gear.uuid === uuid);
  if (drain.movesInline || held?.version === undefined) {
    return save(ctx, drain, { moves: drain.moves.map((move) => (move.gear.uuid === uuid ? stripUndefined(change(move)) : move)) });
  }
  const { version, ...next } = stripUndefined(change(held));
  const [written] = await ctx.ports.store.writeMoves(drain.drainId, [{ kind: 'update', move: next, expectedVersion: held.version }]);
  void version;
  return { ...drain, moves: drain.moves.map((move) => (move === held ? written! : move)) };
}

export async function releaseLease(ctx: DrainContext, pool: PoolId, holder: string): Promise<void> {
  await releasePoolLease(ctx.ports.store, pool, holder);
}

export async function touchPool(ctx: DrainContext, pool: PoolId, patch: { lastScaleUpAt: string }): Promise<void> {
  const { store } = ctx.ports;
  for (let attempt = 0; attempt < 5; attempt++) {
    const record = (await store.getPool(pool)) ?? (await store.ensurePool(pool));
    try {
      await store.updatePool(pool, record.version, patch);
      return;
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
  }
}

export async function appendDecision(
  ctx: DrainContext,
  pool: PoolId,
  kind: 'failure' | 'refused' | 'scale-up' | 'scale-down',
  reason: string,
  decisionId: string | undefined,
  details: Record<string, unknown>,
): Promise<void> {
  try {
    await ctx.ports.store.appendDecision(
      { pool, at: ctx.ports.clock.now().toISOString(), kind, reason: reason.slice(0, 1024), ...(decisionId ? { decisionId } : {}), details },
      ctx.config.decisionLogTtl,
    );
  } catch (error) {
    // The decision log is for operators; a drain must not stall on it.
    ctx.ports.log.warn('decision log entry not written', { pool, error: describeError(error) });
  }
}

export function poolConfigOf(ctx: DrainContext, pool: PoolId): PoolConfig | undefined {
  return findPoolConfig(ctx.config, pool);
}

export async function poolIdsOf(ctx: DrainContext): Promise<PoolId[]> {
  return poolIds(ctx.ports.store, ctx.config);
}

/** pool.lastDrainFailureAt = now (the pool's scale-down backs off), re-reading on a lost race. */
export async function markDrainFailure(ctx: DrainContext, pool: PoolId, now: Date): Promise<void> {
  const { store } = ctx.ports;
  for (let attempt = 0; attempt < 5; attempt++) {
    const record = (await store.getPool(pool)) ?? (await store.ensurePool(pool));
    if (record.lastDrainFailureAt !== undefined && record.lastDrainFailureAt >= now.toISOString()) return;
    try {
      await store.updatePool(pool, record.version, { lastDrainFailureAt: now.toISOString() });
      return;
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
  }
  throw new TransientError(`pool ${pool}: lastDrainFailureAt not written after 5 conflicting writes`);
}
