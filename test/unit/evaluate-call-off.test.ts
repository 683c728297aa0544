import { describe, expect, it } from 'vitest';
import { decidePool } from '../../lib/domain/evaluate.js';
import type { NodeRecord as Node } from '../../lib/domain/model.js';
import { NOW, config, drain, evaluation, flatDemand, minutesAgo, node, nodes, pool, refusedReport } from '../support/builders.js';

/** A node draining for its drain `drain-<nodeId>`. */
function draining(nodeId: string, gears: number): Node {
  return { ...node(nodeId, { state: 'draining', gears }), drainId: `drain-${nodeId}` };
}

// Four open nodes at 85 of 100 gears, held above the 0.80 threshold for 3 minutes: the pool scales up.
const open = nodes(4, 85);
const high = pool({ highSince: minutesAgo(3) });

describe('decidePool: scale-down drains give way to a scale-up', () => {
  it('calls off a draining node instead of buying one, and buys only the rest', () => {
    // 340 + 40 gears on 400 open slots: 0.95; the target 0.70 wants 6 nodes, 2 more; the draining one is one of them.
    const result = decidePool(evaluation({ nodes: [...open, draining('d', 40)], drains: [drain('d', [])], pool: high }));
    expect(result.decision).toMatchObject({ kind: 'scale-up', count: 1, wanted: 1 });
    expect(result.decision.reason).toBe(
      'pool d1/small at 0.95 >= 0.80 for 3m; +1 node to 0.63; calls off 1 scale-down drain(s) instead of buying their nodes (d: 40 gears left)',
    );
    expect(result.callOff).toEqual([
      { drainId: 'drain-d', nodeId: 'd', gearsLeft: 40, returnsNode: true, reason: 'the pool scales up (pool d1/small at 0.95): d re-opens with 40 gear(s) still on it' },
    ]);
  });

  it('buys nothing when the draining nodes give back every node wanted, and still counts as a scale-up for the delays', () => {
    const result = decidePool(evaluation({ nodes: [...open, draining('d', 40), draining('e', 20)], drains: [drain('d', []), drain('e', [])], pool: high }));
    expect(result.decision).toEqual({
      kind: 'no-action',
      reason: 'pool d1/small at 1.00 >= 0.80 for 3m; wants +2 nodes; calls off 2 scale-down drain(s) instead of buying their nodes (d: 40 gears left, e: 20 gears left)',
    });
    expect(result.callOff?.map((call) => call.nodeId)).toEqual(['d', 'e']);
    // No drain decided right after: delayAfterAdd and the bought-back wait count from here.
    expect(result.poolPatch.lastScaleUpAt).toBe(NOW.toISOString());
    expect(result.poolPatch.lastDemandScaleUpAt).toBe(NOW.toISOString());
  });

  it('calls off even when buying is blocked: re-opening a node needs no capacity from the cloud', () => {
    const exhausted = pool({ highSince: minutesAgo(3), exhaustedUntil: new Date(NOW.getTime() + 10 * 60_000).toISOString() });
    const result = decidePool(evaluation({ nodes: [...open, draining('d', 40)], drains: [drain('d', [])], pool: exhausted }));
    expect(result.decision.kind).toBe('no-action');
    expect(result.decision.reason).toMatch(/wants \+1 node, blocked: capacity exhausted until 10:10:00Z; calls off 1 scale-down drain/);
    expect(result.callOff?.map((call) => call.nodeId)).toEqual(['d']);
  });

  it('leaves an operator’s drain and an urgent one alone and buys their nodes', () => {
    const drains = [drain('d', [], { kind: 'manual' }), drain('e', [], { urgentSince: minutesAgo(1) })];
    const result = decidePool(evaluation({ nodes: [...open, draining('d', 40), draining('e', 20)], drains, pool: high }));
    expect(result.decision).toMatchObject({ kind: 'scale-up', count: 2 });
    expect(result.callOff).toBeUndefined();
  });

  it('calls nothing off while the pool does not scale up', () => {
    const calm = decidePool(evaluation({ nodes: [...nodes(4, 60), draining('d', 40)], drains: [drain('d', [])] }));
    expect(calm.decision.kind).toBe('no-action');
    expect(calm.callOff).toBeUndefined();
    expect(calm.poolPatch.lastScaleUpAt).toBeUndefined();
  });

  describe('while gears wait (creations the broker refused)', () => {
    /** The product's thresholds (pools run full), no forecast; 30 gears of headroom. */
    const product = config({ limits: { maxNodesTotal: 500 }, scaleUp: { threshold: 0.98, target: 0.96, headroomGears: 30, forecast: { enabled: false } } }, { max: 200 });
    const history = flatDemand(2000);
    const full: Node[] = nodes(20, 100);

    it('buys every node the waiting gears need and calls the drains off on top: a called-off node re-opens only once its moves settle', () => {
      const waitingPool = pool({ demandHistory: history, refused: refusedReport(100) });
      const withoutDrains = decidePool(evaluation({ config: product, nodes: full, pool: waitingPool }));
      expect(withoutDrains.decision.kind).toBe('scale-up');
      const needed = withoutDrains.decision.kind === 'scale-up' ? withoutDrains.decision.count : 0;
      expect(needed).toBeGreaterThanOrEqual(2);

      const result = decidePool(evaluation({ config: product, nodes: [...full, draining('d', 40), draining('e', 20)], drains: [drain('d', []), drain('e', [])], pool: waitingPool }));
      expect(result.decision).toMatchObject({ kind: 'scale-up', count: needed, wanted: needed });
      expect(result.callOff?.map((call) => call.nodeId)).toEqual(['d', 'e']);
      expect(result.decision.reason).toContain('calls off 2 scale-down drain(s) as well as buying for the gears that wait now');
    });
  });
});
