/**
 * Releasing a node's host, step by recorded step: out of its district, DNS
 * record deleted, instance terminated (or, for handlers that create
 * nothing, the release reported), gear volume deleted once detached, then
 * `terminated`. Used by the decommissioner (drained nodes) and by the
 * provisioner (nodes that failed to join). Every step is recorded on the node
 * before the next one starts, so a crash at any point resumes at the next
 * step, and the steps that are not idempotent never run twice.
 */
import type { Config } from '../config/index.js';
import { findPoolConfig } from '../config/index.js';
import { RELEASE_KIND_STEP, nextReleaseStep, nodeLifetimeSeconds, type ReleaseKind, type ReleaseStep } from '../domain/decommission.js';
import type { NodeRecord } from '../domain/model.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import type { ReleasingCloud } from '../ports/cloud.js';
import type { Clock } from '../ports/clock.js';
import type { Dns } from '../ports/dns.js';
import type { Log } from '../ports/log.js';
import type { Metrics } from '../ports/metrics.js';
import type { Platform } from '../ports/platform.js';
import type { StateStore } from '../ports/state-store.js';
import { describeError, patchPool, realSleep, recordSteps, retryTransient, type Sleep } from './steps.js';

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
  | { status: 'waiting'; node: NodeRecord; waitingFor: string };

export class HostReleaser {
  constructor(
    private readonly ports: ReleasePorts,
    private readonly config: Config,
  ) {}

  /**
   * Moves a `drained` or `failed` node to `terminating` by conditional write
   * on the version the caller checked, recording why. `ConflictError` when the
   * node changed since.
   */
  async begin(node: NodeRecord, kind: ReleaseKind, reason: string): Promise<NodeRecord> {
    const now = this.ports.clock.now();
    return this.ports.store.transitionNode(
      node.nodeId,
      {
        from: node.state,
        to: 'terminating',
        expectedVersion: node.version,
        patch: { reason, steps: { ...node.steps, [RELEASE_KIND_STEP]: kind, releaseStarted: now.toISOString() } },
      },
      now,
    );
  }

  /** Runs the remaining steps of a `terminating` node and marks it `terminated`; resumable at any point. */
  async advance(start: NodeRecord): Promise<ReleaseResult> {
    let node = start;
    if (node.state === 'terminated') return { status: 'terminated', node };
    if (node.state !== 'terminating') {
      throw new ValidationError({ path: 'state', message: `node ${node.nodeId} is ${node.state}, not terminating`, value: node.state });
    }
    const options = { dns: this.ports.dns !== undefined, volume: this.hasVolume(node), platform: this.ports.platform !== undefined };
    for (let step = nextReleaseStep(node, options); step !== undefined; step = nextReleaseStep(node, options)) {
      const result = await this.run(step, node);
      if ('waitingFor' in result) return { status: 'waiting', node, waitingFor: result.waitingFor };
      node = result.node;
    }
    return this.finish(node);
  }

  private hasVolume(node: NodeRecord): boolean {
    return findPoolConfig(this.config, node.pool)?.template.volume !== undefined;
  }

  private kindOf(node: NodeRecord): ReleaseKind {
    return node.steps?.[RELEASE_KIND_STEP] === 'failed' ? 'failed' : 'decommission';
  }

  private async run(step: ReleaseStep, node: NodeRecord): Promise<{ node: NodeRecord } | { waitingFor: string }> {
    const { store, cloud, clock, log } = this.ports;
    const at = () => clock.now().toISOString();
    const attributes = { nodeId: node.nodeId, pool: node.pool, step };
    switch (step) {
      case 'removedFromDistrict': {
        const platform = this.ports.platform;
        if (!platform) {
          throw new ValidationError({ path: 'platform', message: `no platform adapter to remove ${node.nodeId} from district ${node.district}` });
        }
        try {
          await this.retry(() => platform.removeNode(node.district, node.nodeId));
        } catch (error) {
          if (!(error instanceof NotFoundError)) throw error;
        }
        log.info('node removed from its district', { ...attributes, district: node.district });
        return { node: await recordSteps(store, node, { [step]: at() }) };
      }
      case 'dnsDeleted': {
        await this.retry(() => this.ports.dns!.deleteHost(node.nodeId, node.privateIp!));
        log.info('DNS record deleted', { ...attributes, ip: node.privateIp });
        return { node: await recordSteps(store, node, { [step]: at() }) };
      }
      case 'volumeResolved': {
        const hosts = await this.retry(() => cloud.describeHosts([node.instanceId!]));
        const volumeId = hosts.get(node.instanceId!)?.volumeId;
        if (volumeId === undefined) log.warn('no gear volume found on the instance; nothing to delete after it', { ...attributes, instanceId: node.instanceId });
        return { node: await recordSteps(store, node, { [step]: at() }, volumeId === undefined ? {} : { volumeId }) };
      }
      case 'instanceTerminated': {
        await this.retry(() => cloud.terminateHost(node.instanceId!));
        log.info('instance terminated', { ...attributes, instanceId: node.instanceId });
        const recorded = await recordSteps(store, node, { [step]: at() });
        await this.markScaleDown(recorded);
        return { node: recorded };
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
        const recorded = await recordSteps(store, node, { [step]: at() });
        await this.markScaleDown(recorded);
        return { node: recorded };
      }
      case 'volumeDeleted': {
        try {
          await this.retry(() => cloud.deleteVolume(node.volumeId!));
        } catch (error) {
          if (!(error instanceof ConflictError)) throw error;
          log.info('gear volume still attached; deleting it on a later tick', { ...attributes, volumeId: node.volumeId });
          return { waitingFor: `volume ${node.volumeId} to detach` };
        }
        log.info('gear volume deleted', { ...attributes, volumeId: node.volumeId });
        return { node: await recordSteps(store, node, { [step]: at() }) };
      }
    }
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

  private async finish(node: NodeRecord): Promise<ReleaseResult> {
    const { store, clock, log, metrics } = this.ports;
    const now = clock.now();
    const kind = this.kindOf(node);
    const summary = this.summary(node);
    let terminated: NodeRecord;
    try {
      terminated = await store.transitionNode(
        node.nodeId,
        { from: 'terminating', to: 'terminated', expectedVersion: node.version, patch: { reason: `${kind === 'failed' ? 'released after failing' : 'decommissioned'}: ${summary}` } },
        now,
      );
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      const current = (error.current as NodeRecord | undefined) ?? (await store.getNode(node.nodeId));
      if (current?.state === 'terminated') return { status: 'terminated', node: current };
      if (current?.state === 'terminating') return this.advance(current);
      throw error;
    }
    await this.markScaleDown(terminated);
    const dimensions = { pool: node.pool };
    metrics.record('NodesTerminated', 1, 'Count', dimensions);
    const lifetime = nodeLifetimeSeconds(node, now);
    if (lifetime !== undefined) metrics.record('NodeLifetime', lifetime, 'Seconds', dimensions);
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
    return { status: 'terminated', node: terminated };
  }

  private summary(node: NodeRecord): string {
    const parts: string[] = [];
    const steps = node.steps ?? {};
    if (steps.removedFromDistrict) parts.push(`removed from district ${node.district}`);
    if (steps.dnsDeleted) parts.push('DNS record deleted');
    if (steps.instanceTerminated) parts.push(`instance ${node.instanceId} terminated`);
    if (steps.releaseReported) parts.push(`host ${node.nodeId} reported for release (no instance id)`);
    if (steps.volumeDeleted) parts.push(`volume ${node.volumeId} deleted`);
    return parts.length === 0 ? 'nothing to release' : parts.join(', ');
  }

  private retry<T>(call: () => Promise<T>): Promise<T> {
    return retryTransient(call, this.config.cloudRetry, {
      sleep: this.ports.sleep ?? realSleep,
      random: this.ports.random ?? Math.random,
      onRetry: (error, attempt, delayMs) => this.ports.log.warn('transient error; retrying', { attempt, delayMs, error: error.message }),
    });
  }
}
