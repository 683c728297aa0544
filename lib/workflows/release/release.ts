/**
 * Releasing a node's host on the workflow engine: out of its district, DNS
 * record deleted, instance terminated (or, for handlers that create nothing,
 * the release reported), gear volume deleted once detached, then
 * `terminated`. Used by the decommissioner (drained nodes) and by the
 * provisioner (nodes that failed to join). Each step is recorded on the node
 * with the phase after it before the next one starts, so a crash at any
 * point resumes at the next step, and the steps that are not idempotent
 * never run twice.
 *
 * Never a host with gears: when the platform refuses `remove-node` because
 * the node holds gears after all (a move landed on it after its last check,
 * someone placed one), the release stops before anything else of it ran and
 * hands the node back, `draining` (the gear mover empties it again) or
 * `active` when the pool needs it, through the stored `handingBack` phase,
 * with the `ReleasesHandedBack` metric and a `refused` decision-log entry.
 */
import type { Config } from '../../config/index.js';
import { findPoolConfig } from '../../config/index.js';
import { HAND_BACK_STEPS, RELEASE_KIND_STEP, RELEASE_STEPS, REMOVAL_FOUND_NO_NODE_STEP, handBackReason, handBackTarget, nodeLifetimeSeconds, type HandBackTarget, type ReleaseKind, type ReleaseOptions } from '../../domain/decommission.js';
import type { GearInfo, NodeRecord } from '../../domain/model.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import type { ReleasingCloud } from '../../ports/cloud.js';
import type { Clock } from '../../ports/clock.js';
import type { Dns } from '../../ports/dns.js';
import type { Log } from '../../ports/log.js';
import type { Metrics } from '../../ports/metrics.js';
import type { Platform } from '../../ports/platform.js';
import { NodeNotEmptyError } from '../../ports/platform-errors.js';
import type { StateStore } from '../../ports/state-store.js';
import { describeError, patchPool, recordSteps, retryOn, type Sleep } from '../../app/steps.js';
import { execute, type EffectResult, type Workflow } from '../engine.js';
import { derivedReleasePhase, nextRelease, type ReleaseEffect, type ReleaseView, type ReleaseWrite } from './phases.js';

export interface ReleasePorts {
  store: StateStore;
  cloud: ReleasingCloud;
  clock: Clock;
  log: Log;
  metrics: Metrics;
  /** Needed for nodes that were in a district; a node that never joined is released without it. */
  platform?: Platform;
  dns?: Dns;
  sleep?: Sleep;
  random?: () => number;
}

export type ReleaseResult =
  | { status: 'terminated'; node: NodeRecord }
  /** A step must wait (the volume is still attached): the schedule tries again. */
  | { status: 'waiting'; node: NodeRecord; waitingFor: string }
  /** The node held gears before its host went: it is `draining` or `active` again, its host kept. */
  | { status: 'handed-back'; node: NodeRecord; to: HandBackTarget; reason: string };

export class HostReleaser implements Workflow<ReleaseView, ReleaseWrite, ReleaseEffect> {
  constructor(
    private readonly ports: ReleasePorts,
    private readonly config: Config,
  ) {}

  /**
   * Moves a `drained` or `failed` node to `terminating` by conditional write
   * on the version the caller checked, recording why and the first phase.
   * `ConflictError` when the node changed since.
   */
  async begin(node: NodeRecord, kind: ReleaseKind, reason: string): Promise<NodeRecord> {
    const now = this.ports.clock.now();
    const steps = { ...node.steps, [RELEASE_KIND_STEP]: kind, releaseStarted: now.toISOString() };
    return this.ports.store.transitionNode(
      node.nodeId,
      {
        from: node.state,
        to: 'terminating',
        expectedVersion: node.version,
        patch: { reason, steps, releasePhase: derivedReleasePhase({ ...node, steps }, this.options(node)) },
      },
      now,
    );
  }

  /** Runs the remaining steps of a `terminating` node and marks it `terminated`; resumable at any point. */
  async advance(node: NodeRecord): Promise<ReleaseResult> {
    if (node.state !== 'terminating' && node.state !== 'terminated') {
      throw new ValidationError({ path: 'state', message: `node ${node.nodeId} is ${node.state}, not terminating`, value: node.state });
    }
    const outcome = await execute(this, { node, options: this.options(node) });
    if (outcome.status === 'waiting') return { status: 'waiting', node: outcome.view.node, waitingFor: outcome.reason };
    const last = outcome.view.node;
    if (last.state === 'draining' || last.state === 'active') return { status: 'handed-back', node: last, to: last.state, reason: last.reason ?? `handed back as ${last.state}` };
    return { status: 'terminated', node: last };
  }

  next = nextRelease;

  async act({ node }: ReleaseView, step: ReleaseEffect): Promise<EffectResult<ReleaseWrite>> {
    const { cloud, log } = this.ports;
    const attributes = { nodeId: node.nodeId, pool: node.pool, step };
    if (step === 'reopen') {
      const platform = this.ports.platform;
      if (!platform) throw new ValidationError({ path: 'platform', message: `no platform adapter to re-open ${node.nodeId} in district ${node.district}` });
      // "already active" is success (the adapters), so a repeat after a crash is harmless.
      await this.retry(() => platform.activateNode(node.district, node.nodeId));
      log.info('node handed back re-opened on the platform', { ...attributes, district: node.district });
      return { record: { kind: 'reopened' } };
    }
    if (step === 'restoreDns') {
      if (!this.ports.dns || node.privateIp === undefined) throw new ValidationError({ path: 'dns', message: `no DNS adapter or address to restore the record of ${node.nodeId}` });
      await this.retry(() => this.ports.dns!.upsertHost(node.nodeId, node.privateIp!));
      log.info('DNS record of a node handed back restored', { ...attributes, ip: node.privateIp });
      return { record: { kind: 'dns-restored' } };
    }
    const done: EffectResult<ReleaseWrite> = { record: { kind: 'record', step, patch: {} } };
    switch (step) {
      case 'removedFromDistrict': {
        const platform = this.ports.platform;
        if (!platform) {
          throw new ValidationError({ path: 'platform', message: `no platform adapter to remove ${node.nodeId} from district ${node.district}` });
        }
        const removal = await this.removeFromDistrict(node, platform);
        if (removal.kind === 'record') {
          if (removal.foundNoNode) log.info('node in no district: removed again before its host goes, in case it joins one meanwhile', { ...attributes, district: node.district });
          else log.info('node removed from its district', { ...attributes, district: node.district });
        }
        return { record: removal };
      }
      case 'dnsDeleted':
        await this.retry(() => this.ports.dns!.deleteHost(node.nodeId, node.privateIp!));
        log.info('DNS record deleted', { ...attributes, ip: node.privateIp });
        return done;
      case 'volumeResolved': {
        const hosts = await this.retry(() => cloud.describeHosts([node.instanceId!]));
        const volumeId = hosts.get(node.instanceId!)?.volumeId;
        if (volumeId === undefined) log.warn('no gear volume found on the instance; nothing to delete after it', { ...attributes, instanceId: node.instanceId });
        return { record: { kind: 'record', step, patch: volumeId === undefined ? {} : { volumeId } } };
      }
      case 'instanceTerminated': {
        const joinedSince = await this.removedAgainIfJoined(node);
        if (joinedSince) return { record: joinedSince };
        await this.retry(() => cloud.terminateHost(node.instanceId!));
        log.info('instance terminated', { ...attributes, instanceId: node.instanceId });
        return done;
      }
      case 'releaseReported': {
        const report = cloud.reportRelease?.bind(cloud);
        const spec = {
          pool: node.pool,
          district: node.district,
          profile: node.profile,
          hostName: node.nodeId,
          reason: node.reason ?? `node ${node.nodeId} released`,
          ...(node.cloudName === undefined ? {} : { cloudName: node.cloudName }),
        };
        if (report) await this.retry(() => report(spec));
        else if (node.origin === 'adopted') log.warn('node was adopted, not provisioned: its host must be released by hand', attributes);
        return done;
      }
      case 'volumeDeleted':
        try {
          await this.retry(() => cloud.deleteVolume(node.volumeId!));
        } catch (error) {
          if (!(error instanceof ConflictError)) throw error;
          log.info('gear volume still attached; deleting it on a later tick', { ...attributes, volumeId: node.volumeId });
          return { wait: `volume ${node.volumeId} to detach` };
        }
        log.info('gear volume deleted', { ...attributes, volumeId: node.volumeId });
        return done;
    }
  }

  async write(view: ReleaseView, write: ReleaseWrite): Promise<ReleaseView> {
    if (write.kind === 'finish') return { ...view, node: await this.finish(view.node) };
    if (write.kind === 'hand-back') return { ...view, node: await this.handBack(view.node, write.to) };
    const { node, options } = view;
    const now = this.ports.clock.now().toISOString();
    if (write.kind === 'hand-back-found') {
      const steps = { [HAND_BACK_STEPS.found]: now, [HAND_BACK_STEPS.to]: write.to };
      const recorded = await recordSteps(this.ports.store, node, steps, { releasePhase: 'handingBack', reason: write.reason.slice(0, 1024) });
      this.ports.log.error(write.reason, { nodeId: node.nodeId, pool: node.pool, gearCount: write.gears, to: write.to });
      return { ...view, node: recorded };
    }
    if (write.kind === 'reopened') return { ...view, node: await recordSteps(this.ports.store, node, { [HAND_BACK_STEPS.reopened]: now }) };
    if (write.kind === 'dns-restored') return { ...view, node: await recordSteps(this.ports.store, node, { [HAND_BACK_STEPS.dnsRestored]: now }) };
    const steps = { ...node.steps, [write.step]: this.ports.clock.now().toISOString() };
    const releasePhase = derivedReleasePhase({ ...node, ...write.patch, steps }, options);
    const marks: Record<string, string> = write.foundNoNode ? { [REMOVAL_FOUND_NO_NODE_STEP]: now } : {};
    const recorded = await recordSteps(this.ports.store, node, { [write.step]: steps[write.step]!, ...marks }, { ...write.patch, releasePhase });
    if (write.step === 'instanceTerminated' || write.step === 'releaseReported') await this.markScaleDown(recorded);
    return { ...view, node: recorded };
  }

  /**
   * `removeNode`: done, or the node was in no district (`foundNoNode`), or the platform refused it because the node
   * holds gears (the hand-back to record).
   */
  private async removeFromDistrict(node: NodeRecord, platform: Platform): Promise<Extract<ReleaseWrite, { kind: 'record' | 'hand-back-found' }>> {
    try {
      await this.retry(() => platform.removeNode(node.district, node.nodeId));
    } catch (error) {
      if (error instanceof NodeNotEmptyError) return this.gearsFound(node, platform, error);
      if (!(error instanceof NotFoundError)) throw error;
      return { kind: 'record', step: 'removedFromDistrict', patch: {}, foundNoNode: true };
    }
    return { kind: 'record', step: 'removedFromDistrict', patch: {} };
  }

  /**
   * Just before the host goes: a node whose removal found it in no district may have joined one since (a host still
   * booting when its launch was failed), and taken gears. It is removed again: the hand-back to record if the platform
   * refuses (it holds gears), else undefined. Idempotent, so a crash before the termination is recorded repeats it.
   */
  private async removedAgainIfJoined(node: NodeRecord): Promise<ReleaseWrite | undefined> {
    const platform = this.ports.platform;
    if (!platform || node.steps?.[REMOVAL_FOUND_NO_NODE_STEP] === undefined) return undefined;
    const removal = await this.removeFromDistrict(node, platform);
    if (removal.kind === 'hand-back-found') return removal;
    if (!removal.foundNoNode) this.ports.log.warn('node joined its district after its removal found it in none; removed before its host goes', { nodeId: node.nodeId, pool: node.pool, district: node.district });
    return undefined;
  }

  /**
   * remove-node refused: the node holds gears. What the platform lists on it
   * (named in the reason), and where the node goes. The first remove-node
   * runs before anything else of the release; the one before the host goes
   * (`removedAgainIfJoined`) after the DNS record was deleted, which the
   * hand-back restores (`restoreDns`).
   */
  private async gearsFound(node: NodeRecord, platform: Platform, refusal: NodeNotEmptyError): Promise<Extract<ReleaseWrite, { kind: 'hand-back-found' }>> {
    let gears: GearInfo[] = [];
    try {
      gears = await this.retry(() => platform.listGears(node.nodeId));
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
    const target = handBackTarget(node, await this.ports.store.getPool(node.pool), this.ports.clock.now());
    return { kind: 'hand-back-found', to: target.to, gears: gears.length, reason: handBackReason(node.nodeId, `the platform refused remove-node (${refusal.message})`, gears, target) };
  }

  /** terminating -> draining | active, the release's own steps cleared; then the metric and the decision log. */
  private async handBack(node: NodeRecord, to: HandBackTarget): Promise<NodeRecord> {
    const { store, clock, log, metrics } = this.ports;
    const now = clock.now();
    // Every release step goes too: a node handed back after its removal found it in no district has some recorded, and a
    // later release must run them again.
    const released = new Set<string>([RELEASE_KIND_STEP, 'releaseStarted', REMOVAL_FOUND_NO_NODE_STEP, ...RELEASE_STEPS, ...Object.values(HAND_BACK_STEPS)]);
    const steps = Object.fromEntries(Object.entries(node.steps ?? {}).filter(([step]) => !released.has(step)));
    const reason = node.reason ?? `release of ${node.nodeId} stopped: it holds gears`;
    let handed: NodeRecord;
    try {
      handed = await store.transitionNode(
        node.nodeId,
        {
          from: 'terminating',
          to,
          expectedVersion: node.version,
          patch: {
            reason,
            steps: { ...steps, handedBackAt: now.toISOString() },
            releasePhase: undefined,
            ...(to === 'active' ? { drainId: undefined } : {}),
            // A failed node that holds gears joined after all (as the provisioner's tick marks one).
            ...(node.joinedAt === undefined ? { joinedAt: now.toISOString() } : {}),
          },
        },
        now,
      );
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      // Another invocation handed it back first: carry on from its record.
      const current = (error.current as NodeRecord | undefined) ?? (await store.getNode(node.nodeId));
      if (current?.state === to) return current;
      throw error;
    }
    metrics.record('ReleasesHandedBack', 1, 'Count', { pool: node.pool });
    log.warn(`node handed back as ${to}; its host is kept`, { nodeId: node.nodeId, pool: node.pool, kind: this.kindOf(node), reason });
    try {
      await store.appendDecision(
        {
          pool: node.pool,
          at: now.toISOString(),
          kind: 'refused',
          reason,
          ...(node.decisionId === undefined ? {} : { decisionId: node.decisionId }),
          details: { nodeId: node.nodeId, handedBackAs: to, releaseFor: this.kindOf(node) },
        },
        this.config.decisionLogTtl,
      );
    } catch (error) {
      log.warn('decision log entry not written', { nodeId: node.nodeId, error: describeError(error) });
    }
    return handed;
  }

  private options(node: NodeRecord): ReleaseOptions {
    return {
      dns: this.ports.dns !== undefined,
      volume: findPoolConfig(this.config, node.pool)?.template.volume !== undefined,
      platform: this.ports.platform !== undefined,
    };
  }

  private kindOf(node: NodeRecord): ReleaseKind {
    return node.steps?.[RELEASE_KIND_STEP] === 'failed' ? 'failed' : 'decommission';
  }

  /** delayAfterDelete starts when the host goes; only a decommission counts as a scale-down. */
  private async markScaleDown(node: NodeRecord): Promise<void> {
    if (this.kindOf(node) !== 'decommission') return;
    const at = node.steps?.instanceTerminated ?? node.steps?.releaseReported;
    if (at === undefined) return;
    await patchPool(this.ports.store, node.pool, (pool) =>
      pool.lastScaleDownAt !== undefined && pool.lastScaleDownAt >= at ? undefined : { lastScaleDownAt: at },
    );
  }

  /** terminating -> terminated, then the pool's last-delete time, metrics and the decision log. */
  private async finish(node: NodeRecord): Promise<NodeRecord> {
    const { store, clock, log, metrics } = this.ports;
    const now = clock.now();
    const kind = this.kindOf(node);
    const summary = releaseSummary(node);
    let terminated: NodeRecord;
    try {
      terminated = await store.transitionNode(
        node.nodeId,
        { from: 'terminating', to: 'terminated', expectedVersion: node.version, patch: { reason: `${kind === 'failed' ? 'released after failing' : 'decommissioned'}: ${summary}` } },
        now,
      );
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      // Another invocation got here first: carry on from its record (done, or further steps to run).
      const current = (error.current as NodeRecord | undefined) ?? (await store.getNode(node.nodeId));
      if (current?.state === 'terminated' || current?.state === 'terminating') return current;
      throw error;
    }
    await this.markScaleDown(terminated);
    const dimensions = { pool: node.pool };
    metrics.record('NodesTerminated', 1, 'Count', dimensions);
    // The lifetime is in the log line below, not a metric series of its own (docs/BENCHMARKS.md, the bill).
    const lifetime = nodeLifetimeSeconds(node, now);
    log.info('node terminated', { nodeId: node.nodeId, pool: node.pool, kind, lifetimeSeconds: lifetime, summary });
    try {
      await store.appendDecision(
        {
          pool: node.pool,
          at: now.toISOString(),
          kind: kind === 'failed' ? 'failure' : 'scale-down',
          reason: `node ${node.nodeId} terminated: ${summary}`,
          ...(node.decisionId === undefined ? {} : { decisionId: node.decisionId }),
          details: { nodeId: node.nodeId, kind, steps: node.steps ?? {}, lifetimeSeconds: lifetime ?? null },
        },
        this.config.decisionLogTtl,
      );
    } catch (error) {
      log.warn('decision log entry not written', { nodeId: node.nodeId, error: describeError(error) });
    }
    return terminated;
  }

  private retry<T>(call: () => Promise<T>): Promise<T> {
    return retryOn(this.ports, this.config.cloudRetry)(call);
  }
}

/** What a release did, for the node's reason and the decision log. */
function releaseSummary(node: NodeRecord): string {
  const parts: string[] = [];
  const steps = node.steps ?? {};
  if (steps.removedFromDistrict) parts.push(`removed from district ${node.district}`);
  if (steps.dnsDeleted) parts.push('DNS record deleted');
  if (steps.instanceTerminated) parts.push(`instance ${node.instanceId} terminated`);
  if (steps.releaseReported) parts.push(`host ${node.nodeId} reported for release (no instance id)`);
  if (steps.volumeDeleted) parts.push(`volume ${node.volumeId} deleted`);
  return parts.length === 0 ? 'nothing to release' : parts.join(', ');
}
