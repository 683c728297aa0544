/**
 * How a drain starts and ends. Starting: node active -> draining after the
 * checks a start needs. Completing: the node is drained, the decommissioner
 * is told (idempotent on drainId), the drain closes and its lease goes.
 * Aborting stops new moves, lets the ones in flight settle, re-opens the
 * node (activate-node, draining -> active), keeps moved gears where they
 * are, and sets the pool's lastDrainFailureAt (its scale-down backs off)
 * unless the drain stopped for demand (called off, or outgrown: the pool has
 * no room left for its gears) or an operator cancelled it. A drain never ends `completed`
 * unless the platform listed the node empty.
 */
import { drainingLimit, poolSize } from '../../domain/budget.js';
import { isRenewalDrain, protectedNodesNow } from '../../domain/controls.js';
import { cancelledBeforeBegun } from '../../domain/pending-drains.js';
import { describeIncoming, movesOnto } from '../../domain/decommission.js';
import { drainKind, isUrgent, progressOf } from '../../domain/drain.js';
import { drainStop } from '../../domain/drain-stop.js';
import { formatDuration } from '../../domain/duration.js';
import type { DrainRecord, NodeRecord } from '../../domain/model.js';
import { isProtected, withAgentFlags } from '../../domain/node-stats.js';
import { ConflictError, TransientError, describeError } from '../../errors.js';
import { budgetRefusal } from './budget-guard.js';
import { repriceRefusal } from './price-guard.js';
import { ORPHAN_GRACE_MS, appendDecision, markDrainFailure, poolConfigOf, releaseLease, save, type DrainContext, type RecordContext, type StepResult } from './context.js';
import { pollMoves } from './moving.js';

/** active -> draining, after the checks a start needs. */
export async function begin(ctx: DrainContext, drain: DrainRecord, node: NodeRecord): Promise<StepResult> {
  const { store, clock, log } = ctx.ports;
  const poolConfig = poolConfigOf(ctx, drain.pool);
  if (node.pool !== drain.pool) return finishAbort(ctx, drain, node, `node ${node.nodeId} belongs to pool ${node.pool}, not ${drain.pool}`, { failure: false });
  const urgent = isUrgent(drain);
  const controls = urgent ? undefined : await store.listControls();
  // The gear mover may have taken the drain's message just before an operator's cancel-drain was written, and the CLI
  // looked for the drain before it was created: read here, before the node's first change, the cancel still holds it.
  const cancelled = controls ? cancelledBeforeBegun(controls.pendingDrains, node.nodeId, drain.decisionId) : undefined;
  if (cancelled) return finishAbort(ctx, drain, node, cancelled, { failure: false });
  if (controls && isProtected(node, protectedNodesNow(ctx.config, poolConfig, controls, drain.pool, clock.now()))) {
    return finishAbort(ctx, drain, node, `node ${node.nodeId} is protected`, { failure: false });
  }
  if (!urgent) {
    // Gears on their way to the node would be moved twice (onto it, then off it): a drain that may wait does not start.
    const incoming = movesOnto((await store.listDrains(drain.pool, 'active')).filter((other) => other.drainId !== drain.drainId), node.nodeId);
    if (incoming.length > 0) return finishAbort(ctx, drain, node, `${describeIncoming(node.nodeId, incoming)}: draining it now would move them twice`, { failure: false });
  }
  if (!urgent && drainKind(drain) !== 'redrain') {
    const poolNodes = await store.listNodes(drain.pool);
    const others = poolNodes.filter((n) => n.state === 'draining' && n.nodeId !== node.nodeId).length;
    const { limit, setting } = drainingLimit(ctx.config, poolConfig, poolSize(poolNodes));
    if (others >= limit) {
      return finishAbort(ctx, drain, node, `${others} node(s) of pool ${drain.pool} already draining (${setting})`, {
        failure: false,
      });
    }
  }
  // The budget is checked on the gears the platform lists before the node is closed: a refusal then costs no
  // deactivate-node and no re-open. The check before the first plan (moving.ts) stays for gears that reach the node
  // between here and its close.
  if (!urgent && (drainKind(drain) === 'scale-down' || isRenewalDrain(drain))) {
    const listed = withAgentFlags(await ctx.ports.platform.listGears(node.nodeId), node);
    const refusal = (await repriceRefusal(ctx, drain, listed)) ?? (await budgetRefusal(ctx, drain, node, listed));
    if (refusal) return finishAbort(ctx, drain, node, refusal, { failure: false });
  }
  await store.transitionNode(
    node.nodeId,
    { from: 'active', to: 'draining', expectedVersion: node.version, patch: { drainId: drain.drainId, reason: `draining (${drainKind(drain)}): ${drain.reason}`.slice(0, 1024) } },
    clock.now(),
  );
  log.info('drain started: node draining', { drainId: drain.drainId, nodeId: node.nodeId, pool: drain.pool, kind: drainKind(drain), urgent });
  return 'progressed';
}

/** node drained: tell the decommissioner (idempotent on drainId), then close the drain. */
export async function complete(ctx: DrainContext, drain: DrainRecord, node: NodeRecord): Promise<StepResult> {
  const { queue, clock } = ctx.ports;
  const completedAt = drain.completedAt ?? clock.now().toISOString();
  const body = { type: 'drain-complete' as const, v: 1 as const, drainId: drain.drainId, nodeId: node.nodeId, pool: drain.pool, completedAt };
  const result = await queue.send('decommission', [{ body, groupId: drain.pool, deduplicationId: drain.drainId }]);
  if (result.failed.length > 0) throw new TransientError(`drain-complete for ${drain.drainId} not accepted: ${result.failed[0]!.error}`);
  return markCompleted(ctx, drain.completedAt ? drain : await save(ctx, drain, { completedAt }), 'drain-complete sent');
}

export async function markCompleted(ctx: DrainContext, drain: DrainRecord, note: string): Promise<StepResult> {
  const { clock, log, metrics } = ctx.ports;
  const done = await save(ctx, drain, { state: 'completed' }, { keepEndedFor: ctx.config.drainHistoryTtl });
  const seconds = Math.max(0, (Date.parse(done.completedAt ?? clock.now().toISOString()) - Date.parse(done.startedAt)) / 1000);
  const progress = progressOf(done.moves);
  // Completed drains are DrainDuration's SampleCount: one series, not two (docs/BENCHMARKS.md, the bill).
  metrics.record('DrainDuration', seconds, 'Seconds', { pool: done.pool });
  log.info(`drain completed: ${progress.moved} gear(s) moved in ${formatDuration(Math.round(seconds) * 1000)}; ${note}`, {
    drainId: done.drainId,
    nodeId: done.nodeId,
    pool: done.pool,
    kind: drainKind(done),
    seconds,
  });
  await releaseLease(ctx, done.pool, done.decisionId);
  return 'finished';
}

/**
 * Why a drain stops, when it is no fault: `calledOff`, the pool's scale-up wants the node back; `outgrown`, the
 * rest of the pool has no room left for the node's gears; `repriced`, the node took more gears than the decision
 * priced (drain-price.ts); `cancelled`, an operator stopped it. None pages or backs the pool off.
 */
export interface AbortOptions {
  calledOff?: boolean;
  outgrown?: boolean;
  repriced?: boolean;
  cancelled?: boolean;
}

function stopMarks(options: AbortOptions, now: string): Partial<DrainRecord> {
  if (options.calledOff) return { calledOffAt: now };
  if (options.outgrown) return { outgrownAt: now };
  if (options.repriced) return { repricedAt: now };
  if (options.cancelled) return { cancelledAt: now };
  return {};
}

/** Stops the drain at its next round. */
export async function requestAbort(ctx: RecordContext, drain: DrainRecord, reason: string, options: AbortOptions = {}): Promise<DrainRecord> {
  if (drain.abortRequestedAt) return drain;
  const now = ctx.ports.clock.now().toISOString();
  const saved = await save(ctx, drain, {
    abortRequestedAt: now,
    abortReason: reason.slice(0, 1024),
    ...stopMarks(options, now),
  });
  const message = options.calledOff
    ? 'drain called off'
    : options.outgrown
      ? 'drain stopping: the pool has no room left for its gears'
      : options.repriced
        ? 'drain stopping: its node took more gears than the decision priced'
        : options.cancelled
          ? 'drain stopping: cancelled by an operator'
          : 'drain stopping';
  ctx.ports.log.warn(message, { drainId: drain.drainId, nodeId: drain.nodeId, pool: drain.pool, reason });
  return saved;
}

export async function requestAbortStep(ctx: DrainContext, drain: DrainRecord, reason: string, options: AbortOptions = {}): Promise<StepResult> {
  await requestAbort(ctx, drain, reason, options);
  return 'progressed';
}

/**
 * Lets the moves in flight settle (up to the platform's command timeout), then re-opens the node. Whatever the
 * node's state: a move in flight may still land, and each landed move is a restart the drain must record.
 */
export async function continueAbort(ctx: DrainContext, drain: DrainRecord, node: NodeRecord): Promise<StepResult> {
  const now = ctx.ports.clock.now();
  const reason = drain.abortReason ?? 'aborted';
  if (drain.moves.some((move) => move.state === 'moving')) {
    if (await pollMoves(ctx, drain, node, { orphans: 'find' })) return 'progressed';
    const waited = now.getTime() - Date.parse(drain.abortRequestedAt!);
    const limit = Math.max(ctx.config.platform.commandTimeout, ORPHAN_GRACE_MS);
    if (waited < limit) return 'waiting';
    ctx.ports.log.warn('moves still in flight at abort; re-opening the node anyway (each gear stays on exactly one node)', { drainId: drain.drainId });
  }
  return finishAbort(ctx, drain, node, reason, { failure: true });
}

/**
 * Ends a drain `aborted`: re-opens the node if this drain holds it
 * (activate-node, then draining -> active), marks the pool's drain failure
 * time when the drain had started and failed (delayAfterFailure, scale-down
 * only), and logs why.
 */
export async function finishAbort(ctx: DrainContext, drain: DrainRecord, node: NodeRecord | undefined, reason: string, options: { failure: boolean }): Promise<StepResult> {
  const { store, platform, clock, log, metrics } = ctx.ports;
  const now = clock.now();
  const ours = node !== undefined && node.state === 'draining' && node.drainId === drain.drainId;
  // Re-open on the platform whatever the table says, if this drain closed the node and the node still serves.
  if (node && drain.closedAt && (ours || node.state === 'active')) await platform.activateNode(node.district, node.nodeId);
  else if (ours && drain.abortRequestedAt) await reopenUnconfirmedClose(ctx, drain, node!);
  if (ours) {
    await store.transitionNode(
      node!.nodeId,
      { from: 'draining', to: 'active', expectedVersion: node!.version, patch: { drainId: undefined, reason: `drain ${drain.drainId} aborted: ${reason}`.slice(0, 1024) } },
      now,
    );
  }
  const stop = drainStop(drain, drain.closedAt !== undefined || options.failure);
  if (stop.backsOff) await markDrainFailure(ctx, drain.pool, now);
  const done = await save(ctx, drain, { state: 'aborted', abortReason: reason.slice(0, 1024) }, { keepEndedFor: ctx.config.drainHistoryTtl });
  const progress = progressOf(done.moves);
  if (stop.metric) metrics.record(stop.metric, 1, 'Count', { pool: drain.pool });
  log.warn(stop.logText, { drainId: drain.drainId, nodeId: drain.nodeId, pool: drain.pool, reason, moved: progress.moved, total: progress.total });
  await appendDecision(ctx, drain.pool, stop.decisionKind, `drain ${drain.drainId} of ${drain.nodeId} ${stop.ended}: ${reason}`, drain.decisionId, {
    moved: progress.moved,
    total: progress.total,
  });
  await releaseLease(ctx, drain.pool, drain.decisionId);
  return 'finished';
}

/**
 * A drain stopped before its close was recorded (the close kept failing, or
 * its answer was lost after it ran): the node may be closed on the platform
 * all the same, so it is re-opened ("already active" is success). The node
 * held no moves yet, so a failure here only leaves it closed to new gears,
 * which a later drain or an operator's activate-node undoes: it is logged,
 * and the abort goes on rather than hold the pool's scale-down.
 */
async function reopenUnconfirmedClose(ctx: DrainContext, drain: DrainRecord, node: NodeRecord): Promise<void> {
  try {
    await ctx.ports.platform.activateNode(node.district, node.nodeId);
  } catch (error) {
    ctx.ports.log.warn('node not re-opened on the platform after a drain stopped before its close was confirmed; it may stay closed to new gears', {
      drainId: drain.drainId,
      nodeId: node.nodeId,
      district: node.district,
      error: describeError(error),
    });
  }
}

/** Normal drains of the pool give way to an urgent one that lacks room: their nodes re-open and take its gears. */
export async function preemptNormalDrains(ctx: DrainContext, urgent: DrainRecord): Promise<void> {
  for (const other of await ctx.ports.store.listDrains(urgent.pool)) {
    if (other.drainId === urgent.drainId || isUrgent(other) || other.abortRequestedAt) continue;
    const current = await ctx.ports.store.getDrain(other.drainId);
    if (current?.state !== 'active' || current.abortRequestedAt || isUrgent(current)) continue;
    try {
      await requestAbort(ctx, current, `preempted by urgent drain ${urgent.drainId} of ${urgent.nodeId}, which lacks room`);
      ctx.known.add(current.drainId);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
  }
}
