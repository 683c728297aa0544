/** What the CLI's `explain` and `evaluate --dry-run` decide on (lib/cli/snapshot.ts): the evaluator's own input. */
import { describe, expect, it } from 'vitest';
import { evaluationInput, type Snapshot } from '../../lib/cli/snapshot.js';
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
