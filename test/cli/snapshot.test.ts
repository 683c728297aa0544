/** What the CLI's `explain` and `evaluate --dry-run` decide on (lib/cli/snapshot.ts): the evaluator's own input. */
import { describe, expect, it } from 'vitest';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { dryRunView } from '../../lib/cli/evaluate.js';
import { evaluationInput, readSnapshot, type Snapshot } from '../../lib/cli/snapshot.js';
import { parseConfig } from '../../lib/config/index.js';
import { statsToStore } from '../../lib/domain/node-stats.js';
import { NO_CONTROLS } from '../../lib/domain/controls.js';
import { NOW, POOL, config, node, pool } from '../support/builders.js';

describe('evaluationInput', () => {
  it('counts the pool\'s drains waiting for their replacement, as the evaluator does: a renewal waits for them', () => {
    const cfg = config();
    const nodes = [node('a', { gears: 10 })];
    const pending = (nodeId: string, poolId: string) => ({ nodeId, pool: poolId, replacementDecisionId: `up:${nodeId}`, reason: 'kernel', by: 'alice', at: NOW.toISOString() });
    const snapshot: Snapshot = {
      now: NOW,
      config: cfg,
      allNodes: nodes,
      controls: { ...NO_CONTROLS, pendingDrains: [pending('a', POOL), pending('x', 'd2/small')] },
      pools: [{ pool: POOL, config: cfg.pools[0]!, record: pool(), nodes, drains: [] }],
    };
    expect(evaluationInput(snapshot, snapshot.pools[0]!)).toMatchObject({ pool: { pool: POOL }, nodes, renewing: 1 });
  });
});

describe('readSnapshot', () => {
  it("carries the agents' gear lists, which a pool's listing only counts: evaluate --dry-run refuses a node for a do-not-move gear in its list", async () => {
    const store = new InMemoryStateStore();
    const cfg = parseConfig({ pools: [{ district: 'd1', profile: 'small', min: 1, max: 10, gearsPerNode: 100 }], scaleDown: { unneededTime: '5m', payoff: { enabled: false } } });
    for (const id of ['a.example.com', 'b.example.com', 'c.example.com']) {
      const { version: _v, stateChangedAt: _c, stats: _s, ...fresh } = node(id, { pool: 'd1/small' });
      await store.createNode(fresh, NOW);
      const gears = [{ uuid: `${id}-g1`, app: `${id}-shop`, size: 'small', ...(id === 'a.example.com' ? { doNotMove: true } : {}) }];
      await store.putNodeStats(id, statsToStore({ activeGears: 1, maxActiveGears: 100, gears, reportedAt: NOW.toISOString() }));
    }
    await store.ensurePool('d1/small');
    const { version } = (await store.getPool('d1/small'))!;
    await store.updatePool('d1/small', version, { lowSince: new Date(NOW.getTime() - 30 * 60_000).toISOString() });

    expect((await store.listNodes('d1/small')).every((n) => n.stats?.gears === undefined)).toBe(true);
    const snapshot = await readSnapshot(store, cfg, NOW);
    const [small] = snapshot.pools;
    expect(small!.nodes.find((n) => n.nodeId === 'a.example.com')?.stats?.gears?.[0]).toMatchObject({ doNotMove: true });
    const view = dryRunView(snapshot, snapshot.pools, 'memory');
    const decision = view.pools[0]!.decision!;
    expect(decision).toMatchObject({ kind: 'scale-down' });
    expect(decision.nodeId).not.toBe('a.example.com');
    expect(decision.rejected?.find((rejected) => rejected.nodeId === 'a.example.com')?.reason).toMatch(/do-not-move/);
  });
});
