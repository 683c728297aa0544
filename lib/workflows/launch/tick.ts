/**
 * The provisioner's schedule: fails nodes that did not join in time (after
 * asking the platform whether they joined unseen) and releases their hosts
 * through the release workflow, fills in what a booting host reports late
 * (address, volume, DNS), releases leases of finished decisions, and sweeps
 * orphaned hosts. Errors are collected per subject, never thrown.
 */
import { RELEASE_KIND_STEP } from '../../domain/decommission.js';
import type { GearInfo, NodeRecord, PoolId } from '../../domain/model.js';
import { NODE_TAG, PROVISION_STEPS, findOrphans, provisionTimedOut } from '../../domain/provisioning.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import { orphanNodeId, orphanVerdict } from '../../domain/orphans.js';
import type { HostInfo } from '../../ports/cloud.js';
import type { Platform } from '../../ports/platform.js';
import { describeError, patchPool, poolIds, releaseLease } from '../../app/steps.js';
import { allNodes, hostFields, needsHost, registerDns, retry, type LaunchContext } from './context.js';

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
  /** `reason`: why a host was kept with sweeper.terminateOrphans on. */
  orphans: Array<{ instanceId: string; terminated: boolean; reason?: string }>;
  errors: Array<{ subject: string; error: string }>;
}

/** Timeouts, late host details, leases of finished decisions, orphaned hosts. Errors are collected, never thrown per node. */
export async function provisionerTick(ctx: LaunchContext): Promise<ProvisionerTickReport> {
  const report: ProvisionerTickReport = { timedOut: [], failedEarly: [], released: [], rejoined: [], waiting: [], updated: [], leasesReleased: [], adopted: [], orphans: [], errors: [] };
  const pools = await poolIds(ctx.ports.store, ctx.config);
  const byPool = new Map<PoolId, NodeRecord[]>();
  for (const pool of pools) byPool.set(pool, await ctx.ports.store.listNodes(pool));
  const all = [...byPool.values()].flat();

  const provisioning = all.filter((node) => node.state === 'provisioning');
  const hosts = await describeHosts(ctx, provisioning, report);
  for (const node of provisioning) await guard(ctx, report, node.nodeId, () => checkProvisioning(ctx, node, hosts.get(node.instanceId ?? ''), report));

  const activeWithoutDns = all.filter((node) => node.state === 'active');
  for (const node of activeWithoutDns) await guard(ctx, report, node.nodeId, () => registerDns(ctx, node));

  for (const node of await releasable(ctx)) await guard(ctx, report, node.nodeId, () => release(ctx, node, report));

  for (const pool of pools) await guard(ctx, report, pool, () => releaseFinishedLease(ctx, pool, report));

  await guard(ctx, report, 'sweeper', () => sweep(ctx, report));
  return report;
}

export async function describeHosts(ctx: LaunchContext, nodes: readonly NodeRecord[], report: ProvisionerTickReport): Promise<Map<string, HostInfo>> {
  const ids = nodes.map((node) => node.instanceId).filter((id): id is string => id !== undefined);
  if (ids.length === 0) return new Map();
  try {
    return await retry(ctx, () => ctx.ports.cloud.describeHosts(ids));
  } catch (error) {
    report.errors.push({ subject: 'describeHosts', error: describeError(error) });
    return new Map();
  }
}

export async function checkProvisioning(ctx: LaunchContext, node: NodeRecord, host: HostInfo | undefined, report: ProvisionerTickReport): Promise<void> {
  const { store, clock } = ctx.ports;
  const now = clock.now();
  const max = ctx.config.scaleUp.maxNodeProvisionTime;
  if (provisionTimedOut(node, now, max)) {
    if (await joinedWithoutStats(ctx, node)) return;
    await fail(ctx, node, `did not join within ${Math.round(max / 60_000)}m of its creation (maxNodeProvisionTime)`, 'ProvisionTimeouts');
    report.timedOut.push(node.nodeId);
    return;
  }
  if (host && (host.state === 'shutting-down' || host.state === 'terminated' || host.state === 'stopping' || host.state === 'stopped')) {
    await fail(ctx, node, `instance ${node.instanceId} is ${host.state} before the node joined`, 'ProvisionFailures');
    report.failedEarly.push(node.nodeId);
    return;
  }
  let current = node;
  if (host) {
    const patch: Partial<NodeRecord> = {};
    if (host.privateIp !== undefined && node.privateIp === undefined) patch.privateIp = host.privateIp;
    if (host.volumeId !== undefined && node.volumeId === undefined) patch.volumeId = host.volumeId;
    if (host.instanceType !== undefined && node.instanceType === undefined) patch.instanceType = host.instanceType;
    if (host.zone !== undefined && node.zone === undefined) patch.zone = host.zone;
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
  await registerDns(ctx, current);
}

/**
 * Stats are only our view of a node: a node whose stats were lost or late
 * may have joined its district and taken gears. Before a timed-out node is
 * failed (and its host released), the platform is asked; a node that holds
 * gears joined, and becomes active. An unknown node (`NotFoundError`) or an
 * empty one is failed; an error leaves the decision to the next tick.
 */
export async function joinedWithoutStats(ctx: LaunchContext, node: NodeRecord): Promise<boolean> {
  return activateIfHoldingGears(ctx, node, (gears) => `joined: the platform lists ${gears} gear(s) on it, though no stats reached nodescaler within maxNodeProvisionTime`);
}

/**
 * The same question once more before a failed node's release removes it
 * from its district: its host may join after all and take gears after it
 * was failed, and `remove-node` would then refuse it for good, leaving it
 * `terminating` with its gears. A node holding gears is serving: its
 * release is called off and it becomes active. Nothing of the release has
 * run before `remove-node` (the first step), so there is nothing to undo.
 */
export async function releaseCalledOff(ctx: LaunchContext, node: NodeRecord): Promise<boolean> {
  // A release that found gears itself hands the node back (lib/workflows/release): it re-opens it on the platform too.
  if (node.steps?.removedFromDistrict !== undefined || node.releasePhase === 'handingBack') return false;
  return activateIfHoldingGears(ctx, node, (gears) => `joined after it was failed: the platform lists ${gears} gear(s) on it; its release was called off`);
}

/** `node` (provisioning, failed or terminating) -> active when the platform lists gears on it; false without a platform, or when it holds none. */
export async function activateIfHoldingGears(ctx: LaunchContext, node: NodeRecord, reason: (gears: number) => string): Promise<boolean> {
  const { platform, store, clock, log } = ctx.ports;
  if (!platform) return false;
  let gears: readonly GearInfo[];
  try {
    gears = await retry(ctx, () => platform.listGears(node.nodeId));
  } catch (error) {
    if (error instanceof NotFoundError) return false;
    throw error;
  }
  if (gears.length === 0) return false;
  // A release's remove-node may have closed the node before the broker refused it (the adapter deactivates first):
  // open it again before it counts as serving. "already active" is success.
  if (node.state === 'terminating') await retry(ctx, () => platform.activateNode(node.district, node.nodeId));
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
        patch: { joinedAt: now.toISOString(), reason: reason(gears.length), ...(node.state === 'provisioning' ? {} : { steps, releasePhase: undefined }) },
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
export async function fail(ctx: LaunchContext, node: NodeRecord, why: string, metric: string): Promise<void> {
  const { store, clock, log, metrics } = ctx.ports;
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
export async function releasable(ctx: LaunchContext): Promise<NodeRecord[]> {
  const nodes = await allNodes(ctx);
  return nodes.filter((node) => node.state === 'failed' || (node.state === 'terminating' && node.steps?.[RELEASE_KIND_STEP] === 'failed'));
}

export async function release(ctx: LaunchContext, node: NodeRecord, report: ProvisionerTickReport): Promise<void> {
  if (await releaseCalledOff(ctx, node)) {
    report.rejoined.push(node.nodeId);
    return;
  }
  let current = await withUnrecordedHost(ctx, node, report);
  if (current.state === 'failed') {
    try {
      current = await ctx.releaser.begin(current, 'failed', `releasing: ${current.reason ?? 'failed'}`);
    } catch (error) {
      if (error instanceof ConflictError) return;
      throw error;
    }
  }
  const result = await ctx.releaser.advance(current);
  if (result.status === 'terminated') report.released.push(node.nodeId);
  else if (result.status === 'handed-back') report.rejoined.push(node.nodeId);
  else report.waiting.push(node.nodeId);
}

/**
 * A failed node whose launch took effect unseen (RunInstances went through,
 * the provisioner saw an error) has a host but no instance id; released as
 * it is, its release would only report the host, which would run on. The
 * sweeper adopts such hosts, but a release may finish before it runs, so
 * the node's host is looked up by its node tag first and recorded.
 */
export async function withUnrecordedHost(ctx: LaunchContext, node: NodeRecord, report: ProvisionerTickReport): Promise<NodeRecord> {
  if (node.instanceId !== undefined || node.steps?.[PROVISION_STEPS.launchAttempt] === undefined) return node;
  const hosts = await retry(ctx, () => ctx.ports.cloud.listManagedHosts());
  const host = hosts.find((candidate) => candidate.instanceId !== undefined && candidate.tags?.[NODE_TAG] === node.nodeId);
  return host ? recordHost(ctx, node, host, report) : node;
}

/** Records the host of a node that had not recorded it (`ConflictError` when the node changed meanwhile). */
export async function recordHost(ctx: LaunchContext, node: NodeRecord, host: HostInfo, report: ProvisionerTickReport): Promise<NodeRecord> {
  const recorded = await ctx.ports.store.updateNode(node.nodeId, node.version, { ...hostFields(host) });
  report.adopted.push(node.nodeId);
  ctx.ports.log.warn('host found for a node that had not recorded it; recorded', { nodeId: node.nodeId, state: node.state, instanceId: host.instanceId });
  return recorded;
}

/** A scale-up lease whose decision has every node resolved is released (a crash after the last step left it held). */
export async function releaseFinishedLease(ctx: LaunchContext, poolId: PoolId, report: ProvisionerTickReport): Promise<void> {
  const { store } = ctx.ports;
  const pool = await store.getPool(poolId);
  const lease = pool?.lease;
  if (!lease || lease.kind !== 'scale-up') return;
  const claim = await store.getScaleUp(lease.holder);
  if (!claim) return;
  const nodes = await Promise.all(claim.slots.map((slot) => store.getNode(slot.nodeId)));
  const open = nodes.some((node) => node === undefined || needsHost(node, claim.decisionId));
  if (open) return;
  await releaseLease(store, poolId, lease.holder);
  report.leasesReleased.push(lease.holder);
  ctx.ports.log.info('released the lease of a finished scale-up', { pool: poolId, decisionId: lease.holder });
}

export async function sweep(ctx: LaunchContext, report: ProvisionerTickReport): Promise<void> {
  const { cloud, clock, log, metrics } = ctx.ports;
  const hosts = await retry(ctx, () => cloud.listManagedHosts());
  if (hosts.length === 0) return;
  const nodes = await allNodes(ctx);
  const { orphans, adoptable } = findOrphans(hosts, nodes, clock.now(), ctx.config.sweeper.orphanAge);
  for (const { host, nodeId } of adoptable) {
    try {
      await recordHost(ctx, nodes.find((candidate) => candidate.nodeId === nodeId)!, host, report);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
  }
  for (const host of orphans) {
    const instanceId = host.instanceId!;
    metrics.record('OrphanHosts', 1, 'Count', { pool: host.tags?.['nodescaler:pool'] ?? 'unknown' });
    if (!ctx.config.sweeper.terminateOrphans) {
      log.warn('orphaned host: tagged by nodescaler, unknown to the state table; set sweeper.terminateOrphans to terminate such hosts', {
        instanceId,
        launchedAt: host.launchedAt,
        tags: host.tags,
      });
      report.orphans.push({ instanceId, terminated: false });
      continue;
    }
    await guard(ctx, report, instanceId, () => sweepOrphan(ctx, host, report));
  }
}

/**
 * One orphan, with sweeper.terminateOrphans: terminated only when the
 * platform lists no gear on its node (orphanVerdict), after the node leaves
 * its district (remove-node, which the broker refuses for a node that took a
 * gear meanwhile). A listing that fails leaves the host to the next tick.
 */
async function sweepOrphan(ctx: LaunchContext, host: HostInfo, report: ProvisionerTickReport): Promise<void> {
  const { cloud, platform, log, metrics } = ctx.ports;
  const instanceId = host.instanceId!;
  const nodeId = orphanNodeId(host);
  const gears = platform && nodeId !== undefined ? await gearsOnOrphan(ctx, platform, nodeId) : undefined;
  const verdict = orphanVerdict({ host, platform: platform !== undefined, ...(gears !== undefined ? { gears } : {}) });
  if (verdict.terminate && verdict.district !== undefined) {
    try {
      await retry(ctx, () => platform!.removeNode(verdict.district!, verdict.nodeId));
    } catch (error) {
      // Not in the district: nothing to remove. Anything else (a gear arrived: NodeNotEmptyError) keeps the host.
      if (!(error instanceof NotFoundError)) throw error;
    }
  }
  if (!verdict.terminate) {
    metrics.record('OrphanHostsKept', 1, 'Count', { pool: host.tags?.['nodescaler:pool'] ?? 'unknown' });
    log.error('orphaned host not terminated', { instanceId, launchedAt: host.launchedAt, tags: host.tags, reason: verdict.reason });
    report.orphans.push({ instanceId, terminated: false, reason: verdict.reason });
    return;
  }
  await retry(ctx, () => cloud.terminateHost(instanceId));
  log.warn('orphaned host terminated: the platform lists no gear on its node', { instanceId, nodeId: verdict.nodeId, launchedAt: host.launchedAt, tags: host.tags });
  report.orphans.push({ instanceId, terminated: true });
}

/** Gears the platform lists on an orphan's node; 0 for a node it does not know. */
async function gearsOnOrphan(ctx: LaunchContext, platform: Platform, nodeId: string): Promise<number> {
  try {
    return (await retry(ctx, () => platform.listGears(nodeId))).length;
  } catch (error) {
    if (error instanceof NotFoundError) return 0;
    throw error;
  }
}

export async function guard(ctx: LaunchContext, report: ProvisionerTickReport, subject: string, work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (error) {
    report.errors.push({ subject, error: describeError(error) });
    ctx.ports.log.error('provisioner tick step failed; the next tick tries again', { subject, error: describeError(error) });
  }
}
