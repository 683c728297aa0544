/**
 * When a pool last grew, for `scaleDown.delayAfterAdd`: the later of its last
 * scale-up decision and the newest join of a node it provisioned. Counted from
 * the decision alone, the delay ran out while the node booted: with a boot of
 * ten minutes a node joined, empty and least loaded, and was the next
 * scale-down in the same minute, while the broker was already placing new
 * gears on it (every gear then moved, on a drain priced at none). Karpenter
 * likewise leaves a node alone until it has initialized and settled.
 * Pure function of data.
 */
import type { NodeRecord, PoolRecord } from './model.js';

export function lastAddedAt(pool: Pick<PoolRecord, 'lastScaleUpAt'>, nodes: readonly Pick<NodeRecord, 'state' | 'joinedAt'>[]): string | undefined {
  let latest = pool.lastScaleUpAt;
  for (const node of nodes) {
    if (node.state !== 'active' || node.joinedAt === undefined) continue;
    if (latest === undefined || Date.parse(node.joinedAt) > Date.parse(latest)) latest = node.joinedAt;
  }
  return latest;
}
