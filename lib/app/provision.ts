/**
 * The node provisioner: carries out a scale-up decision at most once.
 *
 * 1. Claim: the decision's node names are allocated from the name counter and
 *    recorded once (`claimScaleUp`), re-checked against pool.max and
 *    maxNodesTotal; a redelivered or concurrent delivery finds the same names.
 * 2. Nodes: one `provisioning` item per name, with cloud name, host name and
 *    decision id, before any cloud call.
 * 3. Hosts: per node, the offerings (instance type x subnet) are tried in
 *    order, skipping those that recently had no capacity; the attempt and its
 *    offering are recorded before each cloud call, whose idempotency token is
 *    derived from decision, slot and attempt, so a resumed attempt returns the
 *    host created the first time. Throttling is retried with jittered backoff.
 * 4. Exhaustion: when no offering is left, the remaining nodes fail, the pool
 *    is marked exhausted with a doubling backoff, and it is reported (log
 *    line, `CapacityExhausted` metric, operator notice).
 * 5. DNS (optional): an A record for each host name, UPSERT.
 * 6. The pool lease the evaluator took for the decision is released.
 *
 * The tick (schedule) fails nodes that did not join in time and releases
 * their hosts, fills in what a booting host reports late (address, volume,
 * DNS), releases leases of finished decisions, and sweeps orphaned hosts.
 */
import { effectiveConfig, pausedReason } from '../domain/controls.js';
import type { Config, PoolConfig } from '../config/index.js';
import { findPoolConfig, poolNaming } from '../config/index.js';
import { RELEASE_KIND_STEP } from '../domain/decommission.js';
import { poolIdOf, type GearInfo, type NodeRecord, type PoolId, type PoolLease, type PoolRecord, type ScaleUpRecord } from '../domain/model.js';
import { isProtected } from '../domain/node-stats.js';
import { resourceRooms } from '../domain/evaluate.js';
import {
  PROVISION_STEPS,
  NODE_TAG,
  clientToken,
  exhaustionPatch,
  findOrphans,
  isOfferingUnavailable,
  markOfferingUnavailable,
  nameNumber,
  nodeNames,
  offeringKey,
  offeringsFor,
  parseOfferingKey,
  provisionTimedOut,
  pruneUnavailable,
  scaleUpRoom,
  type Offering,
} from '../domain/provisioning.js';
import { CapacityUnavailableError, ConflictError, NotFoundError } from '../errors.js';
import type { ScaleUpMessage } from '../messages/index.js';
import type { Cloud, HostInfo } from '../ports/cloud.js';
import type { Clock } from '../ports/clock.js';
import type { Dns } from '../ports/dns.js';
import type { Log } from '../ports/log.js';
import type { Metrics } from '../ports/metrics.js';
import type { Notifier } from '../ports/notifier.js';
import type { Platform } from '../ports/platform.js';
import type { PoolPatch, StateStore } from '../ports/state-store.js';
import { HostReleaser } from './release-host.js';
import { describeError, patchPool, realSleep, recordSteps, retryTransient, type Sleep } from './steps.js';

export interface ProvisionerPorts {
  store: StateStore;
  cloud: Cloud;
  clock: Clock;
  metrics: Metrics;
  log: Log;
  dns?: Dns;
  /** Operator notices (capacity exhausted); configured with `notify.topicArn`. */
  notifier?: Notifier;
  platform?: Platform;
  /** How backoff waits; the virtual clock's in tests. Default: a real timer. */
  sleep?: Sleep;
  /** Jitter source; default Math.random. */
  random?: () => number;
}

export interface ScaleUpItem {
  /** The SQS messageId, so a failure maps back to its record. */
  id: string;
  message: ScaleUpMessage;
}

export interface ProvisionedNode {
  nodeId: string;
  cloudName: string;
  state: NodeRecord['state'];
  instanceId?: string;
  instanceType?: string;
  privateIp?: string;
}

export interface ScaleUpOutcome {
  decisionId: string;
  pool: PoolId;
  /** provisioned: every node has its host; partial / exhausted: some / all failed for capacity; refused: none claimed. */
  kind: 'provisioned' | 'partial' | 'exhausted' | 'refused';
  reason: string;
  nodes: ProvisionedNode[];
}

export interface ProvisionerTickReport {
  timedOut: string[];
  failedEarly: string[];
  released: string[];
  /** Failed nodes found holding gears before their release removed them from the district: active again. */
  rejoined: string[];
  waiting: string[];
  updated: string[];
  leasesReleased: string[];
  adopted: string[];
  orphans: Array<{ instanceId: string; terminated: boolean }>;
  errors: Array<{ subject: string; error: string }>;
}

type LaunchResult = { node: NodeRecord; launched: boolean } | { exhausted: string[] };

export class NodeProvisioner {
  private readonly releaser: HostReleaser;

  constructor(
    private readonly ports: ProvisionerPorts,
    private readonly config: Config,
  ) {
    this.releaser = new HostReleaser(ports, config);
  }

  /**
   * A batch from the scale queue, in order. A failed message fails alone;
   * on a FIFO queue the later messages of its pool (message group) are
   * failed too without being handled, so SQS redelivers the group in order.
   */
  async handleBatch(items: readonly ScaleUpItem[]): Promise<{ failures: Array<{ id: string; error: unknown }>; outcomes: ScaleUpOutcome[] }> {
    const failures: Array<{ id: string; error: unknown }> = [];
    const outcomes: ScaleUpOutcome[] = [];
    const stopped = new Map<PoolId, unknown>();
    for (const item of items) {
      const blocked = stopped.get(item.message.pool);
      if (blocked !== undefined) {
        failures.push({ id: item.id, error: blocked });
        continue;
      }
      try {
        outcomes.push(await this.scaleUp(item.message));
      } catch (error) {
        failures.push({ id: item.id, error });
        stopped.set(item.message.pool, error);
      }
    }
    return { failures, outcomes };
  }

  /** Carries out one scale-up decision; idempotent under redelivery and resumable after a crash at any point. */
  async scaleUp(message: ScaleUpMessage): Promise<ScaleUpOutcome> {
    const { log } = this.ports;
    const poolConfig = findPoolConfig(this.config, message.pool);
    if (!poolConfig) {
      const reason = `pool ${message.pool} is not configured; scale-up ${message.decisionId} refused`;
      log.error(reason, { pool: message.pool, decisionId: message.decisionId });
      await this.finishDecision(message, 'refused', reason, [], true);
      return { decisionId: message.decisionId, pool: message.pool, kind: 'refused', reason, nodes: [] };
    }

    const { claim, created } = await this.claim(message, poolConfig);
    if (claim.slots.length === 0) {
      const reason = claim.reason ?? 'no room for any node';
      if (created) log.warn(`scale-up ${message.decisionId} refused: ${reason}`, { pool: message.pool, decisionId: message.decisionId });
      await this.finishDecision(message, 'refused', reason, [], created);
      return { decisionId: message.decisionId, pool: message.pool, kind: 'refused', reason, nodes: [] };
    }

    let nodes = await this.ensureNodes(message, poolConfig, claim);
    let changed = created;
    let exhausted: string[] | undefined;
    const launchedNow: string[] = [];
    for (const [slot, node] of nodes.entries()) {
      if (!this.needsHost(node, message.decisionId)) continue;
      if (exhausted) {
        nodes[slot] = await this.failForCapacity(node, exhausted);
        changed = true;
        continue;
      }
      const result = await this.launch(node, slot, message, poolConfig);
      changed = true;
      if ('exhausted' in result) {
        exhausted = result.exhausted;
        nodes[slot] = await this.failForCapacity(node, exhausted);
        continue;
      }
      nodes[slot] = result.node;
      if (result.launched) launchedNow.push(result.node.nodeId);
    }
    nodes = await Promise.all(nodes.map((node) => this.registerDns(node)));

    if (exhausted) await this.markExhausted(message, poolConfig, exhausted);
    else if (launchedNow.length > 0) await this.clearExhaustion(message.pool);
    if (launchedNow.length > 0) this.ports.metrics.record('NodesProvisioned', launchedNow.length, 'Count', { pool: message.pool });

    const ours = nodes.filter((node) => node.decisionId === message.decisionId);
    const failed = ours.filter((node) => node.state === 'failed' && node.steps?.[PROVISION_STEPS.capacityExhausted]).length;
    const kind: ScaleUpOutcome['kind'] = failed === 0 ? 'provisioned' : failed === ours.length ? 'exhausted' : 'partial';
    const reason = this.outcomeReason(message, claim, ours, kind, exhausted);
    await this.finishDecision(message, kind, reason, ours, changed);
    return { decisionId: message.decisionId, pool: message.pool, kind, reason, nodes: ours.map(summarize) };
  }

  // -------------------------------------------------------------------------
  // Claim and node items.

  /** What the limits leave for this decision now (the evaluator's clamp may be minutes old). */
  private async room(message: ScaleUpMessage, poolConfig: PoolConfig): Promise<{ granted: number; reason?: string }> {
    const allNodes = await this.allNodes();
    return scaleUpRoom({
      requested: message.count,
      pool: message.pool,
      poolMax: poolConfig.max,
      maxNodesTotal: this.config.limits.maxNodesTotal,
      allNodes,
      resourceRooms: resourceRooms(this.config, poolConfig, allNodes),
    });
  }

  private async claim(message: ScaleUpMessage, poolConfig: PoolConfig): Promise<{ claim: ScaleUpRecord; created: boolean }> {
    const { store, clock, log, metrics } = this.ports;
    const existing = await store.getScaleUp(message.decisionId);
    if (existing) return { claim: existing, created: false };

    const now = clock.now();
    // A decision that arrives after its lease expired and another action took the pool is superseded:
    // the evaluator decided again for the same need, and carrying out both would double it.
    const superseded = await this.supersededBy(message);
    // An operator's pause refuses a decision before its first effect (the claim); one already claimed goes on.
    // The room is the pool's max as the evaluator saw it: with the runtime overrides applied.
    const controls = await store.listControls();
    const paused = pausedReason(controls.pauses, message.pool, 'scale-up', now);
    const room = superseded
      ? { granted: 0, reason: `superseded: the pool's lease is held by ${superseded.kind} ${superseded.holder}` }
      : paused !== undefined
        ? { granted: 0, reason: paused }
        : await this.room(message, effectiveConfig(this.config, poolConfig, controls, message.pool, now).poolConfig);
    const naming = poolNaming(this.config, poolConfig);
    const slots: ScaleUpRecord['slots'] = [];
    for (let i = 0; i < room.granted; i++) slots.push(await this.freshNames(naming));
    const claim: ScaleUpRecord = {
      decisionId: message.decisionId,
      pool: message.pool,
      requested: message.count,
      slots,
      createdAt: now.toISOString(),
      ...(room.reason === undefined ? {} : { reason: room.reason }),
    };
    const result = await store.claimScaleUp(claim, this.config.decisionLogTtl);
    if (result.created) {
      metrics.record('ScaleUps', 1, 'Count', { pool: message.pool });
      log.info('scale-up claimed its node names', {
        pool: message.pool,
        decisionId: message.decisionId,
        requested: message.count,
        nodes: slots.map((slot) => slot.nodeId),
        ...(room.reason === undefined ? {} : { limitedBy: room.reason }),
      });
    } else {
      log.warn('scale-up claimed concurrently by another delivery; using its names', { pool: message.pool, decisionId: message.decisionId });
    }
    return { claim: result.record, created: result.created };
  }

  /** The pool's unexpired lease, when another decision holds it: this one is superseded. */
  private async supersededBy(message: ScaleUpMessage): Promise<PoolLease | undefined> {
    const lease = (await this.ports.store.getPool(message.pool))?.lease;
    const now = this.ports.clock.now().toISOString();
    return lease !== undefined && lease.holder !== message.decisionId && lease.expiresAt > now ? lease : undefined;
  }

  /**
   * The next counter number whose host name no node has yet: hosts added by
   * hand and adopted may already carry `<base>-<N>` names the counter never gave.
   */
  private async freshNames(naming: ReturnType<typeof poolNaming>): Promise<ReturnType<typeof nodeNames>> {
    for (let attempt = 0; attempt < 1000; attempt++) {
      const names = nodeNames(naming, await this.ports.store.allocateNameNumber(naming.base));
      if (!(await this.ports.store.getNode(names.nodeId))) return names;
    }
    throw new ConflictError(`no free node name for base ${naming.base} after 1000 numbers`, undefined);
  }

  private async ensureNodes(message: ScaleUpMessage, poolConfig: PoolConfig, claim: ScaleUpRecord): Promise<NodeRecord[]> {
    const { store, clock, log } = this.ports;
    const nodes: NodeRecord[] = [];
    let superseded: PoolLease | undefined | null = null;
    for (const slot of claim.slots) {
      const existing = await store.getNode(slot.nodeId);
      if (existing) {
        if (existing.decisionId !== message.decisionId) {
          log.error('a node of this name exists already and is not this decision\'s; its slot is skipped', {
            nodeId: slot.nodeId,
            decisionId: message.decisionId,
            holder: existing.decisionId ?? existing.origin,
          });
        }
        nodes.push(existing);
        continue;
      }
      // A claim resumed after its lease ran out and another decision took the pool (a crash between the
      // claim and the node records, a redelivery much later) creates no more nodes: the evaluator decided
      // again for the same need, and both would exceed it and the limits.
      if (superseded === null) superseded = await this.supersededBy(message);
      if (superseded !== undefined) {
        log.warn('scale-up resumed after another decision took the pool; its remaining slot is dropped', { nodeId: slot.nodeId, decisionId: message.decisionId, holder: superseded.holder });
        continue;
      }
      const now = clock.now();
      try {
        nodes.push(
          await store.createNode(
            {
              nodeId: slot.nodeId,
              pool: message.pool,
              district: poolConfig.district,
              profile: poolConfig.profile,
              state: 'provisioning',
              createdAt: now.toISOString(),
              origin: 'provisioned',
              protected: isProtected({ nodeId: slot.nodeId, protected: false }, poolConfig.protectedNodes),
              cloudName: slot.cloudName,
              decisionId: message.decisionId,
              reason: `provisioning for ${message.decisionId}: ${message.reason}`,
              steps: {},
            },
            now,
          ),
        );
      } catch (error) {
        if (!(error instanceof ConflictError) || !error.current) throw error;
        nodes.push(error.current as NodeRecord);
      }
    }
    return nodes;
  }

  private needsHost(node: NodeRecord, decisionId: string): boolean {
    return node.decisionId === decisionId && node.state === 'provisioning' && node.steps?.[PROVISION_STEPS.hostRequested] === undefined;
  }

  // -------------------------------------------------------------------------
  // Hosts.

  /** Tries the node's offerings in order until one gives a host; resumes a recorded attempt first. */
  private async launch(start: NodeRecord, slot: number, message: ScaleUpMessage, poolConfig: PoolConfig): Promise<LaunchResult> {
    const { store, cloud, clock, log } = this.ports;
    let node = start;
    let pool = (await store.getPool(message.pool)) ?? (await store.ensurePool(message.pool));
    const offerings = offeringsFor(poolConfig.template, nameNumber(node.cloudName) ?? slot + 1);
    const recordedAttempt = node.steps?.[PROVISION_STEPS.launchAttempt];
    const recordedOffering = node.steps?.[PROVISION_STEPS.launchOffering];
    let attempt = recordedAttempt === undefined ? -1 : Number(recordedAttempt);
    let resume: Offering | undefined = recordedAttempt !== undefined && recordedOffering !== undefined ? parseOfferingKey(recordedOffering) : undefined;
    const tried: string[] = [];

    const queue = resume ? [resume, ...offerings.filter((offering) => offeringKey(offering) !== offeringKey(resume!))] : offerings;
    for (const offering of queue) {
      const now = clock.now();
      const key = offeringKey(offering);
      const resuming = resume !== undefined && key === offeringKey(resume);
      resume = undefined;
      if (!resuming && isOfferingUnavailable(pool.unavailableOfferings, offering, now)) {
        tried.push(`${key}: skipped, no capacity until ${this.unavailableUntil(pool, offering)}`);
        continue;
      }
      if (!resuming) {
        attempt += 1;
        const recorded = await this.recordAttempt(node, attempt, key);
        if (recorded.steps?.[PROVISION_STEPS.hostRequested] !== undefined) return { node: recorded, launched: false };
        node = recorded;
      }
      const spec = {
        pool: message.pool,
        district: poolConfig.district,
        profile: poolConfig.profile,
        cloudName: node.cloudName!,
        hostName: node.nodeId,
        decisionId: message.decisionId,
        idempotencyToken: clientToken(message.decisionId, slot, attempt),
        offering,
        reason: message.reason,
      };
      let host: HostInfo;
      try {
        host = await this.retry(() => cloud.createHost(spec));
      } catch (error) {
        if (!(error instanceof CapacityUnavailableError)) throw error;
        tried.push(`${key}: ${error.reason}`);
        log.warn('no capacity for this offering; trying the next one', {
          pool: message.pool,
          nodeId: node.nodeId,
          decisionId: message.decisionId,
          offering: key,
          reason: error.reason,
          error: error.message,
        });
        pool = await patchPool(store, message.pool, (current) => ({
          unavailableOfferings: markOfferingUnavailable(current.unavailableOfferings, offering, error.reason, clock.now(), this.config.scaleUp.offeringUnavailableFor),
        }));
        continue;
      }
      node = await recordSteps(
        store,
        node,
        { [PROVISION_STEPS.hostRequested]: clock.now().toISOString() },
        {
          ...hostFields(host),
          reason: host.instanceId
            ? `host ${host.instanceId} (${host.instanceType ?? offering.instanceType ?? 'default type'}) requested; waiting for the node to report`
            : `host requested through handler ${this.config.handler}; waiting for the node to report`,
        },
      );
      log.info(host.instanceId ? 'host launched' : 'host requested', {
        pool: message.pool,
        nodeId: node.nodeId,
        cloudName: node.cloudName,
        decisionId: message.decisionId,
        instanceId: host.instanceId,
        offering: key,
        attempt,
      });
      return { node, launched: true };
    }
    return { exhausted: tried };
  }

  /**
   * Records the attempt about to be made, by conditional write: the token of
   * an attempt is only ever used for the offering recorded with it. Losing
   * the write means another delivery of the decision is launching this node
   * right now; unless it has finished, this delivery stops with a retryable
   * `ConflictError` and, redelivered later, resumes the recorded attempt.
   */
  private async recordAttempt(node: NodeRecord, attempt: number, key: string): Promise<NodeRecord> {
    try {
      return await this.ports.store.updateNode(node.nodeId, node.version, {
        steps: { ...node.steps, [PROVISION_STEPS.launchAttempt]: String(attempt), [PROVISION_STEPS.launchOffering]: key },
      });
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      const latest = (error.current as NodeRecord | undefined) ?? (await this.ports.store.getNode(node.nodeId));
      if (latest?.steps?.[PROVISION_STEPS.hostRequested] !== undefined) return latest;
      throw new ConflictError(`node ${node.nodeId} is being launched by another delivery of ${node.decisionId}`, latest);
    }
  }

  private unavailableUntil(pool: PoolRecord, offering: Offering): string {
    const map = pool.unavailableOfferings ?? {};
    const keys = [offeringKey(offering), `${offering.instanceType ?? '*'}@*`, `*@${offering.subnetId ?? '*'}`];
    return keys.map((key) => map[key]).filter((until): until is string => until !== undefined).sort().pop() ?? '?';
  }

  private async failForCapacity(node: NodeRecord, tried: readonly string[]): Promise<NodeRecord> {
    const now = this.ports.clock.now();
    try {
      return await this.ports.store.transitionNode(
        node.nodeId,
        {
          from: 'provisioning',
          to: 'failed',
          patch: {
            reason: `capacity exhausted: no offering could launch a host (${tried.join('; ') || 'no offering configured'})`,
            steps: { ...node.steps, [PROVISION_STEPS.capacityExhausted]: now.toISOString(), [RELEASE_KIND_STEP]: 'failed' },
          },
        },
        now,
      );
    } catch (error) {
      if (!(error instanceof ConflictError) || !error.current) throw error;
      return error.current as NodeRecord;
    }
  }

  private async markExhausted(message: ScaleUpMessage, poolConfig: PoolConfig, tried: readonly string[]): Promise<void> {
    const { store, clock, log, metrics, notifier } = this.ports;
    const now = clock.now();
    const pool = await patchPool(store, message.pool, (current) =>
      exhaustionPatch(current, now, { initial: this.config.scaleUp.exhaustedBackoff, max: this.config.scaleUp.exhaustedBackoffMax }),
    );
    metrics.record('CapacityExhausted', 1, 'Count', { pool: message.pool });
    const backoff = Math.round((pool.exhaustedBackoffMs ?? 0) / 60_000);
    const line = `capacity exhausted in pool ${message.pool}: every offering failed; no scale-up until ${pool.exhaustedUntil} (backoff ${backoff}m)`;
    log.error(line, { pool: message.pool, decisionId: message.decisionId, tried, exhaustedUntil: pool.exhaustedUntil, backoffMs: pool.exhaustedBackoffMs });
    if (notifier) {
      const types = poolConfig.template.instanceTypes.map((type) => type.name).join(', ') || 'the template default';
      try {
        await notifier.notify({
          subject: `nodescaler: capacity exhausted in ${message.pool}`.slice(0, 100),
          pool: message.pool,
          dedupKey: `exhausted:${message.decisionId}`,
          message: [
            `Pool ${message.pool} needs ${message.count === 1 ? '1 more node' : `${message.count} more nodes`} and the cloud has no capacity for any of its offerings.`,
            `Why the nodes are needed: ${message.reason}`,
            `Instance types tried: ${types}.`,
            `Attempts: ${tried.join('; ')}.`,
            `nodescaler will not scale this pool up again before ${pool.exhaustedUntil}.`,
            'To help: raise the EC2 quota (vCPU / instance limits), add instance types or subnets to the pool template, or add hosts by hand.',
          ].join('\n'),
        });
      } catch (error) {
        log.warn('operator notice about capacity exhaustion not sent', { pool: message.pool, error: describeError(error) });
      }
    }
  }

  /** A launch worked: the exhaustion backoff starts over, and offerings no longer remembered are dropped. */
  private async clearExhaustion(poolId: PoolId): Promise<void> {
    const now = this.ports.clock.now();
    await patchPool(this.ports.store, poolId, (pool) => {
      const patch: PoolPatch = {};
      if (pool.exhaustedBackoffMs !== undefined || pool.exhaustedUntil !== undefined) Object.assign(patch, { exhaustedBackoffMs: undefined, exhaustedUntil: undefined });
      const kept = pruneUnavailable(pool.unavailableOfferings, now);
      if (Object.keys(kept).length !== Object.keys(pool.unavailableOfferings ?? {}).length) patch.unavailableOfferings = kept;
      return Object.keys(patch).length === 0 ? undefined : patch;
    });
  }

  // -------------------------------------------------------------------------
  // DNS.

  /** UPSERTs the node's A record once its address is known; a failure is logged and retried by the tick. */
  private async registerDns(node: NodeRecord): Promise<NodeRecord> {
    const dns = this.ports.dns;
    if (!dns || node.origin !== 'provisioned' || node.privateIp === undefined || node.steps?.[PROVISION_STEPS.dnsRegistered] !== undefined) return node;
    if (node.state !== 'provisioning' && node.state !== 'active') return node;
    try {
      await this.retry(() => dns.upsertHost(node.nodeId, node.privateIp!));
    } catch (error) {
      this.ports.log.warn('DNS record not written; the tick tries again', { nodeId: node.nodeId, error: describeError(error) });
      return node;
    }
    this.ports.log.info('DNS record written', { nodeId: node.nodeId, ip: node.privateIp });
    return recordSteps(this.ports.store, node, { [PROVISION_STEPS.dnsRegistered]: this.ports.clock.now().toISOString() });
  }

  // -------------------------------------------------------------------------
  // End of a decision.

  private async finishDecision(message: ScaleUpMessage, kind: ScaleUpOutcome['kind'], reason: string, nodes: readonly NodeRecord[], log: boolean): Promise<void> {
    const { store, clock } = this.ports;
    try {
      await store.releaseLease(message.pool, message.decisionId);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
    if (!log) return;
    await store.appendDecision(
      {
        pool: message.pool,
        at: clock.now().toISOString(),
        kind: kind === 'provisioned' ? 'scale-up' : kind === 'refused' ? 'refused' : 'failure',
        reason,
        decisionId: message.decisionId,
        details: { requested: message.count, handler: this.config.handler, nodes: nodes.map(summarize) },
      },
      this.config.decisionLogTtl,
    );
  }

  private outcomeReason(message: ScaleUpMessage, claim: ScaleUpRecord, nodes: readonly NodeRecord[], kind: ScaleUpOutcome['kind'], exhausted?: readonly string[]): string {
    const requested = nodes.filter((node) => node.steps?.[PROVISION_STEPS.hostRequested] !== undefined).length;
    const limited = claim.reason ? `; ${claim.reason}` : '';
    const base = `scale-up ${message.decisionId}: ${requested} of ${message.count} hosts requested through handler ${this.config.handler}${limited}`;
    return kind === 'provisioned' ? base : `${base}; capacity exhausted (${(exhausted ?? []).join('; ') || 'see earlier attempt'})`;
  }

  // -------------------------------------------------------------------------
  // The schedule.

  /** Timeouts, late host details, leases of finished decisions, orphaned hosts. Errors are collected, never thrown per node. */
  async tick(): Promise<ProvisionerTickReport> {
    const report: ProvisionerTickReport = { timedOut: [], failedEarly: [], released: [], rejoined: [], waiting: [], updated: [], leasesReleased: [], adopted: [], orphans: [], errors: [] };
    const pools = await this.poolIds();
    const byPool = new Map<PoolId, NodeRecord[]>();
    for (const pool of pools) byPool.set(pool, await this.ports.store.listNodes(pool));
    const all = [...byPool.values()].flat();

    const provisioning = all.filter((node) => node.state === 'provisioning');
    const hosts = await this.describe(provisioning, report);
    for (const node of provisioning) await this.guard(report, node.nodeId, () => this.checkProvisioning(node, hosts.get(node.instanceId ?? ''), report));

    const activeWithoutDns = all.filter((node) => node.state === 'active');
    for (const node of activeWithoutDns) await this.guard(report, node.nodeId, () => this.registerDns(node));

    for (const node of await this.releasable()) await this.guard(report, node.nodeId, () => this.release(node, report));

    for (const pool of pools) await this.guard(report, pool, () => this.releaseFinishedLease(pool, report));

    await this.guard(report, 'sweeper', () => this.sweep(report));
    return report;
  }

  private async poolIds(): Promise<PoolId[]> {
    const ids = new Set<PoolId>(this.config.pools.map((pool) => poolIdOf(pool.district, pool.profile)));
    for (const pool of await this.ports.store.listPools()) ids.add(pool.pool);
    return [...ids].sort();
  }

  private async allNodes(): Promise<NodeRecord[]> {
    const lists = await Promise.all((await this.poolIds()).map((pool) => this.ports.store.listNodes(pool)));
    return lists.flat();
  }

  private async describe(nodes: readonly NodeRecord[], report: ProvisionerTickReport): Promise<Map<string, HostInfo>> {
    const ids = nodes.map((node) => node.instanceId).filter((id): id is string => id !== undefined);
    if (ids.length === 0) return new Map();
    try {
      return await this.retry(() => this.ports.cloud.describeHosts(ids));
    } catch (error) {
      report.errors.push({ subject: 'describeHosts', error: describeError(error) });
      return new Map();
    }
  }

  private async checkProvisioning(node: NodeRecord, host: HostInfo | undefined, report: ProvisionerTickReport): Promise<void> {
    const { store, clock } = this.ports;
    const now = clock.now();
    const max = this.config.scaleUp.maxNodeProvisionTime;
    if (provisionTimedOut(node, now, max)) {
      if (await this.joinedWithoutStats(node)) return;
      await this.fail(node, `did not join within ${Math.round(max / 60_000)}m of its creation (maxNodeProvisionTime)`, 'ProvisionTimeouts');
      report.timedOut.push(node.nodeId);
      return;
    }
    if (host && (host.state === 'shutting-down' || host.state === 'terminated' || host.state === 'stopping' || host.state === 'stopped')) {
      await this.fail(node, `instance ${node.instanceId} is ${host.state} before the node joined`, 'ProvisionFailures');
      report.failedEarly.push(node.nodeId);
      return;
    }
    let current = node;
    if (host) {
      const patch: Partial<NodeRecord> = {};
      if (host.privateIp !== undefined && node.privateIp === undefined) patch.privateIp = host.privateIp;
      if (host.volumeId !== undefined && node.volumeId === undefined) patch.volumeId = host.volumeId;
      if (host.instanceType !== undefined && node.instanceType === undefined) patch.instanceType = host.instanceType;
      if (Object.keys(patch).length > 0) {
        try {
          current = await store.updateNode(node.nodeId, node.version, patch);
          report.updated.push(node.nodeId);
        } catch (error) {
          if (!(error instanceof ConflictError)) throw error;
          return; // changed under us (joined, say): the next tick looks again
        }
      }
    }
    await this.registerDns(current);
  }

  /**
   * Stats are only our view of a node: a node whose stats were lost or late
   * may have joined its district and taken gears. Before a timed-out node is
   * failed (and its host released), the platform is asked; a node that holds
   * gears joined, and becomes active. An unknown node (`NotFoundError`) or an
   * empty one is failed; an error leaves the decision to the next tick.
   */
  private async joinedWithoutStats(node: NodeRecord): Promise<boolean> {
    return this.activateIfHoldingGears(node, (gears) => `joined: the platform lists ${gears} gear(s) on it, though no stats reached nodescaler within maxNodeProvisionTime`);
  }

  /**
   * The same question once more before a failed node's release removes it
   * from its district: its host may join after all and take gears after it
   * was failed, and `remove-node` would then refuse it for good, leaving it
   * `terminating` with its gears. A node holding gears is serving: its
   * release is called off and it becomes active. Nothing of the release has
   * run before `remove-node` (the first step), so there is nothing to undo.
   */
  private async releaseCalledOff(node: NodeRecord): Promise<boolean> {
    if (node.steps?.removedFromDistrict !== undefined) return false;
    return this.activateIfHoldingGears(node, (gears) => `joined after it was failed: the platform lists ${gears} gear(s) on it; its release was called off`);
  }

  /** `node` (provisioning, failed or terminating) -> active when the platform lists gears on it; false without a platform, or when it holds none. */
  private async activateIfHoldingGears(node: NodeRecord, reason: (gears: number) => string): Promise<boolean> {
    const { platform, store, clock, log } = this.ports;
    if (!platform) return false;
    let gears: readonly GearInfo[];
    try {
      gears = await this.retry(() => platform.listGears(node.nodeId));
    } catch (error) {
      if (error instanceof NotFoundError) return false;
      throw error;
    }
    if (gears.length === 0) return false;
    const now = clock.now();
    // A failed node's release steps go: the node is no longer being released.
    const { [RELEASE_KIND_STEP]: _kind, releaseStarted: _started, ...steps } = node.steps ?? {};
    try {
      await store.transitionNode(
        node.nodeId,
        {
          from: node.state,
          to: 'active',
          expectedVersion: node.version,
          patch: { joinedAt: now.toISOString(), reason: reason(gears.length), ...(node.state === 'provisioning' ? {} : { steps }) },
        },
        now,
      );
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
    log.warn(`node ${node.state === 'provisioning' ? 'past maxNodeProvisionTime' : `${node.state} (failed)`} holds gears on the platform: marked joined`, {
      nodeId: node.nodeId,
      pool: node.pool,
      gears: gears.length,
    });
    return true;
  }

  /** provisioning -> failed, with the pool's failure time (delayAfterFailure); the host is released right after. */
  private async fail(node: NodeRecord, why: string, metric: string): Promise<void> {
    const { store, clock, log, metrics } = this.ports;
    const now = clock.now();
    try {
      await store.transitionNode(
        node.nodeId,
        {
          from: 'provisioning',
          to: 'failed',
          expectedVersion: node.version,
          patch: { reason: `failed: ${why}`, steps: { ...node.steps, [RELEASE_KIND_STEP]: 'failed' } },
        },
        now,
      );
    } catch (error) {
      if (error instanceof ConflictError) return; // it joined, or another tick failed it
      throw error;
    }
    await patchPool(store, node.pool, () => ({ lastFailureAt: now.toISOString() }));
    metrics.record(metric, 1, 'Count', { pool: node.pool });
    log.error(`node ${node.nodeId} failed: ${why}`, { nodeId: node.nodeId, pool: node.pool, instanceId: node.instanceId, decisionId: node.decisionId });
  }

  /** Failed nodes, and the failed nodes whose release is under way. */
  private async releasable(): Promise<NodeRecord[]> {
    const nodes = await this.allNodes();
    return nodes.filter((node) => node.state === 'failed' || (node.state === 'terminating' && node.steps?.[RELEASE_KIND_STEP] === 'failed'));
  }

  private async release(node: NodeRecord, report: ProvisionerTickReport): Promise<void> {
    if (await this.releaseCalledOff(node)) {
      report.rejoined.push(node.nodeId);
      return;
    }
    let current = await this.withUnrecordedHost(node, report);
    if (current.state === 'failed') {
      try {
        current = await this.releaser.begin(current, 'failed', `releasing: ${current.reason ?? 'failed'}`);
      } catch (error) {
        if (error instanceof ConflictError) return;
        throw error;
      }
    }
    const result = await this.releaser.advance(current);
    if (result.status === 'terminated') report.released.push(node.nodeId);
    else report.waiting.push(node.nodeId);
  }

  /**
   * A failed node whose launch took effect unseen (RunInstances went through,
   * the provisioner saw an error) has a host but no instance id; released as
   * it is, its release would only report the host, which would run on. The
   * sweeper adopts such hosts, but a release may finish before it runs, so
   * the node's host is looked up by its node tag first and recorded.
   */
  private async withUnrecordedHost(node: NodeRecord, report: ProvisionerTickReport): Promise<NodeRecord> {
    if (node.instanceId !== undefined || node.steps?.[PROVISION_STEPS.launchAttempt] === undefined) return node;
    const hosts = await this.retry(() => this.ports.cloud.listManagedHosts());
    const host = hosts.find((candidate) => candidate.instanceId !== undefined && candidate.tags?.[NODE_TAG] === node.nodeId);
    return host ? this.recordHost(node, host, report) : node;
  }

  /** Records the host of a node that had not recorded it (`ConflictError` when the node changed meanwhile). */
  private async recordHost(node: NodeRecord, host: HostInfo, report: ProvisionerTickReport): Promise<NodeRecord> {
    const recorded = await this.ports.store.updateNode(node.nodeId, node.version, { ...hostFields(host) });
    report.adopted.push(node.nodeId);
    this.ports.log.warn('host found for a node that had not recorded it; recorded', { nodeId: node.nodeId, state: node.state, instanceId: host.instanceId });
    return recorded;
  }

  /** A scale-up lease whose decision has every node resolved is released (a crash after the last step left it held). */
  private async releaseFinishedLease(poolId: PoolId, report: ProvisionerTickReport): Promise<void> {
    const { store } = this.ports;
    const pool = await store.getPool(poolId);
    const lease = pool?.lease;
    if (!lease || lease.kind !== 'scale-up') return;
    const claim = await store.getScaleUp(lease.holder);
    if (!claim) return;
    const nodes = await Promise.all(claim.slots.map((slot) => store.getNode(slot.nodeId)));
    const open = nodes.some((node) => node === undefined || this.needsHost(node, claim.decisionId));
    if (open) return;
    await store.releaseLease(poolId, lease.holder);
    report.leasesReleased.push(lease.holder);
    this.ports.log.info('released the lease of a finished scale-up', { pool: poolId, decisionId: lease.holder });
  }

  private async sweep(report: ProvisionerTickReport): Promise<void> {
    const { cloud, clock, log, metrics } = this.ports;
    const hosts = await this.retry(() => cloud.listManagedHosts());
    if (hosts.length === 0) return;
    const nodes = await this.allNodes();
    const { orphans, adoptable } = findOrphans(hosts, nodes, clock.now(), this.config.sweeper.orphanAge);
    for (const { host, nodeId } of adoptable) {
      try {
        await this.recordHost(nodes.find((candidate) => candidate.nodeId === nodeId)!, host, report);
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
      }
    }
    for (const host of orphans) {
      const instanceId = host.instanceId!;
      metrics.record('OrphanHosts', 1, 'Count', { pool: host.tags?.['nodescaler:pool'] ?? 'unknown' });
      if (!this.config.sweeper.terminateOrphans) {
        log.warn('orphaned host: tagged by nodescaler, unknown to the state table; set sweeper.terminateOrphans to terminate such hosts', {
          instanceId,
          launchedAt: host.launchedAt,
          tags: host.tags,
        });
        report.orphans.push({ instanceId, terminated: false });
        continue;
      }
      await this.retry(() => cloud.terminateHost(instanceId));
      log.warn('orphaned host terminated', { instanceId, launchedAt: host.launchedAt, tags: host.tags });
      report.orphans.push({ instanceId, terminated: true });
    }
  }

  private async guard(report: ProvisionerTickReport, subject: string, work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (error) {
      report.errors.push({ subject, error: describeError(error) });
      this.ports.log.error('provisioner tick step failed; the next tick tries again', { subject, error: describeError(error) });
    }
  }

  private retry<T>(call: () => Promise<T>): Promise<T> {
    return retryTransient(call, this.config.cloudRetry, {
      sleep: this.ports.sleep ?? realSleep,
      random: this.ports.random ?? Math.random,
      onRetry: (error, attempt, delayMs) => this.ports.log.warn('throttled or transient cloud error; retrying', { attempt, delayMs, error: error.message }),
    });
  }
}

function hostFields(host: HostInfo): Partial<NodeRecord> {
  const fields: Partial<NodeRecord> = {};
  if (host.instanceId !== undefined) fields.instanceId = host.instanceId;
  if (host.instanceType !== undefined) fields.instanceType = host.instanceType;
  if (host.privateIp !== undefined) fields.privateIp = host.privateIp;
  if (host.volumeId !== undefined) fields.volumeId = host.volumeId;
  return fields;
}

function summarize(node: NodeRecord): ProvisionedNode {
  const summary: ProvisionedNode = { nodeId: node.nodeId, cloudName: node.cloudName ?? '', state: node.state };
  if (node.instanceId !== undefined) summary.instanceId = node.instanceId;
  if (node.instanceType !== undefined) summary.instanceType = node.instanceType;
  if (node.privateIp !== undefined) summary.privateIp = node.privateIp;
  return summary;
}
