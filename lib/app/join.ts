/**
 * A provisioned node's first stats: it joins its district (and the pool's broker region and zone,
 * lib/domain/placement.ts) before it is `active`.
 */
import { findPoolConfig, type Config } from '../config/index.js';
import type { NodeRecord } from '../domain/model.js';
import { nodePlacement } from '../domain/placement.js';
import { ConflictError, NodescalerError, ValidationError, describeError } from '../errors.js';
import type { Log } from '../ports/log.js';
import type { Metrics } from '../ports/metrics.js';
import type { Platform } from '../ports/platform.js';
import type { StateStore } from '../ports/state-store.js';

/**
 * provisioning -> active once the node is in its district. add-node runs
 * first (a crash in between adds it again on its next stats: add-node is
 * idempotent); when it fails the node stays `provisioning`, so its next
 * stats try again, and a node that never gets in is failed and released at
 * maxNodeProvisionTime (the provisioner's tick), as a node that never
 * registers is in Karpenter. Marked active anyway, it took no gears and
 * nothing tried again.
 */
export async function joinDistrict(
  { platform, store, log, metrics }: { platform?: Platform; store: StateStore; log: Log; metrics: Metrics },
  config: Config,
  node: NodeRecord,
  now: Date,
): Promise<void> {
  if (platform) {
    try {
      const where = nodePlacement(findPoolConfig(config, node.pool)?.openshiftRegion, node.zone);
      if (!where.ok) throw new ValidationError({ path: 'openshiftRegion.zone', message: where.reason, value: node.zone }, 'configuration');
      await platform.addNode(node.district, node.nodeId, where.placement);
    } catch (error) {
      const why = describeError(error);
      log.error('node not added to its district; it stays provisioning and add-node is tried again on its next stats', {
        nodeId: node.nodeId,
        district: node.district,
        error: why,
        retryable: error instanceof NodescalerError ? error.retryable : true,
      });
      metrics.record('JoinFailures', 1, 'Count', { pool: node.pool });
      try {
        await store.updateNode(node.nodeId, node.version, { reason: `joining: add-node to district ${node.district} failed: ${why}`.slice(0, 1024) });
      } catch (conflict) {
        if (!(conflict instanceof ConflictError)) throw conflict;
      }
      return;
    }
  }
  try {
    await store.transitionNode(
      node.nodeId,
      { from: 'provisioning', to: 'active', patch: { joinedAt: now.toISOString(), reason: 'joined: first stats reported' } },
      now,
    );
    log.info('node joined', { nodeId: node.nodeId, pool: node.pool, decisionId: node.decisionId });
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error; // another invocation activated it first
  }
}
