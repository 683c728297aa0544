import { describe, expect, it } from 'vitest';
import type { Config } from '../../lib/config/index.js';
import { clampScaleUp, decidePool } from '../../lib/domain/evaluate.js';
import { epochMinute, recordDemand } from '../../lib/domain/forecast.js';
import type { DemandSample, NodeRecord } from '../../lib/domain/model.js';
import { NOW, config, drain, evaluation, minutesAgo, move, node, nodes, pool, poolConfigOf } from '../support/builders.js';

const MIN = 60_000;

/** Active nodes `node-1.example.com`..., one per entry of `gears`, 100 slots each. */
function withGears(gears: number[], max = 100): NodeRecord[] {
  return gears.map((g, i) => node(`node-${i + 1}.example.com`, { gears: g, max }));
}

/** Demand history as the evaluator would have recorded it once a minute before NOW. */
function history(from: number, to: number, demandAt: (minutesFromNow: number) => number): DemandSample[] {
  let samples: DemandSample[] = [];
  for (let m = from; m <= to; m++) {
    samples = recordDemand(samples, new Date(NOW.getTime() + m * MIN), demandAt(m), { window: 30 * MIN, keepDaily: true });
  }
  return samples;
}

/** The scale-up decision, failing the test when the decision is something else. */
function scaleUp(result: ReturnType<typeof decidePool>) {
  if (result.decision.kind !== 'scale-up') throw new Error(`expected scale-up, got ${result.decision.kind}: ${result.decision.reason}`);
  return result.decision;
}

/** A day in which the pool never needed more than it has: every drain is expected to pay for a day. */
const quietDay = history(-25 * 60, -1, () => 0);

/** What a scale-up of a full pool adds to its reason. */
const OUTRAN = '; demand outran the boot delay: no free slot left, new gears wait about 3m for these nodes';

const noForecast = { scaleUp: { forecast: { enabled: false } } } as const;

describe('decidePool: utilization and pool patch', () => {
  it('records the demand sample and the evaluation time whatever the decision', () => {
    const result = decidePool(evaluation({ nodes: withGears([60, 70]), pool: pool({ demandHistory: [[epochMinute(NOW) - 1, 120]] }) }));
    expect(result.utilization).toMatchObject({ demand: 130, capacity: 200, freeSlots: 70 });
    expect(result.poolPatch.demandHistory).toEqual([
      [epochMinute(NOW) - 1, 120],
      [epochMinute(NOW), 130],
    ]);
    expect(result.poolPatch.lastEvaluatedAt).toBe(NOW.toISOString());
    expect(result.poolPatch.lastScaleUpAt).toBeUndefined();
  });
});

describe('decidePool: scale-up threshold and sustain window', () => {
  const high = withGears([85, 85, 85, 85]); // 0.85

  it('starts the sustain window when utilization reaches the threshold, without scaling yet', () => {
    const result = decidePool(evaluation({ nodes: high }));
    expect(result.decision).toEqual({ kind: 'no-action', reason: 'pool d1/small at 0.85 >= 0.80 for 0s of 2m sustain' });
    expect(result.poolPatch.highSince).toBe(NOW.toISOString());
    expect(result.poolPatch.lowSince).toBeUndefined();
  });

  it('keeps the window while the condition holds, and does not scale before the sustain time', () => {
    const result = decidePool(evaluation({ nodes: high, pool: pool({ highSince: minutesAgo(1) }) }));
    expect(result.decision).toEqual({ kind: 'no-action', reason: 'pool d1/small at 0.85 >= 0.80 for 1m of 2m sustain' });
    expect(result.poolPatch.highSince).toBe(minutesAgo(1));
  });

  it('scales up to the target once the condition held for the sustain time', () => {
    const result = decidePool(evaluation({ nodes: high, pool: pool({ highSince: minutesAgo(3) }) }));
    expect(result.decision).toEqual({
      kind: 'scale-up',
      count: 1,
      wanted: 1,
      clampedBy: [],
      forecastNodes: 0,
      reason: 'pool d1/small at 0.85 >= 0.80 for 3m; +1 node to 0.68',
    });
    expect(result.poolPatch.lastScaleUpAt).toBe(NOW.toISOString());
    expect(result.poolPatch.highSince).toBe(minutesAgo(3));
  });

  it('scales up at exactly the threshold and exactly the sustain time', () => {
    const result = decidePool(evaluation({ nodes: withGears([80, 80]), pool: pool({ highSince: minutesAgo(2) }) }));
    expect(scaleUp(result)).toMatchObject({ count: 1, reason: 'pool d1/small at 0.80 >= 0.80 for 2m; +1 node to 0.53' });
  });

  it('adds enough nodes to come down to the target', () => {
    // 10 x 100 slots at 0.95: 950 / 0.70 = 1357 slots -> +4 nodes
    const result = decidePool(evaluation({ nodes: nodes(10, 95), pool: pool({ highSince: minutesAgo(5) }) }));
    expect(scaleUp(result)).toMatchObject({ count: 4, wanted: 4, reason: 'pool d1/small at 0.95 >= 0.80 for 5m; +4 nodes to 0.68' });
  });

  it('clears the window when utilization drops below the threshold', () => {
    const result = decidePool(evaluation({ nodes: withGears([70, 70]), pool: pool({ highSince: minutesAgo(10) }) }));
    expect(result.poolPatch.highSince).toBeUndefined();
    expect(result.decision.kind).toBe('no-action');
  });
});

describe('decidePool: hysteresis band', () => {
  it('does nothing between the scale-down and scale-up thresholds and clears both windows', () => {
    const result = decidePool(evaluation({ nodes: withGears([65, 65]), pool: pool({ highSince: minutesAgo(3), lowSince: minutesAgo(30) }) }));
    expect(result.decision).toEqual({ kind: 'no-action', reason: 'pool d1/small utilization 0.65 within band 0.50..0.80' });
    expect(result.poolPatch.highSince).toBeUndefined();
    expect(result.poolPatch.lowSince).toBeUndefined();
  });
});

describe('decidePool: a spike that outran the boot delay', () => {
  it('says so when the pool scales up with no free slot left, and not when the headroom held', () => {
    const full = decidePool(evaluation({ config: config(noForecast), nodes: withGears([100, 100]), pool: pool({ highSince: minutesAgo(5) }) }));
    expect(scaleUp(full).reason).toMatch(/; demand outran the boot delay: no free slot left, new gears wait about 3m for these nodes$/);
    const over = decidePool(evaluation({ config: config(noForecast), nodes: withGears([110, 100]), pool: pool({ highSince: minutesAgo(5) }) }));
    expect(scaleUp(over).reason).toContain('demand outran the boot delay: 10 gears over capacity');
    const ahead = decidePool(evaluation({ config: config(noForecast), nodes: withGears([90, 90]), pool: pool({ highSince: minutesAgo(5) }) }));
    expect(scaleUp(ahead).reason).not.toContain('outran');
  });
});

describe('decidePool: scale-down', () => {
  const low = withGears([40, 40, 32, 12]); // 124 / 400 = 0.31

  it('starts the unneeded-time window and waits for it', () => {
    const first = decidePool(evaluation({ nodes: low }));
    expect(first.poolPatch.lowSince).toBe(NOW.toISOString());
    expect(first.decision).toEqual({ kind: 'no-action', reason: 'pool d1/small at 0.31 <= 0.50 for 0s of 5m unneeded time' });
    const later = decidePool(evaluation({ nodes: withGears([45, 45]), pool: pool({ lowSince: minutesAgo(2) }) }));
    expect(later.decision).toEqual({ kind: 'no-action', reason: 'pool d1/small at 0.45 <= 0.50 for 2m of 5m unneeded time' });
    expect(later.poolPatch.lowSince).toBe(minutesAgo(2));
  });

  it('drains the chosen node once utilization stayed low for the unneeded time', () => {
    const result = decidePool(evaluation({ nodes: low, pool: pool({ demandHistory: quietDay, lowSince: minutesAgo(7) }) }));
    expect(result.decision).toEqual({
      kind: 'scale-down',
      nodeId: 'node-4.example.com',
      reason:
        "pool d1/small at 0.31 <= 0.50 for 7m; drain node-4.example.com (12 gears, least-disruption); pays: 24.0h unneeded (yesterday's demand) saves $4.61 >= 2 x $0.27 for 12 disruptive moves",
      rejected: [],
    });
    expect(result.poolPatch.lastScaleUpAt).toBeUndefined();
  });

  it('does not drain a node the forecast needs again within the horizon, and says so (pays-off check)', () => {
    // Yesterday the pool held 300 gears from 11:00: without one node, 300 slots cannot hold that.
    const busyLater = history(-25 * 60, -1, (m) => (m >= -23 * 60 && m < -20 * 60 ? 300 : 0));
    const result = decidePool(evaluation({ nodes: low, pool: pool({ demandHistory: busyLater, lowSince: minutesAgo(7) }) }));
    expect(result.decision.kind).toBe('no-action');
    expect(result.decision.reason).toContain("node-4.example.com: needed again in 30m (yesterday's demand reaches 210 gears), within the 4h horizon");
    // Without a day behind it, a pool low for only 7 minutes is not trusted to stay low for the horizon.
    const fresh = decidePool(evaluation({ nodes: low, pool: pool({ lowSince: minutesAgo(7) }) }));
    expect(fresh.decision.kind).toBe('no-action');
    expect(fresh.decision.reason).toMatch(/unneeded for only 0s so far \(recent demand\), within the 4h horizon/);
  });

  it('does not drain a node a scale-up would have bought for the same demand (hysteresis between target and threshold)', () => {
    // 225 gears on 400 slots (0.56, low). Without node-4 the pool would be at 0.75: below the 0.8 threshold, so no
    // scale-up would fire, but above the 0.7 target a scale-up sizes to: a scale-up for 225 gears buys 322 slots, so
    // draining back to 300 would leave it at the edge where the next wiggle buys the node back.
    const cfg = config({ scaleDown: { utilizationThreshold: 0.65 } });
    const edge = withGears([60, 60, 60, 45]);
    const result = decidePool(evaluation({ config: cfg, nodes: edge, pool: pool({ demandHistory: quietDay, lowSince: minutesAgo(7) }) }));
    expect(result.decision.kind).toBe('no-action');
    // (the trend from an empty day to 225 gears forecasts a little more: the drain does not leave what a scale-up would buy)
    expect(result.decision.reason).toMatch(/node-4\.example\.com: needed now: recent demand 2\d\d gears >= the 210 the pool holds without it \(set by the target: 0\.7 x 300 slots\)/);
    // At 0.69 without it (207 gears), below the target, it drains.
    const steady = history(-25 * 60, -1, () => 207); // at that level all day: no rise for the forecast to carry on
    const below = decidePool(evaluation({ config: cfg, nodes: withGears([60, 60, 60, 27]), pool: pool({ demandHistory: steady, lowSince: minutesAgo(7) }) }));
    expect(below.decision).toMatchObject({ kind: 'scale-down', nodeId: 'node-4.example.com' });
  });

  it('follows the configured candidate strategy', () => {
    const cfg = config({ scaleDown: { candidateStrategy: 'oldest' } });
    const aged = [node('young', { gears: 5, createdMinutesAgo: 10 }), node('old', { gears: 30, createdMinutesAgo: 900 }), node('mid', { gears: 20 })];
    const result = decidePool(evaluation({ config: cfg, nodes: aged, pool: pool({ demandHistory: quietDay, lowSince: minutesAgo(7) }) }));
    expect(result.decision).toMatchObject({ kind: 'scale-down', nodeId: 'old', reason: expect.stringContaining('drain old (30 gears, oldest)') });
  });

  it('waits delayAfterAdd after a scale-up', () => {
    const result = decidePool(evaluation({ nodes: low, pool: pool({ demandHistory: quietDay, lowSince: minutesAgo(7), lastScaleUpAt: minutesAgo(5) }) }));
    expect(result.decision).toEqual({
      kind: 'no-action',
      reason: 'pool d1/small at 0.31 <= 0.50 for 7m; scale-down blocked: delayAfterAdd until 10:05:00Z',
    });
    // Past delayAfterAdd the pays-off check judges: the node's 12 gears wait until the rent since the scale-up pays their moves
    // (one-off-need.ts boughtWait), and with that wait off it is drained.
    const afterPool = pool({ demandHistory: quietDay, lowSince: minutesAgo(7), lastScaleUpAt: minutesAgo(10), lastDemandScaleUpAt: minutesAgo(10) });
    const after = decidePool(evaluation({ nodes: low, pool: afterPool }));
    expect(after.decision.kind).toBe('no-action');
    expect(after.decision.reason).toMatch(/node-4\.example\.com: the pool bought nodes 10m ago \(its last scale-up\)/);
    const noWait = config({ scaleDown: { payoff: { oneOffRentFactor: 0 } } });
    expect(decidePool(evaluation({ config: noWait, nodes: low, pool: afterPool })).decision.kind).toBe('scale-down');
  });

  it('does not count a replacement as the pool needing nodes: only delayAfterAdd waits after it', () => {
    // A replacement for an interrupted or handed-back node sets lastScaleUpAt only; demand did not ask for it.
    const replaced = pool({ demandHistory: quietDay, lowSince: minutesAgo(7), lastScaleUpAt: minutesAgo(10), lastDemandScaleUpAt: minutesAgo(25 * 60) });
    expect(decidePool(evaluation({ nodes: low, pool: replaced })).decision).toMatchObject({ kind: 'scale-down', nodeId: 'node-4.example.com' });
  });

  it('records a scale-up for demand in both lastScaleUpAt and lastDemandScaleUpAt', () => {
    const full = decidePool(evaluation({ config: config(noForecast), nodes: withGears([95, 96]), pool: pool({ highSince: minutesAgo(5) }) }));
    expect(full.decision.kind).toBe('scale-up');
    expect(full.poolPatch).toMatchObject({ lastScaleUpAt: NOW.toISOString(), lastDemandScaleUpAt: NOW.toISOString() });
  });

  it('waits delayAfterDelete after a scale-down', () => {
    const lastScaleDownAt = new Date(NOW.getTime() - 30_000).toISOString();
    const result = decidePool(evaluation({ nodes: low, pool: pool({ demandHistory: quietDay, lowSince: minutesAgo(7), lastScaleDownAt }) }));
    expect(result.decision.reason).toBe('pool d1/small at 0.31 <= 0.50 for 7m; scale-down blocked: delayAfterDelete until 10:00:30Z');
    expect(result.decision.kind).toBe('no-action');
  });

  it('waits delayAfterFailure after a failure, and names every delay that blocks', () => {
    const lastFailureAt = new Date(NOW.getTime() - 10_000).toISOString();
    const result = decidePool(evaluation({ nodes: low, pool: pool({ demandHistory: quietDay, lowSince: minutesAgo(7), lastFailureAt }) }));
    expect(result.decision.reason).toBe('pool d1/small at 0.31 <= 0.50 for 7m; scale-down blocked: delayAfterFailure until 10:00:20Z');
    const both = decidePool(evaluation({ nodes: low, pool: pool({ demandHistory: quietDay, lowSince: minutesAgo(7), lastFailureAt, lastScaleUpAt: minutesAgo(1) }) }));
    expect(both.decision.reason).toBe(
      'pool d1/small at 0.31 <= 0.50 for 7m; scale-down blocked: delayAfterAdd until 10:09:00Z, delayAfterFailure until 10:00:20Z',
    );
  });

  it('never goes below min', () => {
    const cfg = config({}, { min: 2 });
    const result = decidePool(evaluation({ config: cfg, nodes: withGears([10, 10]), pool: pool({ lowSince: minutesAgo(30) }) }));
    expect(result.decision).toEqual({ kind: 'no-action', reason: 'pool d1/small at 0.10 <= 0.50 for 30m; at min (2 nodes)' });
  });

  it('records no demand and drains nothing while a registered node has not reported its gears yet', () => {
    // node-5 was registered active a minute ago (switched on over an existing pool) and has not reported: its gears are
    // unknown, so the pool's demand is low by an unknown amount, and its first report would read as a rise.
    const unreported = [...low, node('node-5.example.com', { gears: null, createdMinutesAgo: 1 })];
    const before: DemandSample[] = [[epochMinute(NOW) - 1, 124]];
    const result = decidePool(evaluation({ nodes: unreported, pool: pool({ demandHistory: before, lowSince: minutesAgo(7) }) }));
    expect(result.poolPatch.demandHistory).toEqual(before);
    expect(result.decision).toEqual({
      kind: 'no-action',
      reason: 'pool d1/small at 0.31 <= 0.50 for 7m; scale-down blocked: 1 node not reported yet (their gears are unknown); stale stats from 1 node (node-5.example.com)',
    });
    // Silent for longer than statsMaxAge, it is a stale node, not one about to report: the pool goes on.
    const silent = [...low, node('node-5.example.com', { gears: null, createdMinutesAgo: 30 })];
    const later = decidePool(evaluation({ nodes: silent, pool: pool({ demandHistory: before, lowSince: minutesAgo(7) }) }));
    expect(later.poolPatch.demandHistory).toEqual([...before, [epochMinute(NOW), 124]]);
  });

  it('does not scale down while nodes are provisioning', () => {
    const result = decidePool(evaluation({ nodes: [...low, node('new', { state: 'provisioning' })], pool: pool({ demandHistory: quietDay, lowSince: minutesAgo(7) }) }));
    expect(result.decision).toEqual({
      kind: 'no-action',
      reason: 'pool d1/small at 0.25 <= 0.50 for 7m; scale-down blocked: 1 node provisioning',
    });
  });

  it('limits concurrent drains', () => {
    const draining = node('node-9.example.com', { state: 'draining', gears: 2 });
    const drains = [drain('node-9.example.com', [move('node-1.example.com'), move('node-2.example.com')])];
    const input = { nodes: [...low, draining], drains, pool: pool({ demandHistory: quietDay, lowSince: minutesAgo(7) }) };
    expect(decidePool(evaluation(input)).decision).toEqual({
      kind: 'no-action',
      reason:
        'pool d1/small at 0.32 <= 0.50 for 7m; scale-down blocked by scaleDown.budget.maxDraining: 1 of 1 drains in progress (scaleDown.budget.maxDraining=10% of 5 nodes = 1); frees up when a drain ends (or stalls for drainTimeout) (until 10:25:00Z)',
      budget: { name: 'scaleDown.budget.maxDraining', until: '2025-03-10T10:25:00.000Z' },
    });
    const two = decidePool(evaluation({ ...input, config: config({ scaleDown: { maxConcurrentDrains: 2 } }) }));
    expect(two.decision).toMatchObject({
      kind: 'scale-down',
      nodeId: 'node-4.example.com',
      rejected: [
        { nodeId: 'node-1.example.com', reason: expect.stringMatching(/^receiving gears/) },
        { nodeId: 'node-2.example.com', reason: expect.stringMatching(/^receiving gears/) },
      ],
    });
  });

  it('does nothing when scale-down is disabled', () => {
    const result = decidePool(evaluation({ config: config({ scaleDown: { enabled: false } }), nodes: low, pool: pool({ lowSince: minutesAgo(7) }) }));
    expect(result.decision).toEqual({ kind: 'no-action', reason: 'pool d1/small at 0.31 <= 0.50 for 7m; scale-down disabled' });
  });

  it('never drains a protected node (flag or pool list) and says why when no node can go', () => {
    const cfg = config({}, { protectedNodes: ['b'] });
    const result = decidePool(
      evaluation({ config: cfg, nodes: [node('a', { gears: 10, protected: true }), node('b', { gears: 10 })], pool: pool({ lowSince: minutesAgo(7) }) }),
    );
    expect(result.decision).toEqual({
      kind: 'no-action',
      reason: 'pool d1/small at 0.10 <= 0.50 for 7m; no node can be drained (a: protected; b: protected (pool protectedNodes))',
      rejected: [
        { nodeId: 'a', reason: 'protected' },
        { nodeId: 'b', reason: 'protected (pool protectedNodes)' },
      ],
    });
  });
});

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

describe('decidePool: scale-up blocked', () => {
  const full = nodes(4, 90);
  const sustained = { highSince: minutesAgo(5) };

  it('waits while capacity is exhausted', () => {
    const result = decidePool(evaluation({ nodes: full, pool: pool({ ...sustained, exhaustedUntil: '2025-03-10T10:30:00.000Z' }) }));
    expect(result.decision).toEqual({
      kind: 'no-action',
      reason: 'pool d1/small at 0.90 >= 0.80 for 5m; wants +2 nodes, blocked: capacity exhausted until 10:30:00Z',
    });
    const expired = decidePool(evaluation({ nodes: full, pool: pool({ ...sustained, exhaustedUntil: minutesAgo(1) }) }));
    expect(expired.decision.kind).toBe('scale-up');
  });

  it('backs off after a failure', () => {
    const lastFailureAt = new Date(NOW.getTime() - 10_000).toISOString();
    const result = decidePool(evaluation({ nodes: full, pool: pool({ ...sustained, lastFailureAt }) }));
    expect(result.decision).toEqual({
      kind: 'no-action',
      reason: 'pool d1/small at 0.90 >= 0.80 for 5m; wants +2 nodes, blocked: failure backoff until 10:00:20Z',
    });
    const later = decidePool(evaluation({ nodes: full, pool: pool({ ...sustained, lastFailureAt: minutesAgo(1) }) }));
    expect(later.decision.kind).toBe('scale-up');
  });

  it('does nothing while a lease is held, still returning the pool patch', () => {
    const lease = {
      holder: 'up:d1_small:20250310T095900Z',
      kind: 'scale-up' as const,
      acquiredAt: minutesAgo(1),
      expiresAt: '2025-03-10T10:15:00.000Z',
    };
    const result = decidePool(evaluation({ nodes: full, pool: pool({ ...sustained, lease }) }));
    expect(result.decision).toEqual({
      kind: 'no-action',
      reason: 'pool d1/small at 0.90; action in flight: scale-up up:d1_small:20250310T095900Z until 10:15:00Z',
    });
    expect(result.poolPatch).toMatchObject({ highSince: minutesAgo(5), lastEvaluatedAt: NOW.toISOString(), demandHistory: [[epochMinute(NOW), 360]] });
    const expired = decidePool(evaluation({ nodes: full, pool: pool({ ...sustained, lease: { ...lease, expiresAt: minutesAgo(1) } }) }));
    expect(expired.decision.kind).toBe('scale-up');
  });
});

describe('decidePool: min, headroom, stale stats, provisioning', () => {
  it('scales up to min without waiting for the sustain window', () => {
    const cfg = config({}, { min: 3 });
    const result = decidePool(evaluation({ config: cfg, nodes: withGears([10]) }));
    expect(scaleUp(result)).toMatchObject({ count: 2, wanted: 2, reason: 'pool d1/small at 0.10, below min (1 of 3 nodes); +2 nodes to 0.03' });
  });

  it('counts provisioning nodes towards min', () => {
    const cfg = config({}, { min: 3 });
    const result = decidePool(evaluation({ config: cfg, nodes: [...withGears([10]), node('p1', { state: 'provisioning' }), node('p2', { state: 'provisioning' })] }));
    expect(result.decision.kind).toBe('no-action');
  });

  it('is still blocked below min by exhaustion and failure backoff', () => {
    const cfg = config({}, { min: 2 });
    const exhausted = decidePool(evaluation({ config: cfg, nodes: [], pool: pool({ exhaustedUntil: '2025-03-10T10:30:00.000Z' }) }));
    expect(exhausted.decision).toEqual({
      kind: 'no-action',
      reason: 'pool d1/small at 0.00, below min (0 of 2 nodes); wants +2 nodes, blocked: capacity exhausted until 10:30:00Z',
    });
    const failed = decidePool(evaluation({ config: cfg, nodes: [], pool: pool({ lastFailureAt: minutesAgo(0) }) }));
    expect(failed.decision.reason).toMatch(/below min \(0 of 2 nodes\); wants \+2 nodes, blocked: failure backoff until 10:00:30Z$/);
  });

  it('scales up when free slots fall below the headroom, without waiting', () => {
    const cfg = config({ scaleUp: { headroomGears: 120 } });
    const result = decidePool(evaluation({ config: cfg, nodes: withGears([75, 75, 75, 75]) }));
    expect(scaleUp(result)).toMatchObject({ count: 1, reason: 'pool d1/small at 0.75, 100 free slots < headroomGears 120; +1 node to 0.60' });
  });

  it('sizes a headroom scale-up to restore the headroom', () => {
    const cfg = config({ scaleUp: { headroomGears: 250 } });
    // 100 free: needs 150 more slots = 2 nodes, although 0.75 needs no node for the target
    expect(scaleUp(decidePool(evaluation({ config: cfg, nodes: withGears([75, 75, 75, 75]) })))).toMatchObject({ count: 2 });
  });

  it('never counts stale stats as free capacity, and reports the stale nodes', () => {
    const stale = node('quiet', { gears: 40, reportedMinutesAgo: 10 });
    const result = decidePool(evaluation({ nodes: [...withGears([60, 60]), stale] }));
    // 160 gears on 200 fresh slots + the 40 the stale node last held: 0.67, not 160 / 300
    expect(result.utilization).toMatchObject({ demand: 160, capacity: 240, staleNodes: ['quiet'] });
    expect(result.decision).toEqual({
      kind: 'no-action',
      reason: 'pool d1/small utilization 0.67 within band 0.50..0.80; stale stats from 1 node (quiet)',
    });
  });

  it('does not scale up on utilization when no node has fresh stats', () => {
    const result = decidePool(evaluation({ nodes: nodes(2, 90, 100, 'n', { reportedMinutesAgo: 20 }), pool: pool({ highSince: minutesAgo(10) }) }));
    expect(result.utilization.utilization).toBe(1);
    expect(result.decision).toEqual({
      kind: 'no-action',
      reason: 'pool d1/small at 1.00 >= 0.80; not scaling up: stale stats from all 2 nodes (n-1, n-2)',
    });
  });

  it('counts provisioning capacity: the evaluation after a scale-up does not scale up again', () => {
    const high = withGears([85, 85, 85, 85]);
    const first = decidePool(evaluation({ nodes: high, pool: pool({ highSince: minutesAgo(3) }) }));
    expect(scaleUp(first).count).toBe(1);
    const afterwards = pool({ ...first.poolPatch, lease: undefined });
    const second = decidePool(
      evaluation({ nodes: [...high, node('new-1', { state: 'provisioning' })], pool: afterwards, now: new Date(NOW.getTime() + 30_000) }),
    );
    expect(second.utilization).toMatchObject({ provisioningCapacity: 100, utilization: 0.68 });
    expect(second.decision).toEqual({ kind: 'no-action', reason: 'pool d1/small utilization 0.68 within band 0.50..0.80' });
    expect(second.poolPatch.highSince).toBeUndefined();
  });

  it('counts the gears of a draining node against the free slots, once', () => {
    const cfg = config({ scaleUp: { headroomGears: 70 } });
    const without = decidePool(evaluation({ config: cfg, nodes: [...withGears([60, 60]), node('d', { state: 'draining', gears: 0 })] }));
    expect(without.utilization.freeSlots).toBe(80);
    expect(without.decision.kind).toBe('no-action');
    // d still holds 15 gears, each with a slot reserved on node-1: they need 15 slots, not 30.
    const ns = [...withGears([60, 60]), node('d', { state: 'draining', gears: 15 })];
    const drains = [drain('d', Array.from({ length: 15 }, () => move('node-1.example.com', 'moving')))];
    const result = decidePool(evaluation({ config: cfg, nodes: ns, drains }));
    expect(result.utilization.freeSlots).toBe(65);
    expect(scaleUp(result).reason).toMatch(/^pool d1\/small at 0\.6\d, 65 free slots < headroomGears 70; \+1 node to 0\.\d\d$/);
  });
});

describe('decidePool: forecast', () => {
  it('raises the count by the trend, visible in the reason and in forecastNodes', () => {
    // 340 gears (0.85) now, +4 gears a minute for the last 10 minutes; lookahead = bootDelay 3m -> 352
    const ns = withGears([85, 85, 85, 85]);
    const input = { nodes: ns, pool: pool({ highSince: minutesAgo(3), demandHistory: history(-10, -1, (m) => 340 + 4 * m) }) };
    const result = decidePool(evaluation(input));
    expect(scaleUp(result)).toEqual({
      kind: 'scale-up',
      count: 2,
      wanted: 2,
      clampedBy: [],
      forecastNodes: 1,
      reason: 'pool d1/small at 0.85 >= 0.80 for 3m; +2 nodes to 0.59 (forecast: trend +40 gears/10m, +1 node)',
    });
    expect(result.forecast).toEqual({ demand: expect.closeTo(352, 6), basis: 'trend +40 gears/10m', lookaheadMs: 3 * MIN });
    // the same pool without the forecast wants one node
    expect(scaleUp(decidePool(evaluation({ ...input, config: config(noForecast) })))).toMatchObject({ count: 1, forecastNodes: 0 });
  });

  it('triggers a scale-up before the threshold is reached when the forecast crosses it within the lookahead', () => {
    // 300 gears (0.75) rising by 10 a minute: 330 (0.83) in 3 minutes
    const input = { nodes: withGears([75, 75, 75, 75]), pool: pool({ demandHistory: history(-10, -1, (m) => 300 + 10 * m) }) };
    const result = decidePool(evaluation(input));
    expect(scaleUp(result)).toMatchObject({
      count: 1,
      forecastNodes: 1,
      reason: 'pool d1/small at 0.75, forecast 0.82 >= 0.80 in 3m; +1 node to 0.66 (forecast: trend +100 gears/10m, +1 node)',
    });
    expect(decidePool(evaluation({ ...input, config: config(noForecast) })).decision).toEqual({
      kind: 'no-action',
      reason: 'pool d1/small utilization 0.75 within band 0.50..0.80',
    });
  });

  it('does not let a flat or falling forecast bypass the sustain window', () => {
    const flat = decidePool(evaluation({ nodes: withGears([85, 85]), pool: pool({ demandHistory: history(-10, -1, () => 170) }) }));
    expect(flat.decision.reason).toBe('pool d1/small at 0.85 >= 0.80 for 0s of 2m sustain');
  });

  it('looks ahead by forecast.lookahead, else the observed boot time, else bootDelay', () => {
    const ns = withGears([50, 50]);
    const base = { nodes: ns, pool: pool({ observedBootMs: 7 * MIN }) };
    expect(decidePool(evaluation(base)).forecast?.lookaheadMs).toBe(7 * MIN);
    expect(decidePool(evaluation({ nodes: ns })).forecast?.lookaheadMs).toBe(3 * MIN);
    const cfg = config({ scaleUp: { forecast: { lookahead: '12m' } } });
    expect(decidePool(evaluation({ ...base, config: cfg })).forecast?.lookaheadMs).toBe(12 * MIN);
    expect(decidePool(evaluation({ ...base, config: config(noForecast) })).forecast).toBeUndefined();
  });

  it('uses daily seasonality: what happened yesterday over the same lookahead', () => {
    // today flat at 300 (0.75); yesterday demand went from 200 to 300 ten minutes after this time of day
    const demandHistory = history(-25 * 60, -1, (m) => (m > -60 ? 300 : m + 24 * 60 <= 10 ? 200 : 300));
    const cfg = config({ scaleUp: { forecast: { lookahead: '30m' } } });
    const input = { config: cfg, nodes: withGears([75, 75, 75, 75]), pool: pool({ demandHistory }) };
    const result = decidePool(evaluation(input));
    // Yesterday rose by 100 gears (+50%) at this hour; today already stands 100 above yesterday's level then, so the
    // forecast is yesterday's 300 raised by that: 400 (not 300 x 1.5 = 450, a level no day held); 400 / 0.7 = 572 slots -> +2 nodes
    expect(scaleUp(result)).toMatchObject({
      count: 2,
      forecastNodes: 2,
      reason: 'pool d1/small at 0.75, forecast 1.00 >= 0.80 in 30m; +2 nodes to 0.67 (forecast: yesterday +33%, +2 nodes)',
    });
    const noSeason = config({ scaleUp: { forecast: { lookahead: '30m', dailySeasonality: false } } });
    expect(decidePool(evaluation({ ...input, config: noSeason })).decision.kind).toBe('no-action');
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
