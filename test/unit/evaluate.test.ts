import { describe, expect, it } from 'vitest';
import { decidePool } from '../../lib/domain/evaluate.js';
import { epochMinute } from '../../lib/domain/forecast.js';
import { NOW, config, drain, evaluation, minutesAgo, move, node, nodes, pool } from '../support/builders.js';
import { history, noForecast, scaleUp, withGears } from '../support/decisions.js';

const MIN = 60_000;


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

  it('does not back off a scale-up after a failed drain: only scale-down waits for that', () => {
    const lastDrainFailureAt = new Date(NOW.getTime() - 10_000).toISOString();
    const result = decidePool(evaluation({ nodes: full, pool: pool({ ...sustained, lastDrainFailureAt }) }));
    expect(result.decision).toMatchObject({ kind: 'scale-up', count: 2 });
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
    // today flat at 300 (0.75); on each of the two kept days demand went from 200 to 300 ten minutes after this time of day
    const keptDay = (m: number) => (m > -60 ? 300 : m + 24 * 60 <= 10 ? 200 : 300);
    const demandHistory = history(-49 * 60, -1, (m) => (m < -25 * 60 ? keptDay(m + 24 * 60) : keptDay(m)));
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
