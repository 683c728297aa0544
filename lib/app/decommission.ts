/**
 * The decommissioner: releases the host of a drained node, and only of a
 * drained node.
 *
 * On `drain-complete` (and, as a safety net, for a node left `drained`
 * without one), the node is checked one last time: a protected node is
 * refused, and the platform's own gear list must be empty. A refused node is
 * handed back `drained -> draining`: the gear mover drains it again (or,
 * protected, re-opens it); it is never terminated. An empty node goes
 * `drained -> terminating` by conditional write on the version that was
 * checked, then through the recorded release steps (lib/workflows/release): out of
 * its district, DNS record deleted, instance terminated (an instance already
 * gone counts), gear volume deleted once detached (the tick retries), then
 * `terminated`, with the pool's last-delete time, the decision log and the
 * NodesTerminated / NodeLifetime metrics. A duplicate `drain-complete` finds
 * the node terminating or terminated and repeats nothing.
 */
import type { Config } from '../config/index.js';
import { findPoolConfig } from '../config/index.js';
import { protectedNodesNow } from '../domain/controls.js';
import { RELEASE_KIND_STEP, decommissionCheck, movesOnto, type IncomingMove } from '../domain/decommission.js';
import type { GearInfo, NodeRecord } from '../domain/model.js';
import { ConflictError, NotFoundError, TransientError, ValidationError } from '../errors.js';
import type { DrainCompleteMessage } from '../messages/index.js';
import type { ReleasingCloud } from '../ports/cloud.js';
import type { Clock } from '../ports/clock.js';
import type { Dns } from '../ports/dns.js';
import type { Log } from '../ports/log.js';
import type { Metrics } from '../ports/metrics.js';
import type { Notifier } from '../ports/notifier.js';
import type { Platform } from '../ports/platform.js';
import type { StateStore } from '../ports/state-store.js';
import { HostReleaser } from '../workflows/release/release.js';
import { describeError, poolIds, recordSteps, retryOn, type Sleep } from './steps.js';

export interface DecommissionerPorts {
  store: StateStore;
  cloud: ReleasingCloud;
  /** The authority on gears; without it nothing is ever released. */
  platform?: Platform;
  clock: Clock;
  metrics: Metrics;
  log: Log;
  dns?: Dns;
  notifier?: Notifier;
  sleep?: Sleep;
  random?: () => number;
}

export interface DrainCompleteItem {
  /** The SQS messageId, so a failure maps back to its record. */
  id: string;
  message: DrainCompleteMessage;
}

export interface DecommissionOutcome {
  nodeId: string;
  /**
   * terminated: released now; waiting: released up to a step that must wait (volume still attached);
   * in-progress: another invocation holds the release; already-terminated: a duplicate;
   * refused: protected or holding gears (handed back) or not verifiable; ignored: not a drained node.
   */
  kind: 'terminated' | 'waiting' | 'in-progress' | 'already-terminated' | 'refused' | 'ignored';
  reason: string;
}

export interface DecommissionerTickReport {
  terminated: string[];
  waiting: string[];
  refused: string[];
  errors: Array<{ nodeId: string; error: string }>;
}

/** A node left `drained` this long without being released is checked by the tick (its drain-complete was lost). */
export const STRANDED_DRAINED_MS = 10 * 60_000;
/** The step recording the last refusal that left a node `drained`; the tick checks it again this long after. */
const REFUSED_STEP = 'decommissionRefused';

export class Decommissioner {
  private readonly releaser: HostReleaser;

  constructor(
    private readonly ports: DecommissionerPorts,
    private readonly config: Config,
  ) {
    this.releaser = new HostReleaser(ports, config);
  }

  /** A batch from the decommission queue; a failed message fails alone. */
  async handleBatch(items: readonly DrainCompleteItem[]): Promise<{ failures: Array<{ id: string; error: unknown }>; outcomes: DecommissionOutcome[] }> {
    const failures: Array<{ id: string; error: unknown }> = [];
    const outcomes: DecommissionOutcome[] = [];
    for (const item of items) {
      try {
        outcomes.push(await this.drainComplete(item.message));
      } catch (error) {
        failures.push({ id: item.id, error });
      }
    }
    return { failures, outcomes };
  }

  /** One `drain-complete`: idempotent, and resumable after a crash at any point. */
  async drainComplete(message: DrainCompleteMessage): Promise<DecommissionOutcome> {
    const { store, log } = this.ports;
    const context = { nodeId: message.nodeId, drainId: message.drainId, pool: message.pool };
    let node = await store.getNode(message.nodeId);
    if (!node) {
      log.warn('drain-complete for a node the state table does not know; ignored', context);
      return { nodeId: message.nodeId, kind: 'ignored', reason: 'unknown node' };
    }
    if (node.pool !== message.pool) log.warn('drain-complete names another pool than the node\'s; the node\'s own pool is used', { ...context, recorded: node.pool });
    switch (node.state) {
      case 'terminated':
        log.info('drain-complete for a node already terminated (a duplicate); nothing to do', context);
        return { nodeId: node.nodeId, kind: 'already-terminated', reason: node.reason ?? 'terminated' };
      case 'terminating':
        return this.advance(node);
      case 'draining': {
        // The gear mover marks the node drained before it sends drain-complete; a completed drain settles it.
        const drain = await store.getDrain(message.drainId);
        if (drain?.nodeId !== node.nodeId || drain.state !== 'completed') {
          throw new TransientError(`node ${node.nodeId} is still draining (drain ${message.drainId} ${drain?.state ?? 'unknown'}): drain-complete is early`);
        }
        node = await store.transitionNode(
          node.nodeId,
          { from: 'draining', to: 'drained', expectedVersion: node.version, patch: { reason: `drained by ${message.drainId}` } },
          this.ports.clock.now(),
        );
        return this.decommission(node, message.drainId);
      }
      case 'drained':
        return this.decommission(node, message.drainId);
      default:
        log.warn(`drain-complete for a node that is ${node.state}, not drained; ignored`, { ...context, state: node.state });
        return { nodeId: node.nodeId, kind: 'ignored', reason: `node is ${node.state}` };
    }
  }

  /** Resumes releases under way, and checks nodes left drained without a drain-complete. */
  async tick(): Promise<DecommissionerTickReport> {
    const { store, clock } = this.ports;
    const report: DecommissionerTickReport = { terminated: [], waiting: [], refused: [], errors: [] };
    const now = clock.now().getTime();
    for (const pool of await poolIds(this.ports.store, this.config)) {
      for (const node of await store.listNodes(pool)) {
        const ours = node.state === 'terminating' && node.steps?.[RELEASE_KIND_STEP] !== 'failed';
        const stranded = node.state === 'drained' && now - Date.parse(node.stateChangedAt) >= STRANDED_DRAINED_MS && this.dueForCheck(node, now);
        if (!ours && !stranded) continue;
        try {
          const outcome = ours ? await this.advance(node) : await this.decommission(node, 'tick: drained without drain-complete');
          if (outcome.kind === 'terminated') report.terminated.push(node.nodeId);
          else if (outcome.kind === 'waiting') report.waiting.push(node.nodeId);
          else if (outcome.kind === 'refused') report.refused.push(node.nodeId);
        } catch (error) {
          report.errors.push({ nodeId: node.nodeId, error: describeError(error) });
          this.ports.log.error('decommission step failed; the next tick tries again', { nodeId: node.nodeId, error: describeError(error) });
        }
      }
    }
    return report;
  }

  private dueForCheck(node: NodeRecord, now: number): boolean {
    const refused = node.steps?.[REFUSED_STEP];
    return refused === undefined || now - Date.parse(refused) >= STRANDED_DRAINED_MS;
  }

  /** Moves of the pool's active drains in flight onto `node`. */
  private async movesOnto(node: NodeRecord): Promise<IncomingMove[]> {
    return movesOnto(await this.ports.store.listDrains(node.pool, 'active'), node.nodeId);
  }

  /** The last check of a drained node, then its release. */
  private async decommission(node: NodeRecord, drainId: string): Promise<DecommissionOutcome> {
    const { log } = this.ports;
    // The runtime override, when an operator set one, is what the evaluator and the gear mover honour too.
    const { store, clock } = this.ports;
    const protectedNodes = protectedNodesNow(this.config, findPoolConfig(this.config, node.pool), await store.listControls(), node.pool, clock.now());
    let gears: GearInfo[] = [];
    if (!(node.protected || protectedNodes.includes(node.nodeId))) {
      const platform = this.ports.platform;
      if (!platform) throw new ValidationError({ path: 'platform', message: `no platform adapter: the gears of ${node.nodeId} cannot be checked, so it is not released` });
      try {
        gears = await this.retry(() => platform.listGears(node.nodeId));
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error;
        return this.refuseUnverifiable(node, drainId, `the platform does not know node ${node.nodeId}: its gears cannot be checked`);
      }
    }
    // Read after the gear list: a move is recorded `moving` before it starts, so one started since is seen here.
    const check = decommissionCheck(node, protectedNodes, gears, await this.movesOnto(node));
    // Stays drained; the tick checks it again, and hands it back if the gears landed.
    if (check.verdict === 'receiving') return this.refuseUnverifiable(node, drainId, check.reason);
    if (check.verdict !== 'release') return this.handBack(node, drainId, check.reason, check.verdict === 'holds-gears' ? check.gears : []);

    let terminating: NodeRecord;
    try {
      terminating = await this.releaser.begin(node, 'decommission', `decommissioning: ${drainId}; the platform lists no gear on the node`);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      // Changed since it was checked: another delivery is releasing it, or it was handed back. Never act on a stale check.
      const current = (error.current as NodeRecord | undefined) ?? (await this.ports.store.getNode(node.nodeId));
      log.info('node changed while it was checked; leaving it to the invocation that changed it', { nodeId: node.nodeId, state: current?.state });
      return { nodeId: node.nodeId, kind: current?.state === 'terminated' ? 'already-terminated' : 'in-progress', reason: `node is ${current?.state ?? 'gone'}` };
    }
    log.info('decommissioning a drained node', { nodeId: node.nodeId, pool: node.pool, drainId, instanceId: node.instanceId, handler: this.config.handler });
    return this.advance(terminating);
  }

  private async advance(node: NodeRecord): Promise<DecommissionOutcome> {
    const result = await this.releaser.advance(node);
    if (result.status === 'terminated') return { nodeId: node.nodeId, kind: 'terminated', reason: result.node.reason ?? 'terminated' };
    if (result.status === 'handed-back') {
      await this.notifyHandBack(result.node, result.reason);
      return { nodeId: node.nodeId, kind: 'refused', reason: result.reason };
    }
    return { nodeId: node.nodeId, kind: 'waiting', reason: `waiting for ${result.waitingFor}` };
  }

  /** drained -> draining: the gear mover takes the node up again (drains what is left, or re-opens a protected node). */
  private async handBack(node: NodeRecord, drainId: string, reason: string, gears: readonly GearInfo[]): Promise<DecommissionOutcome> {
    const { store, clock, log } = this.ports;
    try {
      await store.transitionNode(
        node.nodeId,
        { from: 'drained', to: 'draining', expectedVersion: node.version, patch: { reason: `${reason}; handed back to the gear mover` } },
        clock.now(),
      );
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      const current = error.current as NodeRecord | undefined;
      return { nodeId: node.nodeId, kind: 'in-progress', reason: `node is ${current?.state ?? 'gone'}` };
    }
    log.error(reason, {
      nodeId: node.nodeId,
      pool: node.pool,
      drainId,
      gearCount: gears.length,
      gears: gears.slice(0, 50).map((gear) => `${gear.uuid} (${gear.app})`),
    });
    await this.refused(node, drainId, reason, gears.length);
    return { nodeId: node.nodeId, kind: 'refused', reason };
  }

  /** The node stays drained (never terminated); the tick checks it again later. */
  private async refuseUnverifiable(node: NodeRecord, drainId: string, reason: string): Promise<DecommissionOutcome> {
    const full = `decommission refused: ${reason}`;
    this.ports.log.error(full, { nodeId: node.nodeId, pool: node.pool, drainId });
    try {
      await recordSteps(this.ports.store, node, { [REFUSED_STEP]: this.ports.clock.now().toISOString() }, { reason: full });
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
    await this.refused(node, drainId, full, 0);
    return { nodeId: node.nodeId, kind: 'refused', reason: full };
  }

  private async refused(node: NodeRecord, drainId: string, reason: string, gears: number): Promise<void> {
    const { store, clock, log, metrics, notifier } = this.ports;
    metrics.record('DecommissionRefused', 1, 'Count', { pool: node.pool });
    try {
      await store.appendDecision(
        { pool: node.pool, at: clock.now().toISOString(), kind: 'refused', reason, details: { nodeId: node.nodeId, drainId, gears } },
        this.config.decisionLogTtl,
      );
    } catch (error) {
      log.warn('decision log entry not written', { nodeId: node.nodeId, error: describeError(error) });
    }
    if (!notifier) return;
    try {
      await notifier.notify({
        subject: `nodescaler: decommission of ${node.nodeId} refused`.slice(0, 100),
        pool: node.pool,
        dedupKey: `refused:${node.nodeId}:${drainId}`,
        message: `${reason}.\nPool ${node.pool}, drain ${drainId}. The node was not terminated.`,
      });
    } catch (error) {
      log.warn('operator notice about a refused decommission not sent', { nodeId: node.nodeId, error: describeError(error) });
    }
  }

  /** The operator hears of a release called off for gears (the releaser wrote the metric and the decision log). */
  private async notifyHandBack(node: NodeRecord, reason: string): Promise<void> {
    const { notifier, log } = this.ports;
    if (!notifier) return;
    try {
      await notifier.notify({
        subject: `nodescaler: release of ${node.nodeId} called off`.slice(0, 100),
        pool: node.pool,
        dedupKey: `handed-back:${node.nodeId}:${node.stateChangedAt}`,
        message: `${reason}.\nPool ${node.pool}. The host was not terminated.`,
      });
    } catch (error) {
      log.warn('operator notice about a release called off not sent', { nodeId: node.nodeId, error: describeError(error) });
    }
  }

  private retry<T>(call: () => Promise<T>): Promise<T> {
    return retryOn(this.ports, this.config.cloudRetry)(call);
  }
}

