/**
 * The moving phase of a drain: the node is closed; each round polls the
 * moves in flight, plans what needs a target (or finds the node empty and
 * marks it drained), and starts the moves the schedule allows.
 *
 * A move is started only after its attempt is written, with an idempotency
 * key naming that attempt; an attempt whose handle was never written (crash
 * between the platform call and the write) is looked up by its key after a
 * grace time instead of being started again, so no gear is moved twice.
 */
import {
  abortCause,
  attemptNeverStarted,
  beginAttempt,
  describeGears,
  isOrphanedAttempt,
  isPending,
  isUrgent,
  moveKey,
  movesToStart,
  plannedMoves,
  progressOf,
  reconcile,
  reservationsExcept,
  retargeted,
  settleAttempt,
  stopsForRoom,
  type MoveOutcome,
} from '../../domain/drain.js';
import { describeIncoming, movesOnto } from '../../domain/decommission.js';
import { planDrain } from '../../domain/drain-plan.js';
import type { DrainRecord, GearMove, NodeRecord } from '../../domain/model.js';
import { withAgentFlags } from '../../domain/node-stats.js';
import { withGearLists } from '../../app/gear-lists.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import { MAX_REPLANS, ORPHAN_GRACE_MS, confirmUnchanged, save, stripUndefined, updateMove, type DrainContext, type StepResult } from './context.js';
import { budgetRefusal, recordMoves } from './budget-guard.js';
import { repriceRefusal } from './price-guard.js';
import { preemptNormalDrains, requestAbortStep } from './ending.js';
import { requestReplacement } from './interruptions.js';

/** One round of the closed, draining node: stop at a timeout or failed gear, poll, plan or find it empty, start moves. */
export async function progress(ctx: DrainContext, drain: DrainRecord, node: NodeRecord): Promise<StepResult> {
  const { clock } = ctx.ports;
  const now = clock.now();
  const cause = abortCause(drain, now, ctx.config.scaleDown.drainTimeout);
  if (cause) return requestAbortStep(ctx, drain, cause, { outgrown: stopsForRoom(drain) });

  const polled = await pollMoves(ctx, drain, node, { orphans: 'start' });
  if (polled) return 'progressed';

  const pending = drain.moves.some(isPending);
  const needsTargets = drain.moves.some((move) => move.retarget);
  if (!drain.plannedAt || needsTargets || !pending) return planOrFinish(ctx, drain, node);

  const started = await startMoves(ctx, drain, node);
  return started ? 'progressed' : 'waiting';
}

/** Reads the node's gears from the platform; plans what needs a target, or finishes when the node is empty. */
export async function planOrFinish(ctx: DrainContext, drain: DrainRecord, node: NodeRecord): Promise<StepResult> {
  const { platform, store, clock, log } = ctx.ports;
  const now = clock.now();
  // What the agent said of each gear rides on its move: a disruptive gear's move is counted as a tenant's restart.
  const onNode = withAgentFlags(await platform.listGears(node.nodeId), node);
  const rec = reconcile(drain.moves, onNode);
  for (const move of rec.dropped) log.info('gear left the node before its move; dropped from the plan', { drainId: drain.drainId, uuid: move.gear.uuid, app: move.gear.app });
  for (const move of rec.returned) log.warn('gear still on the node after its move; planned again', { drainId: drain.drainId, uuid: move.gear.uuid, target: move.target });
  const urgent = isUrgent(drain);
  // Gears that reached the node between the start and the close: before the first plan nothing has moved yet.
  const repriced = await repriceRefusal(ctx, drain, onNode);
  if (repriced) return requestAbortStep(ctx, drain, repriced, { repriced: true });
  const refusal = await budgetRefusal(ctx, drain, node, onNode);
  if (refusal) return requestAbortStep(ctx, drain, refusal);

  if (onNode.length === 0 && !rec.moves.some(isPending)) {
    const failed = rec.moves.filter((move) => move.state === 'failed');
    if (failed.length > 0 && !urgent) {
      return requestAbortStep(ctx, drain, abortCause(drain, now, Infinity) ?? 'a gear could not be moved', { outgrown: stopsForRoom(drain) });
    }
    // The platform lists a gear on its target only once it lands: until the moves onto the node have, it is not empty.
    // (A node receiving moves does not start a drain that may wait; an urgent one, or one that a move reached since, waits here.)
    const incoming = movesOnto((await store.listDrains(drain.pool, 'active')).filter((other) => other.drainId !== drain.drainId), node.nodeId);
    if (incoming.length > 0) {
      log.info(`node looks empty, but ${describeIncoming(node.nodeId, incoming)}: the drain waits for them to land`, { drainId: drain.drainId, nodeId: node.nodeId, incoming: incoming.length });
      return 'waiting';
    }
    // The platform lists the node empty: done.
    const completed = drain.completedAt ? drain : await save(ctx, drain, { completedAt: now.toISOString(), moves: rec.moves, unplaced: undefined });
    const progress = progressOf(completed.moves);
    await store.transitionNode(
      node.nodeId,
      { from: 'draining', to: 'drained', expectedVersion: node.version, patch: { reason: `drained by ${drain.drainId}: ${progress.moved} gear(s) moved` } },
      now,
    );
    log.info('node empty: drained', { drainId: drain.drainId, nodeId: node.nodeId, moved: progress.moved });
    return 'progressed';
  }

  // Gears that exhausted their attempts stay on the node: an urgent drain reports them and keeps going with the others,
  // and ends (aborted) once nothing else can move.
  const failedOnNode = new Set(rec.moves.filter((move) => move.state === 'failed').map((move) => move.gear.uuid));
  const toPlan = rec.toPlan.filter((gear) => !failedOnNode.has(gear.uuid));
  if (toPlan.length === 0) {
    if (rec.moves.some(isPending)) {
      if (rec.dropped.length > 0 || rec.returned.length > 0 || !drain.plannedAt) {
        await save(ctx, drain, { moves: rec.moves, plannedAt: drain.plannedAt ?? now.toISOString() });
        return 'progressed';
      }
      return 'waiting';
    }
    return requestAbortStep(ctx, drain, `${failedOnNode.size} gear(s) could not be moved: ${describeGears(onNode.filter((g) => failedOnNode.has(g.uuid)))}`);
  }

  const replanning = new Set(toPlan.map((gear) => gear.uuid));
  const exhausted = rec.moves.filter((move) => move.retarget && (move.replans ?? 0) >= MAX_REPLANS);
  if (exhausted.length > 0) {
    const moves = rec.moves.map((move) =>
      move.retarget && (move.replans ?? 0) >= MAX_REPLANS ? { ...move, state: 'failed' as const, retarget: undefined, noRoom: true, finishedAt: now.toISOString() } : move,
    );
    await save(ctx, drain, { moves: moves.map(stripUndefined) });
    return 'progressed';
  }

  // The targets' gear lists (read node by node: a pool's listing counts them): anti-affinity places by them.
  const nodes = await withGearLists(await store.listNodes(drain.pool), store);
  const drains = (await store.listDrains(drain.pool)).filter((d) => d.drainId !== drain.drainId);
  drains.push({ ...drain, moves: rec.moves });
  const { reserved, incomingApps } = reservationsExcept(drains, drain.drainId, replanning, nodes);
  const avoid = new Map<string, Set<string>>();
  for (const move of rec.moves) if (move.retarget) avoid.set(move.gear.uuid, new Set([move.target]));
  const plan = planDrain({
    sourceNodeId: node.nodeId,
    pool: drain.pool,
    gears: toPlan,
    nodes,
    reserved,
    incomingApps,
    fillFraction: urgent ? 1 : ctx.config.scaleUp.threshold,
    antiAffinity: urgent ? 'preferred' : ctx.config.scaleDown.antiAffinity,
    now,
    statsMaxAge: ctx.config.statsMaxAge,
    avoid,
    draining: new Set(drains.filter((other) => other.drainId !== drain.drainId && other.state === 'active').map((other) => other.nodeId)),
  });

  const byUuid = new Map(plan.placements.map((placement) => [placement.gear.uuid, placement]));
  const moves: GearMove[] = rec.moves.map((move) => {
    const placement = move.retarget ? byUuid.get(move.gear.uuid) : undefined;
    if (placement) byUuid.delete(move.gear.uuid);
    return placement ? retargeted(move, placement.target) : move;
  });
  moves.push(...plannedMoves([...byUuid.values()]));
  const relaxed = plan.placements.filter((placement) => placement.sharesApp).length;
  if (relaxed > 0) log.info('anti-affinity relaxed: some gears share a node with another gear of their application', { drainId: drain.drainId, gears: relaxed });

  if (plan.unplaced.length > 0) {
    const first = plan.unplaced[0]!;
    const summary = `cannot place ${plan.unplaced.length} of ${toPlan.length} gear(s) of ${node.nodeId}: ${first.reason} (e.g. ${describeGears(plan.unplaced.map((u) => u.gear), 3)})`;
    if (!urgent) {
      // Abort before moving anything that the plan cannot finish; outgrown when it is room that lacks, not a setting or stats.
      const saved = await save(ctx, drain, { moves: moves.map(stripUndefined), unplaced: plan.unplaced.length });
      return requestAbortStep(ctx, saved, summary, { outgrown: plan.unplaced.every((u) => u.full) });
    }
    const changed = plan.placements.length > 0 || drain.unplaced !== plan.unplaced.length || !drain.plannedAt;
    let saved = drain;
    if (changed) saved = await save(ctx, drain, { moves: moves.map(stripUndefined), unplaced: plan.unplaced.length, plannedAt: drain.plannedAt ?? now.toISOString() });
    if (drain.unplaced !== plan.unplaced.length) log.warn('urgent drain: gears wait for room', { drainId: drain.drainId, nodeId: node.nodeId, unplaced: plan.unplaced.length, reason: summary });
    if (!saved.replacementDecisionId && ctx.config.scaleDown.replaceInterrupted) saved = await requestReplacement(ctx, saved, node, plan.unplaced.length);
    await preemptNormalDrains(ctx, saved);
    return changed ? 'progressed' : 'waiting';
  }
  await save(ctx, drain, { moves: moves.map(stripUndefined), unplaced: undefined, plannedAt: drain.plannedAt ?? now.toISOString() });
  log.info('gears planned', { drainId: drain.drainId, nodeId: node.nodeId, gears: plan.placements.length, targets: plan.targets });
  return 'progressed';
}

/**
 * Reads the result of every move in flight; records them in one write. True when something changed. An attempt
 * recorded without its handle is looked up by its key once past the grace: `start` (a drain moving) starts it if it
 * never reached the platform, `find` (a drain stopping) only finds it, and gives back an attempt that never started.
 * A move whose gear is gone (deleted by its tenant) is dropped from the drain.
 */
export async function pollMoves(ctx: DrainContext, drain: DrainRecord, node: NodeRecord, options: { orphans: 'start' | 'find' }): Promise<boolean> {
  const { platform, clock, log, metrics } = ctx.ports;
  const now = clock.now();
  let changed = false;
  const moves: GearMove[] = [];
  for (const move of drain.moves) {
    if (move.state !== 'moving') {
      moves.push(move);
      continue;
    }
    if (move.commandId === undefined) {
      if (!isOrphanedAttempt(move, now, ORPHAN_GRACE_MS)) {
        moves.push(move);
        continue;
      }
      const key = moveKey(drain.drainId, move.gear.uuid, move.attempts);
      if (options.orphans === 'find') {
        // The platform may have moved the gear: a stopping drain records what it did, and starts nothing.
        const handle = await platform.findMove(move.gear, node.nodeId, move.target, key);
        changed = true;
        if (handle === undefined) log.info('move attempt without a handle never reached the platform; given back as the drain stops', { drainId: drain.drainId, uuid: move.gear.uuid, attempt: move.attempts });
        else log.warn('move attempt without a handle found by its key as the drain stops', { drainId: drain.drainId, uuid: move.gear.uuid, attempt: move.attempts });
        moves.push(handle === undefined ? attemptNeverStarted(move) : { ...move, commandId: handle.commandId });
        continue;
      }
      // The attempt was written but its handle was not: find the move it may have started, or start it (same key).
      const outcome = await tryStart(ctx, drain, node, move, key, true);
      changed = true;
      // The tenant deleted the gear meanwhile: nothing to move (kept, the attempt would be recovered again on every pass).
      if (outcome.dropped) continue;
      log.warn('move attempt without a handle recovered by its key', { drainId: drain.drainId, uuid: move.gear.uuid, attempt: move.attempts });
      moves.push(outcome.move);
      continue;
    }
    let status;
    try {
      status = await platform.moveStatus({ commandId: move.commandId });
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      status = { state: 'failed' as const, error: `the platform does not know move ${move.commandId}` };
    }
    if (status.state === 'running') {
      moves.push(move);
      continue;
    }
    changed = true;
    if (status.state === 'failed' && status.gone) {
      // Retried, a move of a gear that no longer exists fails until the drain gives up and aborts: nothing to move.
      log.info('gear deleted during its move; dropped from the plan', { drainId: drain.drainId, uuid: move.gear.uuid, attempt: move.attempts, error: status.error });
      continue;
    }
    const outcome: MoveOutcome =
      status.state === 'succeeded'
        ? { kind: 'succeeded' }
        : status.targetFull
          ? { kind: 'target-full', error: status.error }
          : status.busy
            ? { kind: 'busy', error: status.error }
            : { kind: 'failed', error: status.error };
    const next = settleAttempt(move, outcome, now, ctx.retry);
    moves.push(next);
    if (next.state === 'moved') {
      metrics.record('GearMoves', 1, 'Count', { pool: drain.pool });
      if (move.gear.disruptive) metrics.record('TenantRestarts', 1, 'Count', { pool: drain.pool });
      log.info('gear moved', { drainId: drain.drainId, uuid: move.gear.uuid, app: move.gear.app, from: node.nodeId, to: move.target, attempts: move.attempts, ...(move.gear.disruptive ? { tenantRestarted: true } : {}) });
    } else {
      metrics.record('GearMoveFailures', 1, 'Count', { pool: drain.pool });
      log.warn(next.state === 'failed' ? 'gear move failed for good' : 'gear move failed; retried', {
        drainId: drain.drainId,
        uuid: move.gear.uuid,
        target: move.target,
        attempt: move.attempts,
        error: status.state === 'failed' ? status.error : undefined,
        nextAttemptAt: next.nextAttemptAt,
        retarget: next.retarget,
      });
    }
  }
  if (changed) {
    // By gear, not by index: a dropped move leaves `moves` shorter than the drain's.
    const wasMoving = new Set(drain.moves.filter((move) => move.state === 'moving').map((move) => move.gear.uuid));
    await recordMoves(ctx, drain, moves.filter((move) => move.state === 'moved' && wasMoving.has(move.gear.uuid)));
    await save(ctx, drain, { moves: moves.map(stripUndefined) });
  }
  return changed;
}

/**
 * Starts the moves the schedule allows: their attempts are written first (one
 * item each), the drain is confirmed unchanged once for all of them, then the
 * platform is asked for each, and the handles are written. True when one was
 * started (or a move was sent back to planning).
 */
export async function startMoves(ctx: DrainContext, drain: DrainRecord, node: NodeRecord): Promise<boolean> {
  const { clock, store } = ctx.ports;
  const ready = movesToStart(drain.moves, clock.now(), ctx.config.scaleDown.maxConcurrentMoves);
  if (ready.length === 0) return false;
  const targets = new Map((await store.listNodes(drain.pool)).map((n) => [n.nodeId, n]));
  // Up to the first move whose target is draining, gone or not active any more: that gear is planned again.
  const unusable = ready.findIndex((move) => targets.get(move.target)?.state !== 'active');
  const usable = unusable < 0 ? ready : ready.slice(0, unusable);
  let current = drain;
  if (usable.length > 0) {
    const now = clock.now();
    const attempts = new Map(usable.map((planned) => [planned.gear.uuid, beginAttempt(planned, now)]));
    current = await save(ctx, current, { moves: current.moves.map((move) => attempts.get(move.gear.uuid) ?? move) });
    current = await confirmOrUndo(ctx, current, usable);
    const started = new Map<string, { move: GearMove; dropped?: boolean }>();
    try {
      for (const attempt of attempts.values()) {
        started.set(attempt.gear.uuid, await tryStart(ctx, current, node, attempt, moveKey(current.drainId, attempt.gear.uuid, attempt.attempts), false));
      }
    } finally {
      // Handles of the moves started, even when a later start threw (its attempt stays without a handle, looked up by its key later).
      const dropped = new Set([...started].filter(([, outcome]) => outcome.dropped).map(([uuid]) => uuid));
      const moves = current.moves.filter((move) => !dropped.has(move.gear.uuid)).map((move) => started.get(move.gear.uuid)?.move ?? move);
      current = await save(ctx, current, { moves: moves.map(stripUndefined) });
    }
  }
  if (unusable >= 0) {
    const planned = ready[unusable]!;
    const target = targets.get(planned.target);
    await updateMove(ctx, current, planned.gear.uuid, (move) => ({ ...move, retarget: true, lastError: `target ${planned.target} is ${target?.state ?? 'gone'}` }));
  }
  return true;
}

/**
 * The attempts are written; they start only if the drain is still as read
 * (see `confirmUnchanged`). When it is not (an abort was requested, another
 * instance changed it), the attempts are taken back, as nothing was started.
 */
async function confirmOrUndo(ctx: DrainContext, drain: DrainRecord, planned: readonly GearMove[]): Promise<DrainRecord> {
  try {
    return await confirmUnchanged(ctx, drain);
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    const back = new Map(planned.map((move) => [move.gear.uuid, move]));
    const writes = drain.moves.flatMap((attempt) => {
      const before = back.get(attempt.gear.uuid);
      if (!before || attempt.version === undefined) return [];
      const { version: _version, ...move } = before;
      return [{ kind: 'update' as const, move: stripUndefined(move), expectedVersion: attempt.version }];
    });
    // A lost race here leaves `moving` attempts without a handle: looked up by their keys after the grace time.
    await ctx.ports.store.writeMoves(drain.drainId, writes).catch(() => undefined);
    throw error;
  }
}

/**
 * Asks the platform to start an attempt (written `moving` before). Definite
 * refusals settle the attempt; an error that leaves it unknown whether the
 * move started (throttling, timeout) is thrown, and the attempt stays
 * `moving` without a handle, to be looked up by its key later.
 */
export async function tryStart(ctx: DrainContext, drain: DrainRecord, node: NodeRecord, move: GearMove, key: string, mayExist: boolean): Promise<{ move: GearMove; dropped?: boolean }> {
  const { platform, clock, log } = ctx.ports;
  try {
    const handle = await platform.startMove(move.gear, node.nodeId, move.target, { idempotencyKey: key, mayExist });
    log.debug('gear move started', { drainId: drain.drainId, uuid: move.gear.uuid, to: move.target, attempt: move.attempts, commandId: handle.commandId });
    return { move: { ...move, commandId: handle.commandId } };
  } catch (error) {
    const now = clock.now();
    if (error instanceof ConflictError) {
      return { move: settleAttempt(move, { kind: 'target-full', error: error.message }, now, ctx.retry) };
    }
    if (error instanceof NotFoundError) {
      const still = (await platform.listGears(node.nodeId)).some((gear) => gear.uuid === move.gear.uuid);
      if (!still) {
        log.info('gear left the node before its move; dropped from the plan', { drainId: drain.drainId, uuid: move.gear.uuid });
        return { move, dropped: true };
      }
      return { move: settleAttempt(move, { kind: 'failed', error: error.message }, now, ctx.retry) };
    }
    if (error instanceof ValidationError) return { move: settleAttempt(move, { kind: 'failed', error: error.message }, now, ctx.retry) };
    throw error;
  }
}
