/**
 * Two pools for the evaluator's batch tests: `d1/slow`, six nodes at 10 %
 * low for an hour (a scale-down whose candidates are checked one by one),
 * and `d1/hot`, two nodes at 99 % (a scale-up). The slow pool comes first in
 * the configuration, so evaluated one after the other it would hold up the hot one.
 */
import { parseConfig, type Config } from '../../lib/config/index.js';
import type { NodeRecord } from '../../lib/domain/model.js';
import type { StateStore } from '../../lib/ports/state-store.js';

export const SLOW = 'd1/slow';
export const HOT = 'd1/hot';
export const SLOW_NODES = 6;

export const twoPoolsConfig: Config = parseConfig({
  scaleUp: { forecast: { enabled: false } },
  scaleDown: { utilizationThreshold: 0.5, payoff: { enabled: false } },
  pools: [
    { district: 'd1', profile: 'slow', min: 1, max: 20, gearsPerNode: 100, naming: { base: 'slow' } },
    { district: 'd1', profile: 'hot', min: 1, max: 10, gearsPerNode: 100, naming: { base: 'hot' } },
  ],
});

/** `slow-N.example.com` (N from 1) and `hot-N.example.com` nodes in the store, and the slow pool low for an hour. */
export async function seedTwoPools(store: StateStore, now: Date): Promise<NodeRecord[]> {
  const at = now.toISOString();
  const created: NodeRecord[] = [];
  for (const [pool, profile, count, activeGears] of [[SLOW, 'slow', SLOW_NODES, 10], [HOT, 'hot', 2, 99]] as const) {
    for (let n = 1; n <= count; n++) {
      const nodeId = `${profile}-${n}.example.com`;
      created.push(
        await store.createNode(
          { nodeId, pool, district: 'd1', profile, state: 'active', createdAt: at, origin: 'provisioned', protected: false, stats: { activeGears, maxActiveGears: 100, reportedAt: at } },
          now,
        ),
      );
    }
  }
  const slow = await store.ensurePool(SLOW);
  await store.updatePool(SLOW, slow.version, { lowSince: new Date(now.getTime() - 3_600_000).toISOString() });
  return created;
}
