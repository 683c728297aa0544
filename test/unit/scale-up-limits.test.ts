import { describe, expect, it } from 'vitest';
import type { Config } from '../../lib/config/index.js';
import { decidePool } from '../../lib/domain/evaluate.js';
import { clampScaleUp } from '../../lib/domain/scale-up-limits.js';
import { config, evaluation, minutesAgo, node, nodes, pool, poolConfigOf } from '../support/builders.js';
import { OUTRAN, scaleUp } from '../support/decisions.js';

describe('decidePool: scale-up limits', () => {
  const full = nodes(10, 100); // 1000 / 1000: wants 1000 / 0.7 = 1429 slots: +5 nodes
  const sustained = pool({ highSince: minutesAgo(5) });

  it('wants enough nodes for the target before any limit', () => {
    expect(scaleUp(decidePool(evaluation({ nodes: full, pool: sustained })))).toMatchObject({ count: 5, wanted: 5, clampedBy: [] });
  });

  it('clamps by maxNodesPerDecision', () => {
    const result = decidePool(evaluation({ config: config({ scaleUp: { maxNodesPerDecision: 3 } }), nodes: full, pool: sustained }));
    expect(scaleUp(result)).toEqual({
      kind: 'scale-up',
      count: 3,
      wanted: 5,
      forecastNodes: 0,
      clampedBy: [{ limit: 'maxNodesPerDecision', value: 3 }],
      reason: `pool d1/small at 1.00 >= 0.80 for 5m; +3 nodes to 0.77; clamped by maxNodesPerDecision=3 (wanted 5)${OUTRAN}`,
      outranRound: 1,
    });
  });

  it('clamps by pool.max, counting provisioning, active and draining nodes', () => {
    const cfg = config({}, { max: 14 });
    const extra = [node('p', { state: 'provisioning' }), node('d', { state: 'draining', gears: 0 }), node('x', { state: 'drained' })];
    const result = decidePool(evaluation({ config: cfg, nodes: [...nodes(10, 110), ...extra], pool: sustained }));
    // 1100 gears on 1000 + 100 provisioning slots: wants 1100 / 0.7 = 1572 -> +5; the pool holds 12 of 14
    expect(scaleUp(result)).toMatchObject({ count: 2, wanted: 5, clampedBy: [{ limit: 'pool.max', value: 14 }] });
    expect(result.decision.reason).toBe(`pool d1/small at 1.00 >= 0.80 for 5m; +2 nodes to 0.85; clamped by pool.max=14 (wanted 5)${OUTRAN}`);
  });

  it('clamps by maxNodesTotal across all pools, counting every non-terminal node', () => {
    const cfg = config({ limits: { maxNodesTotal: 24 } });
    const others = [
      ...nodes(10, 10, 100, 'other', { pool: 'd2/large' }),
      node('o-term', { pool: 'd2/large', state: 'terminating' }),
      node('o-gone', { pool: 'd2/large', state: 'terminated' }),
      node('o-failed', { pool: 'd2/large', state: 'failed' }),
    ];
    const result = decidePool(evaluation({ config: cfg, nodes: full, pool: sustained, otherNodes: others }));
    expect(scaleUp(result)).toMatchObject({ count: 3, clampedBy: [{ limit: 'maxNodesTotal', value: 24 }] });
    expect(result.decision.reason).toMatch(/; clamped by maxNodesTotal=24 \(wanted 5\); demand outran/);
  });

  const typed = (limits: Config['limits'] extends infer L ? Partial<L> : never) =>
    config({
      limits,
      pools: [
        { district: 'd1', profile: 'small', max: 50, template: { instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }] } },
        { district: 'd2', profile: 'large', max: 50, naming: { base: 'large' }, template: { instanceTypes: [{ name: 'm5.4xlarge', vcpus: 16, memoryGiB: 64 }] } },
      ],
    });

  it('clamps by maxCores, looking instance types up in every pool', () => {
    const cfg = typed({ maxCores: 68 });
    // 10 x m5.xlarge (one of them an unknown type: counts as the pool's first) + 1 d2 node of 16 cores = 56 cores; 12 left = 3 nodes of 4
    const mine = full.map((n, i) => ({ ...n, instanceType: i === 0 ? 'weird.type' : 'm5.xlarge' }));
    const other = node('big', { pool: 'd2/large', instanceType: 'm5.4xlarge' });
    const result = decidePool(evaluation({ config: cfg, poolConfig: poolConfigOf(cfg), nodes: mine, pool: sustained, otherNodes: [other] }));
    expect(scaleUp(result)).toMatchObject({ count: 3, clampedBy: [{ limit: 'maxCores', value: 68 }] });
    expect(result.decision.reason).toMatch(/clamped by maxCores=68 \(wanted 5\); demand outran/);
  });

  it('clamps by maxMemoryGiB', () => {
    const cfg = typed({ maxMemoryGiB: 200 });
    // 10 x 16 GiB = 160 used, 40 left = 2 nodes of 16 GiB
    const result = decidePool(evaluation({ config: cfg, poolConfig: poolConfigOf(cfg), nodes: full, pool: sustained }));
    expect(scaleUp(result)).toMatchObject({ count: 2, clampedBy: [{ limit: 'maxMemoryGiB', value: 200 }] });
  });

  it('ignores the core and memory limits for a pool without instance types', () => {
    const cfg = config({ limits: { maxCores: 1, maxMemoryGiB: 1 } });
    expect(scaleUp(decidePool(evaluation({ config: cfg, nodes: full, pool: sustained })))).toMatchObject({ count: 5, clampedBy: [] });
  });

  it('records every clamp that reduced the count, in order', () => {
    const cfg = config({ scaleUp: { maxNodesPerDecision: 4 } }, { max: 12 });
    const result = decidePool(evaluation({ config: cfg, nodes: full, pool: sustained }));
    expect(scaleUp(result)).toMatchObject({
      count: 2,
      wanted: 5,
      clampedBy: [
        { limit: 'maxNodesPerDecision', value: 4 },
        { limit: 'pool.max', value: 12 },
      ],
    });
    expect(result.decision.reason).toMatch(/clamped by maxNodesPerDecision=4, pool.max=12 \(wanted 5\); demand outran/);
  });

  it('does nothing when a limit leaves no room, naming the limit', () => {
    const atMax = decidePool(evaluation({ config: config({}, { max: 10 }), nodes: full, pool: sustained }));
    expect(atMax.decision).toEqual({
      kind: 'no-action',
      reason: 'pool d1/small at 1.00 >= 0.80 for 5m; wants +5 nodes, cannot add any: at limit pool.max=10 (10 nodes in the pool)',
    });
    expect(atMax.poolPatch.lastScaleUpAt).toBeUndefined();
    const cfg = typed({ maxCores: 40 });
    const noCores = decidePool(evaluation({ config: cfg, poolConfig: poolConfigOf(cfg), nodes: full, pool: sustained }));
    expect(noCores.decision.kind).toBe('no-action');
    expect(noCores.decision.reason).toMatch(/cannot add any: at limit maxCores=40 \(40 in use, 4 per m5.xlarge\)$/);
  });
});

describe('clampScaleUp options', () => {
  const cfg = config({}, { max: 100 });
  const input = { config: cfg, poolConfig: poolConfigOf(cfg), allNodes: nodes(30, 50) };

  it('caps a decision at 10 nodes by default; doubling lets the pool grow by its size; waiting gears\' nodes all come in', () => {
    expect(clampScaleUp(40, input, 30)).toEqual({ count: 10, clampedBy: [{ limit: 'maxNodesPerDecision', value: 10 }] });
    expect(clampScaleUp(40, input, 30, { doubling: true }).count).toBe(30);
    expect(clampScaleUp(40, input, 30, { waitingNodes: 25 }).count).toBe(25);
    expect(clampScaleUp(40, input, 30, { doubling: false, waitingNodes: 0 })).toEqual(clampScaleUp(40, input, 30));
  });

  it('a per-decision cap set in the configuration holds whatever waits', () => {
    const capped = config({ scaleUp: { maxNodesPerDecision: 4 } }, { max: 100 });
    expect(clampScaleUp(40, { ...input, config: capped, poolConfig: poolConfigOf(capped) }, 30, { doubling: true, waitingNodes: 25 }).count).toBe(4);
  });
});
