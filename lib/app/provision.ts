/**
 * The node provisioner: carries out a scale-up decision at most once.
 *
 * 1. Claim: the room is re-checked against pool.max and the global limits and
 *    reserved on the capacity record, conditional on its version, so two
 *    pools' invocations never both take the last room (workflows/launch/claim.ts);
 *    the node names are allocated from the name counter and recorded once
 *    (`claimScaleUp`); a redelivered or concurrent delivery finds the same names.
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
 * Each node's host is the launch workflow (lib/workflows/launch/host.ts); the
 * claim and the decision's end are decision.ts. The tick (schedule,
 * tick.ts) fails nodes that did not join in time and releases
 * their hosts, fills in what a booting host reports late (address, volume,
 * DNS), releases leases of finished decisions, and sweeps orphaned hosts.
 */
import type { Config } from '../config/index.js';
import { findPoolConfig } from '../config/index.js';
import type { PoolId } from '../domain/model.js';
import { PROVISION_STEPS } from '../domain/provisioning.js';
import type { ScaleUpMessage } from '../messages/index.js';
import { needsHost, registerDns, summarize, type LaunchContext, type ProvisionedNode, type ProvisionerPorts } from '../workflows/launch/context.js';
import { claimNames, clearExhaustion, ensureNodes, failForCapacity, finishDecision, markExhausted, outcomeReason, type DecisionKind } from '../workflows/launch/decision.js';
import { launch } from '../workflows/launch/host.js';
import { provisionerTick, type ProvisionerTickReport } from '../workflows/launch/tick.js';
import { HostReleaser } from '../workflows/release/release.js';
import { LaunchTemplateResolver } from './launch-templates.js';

export type { ProvisionedNode, ProvisionerPorts, ProvisionerTickReport };

export interface ScaleUpItem {
  /** The SQS messageId, so a failure maps back to its record. */
  id: string;
  message: ScaleUpMessage;
}

export interface ScaleUpOutcome {
  decisionId: string;
  pool: PoolId;
  /** provisioned: every node has its host; partial / exhausted: some / all failed for capacity; refused: none claimed. */
  kind: DecisionKind;
  reason: string;
  nodes: ProvisionedNode[];
}

/** The node provisioner: the consumer of the scale queue and of the provisioner's schedule. */
export class NodeProvisioner {
  private readonly ctx: LaunchContext;
  private readonly templates: LaunchTemplateResolver;

  constructor(ports: ProvisionerPorts, config: Config) {
    this.ctx = { ports, config, releaser: new HostReleaser(ports, config) };
    this.templates = new LaunchTemplateResolver(ports.launchTemplateVersions, ports);
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
    const { log } = this.ctx.ports;
    const poolConfig = findPoolConfig(this.ctx.config, message.pool);
    if (!poolConfig) {
      const reason = `pool ${message.pool} is not configured; scale-up ${message.decisionId} refused`;
      log.error(reason, { pool: message.pool, decisionId: message.decisionId });
      await finishDecision(this.ctx, message, 'refused', reason, [], true);
      return { decisionId: message.decisionId, pool: message.pool, kind: 'refused', reason, nodes: [] };
    }

    const { claim, created } = await claimNames(this.ctx, message, poolConfig);
    if (claim.slots.length === 0) {
      const reason = claim.reason ?? 'no room for any node';
      if (created) log.warn(`scale-up ${message.decisionId} refused: ${reason}`, { pool: message.pool, decisionId: message.decisionId });
      await finishDecision(this.ctx, message, 'refused', reason, [], created);
      return { decisionId: message.decisionId, pool: message.pool, kind: 'refused', reason, nodes: [] };
    }

    let nodes = await ensureNodes(this.ctx, message, poolConfig, claim);
    // Every host of the decision from the version `$Latest` names now, each recording it (drift compares numbers).
    const launchConfig = nodes.some((node) => needsHost(node, message.decisionId)) ? { ...poolConfig, template: await this.templates.resolve(poolConfig.template) } : poolConfig;
    let changed = created;
    let exhausted: string[] | undefined;
    const launchedNow: string[] = [];
    for (const [slot, node] of nodes.entries()) {
      if (!needsHost(node, message.decisionId)) continue;
      if (exhausted) {
        nodes[slot] = await failForCapacity(this.ctx, node, exhausted);
        changed = true;
        continue;
      }
      const result = await launch(this.ctx, node, slot, message, launchConfig);
      changed = true;
      if ('exhausted' in result) {
        exhausted = result.exhausted;
        nodes[slot] = await failForCapacity(this.ctx, node, exhausted);
        continue;
      }
      nodes[slot] = result.node;
      if (result.launched) launchedNow.push(result.node.nodeId);
    }
    nodes = await Promise.all(nodes.map((node) => registerDns(this.ctx, node)));

    if (exhausted) await markExhausted(this.ctx, message, poolConfig, exhausted);
    else if (launchedNow.length > 0) await clearExhaustion(this.ctx, message.pool);
    if (launchedNow.length > 0) this.ctx.ports.metrics.record('NodesProvisioned', launchedNow.length, 'Count', { pool: message.pool });

    const ours = nodes.filter((node) => node.decisionId === message.decisionId);
    const failed = ours.filter((node) => node.state === 'failed' && node.steps?.[PROVISION_STEPS.capacityExhausted]).length;
    const kind: ScaleUpOutcome['kind'] = failed === 0 ? 'provisioned' : failed === ours.length ? 'exhausted' : 'partial';
    const reason = outcomeReason(this.ctx, message, claim, ours, kind, exhausted);
    await finishDecision(this.ctx, message, kind, reason, ours, changed);
    return { decisionId: message.decisionId, pool: message.pool, kind, reason, nodes: ours.map(summarize) };
  }

  /** Timeouts, late host details, leases of finished decisions, orphaned hosts. Errors are collected, never thrown per node. */
  async tick(): Promise<ProvisionerTickReport> {
    return provisionerTick(this.ctx);
  }
}
