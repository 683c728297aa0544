/**
 * The gear mover: drains a node by moving its gears to its neighbours, then
 * hands it to the decommissioner; or gives up cleanly and re-opens it. This
 * class is the consumer of the gear-mover queue (scale-down decisions, EC2
 * events) and of its schedule (`run`); each drain is a workflow with a
 * stored phase (lib/workflows/drain, phases.ts has the diagram).
 */
import type { Config } from '../config/index.js';
import { isRenewalDrain, pausedReason } from '../domain/controls.js';
import { cancelledBeforeBegun } from '../domain/pending-drains.js';
import { decisionMaxAgeMs, staleDecisionReason } from '../domain/decision-message.js';
import { alsoDrainIdFor, drainIdFor } from '../domain/drain.js';
import { priceOf, type DrainPrice } from '../domain/drain-price.js';
import type { DrainRecord } from '../domain/model.js';
import type { Ec2Event, ScaleDownMessage } from '../messages/index.js';
import type { Budget } from '../workflows/engine.js';
import {
  MANUAL_DECISION_PREFIX,
  MIN_STEP_MS,
  describe,
  drainContext,
  releaseLease,
  type DrainContext,
  type GearMoverPorts,
} from '../workflows/drain/context.js';
import { handleEvent, type EventOutcome } from '../workflows/drain/interruptions.js';
import { cancelNodeDrain, startManualDrain } from '../workflows/drain/operator.js';
import { activeDrains, createDrain, takeUpOrphans, type StartOutcome } from '../workflows/drain/records.js';
import { advanceDrain } from '../workflows/drain/workflow.js';

export { MANUAL_DECISION_PREFIX, MIN_STEP_MS, ORPHAN_GRACE_MS } from '../workflows/drain/context.js';

/** The decision's price of `nodeId`, as a drain field. */
function priced(message: ScaleDownMessage, nodeId: string): { price?: DrainPrice } {
  const price = priceOf(message.prices, nodeId);
  return price ? { price } : {};
}

/** Passes over the active drains one run may make in a row without waiting (each advances every drain as far as it goes now). */
const MAX_PASSES_WITHOUT_WAIT = 50;
export type { Budget, EventOutcome, GearMoverPorts, StartOutcome };

export interface RunSummary {
  drains: number;
  completed: number;
  aborted: number;
  /** Drains still active when the invocation stopped (resumed by the next tick). */
  pending: number;
}

/** A batch's failed messages, and whether any message changed something (a drain to start or advance at once). */
export interface BatchOutcome {
  failures: Array<{ id: string; error: unknown }>;
  /** False when every message was an EC2 event ignored (most: hosts nodescaler does not own): nothing to run before the tick. */
  acted: boolean;
}

/** The gear-mover use case; one instance per cold start. */
export class GearMover {
  private readonly ctx: DrainContext;

  constructor(
    private readonly ports: GearMoverPorts,
    config: Config,
  ) {
    this.ctx = drainContext(ports, config);
  }

  /**
   * One queue batch: EC2 events first (an interrupted host has two minutes),
   * then scale-down decisions; each message fails alone.
   */
  async handleBatch(items: Array<{ id: string; message: ScaleDownMessage | Ec2Event }>): Promise<BatchOutcome> {
    const failures: Array<{ id: string; error: unknown }> = [];
    let acted = false;
    const ordered = [...items].sort((a, b) => Number(a.message.type === 'scale-down') - Number(b.message.type === 'scale-down'));
    for (const { id, message } of ordered) {
      try {
        if (message.type === 'scale-down') await this.handleScaleDown(message);
        else if ((await this.handleEvent(message)).action === 'ignored') continue;
        acted = true;
      } catch (error) {
        failures.push({ id, error });
      }
    }
    return { failures, acted };
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
      // A crash between the decision's drains left some uncreated: each is created once (its id derives from the decision).
      await this.createFurtherDrains(message);
      await releaseLease(this.ctx, message.pool, message.decisionId);
      if (existing.state === 'active') this.ctx.known.add(drainId);
      return { drainId, created: false };
    }
    // An operator's `nodescaler drain NODE` sends a scale-down with a `manual:` decisionId (and takes no lease).
    const manual = message.decisionId.startsWith(MANUAL_DECISION_PREFIX);
    // An operator's pause refuses the evaluator's scale-down before its first effect (and frees the pool); a manual drain is the operator's own.
    // A decision older than decisionMaxAge (re-driven from the dead-letter queue, say) is refused, an operator's too; the
    // evaluator's lose their lease first (decisionMaxAge is never below leaseTtl).
    const leaseless = manual ? undefined : await this.withoutLease(message);
    const stale = leaseless ? undefined : staleDecisionReason(message, clock.now(), decisionMaxAgeMs(this.ctx.config));
    if (stale) this.ports.metrics.record('StaleDecisions', 1, 'Count', { pool: message.pool });
    // A renewal's drain is nodescaler's own (lib/domain/renewal.ts): a pause of scale-down holds it as the evaluator's.
    const operators = manual && !isRenewalDrain(message);
    const controls = stale || leaseless ? undefined : await store.listControls();
    // A drain an operator cancelled while it waited (nodescaler cancel-drain): its message may have been on its way. The
    // pending item stays (a redelivered message is refused by it too) until the evaluator ends it past decisionMaxAge.
    const cancelled = manual && controls ? cancelledBeforeBegun(controls.pendingDrains, message.nodeId, message.decisionId) : undefined;
    const paused = operators || !controls ? undefined : pausedReason(controls.pauses, message.pool, 'scale-down', clock.now());
    const refused = leaseless ?? stale ?? cancelled ?? paused;
    if (refused) {
      if (refused === paused || refused === stale) await releaseLease(this.ctx, message.pool, message.decisionId);
      log.warn('scale-down not carried out', { drainId, decisionId: message.decisionId, pool: message.pool, nodeId: message.nodeId, reason: refused });
      return { drainId, created: false, refused };
    }
    const outcome = await createDrain(this.ctx, {
      drainId,
      decisionId: message.decisionId,
      nodeId: message.nodeId,
      pool: message.pool,
      startedAt: clock.now().toISOString(),
      reason: message.reason,
      moves: [],
      kind: manual ? 'manual' : 'scale-down',
      ...(manual ? {} : priced(message, message.nodeId)),
    });
    await this.createFurtherDrains(message);
    await releaseLease(this.ctx, message.pool, message.decisionId);
    return outcome;
  }

  /** The drains of the decision's further nodes (`alsoNodeIds`), before its lease is released, so they count against the budget. */
  private async createFurtherDrains(message: ScaleDownMessage): Promise<void> {
    // Only the evaluator's decisions drain several nodes; an operator's drain names one.
    if (message.decisionId.startsWith(MANUAL_DECISION_PREFIX)) return;
    for (const nodeId of message.alsoNodeIds ?? []) {
      await createDrain(this.ctx, {
        drainId: alsoDrainIdFor(message.decisionId, nodeId),
        decisionId: message.decisionId,
        nodeId,
        pool: message.pool,
        startedAt: this.ports.clock.now().toISOString(),
        reason: message.reason,
        moves: [],
        kind: 'scale-down',
        ...priced(message, nodeId),
      });
    }
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
    return startManualDrain(this.ctx, nodeId, reason, requestId);
  }

  /** Stops a node's active drain (CLI): moves in flight settle, then the node re-opens. */
  async cancelDrain(nodeId: string, reason: string): Promise<DrainRecord | undefined> {
    return cancelNodeDrain(this.ctx, nodeId, reason);
  }

  /** An EC2 event from EventBridge: interruption and stop drain at once; termination by someone else marks the node lost. */
  async handleEvent(event: Ec2Event): Promise<EventOutcome> {
    return handleEvent(this.ctx, event);
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
      await takeUpOrphans(this.ctx);
    } catch (error) {
      log.error('looking for nodes handed back failed; retried on the next tick', { error: describe(error) });
    }
    let drains = await activeDrains(this.ctx);
    summary.drains = drains.length;
    const poll = this.ctx.config.scaleDown.movePollInterval;
    // Passes that progress without ever waiting are bounded: a drain that reports progress on every pass without
    // finishing (a livelock) must not hold the invocation forever where its clock does not move within it (the local
    // runtime, the simulation).
    let passesWithoutWait = 0;
    while (drains.length > 0) {
      let progressed = false;
      const still: DrainRecord[] = [];
      for (const drain of drains) {
        if (budget.timeLeft() < MIN_STEP_MS) {
          still.push(drain);
          continue;
        }
        const result = await advanceDrain(this.ctx, drain.drainId, budget);
        if (result.finished) {
          const final = await this.ports.store.getDrain(drain.drainId);
          if (final?.state === 'completed') summary.completed++;
          else if (final?.state === 'aborted') summary.aborted++;
          this.ctx.known.delete(drain.drainId);
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
        passesWithoutWait = 0;
      } else if (++passesWithoutWait >= MAX_PASSES_WITHOUT_WAIT) {
        break;
      }
    }
    summary.pending = drains.length;
    return summary;
  }
}
