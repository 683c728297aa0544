/**
 * The gear mover: drains a node by moving its gears to its neighbours, then
 * hands it to the decommissioner; or gives up cleanly and re-opens it.
 *
 * The drain item in the state table is the whole memory of a drain. Every
 * step reads it, does at most one thing outside the table, and records what
 * it did with a conditional write on the item's version, so an invocation
 * that crashes anywhere leaves a drain the next tick resumes:
 *
 *   create drain (scale-down, EC2 event, hand-back) -> release the pool lease
 *   node active -> draining (drainId in the same write)
 *   deactivate-node on the platform -> closedAt
 *   list gears (platform) -> plan every gear (no room: abort before moving)
 *   per move: planned -> moving (attempt n) -> startMove(key n) -> commandId
 *             -> moveStatus -> moved | planned again after backoff | failed
 *   no move pending -> list gears -> empty: completedAt, node -> drained
 *   node drained -> drain-complete to the decommission queue -> completed
 *
 * A move is started only after its attempt is written, with an idempotency
 * key naming that attempt; an attempt whose handle was never written (crash
 * between the platform call and the write) is looked up by its key after a
 * grace time instead of being started again, so no gear is moved twice.
 * Aborting stops new moves, lets the ones in flight settle, re-opens the
 * node (activate-node, draining -> active), keeps moved gears where they
 * are, and sets the pool's lastFailureAt. A drain never ends `completed`
 * unless the platform listed the node empty.
 */
import { pausedReason } from '../domain/controls.js';
import { findPoolConfig, type Config, type PoolConfig } from '../config/index.js';
import {
  abortCause,
  beginAttempt,
  describeGears,
  drainIdFor,
  drainKind,
  drainOrder,
  isOrphanedAttempt,
  isPending,
  isUrgent,
  moveKey,
  movesToStart,
  plannedMoves,
  progressOf,
  reconcile,
  redrainIdFor,
  replacementCount,
  replacementDecisionId,
  reservationsExcept,
  retargeted,
  settleAttempt,
  urgentDrainIdFor,
  type MoveOutcome,
  type RetryPolicy,
} from '../domain/drain.js';
import { planDrain } from '../domain/drain-plan.js';
import { formatDuration } from '../domain/duration.js';
import type { DrainRecord, GearInfo, GearMove, NodeRecord, PoolId, PoolRecord } from '../domain/model.js';
import { isProtected } from '../domain/node-stats.js';
import { expectedGearsPerNode } from '../domain/utilization.js';
import { ConflictError, NotFoundError, TransientError, ValidationError } from '../errors.js';
import type { Ec2Event, ScaleDownMessage, ScaleUpMessage } from '../messages/index.js';
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import type { Metrics } from '../ports/metrics.js';
import type { Platform } from '../ports/platform.js';
import type { Queue } from '../ports/queue.js';
import type { DrainPatch, StateStore } from '../ports/state-store.js';

export interface GearMoverPorts {
  store: StateStore;
  platform: Platform;
  queue: Queue;
  clock: Clock;
  metrics: Metrics;
  log: Log;
  /**
   * Waits while moves are in flight. Absent: an invocation makes one pass
   * over the drains and leaves the rest to the next tick (the local runtime,
   * whose clock only the simulation moves).
   */
  wait?: (ms: number) => Promise<void>;
}

/** How much of the invocation is left for work, in ms (the handler takes its safety margin off). */
export interface Budget {
  timeLeft(): number;
}

/** The decisionId prefix of a drain an operator asked for (`nodescaler drain NODE`): its drain is of kind `manual`. */
export const MANUAL_DECISION_PREFIX = 'manual:';

/** A step is begun only with at least this much time left: a gear listing on the broker takes seconds. */
export const MIN_STEP_MS = 5_000;
/** A `moving` attempt without a recorded handle is looked up by its key only after this long (its starter may still be writing). */
export const ORPHAN_GRACE_MS = 60_000;
/** Steps one drain may take in a row before the others get their turn. */
const MAX_STEPS_IN_A_ROW = 100;
/** How often a gear may get a new target before its move counts as failed. */
const MAX_REPLANS = 5;

type StepResult = 'progressed' | 'waiting' | 'finished';

export interface StartOutcome {
  drainId: string;
  /** False when the drain existed already (a duplicate message or event), or the decision was refused. */
  created: boolean;
  /** Why a scale-down decision was not carried out: it no longer holds the pool's lease. */
  refused?: string;
}

export interface EventOutcome {
  instanceId: string;
  nodeId?: string;
  action: 'ignored' | 'drain' | 'escalated' | 'lost';
  reason: string;
  drainId?: string;
}

export interface RunSummary {
  drains: number;
  completed: number;
  aborted: number;
  /** Drains still active when the invocation stopped (resumed by the next tick). */
  pending: number;
}

/** The gear-mover use case; one instance per cold start. */
export class GearMover {
  private readonly retry: RetryPolicy;
  /** Drains created or touched by this instance: the pool index may not list them yet. */
  private readonly known = new Set<string>();

  constructor(
    private readonly ports: GearMoverPorts,
    private readonly config: Config,
  ) {
    this.retry = { attempts: config.scaleDown.moveAttempts, delayMs: config.scaleDown.moveRetryDelay };
  }

  // -------------------------------------------------------------------------
  // Entry points.

  /**
   * One queue batch: EC2 events first (an interrupted host has two minutes),
   * then scale-down decisions; each message fails alone.
   */
  async handleBatch(items: Array<{ id: string; message: ScaleDownMessage | Ec2Event }>): Promise<{ failures: Array<{ id: string; error: unknown }> }> {
    const failures: Array<{ id: string; error: unknown }> = [];
    const ordered = [...items].sort((a, b) => Number(a.message.type === 'scale-down') - Number(b.message.type === 'scale-down'));
    for (const { id, message } of ordered) {
      try {
        if (message.type === 'scale-down') await this.handleScaleDown(message);
        else await this.handleEvent(message);
      } catch (error) {
        failures.push({ id, error });
      }
    }
    return { failures };
  }

  /**
   * A `scale-down` decision: creates its drain (once: the drainId derives
   * from the decisionId) and releases the pool lease the evaluator took for
   * it. The drain's steps run in `run`.
   */
  async handleScaleDown(message: ScaleDownMessage): Promise<StartOutcome> {
    const { store, clock, log } = this.ports;
    const drainId = drainIdFor(message.decisionId);
    const existing = await store.getDrain(drainId);
    if (existing) {
      log.info('duplicate scale-down: the drain exists', { drainId, decisionId: message.decisionId, state: existing.state });
      await this.releaseLease(message.pool, message.decisionId);
      if (existing.state === 'active') this.known.add(drainId);
      return { drainId, created: false };
    }
    // An operator's `nodescaler drain NODE` sends a scale-down with a `manual:` decisionId (and takes no lease).
    const manual = message.decisionId.startsWith(MANUAL_DECISION_PREFIX);
    // An operator's pause refuses the evaluator's scale-down before its first effect (and frees the pool); a manual drain is the operator's own.
    const paused = manual ? undefined : pausedReason((await store.listControls()).pauses, message.pool, 'scale-down', clock.now());
    const refused = manual ? undefined : ((await this.withoutLease(message)) ?? paused);
    if (refused) {
      if (refused === paused) await this.releaseLease(message.pool, message.decisionId);
      log.warn('scale-down not carried out', { drainId, decisionId: message.decisionId, pool: message.pool, nodeId: message.nodeId, reason: refused });
      return { drainId, created: false, refused };
    }
    const outcome = await this.createDrain({
      drainId,
      decisionId: message.decisionId,
      nodeId: message.nodeId,
      pool: message.pool,
      startedAt: clock.now().toISOString(),
      reason: message.reason,
      moves: [],
      kind: manual ? 'manual' : 'scale-down',
    });
    await this.releaseLease(message.pool, message.decisionId);
    return outcome;
  }

  /**
   * Why a scale-down decision may no longer act: a drain counts against
   * maxConcurrentDrains only through the lease its decision holds, so a
   * decision whose message arrives after that lease expired (delayed, or sent
   * again while its first copy was still queued) would drain next to the
   * drain of a newer decision. The evaluator decides again instead.
   */
  private async withoutLease(message: ScaleDownMessage): Promise<string | undefined> {
    const lease = (await this.ports.store.getPool(message.pool))?.lease;
    const now = this.ports.clock.now().toISOString();
    if (lease?.holder === message.decisionId && lease.expiresAt > now) return undefined;
    if (lease !== undefined && lease.expiresAt > now) return `superseded: the pool's lease is held by ${lease.kind} ${lease.holder}`;
    return `stale: the pool's lease of this decision expired or was released; the evaluator decides again`;
  }

  /** An operator's drain (CLI): the same drain as a scale-down, without a lease. */
  async drainNode(nodeId: string, reason: string, requestId: string): Promise<StartOutcome> {
    const node = await this.ports.store.getNode(nodeId);
    if (!node) throw new NotFoundError('node', nodeId);
    return this.createDrain({
      drainId: drainIdFor(`manual:${requestId}`),
      decisionId: `manual:${requestId}`,
      nodeId,
      pool: node.pool,
      startedAt: this.ports.clock.now().toISOString(),
      reason,
      moves: [],
      kind: 'manual',
    });
  }

  /** Stops a node's active drain (CLI): moves in flight settle, then the node re-opens. */
  async cancelDrain(nodeId: string, reason: string): Promise<DrainRecord | undefined> {
    const drain = await this.activeDrainOf(nodeId);
    if (!drain) return undefined;
    return this.requestAbort(drain, `cancelled: ${reason}`);
  }

  /** An EC2 event from EventBridge: interruption and stop drain at once; termination by someone else marks the node lost. */
  async handleEvent(event: Ec2Event): Promise<EventOutcome> {
    const { log } = this.ports;
    const node = await this.findNodeByInstance(event.instanceId);
    const base = { instanceId: event.instanceId };
    if (!node) {
      log.info('EC2 event for an instance nodescaler does not know; ignored', { ...base, eventId: event.eventId, type: event.type });
      return { ...base, action: 'ignored', reason: 'unknown instance' };
    }
    const at = { ...base, nodeId: node.nodeId };
    if (event.type === 'ec2-state-change') {
      if (event.state === 'shutting-down' || event.state === 'terminated') return { ...at, ...(await this.markLost(node, event)) };
      if (event.state === 'stopping' || event.state === 'stopped') return { ...at, ...(await this.urgentDrain(node, event, `instance ${event.state}`)) };
      return { ...at, action: 'ignored', reason: `instance ${event.state}: nothing to do` };
    }
    const cause = event.type === 'ec2-spot-interruption' ? `spot interruption warning (${event.action})` : 'rebalance recommendation';
    return { ...at, ...(await this.urgentDrain(node, event, cause)) };
  }

  /**
   * Advances every active drain, urgent ones first, while the budget allows;
   * waits for moves in flight when it can (`wait`). Also takes up nodes that
   * are `draining` without an active drain (handed back by the
   * decommissioner). Never throws for one drain's failure: it is logged and
   * the drain is resumed on the next tick.
   */
  async run(budget: Budget): Promise<RunSummary> {
    const { log, wait } = this.ports;
    const summary: RunSummary = { drains: 0, completed: 0, aborted: 0, pending: 0 };
    if (budget.timeLeft() < MIN_STEP_MS) return summary;
    try {
      await this.takeUpOrphans();
    } catch (error) {
      log.error('looking for nodes handed back failed; retried on the next tick', { error: describe(error) });
    }
    let drains = await this.activeDrains();
    summary.drains = drains.length;
    const poll = this.config.scaleDown.movePollInterval;
    while (drains.length > 0) {
      let progressed = false;
      const still: DrainRecord[] = [];
      for (const drain of drains) {
        if (budget.timeLeft() < MIN_STEP_MS) {
          still.push(drain);
          continue;
        }
        const result = await this.advance(drain.drainId, budget);
        if (result.finished) {
          const final = await this.ports.store.getDrain(drain.drainId);
          if (final?.state === 'completed') summary.completed++;
          else if (final?.state === 'aborted') summary.aborted++;
          this.known.delete(drain.drainId);
        } else {
          still.push(drain);
        }
        if (result.progressed) progressed = true;
      }
      drains = still;
      if (drains.length === 0 || budget.timeLeft() < MIN_STEP_MS) break;
      if (!progressed) {
        if (!wait || budget.timeLeft() < poll + MIN_STEP_MS) break;
        await wait(poll);
      }
    }
    summary.pending = drains.length;
    return summary;
  }

  // -------------------------------------------------------------------------
  // Creating drains.

  private async createDrain(drain: Omit<DrainRecord, 'version' | 'state' | 'updatedAt'>): Promise<StartOutcome> {
    const { store, clock, log } = this.ports;
    try {
      await store.createDrain(drain, clock.now());
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      this.known.add(drain.drainId);
      return { drainId: drain.drainId, created: false };
    }
    this.known.add(drain.drainId);
    log.info('drain created', { drainId: drain.drainId, decisionId: drain.decisionId, nodeId: drain.nodeId, pool: drain.pool, kind: drain.kind, reason: drain.reason });
    return { drainId: drain.drainId, created: true };
  }

  private async urgentDrain(node: NodeRecord, event: Ec2Event, cause: string): Promise<Omit<EventOutcome, 'instanceId' | 'nodeId'>> {
    const { store, clock, log } = this.ports;
    const now = clock.now().toISOString();
    if (node.state === 'active') {
      const outcome = await this.createDrain(urgentDrainFor(node, event, cause, now));
      log.warn('node interrupted: draining at once', { nodeId: node.nodeId, instanceId: event.instanceId, cause, drainId: outcome.drainId });
      await this.keepPoolMinimum(outcome.drainId, node);
      return { action: 'drain', reason: cause, drainId: outcome.drainId };
    }
    if (node.state === 'draining') {
      const current = node.drainId ? await store.getDrain(node.drainId) : undefined;
      if (current?.state === 'active') {
        if (!isUrgent(current) || current.abortRequestedAt) {
          // Escalate: first in line, fill targets to capacity; an abort in progress is called off (the host is going away).
          await this.save(current, { urgentSince: current.urgentSince ?? now, urgentCause: cause, abortRequestedAt: undefined, abortReason: undefined });
          log.warn('draining node interrupted: its drain is now urgent', { nodeId: node.nodeId, drainId: current.drainId, cause });
        }
        this.known.add(current.drainId);
        return { action: 'escalated', reason: cause, drainId: current.drainId };
      }
      const outcome = await this.createDrain(urgentDrainFor(node, event, cause, now));
      await this.claimNode(node, outcome.drainId);
      return { action: 'drain', reason: cause, drainId: outcome.drainId };
    }
    log.info('EC2 interruption for a node that holds nothing to move; ignored', { nodeId: node.nodeId, state: node.state, cause });
    return { action: 'ignored', reason: `node is ${node.state}` };
  }

  /** A draining node without an active drain (handed back `drained -> draining`, or left by a lost race) gets one. */
  private async takeUpOrphans(): Promise<void> {
    const { store, clock, log } = this.ports;
    for (const pool of await this.poolIds()) {
      for (const node of await store.listNodes(pool)) {
        if (node.state !== 'draining') continue;
        const current = node.drainId ? await store.getDrain(node.drainId) : undefined;
        if (current?.state === 'active') {
          this.known.add(current.drainId);
          continue;
        }
        const drainId = redrainIdFor(node);
        const outcome = await this.createDrain({
          drainId,
          decisionId: current?.decisionId ?? drainId,
          nodeId: node.nodeId,
          pool: node.pool,
          startedAt: clock.now().toISOString(),
          reason: current ? `node handed back after ${current.drainId} (${current.state}); draining it again` : 'node is draining without a drain; draining it again',
          moves: [],
          kind: 'redrain',
        });
        await this.claimNode(node, outcome.drainId);
        log.warn('draining node without an active drain taken up again', { nodeId: node.nodeId, drainId, previous: current?.drainId });
      }
    }
  }

  /** Points a draining node at `drainId`; a lost race is fine (the owner of the node decides, and the loser aborts). */
  private async claimNode(node: NodeRecord, drainId: string): Promise<void> {
    if (node.drainId === drainId) return;
    try {
      await this.ports.store.updateNode(node.nodeId, node.version, { drainId });
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
  }

  // -------------------------------------------------------------------------
  // Advancing one drain.

  private async advance(drainId: string, budget: Budget): Promise<{ finished: boolean; progressed: boolean }> {
    let progressed = false;
    for (let i = 0; i < MAX_STEPS_IN_A_ROW && budget.timeLeft() >= MIN_STEP_MS; i++) {
      let result: StepResult;
      try {
        result = await this.step(drainId);
      } catch (error) {
        if (error instanceof ConflictError) {
          // Another invocation wrote first: read again.
          progressed = true;
          continue;
        }
        this.ports.log.error('drain step failed; resumed on the next tick', { drainId, error: describe(error), retryable: !(error instanceof ValidationError) });
        return { finished: false, progressed };
      }
      if (result === 'finished') return { finished: true, progressed: true };
      if (result === 'waiting') return { finished: false, progressed };
      progressed = true;
    }
    return { finished: false, progressed };
  }

  /** One step of one drain: reads it and its node, does the next thing. */
  private async step(drainId: string): Promise<StepResult> {
    const { store } = this.ports;
    const drain = await store.getDrain(drainId);
    if (!drain || drain.state !== 'active') return 'finished';
    const node = await store.getNode(drain.nodeId);
    if (!node) return this.finishAbort(drain, undefined, `node ${drain.nodeId} has no record`, { failure: false });
    if (drain.abortRequestedAt) return this.continueAbort(drain, node);

    switch (node.state) {
      case 'active':
        if (drain.closedAt) return this.requestAbortStep(drain, `node ${node.nodeId} was re-opened outside the drain`);
        return this.begin(drain, node);
      case 'draining':
        if (node.drainId !== undefined && node.drainId !== drain.drainId) {
          const owner = await store.getDrain(node.drainId);
          if (owner?.state === 'active') return this.finishAbort(drain, node, `node ${node.nodeId} is held by drain ${node.drainId}`, { failure: false });
          await this.claimNode(node, drain.drainId);
          return 'progressed';
        }
        if (node.drainId === undefined) {
          await this.claimNode(node, drain.drainId);
          return 'progressed';
        }
        return this.progress(drain, node);
      case 'drained':
        if (node.drainId !== undefined && node.drainId !== drain.drainId) {
          return this.finishAbort(drain, node, `node ${node.nodeId} was drained by ${node.drainId}`, { failure: false });
        }
        return this.complete(drain, node);
      case 'terminating':
      case 'terminated':
        if (drain.completedAt) return this.markCompleted(drain, 'the decommissioner took the node');
        return this.finishAbort(drain, node, `node ${node.nodeId} is ${node.state}`, { failure: false });
      default:
        return this.finishAbort(drain, node, `node ${node.nodeId} is ${node.state}`, { failure: node.state === 'lost' });
    }
  }

  /** active -> draining, after the checks a start needs. */
  private async begin(drain: DrainRecord, node: NodeRecord): Promise<StepResult> {
    const { store, clock, log } = this.ports;
    const poolConfig = this.poolConfig(drain.pool);
    if (node.pool !== drain.pool) return this.finishAbort(drain, node, `node ${node.nodeId} belongs to pool ${node.pool}, not ${drain.pool}`, { failure: false });
    const urgent = isUrgent(drain);
    if (!urgent && isProtected(node, poolConfig?.protectedNodes ?? [])) {
      return this.finishAbort(drain, node, `node ${node.nodeId} is protected`, { failure: false });
    }
    if (!urgent && drainKind(drain) !== 'redrain') {
      const others = (await store.listNodes(drain.pool)).filter((n) => n.state === 'draining' && n.nodeId !== node.nodeId).length;
      if (others >= this.config.scaleDown.maxConcurrentDrains) {
        return this.finishAbort(drain, node, `${others} node(s) of pool ${drain.pool} already draining (maxConcurrentDrains=${this.config.scaleDown.maxConcurrentDrains})`, {
          failure: false,
        });
      }
    }
    await store.transitionNode(
      node.nodeId,
      { from: 'active', to: 'draining', expectedVersion: node.version, patch: { drainId: drain.drainId, reason: `draining (${drainKind(drain)}): ${drain.reason}`.slice(0, 1024) } },
      clock.now(),
    );
    log.info('drain started: node draining', { drainId: drain.drainId, nodeId: node.nodeId, pool: drain.pool, kind: drainKind(drain), urgent });
    return 'progressed';
  }

  /** The draining node: close it, plan, move, and find it empty. */
  private async progress(drain: DrainRecord, node: NodeRecord): Promise<StepResult> {
    const { platform, clock } = this.ports;
    const now = clock.now();
    if (!drain.closedAt) {
      await platform.deactivateNode(node.district, node.nodeId);
      await this.save(drain, { closedAt: now.toISOString() });
      this.ports.log.info('node closed to new gears', { drainId: drain.drainId, nodeId: node.nodeId, district: node.district });
      return 'progressed';
    }
    const cause = abortCause(drain, now, this.config.scaleDown.drainTimeout);
    if (cause) return this.requestAbortStep(drain, cause);

    const polled = await this.pollMoves(drain, node, { recoverOrphans: true });
    if (polled) return 'progressed';

    const pending = drain.moves.some(isPending);
    const needsTargets = drain.moves.some((move) => move.retarget);
    if (!drain.plannedAt || needsTargets || !pending) return this.planOrFinish(drain, node);

    const started = await this.startMoves(drain, node);
    return started ? 'progressed' : 'waiting';
  }

  /** Reads the node's gears from the platform; plans what needs a target, or finishes when the node is empty. */
  private async planOrFinish(drain: DrainRecord, node: NodeRecord): Promise<StepResult> {
    const { platform, store, clock, log } = this.ports;
    const now = clock.now();
    const onNode = await platform.listGears(node.nodeId);
    const rec = reconcile(drain.moves, onNode);
    for (const move of rec.dropped) log.info('gear left the node before its move; dropped from the plan', { drainId: drain.drainId, uuid: move.gear.uuid, app: move.gear.app });
    for (const move of rec.returned) log.warn('gear still on the node after its move; planned again', { drainId: drain.drainId, uuid: move.gear.uuid, target: move.target });
    const urgent = isUrgent(drain);

    if (onNode.length === 0 && !rec.moves.some(isPending)) {
      const failed = rec.moves.filter((move) => move.state === 'failed');
      if (failed.length > 0 && !urgent) return this.requestAbortStep(drain, abortCause(drain, now, Infinity) ?? 'a gear could not be moved');
      // The platform lists the node empty: done.
      const completed = drain.completedAt ? drain : await this.save(drain, { completedAt: now.toISOString(), moves: rec.moves, unplaced: undefined });
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
          await this.save(drain, { moves: rec.moves, plannedAt: drain.plannedAt ?? now.toISOString() });
          return 'progressed';
        }
        return 'waiting';
      }
      return this.requestAbortStep(drain, `${failedOnNode.size} gear(s) could not be moved: ${describeGears(onNode.filter((g) => failedOnNode.has(g.uuid)))}`);
    }

    const replanning = new Set(toPlan.map((gear) => gear.uuid));
    const exhausted = rec.moves.filter((move) => move.retarget && (move.replans ?? 0) >= MAX_REPLANS);
    if (exhausted.length > 0) {
      const moves = rec.moves.map((move) =>
        move.retarget && (move.replans ?? 0) >= MAX_REPLANS ? { ...move, state: 'failed' as const, retarget: undefined, finishedAt: now.toISOString() } : move,
      );
      await this.save(drain, { moves: moves.map(stripUndefined) });
      return 'progressed';
    }

    const nodes = await store.listNodes(drain.pool);
    const drains = (await store.listDrains(drain.pool)).filter((d) => d.drainId !== drain.drainId);
    drains.push({ ...drain, moves: rec.moves });
    const { reserved, incomingApps } = reservationsExcept(drains, drain.drainId, replanning);
    const avoid = new Map<string, Set<string>>();
    for (const move of rec.moves) if (move.retarget) avoid.set(move.gear.uuid, new Set([move.target]));
    const plan = planDrain({
      sourceNodeId: node.nodeId,
      pool: drain.pool,
      gears: toPlan,
      nodes,
      reserved,
      incomingApps,
      fillFraction: urgent ? 1 : this.config.scaleUp.threshold,
      antiAffinity: urgent ? 'preferred' : this.config.scaleDown.antiAffinity,
      now,
      statsMaxAge: this.config.statsMaxAge,
      avoid,
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
        // Abort before moving anything that the plan cannot finish.
        const saved = await this.save(drain, { moves: moves.map(stripUndefined), unplaced: plan.unplaced.length });
        return this.requestAbortStep(saved, summary);
      }
      const changed = plan.placements.length > 0 || drain.unplaced !== plan.unplaced.length || !drain.plannedAt;
      let saved = drain;
      if (changed) saved = await this.save(drain, { moves: moves.map(stripUndefined), unplaced: plan.unplaced.length, plannedAt: drain.plannedAt ?? now.toISOString() });
      if (drain.unplaced !== plan.unplaced.length) log.warn('urgent drain: gears wait for room', { drainId: drain.drainId, nodeId: node.nodeId, unplaced: plan.unplaced.length, reason: summary });
      if (!saved.replacementDecisionId && this.config.scaleDown.replaceInterrupted) saved = await this.requestReplacement(saved, node, plan.unplaced.length);
      await this.preemptNormalDrains(saved);
      return changed ? 'progressed' : 'waiting';
    }
    await this.save(drain, { moves: moves.map(stripUndefined), unplaced: undefined, plannedAt: drain.plannedAt ?? now.toISOString() });
    log.info('gears planned', { drainId: drain.drainId, nodeId: node.nodeId, gears: plan.placements.length, targets: plan.targets });
    return 'progressed';
  }

  /** Reads the result of every move in flight; records them in one write. True when something changed. */
  private async pollMoves(drain: DrainRecord, node: NodeRecord, options: { recoverOrphans: boolean }): Promise<boolean> {
    const { platform, clock, log, metrics } = this.ports;
    const now = clock.now();
    let changed = false;
    const moves: GearMove[] = [];
    for (const move of drain.moves) {
      if (move.state !== 'moving') {
        moves.push(move);
        continue;
      }
      if (move.commandId === undefined) {
        if (!options.recoverOrphans || !isOrphanedAttempt(move, now, ORPHAN_GRACE_MS)) {
          moves.push(move);
          continue;
        }
        // The attempt was written but its handle was not: find the move it may have started, or start it (same key).
        const key = moveKey(drain.drainId, move.gear.uuid, move.attempts);
        const outcome = await this.tryStart(drain, node, move, key, true);
        log.warn('move attempt without a handle recovered by its key', { drainId: drain.drainId, uuid: move.gear.uuid, attempt: move.attempts });
        moves.push(outcome.move);
        changed = true;
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
      const outcome: MoveOutcome =
        status.state === 'succeeded'
          ? { kind: 'succeeded' }
          : status.targetFull
            ? { kind: 'target-full', error: status.error }
            : { kind: 'failed', error: status.error };
      const next = settleAttempt(move, outcome, now, this.retry);
      moves.push(next);
      changed = true;
      if (next.state === 'moved') {
        metrics.record('GearMoves', 1, 'Count', { pool: drain.pool });
        log.info('gear moved', { drainId: drain.drainId, uuid: move.gear.uuid, app: move.gear.app, from: node.nodeId, to: move.target, attempts: move.attempts });
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
    if (changed) await this.save(drain, { moves: moves.map(stripUndefined) });
    return changed;
  }

  /** Starts the moves the schedule allows, one attempt write before each platform call. True when one was started. */
  private async startMoves(drain: DrainRecord, node: NodeRecord): Promise<boolean> {
    const { clock, store } = this.ports;
    const ready = movesToStart(drain.moves, clock.now(), this.config.scaleDown.maxConcurrentMoves);
    if (ready.length === 0) return false;
    const targets = new Map((await store.listNodes(drain.pool)).map((n) => [n.nodeId, n]));
    let current = drain;
    for (const planned of ready) {
      const target = targets.get(planned.target);
      if (!target || target.state !== 'active') {
        // The target is draining, gone or not active any more: plan this gear again.
        await this.updateMove(current, planned.gear.uuid, (move) => ({ ...move, retarget: true, lastError: `target ${planned.target} is ${target?.state ?? 'gone'}` }));
        return true;
      }
      const attempt = beginAttempt(planned, clock.now());
      current = await this.updateMove(current, planned.gear.uuid, () => attempt);
      const outcome = await this.tryStart(current, node, attempt, moveKey(current.drainId, attempt.gear.uuid, attempt.attempts), false);
      current = await this.updateMove(current, planned.gear.uuid, () => outcome.move);
      if (outcome.dropped) current = await this.save(current, { moves: current.moves.filter((move) => move.gear.uuid !== planned.gear.uuid) });
    }
    return true;
  }

  /**
   * Asks the platform to start an attempt (written `moving` before). Definite
   * refusals settle the attempt; an error that leaves it unknown whether the
   * move started (throttling, timeout) is thrown, and the attempt stays
   * `moving` without a handle, to be looked up by its key later.
   */
  private async tryStart(drain: DrainRecord, node: NodeRecord, move: GearMove, key: string, mayExist: boolean): Promise<{ move: GearMove; dropped?: boolean }> {
    const { platform, clock, log } = this.ports;
    try {
      const handle = await platform.startMove(move.gear, node.nodeId, move.target, { idempotencyKey: key, mayExist });
      log.debug('gear move started', { drainId: drain.drainId, uuid: move.gear.uuid, to: move.target, attempt: move.attempts, commandId: handle.commandId });
      return { move: { ...move, commandId: handle.commandId } };
    } catch (error) {
      const now = clock.now();
      if (error instanceof ConflictError) {
        return { move: settleAttempt(move, { kind: 'target-full', error: error.message }, now, this.retry) };
      }
      if (error instanceof NotFoundError) {
        const still = (await platform.listGears(node.nodeId)).some((gear) => gear.uuid === move.gear.uuid);
        if (!still) {
          log.info('gear left the node before its move; dropped from the plan', { drainId: drain.drainId, uuid: move.gear.uuid });
          return { move, dropped: true };
        }
        return { move: settleAttempt(move, { kind: 'failed', error: error.message }, now, this.retry) };
      }
      if (error instanceof ValidationError) return { move: settleAttempt(move, { kind: 'failed', error: error.message }, now, this.retry) };
      throw error;
    }
  }

  /** node drained: tell the decommissioner (idempotent on drainId), then close the drain. */
  private async complete(drain: DrainRecord, node: NodeRecord): Promise<StepResult> {
    const { queue, clock } = this.ports;
    const completedAt = drain.completedAt ?? clock.now().toISOString();
    const body = { type: 'drain-complete' as const, v: 1 as const, drainId: drain.drainId, nodeId: node.nodeId, pool: drain.pool, completedAt };
    const result = await queue.send('decommission', [{ body, groupId: drain.pool, deduplicationId: drain.drainId }]);
    if (result.failed.length > 0) throw new TransientError(`drain-complete for ${drain.drainId} not accepted: ${result.failed[0]!.error}`);
    return this.markCompleted(drain.completedAt ? drain : await this.save(drain, { completedAt }), 'drain-complete sent');
  }

  private async markCompleted(drain: DrainRecord, note: string): Promise<StepResult> {
    const { clock, log, metrics } = this.ports;
    const done = await this.save(drain, { state: 'completed' });
    const seconds = Math.max(0, (Date.parse(done.completedAt ?? clock.now().toISOString()) - Date.parse(done.startedAt)) / 1000);
    const progress = progressOf(done.moves);
    metrics.record('DrainDuration', seconds, 'Seconds', { pool: done.pool });
    metrics.record('DrainsCompleted', 1, 'Count', { pool: done.pool });
    log.info(`drain completed: ${progress.moved} gear(s) moved in ${formatDuration(Math.round(seconds) * 1000)}; ${note}`, {
      drainId: done.drainId,
      nodeId: done.nodeId,
      pool: done.pool,
      kind: drainKind(done),
      seconds,
    });
    await this.releaseLease(done.pool, done.decisionId);
    return 'finished';
  }

  // -------------------------------------------------------------------------
  // Aborting.

  private async requestAbort(drain: DrainRecord, reason: string): Promise<DrainRecord> {
    if (drain.abortRequestedAt) return drain;
    const saved = await this.save(drain, { abortRequestedAt: this.ports.clock.now().toISOString(), abortReason: reason.slice(0, 1024) });
    this.ports.log.warn('drain stopping', { drainId: drain.drainId, nodeId: drain.nodeId, pool: drain.pool, reason });
    return saved;
  }

  private async requestAbortStep(drain: DrainRecord, reason: string): Promise<StepResult> {
    await this.requestAbort(drain, reason);
    return 'progressed';
  }

  /** Lets the moves in flight settle (up to the platform's command timeout), then re-opens the node. */
  private async continueAbort(drain: DrainRecord, node: NodeRecord): Promise<StepResult> {
    const now = this.ports.clock.now();
    const reason = drain.abortReason ?? 'aborted';
    if (node.state === 'draining' && drain.moves.some((move) => move.state === 'moving')) {
      if (await this.pollMoves(drain, node, { recoverOrphans: false })) return 'progressed';
      const waited = now.getTime() - Date.parse(drain.abortRequestedAt!);
      const limit = Math.max(this.config.platform.commandTimeout, ORPHAN_GRACE_MS);
      if (waited < limit) return 'waiting';
      this.ports.log.warn('moves still in flight at abort; re-opening the node anyway (each gear stays on exactly one node)', { drainId: drain.drainId });
    }
    return this.finishAbort(drain, node, reason, { failure: true });
  }

  /**
   * Ends a drain `aborted`: re-opens the node if this drain holds it
   * (activate-node, then draining -> active), marks the pool's failure time
   * when the drain had started (delayAfterFailure), and logs why.
   */
  private async finishAbort(drain: DrainRecord, node: NodeRecord | undefined, reason: string, options: { failure: boolean }): Promise<StepResult> {
    const { store, platform, clock, log, metrics } = this.ports;
    const now = clock.now();
    const ours = node !== undefined && node.state === 'draining' && node.drainId === drain.drainId;
    // Re-open on the platform whatever the table says, if this drain closed the node and the node still serves.
    if (node && drain.closedAt && (ours || node.state === 'active')) await platform.activateNode(node.district, node.nodeId);
    if (ours) {
      await store.transitionNode(
        node!.nodeId,
        { from: 'draining', to: 'active', expectedVersion: node!.version, patch: { drainId: undefined, reason: `drain ${drain.drainId} aborted: ${reason}`.slice(0, 1024) } },
        now,
      );
    }
    const started = drain.closedAt !== undefined || options.failure;
    if (started) await this.markPoolFailure(drain.pool, now);
    const done = await this.save(drain, { state: 'aborted', abortReason: reason.slice(0, 1024) });
    const progress = progressOf(done.moves);
    if (started) metrics.record('DrainsAborted', 1, 'Count', { pool: drain.pool });
    log.warn(started ? 'drain aborted; node re-opened, moved gears stay where they are' : 'drain refused before it started', {
      drainId: drain.drainId,
      nodeId: drain.nodeId,
      pool: drain.pool,
      reason,
      moved: progress.moved,
      total: progress.total,
    });
    await this.appendDecision(drain.pool, started ? 'failure' : 'refused', `drain ${drain.drainId} of ${drain.nodeId} ${started ? 'aborted' : 'refused'}: ${reason}`, drain.decisionId, {
      moved: progress.moved,
      total: progress.total,
    });
    await this.releaseLease(drain.pool, drain.decisionId);
    return 'finished';
  }

  /** pool.lastFailureAt = now, re-reading on a lost race. */
  private async markPoolFailure(pool: PoolId, now: Date): Promise<void> {
    const { store } = this.ports;
    for (let attempt = 0; attempt < 5; attempt++) {
      const record = (await store.getPool(pool)) ?? (await store.ensurePool(pool));
      if (record.lastFailureAt !== undefined && record.lastFailureAt >= now.toISOString()) return;
      try {
        await store.updatePool(pool, record.version, { lastFailureAt: now.toISOString() });
        return;
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
      }
    }
    throw new TransientError(`pool ${pool}: lastFailureAt not written after 5 conflicting writes`);
  }

  /** Normal drains of the pool give way to an urgent one that lacks room: their nodes re-open and take its gears. */
  private async preemptNormalDrains(urgent: DrainRecord): Promise<void> {
    for (const other of await this.ports.store.listDrains(urgent.pool)) {
      if (other.drainId === urgent.drainId || isUrgent(other) || other.abortRequestedAt) continue;
      const current = await this.ports.store.getDrain(other.drainId);
      if (current?.state !== 'active' || current.abortRequestedAt || isUrgent(current)) continue;
      try {
        await this.requestAbort(current, `preempted by urgent drain ${urgent.drainId} of ${urgent.nodeId}, which lacks room`);
        this.known.add(current.drainId);
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
      }
    }
  }

  // -------------------------------------------------------------------------
  // Interruptions: lost nodes and replacements.

  private async markLost(node: NodeRecord, event: Ec2Event): Promise<Omit<EventOutcome, 'instanceId' | 'nodeId'>> {
    const { store, platform, clock, log, metrics } = this.ports;
    if (node.state !== 'active' && node.state !== 'draining' && node.state !== 'drained') {
      return { action: 'ignored', reason: `node is ${node.state} (nodescaler's own termination, or already lost)` };
    }
    let gears: GearInfo[] = [];
    let source = 'platform';
    try {
      gears = await platform.listGears(node.nodeId);
    } catch (error) {
      gears = node.stats?.gears ?? [];
      source = `last stats (platform: ${describe(error)})`;
    }
    const reason = `instance ${(event as { instanceId: string }).instanceId} ${event.type === 'ec2-state-change' ? event.state : event.type} outside nodescaler`;
    const now = clock.now();
    try {
      await store.transitionNode(node.nodeId, { from: node.state, to: 'lost', expectedVersion: node.version, patch: { reason: `lost: ${reason}; ${gears.length} gear(s) on it` } }, now);
    } catch (error) {
      if (error instanceof ConflictError) throw new TransientError(`node ${node.nodeId} changed while being marked lost; retried`);
      throw error;
    }
    metrics.record('NodesLost', 1, 'Count', { pool: node.pool });
    if (gears.length > 0) metrics.record('GearsLost', gears.length, 'Count', { pool: node.pool });
    log.error('node lost with its gears', {
      nodeId: node.nodeId,
      pool: node.pool,
      reason,
      gearsSource: source,
      gearCount: gears.length,
      gears: gears.slice(0, 200).map((gear) => ({ uuid: gear.uuid, app: gear.app })),
    });
    await this.appendDecision(node.pool, 'failure', `node ${node.nodeId} lost: ${reason}; gears lost: ${gears.length ? describeGears(gears) : 'none'}`, undefined, {
      gears: gears.slice(0, 100).map((gear) => gear.uuid),
    });
    if (node.drainId) {
      const drain = await store.getDrain(node.drainId);
      if (drain?.state === 'active') {
        this.known.add(drain.drainId);
        await this.requestAbort(drain, `node lost: ${reason}`);
      }
    }
    return { action: 'lost', reason, ...(node.drainId ? { drainId: node.drainId } : {}) };
  }

  /**
   * An interrupted node leaves even when it is empty, which the gears-driven
   * replacement would not cover: when the pool would drop below its `min`,
   * the replacement is requested now, before the node goes.
   */
  private async keepPoolMinimum(drainId: string, node: NodeRecord): Promise<void> {
    const poolConfig = this.poolConfig(node.pool);
    if (!poolConfig || poolConfig.min === 0 || !this.config.scaleDown.replaceInterrupted) return;
    const drain = await this.ports.store.getDrain(drainId);
    if (!drain || drain.state !== 'active' || drain.replacementDecisionId) return;
    const serving = (await this.ports.store.listNodes(node.pool)).filter(
      (other) => other.nodeId !== node.nodeId && (other.state === 'active' || other.state === 'provisioning'),
    ).length;
    if (serving < poolConfig.min) await this.requestReplacement(drain, node, 0);
  }

  /** Requests nodes for the gears an interrupted node cannot place (or to keep the pool's min), through the pool lease like the evaluator. */
  private async requestReplacement(drain: DrainRecord, node: NodeRecord, unplaced: number): Promise<DrainRecord> {
    const { store, queue, clock, log, metrics } = this.ports;
    const poolConfig = this.poolConfig(drain.pool);
    if (!poolConfig) return drain;
    const now = clock.now();
    const pool = (await store.getPool(drain.pool)) ?? (await store.ensurePool(drain.pool));
    if (pool.exhaustedUntil !== undefined && pool.exhaustedUntil > now.toISOString()) {
      log.warn('no replacement for the interrupted node: pool capacity exhausted', { drainId: drain.drainId, pool: drain.pool, exhaustedUntil: pool.exhaustedUntil });
      return drain;
    }
    const nodes = await store.listNodes(drain.pool);
    const allNodes: NodeRecord[] = [];
    for (const id of await this.poolIds()) allNodes.push(...(id === drain.pool ? nodes : await store.listNodes(id)));
    const sizing = replacementCount({
      unplaced,
      nodes,
      nodeId: node.nodeId,
      gearsPerNode: expectedGearsPerNode(poolConfig, nodes),
      config: this.config,
      poolConfig,
      allNodes,
    });
    if (sizing.count === 0) {
      log.warn('no replacement for the interrupted node', { drainId: drain.drainId, pool: drain.pool, wanted: sizing.wanted, clampedBy: sizing.clampedBy });
      return drain;
    }
    const decisionId = replacementDecisionId(drain.pool, node.nodeId, drain.drainId);
    const clamp = sizing.clampedBy ? `; clamped by ${sizing.clampedBy} (wanted ${sizing.wanted})` : '';
    const message: ScaleUpMessage = {
      type: 'scale-up',
      v: 1,
      decisionId,
      pool: drain.pool,
      count: sizing.count,
      reason: `replace interrupted node ${node.nodeId} (${drain.urgentCause ?? 'interruption'}): ${unplaced > 0 ? `${unplaced} gear(s) have no room` : `the pool would drop below min ${poolConfig.min}`}; +${sizing.count} node(s)${clamp}`.slice(0, 1024),
      decidedAt: now.toISOString(),
    };
    try {
      await store.acquireLease(drain.pool, { holder: decisionId, kind: 'scale-up', ttlMs: this.config.leaseTtl, message: { ...message } }, now);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      const holder = (error.current as PoolRecord | undefined)?.lease?.holder;
      log.warn('replacement left to the evaluator: the pool lease is held', { drainId: drain.drainId, pool: drain.pool, holder });
      return drain;
    }
    const result = await queue.send('scale', [{ body: message, groupId: drain.pool, deduplicationId: decisionId }]);
    if (result.failed.length === 0) await store.markLeaseSent(drain.pool, decisionId, now);
    else log.error('replacement scale-up not accepted by its queue; it stays with the lease and the evaluator sends it again', { decisionId, error: result.failed[0]!.error });
    await this.touchPool(drain.pool, { lastScaleUpAt: now.toISOString() });
    metrics.record('Replacements', sizing.count, 'Count', { pool: drain.pool });
    await this.appendDecision(drain.pool, 'scale-up', message.reason, decisionId, { count: sizing.count, wanted: sizing.wanted, nodeId: node.nodeId });
    log.warn('replacement requested for the interrupted node', { drainId: drain.drainId, decisionId, count: sizing.count, pool: drain.pool });
    return this.save(drain, { replacementDecisionId: decisionId });
  }

  // -------------------------------------------------------------------------
  // Helpers.

  private async save(drain: DrainRecord, patch: DrainPatch): Promise<DrainRecord> {
    return this.ports.store.updateDrain(drain.drainId, drain.version, patch, this.ports.clock.now());
  }

  private async updateMove(drain: DrainRecord, uuid: string, change: (move: GearMove) => GearMove): Promise<DrainRecord> {
    const moves = drain.moves.map((move) => (move.gear.uuid === uuid ? stripUndefined(change(move)) : move));
    return this.save(drain, { moves });
  }

  private async releaseLease(pool: PoolId, holder: string): Promise<void> {
    try {
      await this.ports.store.releaseLease(pool, holder);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
  }

  private async touchPool(pool: PoolId, patch: { lastScaleUpAt: string }): Promise<void> {
    const { store } = this.ports;
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

  private async appendDecision(
    pool: PoolId,
    kind: 'failure' | 'refused' | 'scale-up',
    reason: string,
    decisionId: string | undefined,
    details: Record<string, unknown>,
  ): Promise<void> {
    try {
      await this.ports.store.appendDecision(
        { pool, at: this.ports.clock.now().toISOString(), kind, reason: reason.slice(0, 1024), ...(decisionId ? { decisionId } : {}), details },
        this.config.decisionLogTtl,
      );
    } catch (error) {
      // The decision log is for operators; a drain must not stall on it.
      this.ports.log.warn('decision log entry not written', { pool, error: describe(error) });
    }
  }

  private poolConfig(pool: PoolId): PoolConfig | undefined {
    return findPoolConfig(this.config, pool);
  }

  private async poolIds(): Promise<PoolId[]> {
    const ids = new Set<PoolId>(this.config.pools.map((pool) => `${pool.district}/${pool.profile}`));
    for (const record of await this.ports.store.listPools()) ids.add(record.pool);
    return [...ids].sort();
  }

  private async activeDrains(): Promise<DrainRecord[]> {
    const { store } = this.ports;
    const found = new Map<string, DrainRecord>();
    for (const pool of await this.poolIds()) for (const drain of await store.listDrains(pool, 'active')) found.set(drain.drainId, drain);
    for (const drainId of this.known) {
      if (found.has(drainId)) continue;
      const drain = await store.getDrain(drainId);
      if (drain?.state === 'active') found.set(drainId, drain);
      else this.known.delete(drainId);
    }
    return [...found.values()].sort(drainOrder);
  }

  private async activeDrainOf(nodeId: string): Promise<DrainRecord | undefined> {
    const node = await this.ports.store.getNode(nodeId);
    if (!node) throw new NotFoundError('node', nodeId);
    if (node.drainId) {
      const drain = await this.ports.store.getDrain(node.drainId);
      if (drain?.state === 'active') return drain;
    }
    return (await this.ports.store.listDrains(node.pool)).find((drain) => drain.nodeId === nodeId);
  }

  private async findNodeByInstance(instanceId: string): Promise<NodeRecord | undefined> {
    for (const pool of await this.poolIds()) {
      const node = (await this.ports.store.listNodes(pool)).find((n) => n.instanceId === instanceId);
      if (node) return this.ports.store.getNode(node.nodeId);
    }
    return undefined;
  }
}

/** DynamoDB keeps no `undefined`: moves are written without them. */
function stripUndefined(move: GearMove): GearMove {
  const copy = { ...move } as Record<string, unknown>;
  for (const key of Object.keys(copy)) if (copy[key] === undefined) delete copy[key];
  return copy as unknown as GearMove;
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}


/** The drain an interruption starts: its id derives from the event, so a redelivered event finds it. */
function urgentDrainFor(node: NodeRecord, event: Ec2Event, cause: string, now: string) {
  return {
    drainId: urgentDrainIdFor(event.eventId),
    decisionId: `event:${event.eventId}`,
    nodeId: node.nodeId,
    pool: node.pool,
    startedAt: now,
    reason: `${cause} for ${event.instanceId}`,
    moves: [],
    kind: 'interruption' as const,
    urgentSince: now,
    urgentCause: cause,
  };
}
