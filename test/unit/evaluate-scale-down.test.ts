import { describe, expect, it } from 'vitest';
import { launchedFromTemplate } from '../../lib/domain/drift.js';
import { decidePool } from '../../lib/domain/evaluate.js';
import { explainPool } from '../../lib/domain/explain.js';
import { epochMinute } from '../../lib/domain/forecast.js';
import type { DemandSample } from '../../lib/domain/model.js';
import { NOW, config, drain, evaluation, minutesAgo, move, node, pool } from '../support/builders.js';
import { history, noForecast, quietDay, withGears } from '../support/decisions.js';

describe('decidePool: scale-down', () => {
  const low = withGears([40, 40, 32, 12]); // 124 / 400 = 0.31

  it('starts the unneeded-time window and waits for it', () => {
    const first = decidePool(evaluation({ nodes: low }));
    expect(first.poolPatch.lowSince).toBe(NOW.toISOString());
    expect(first.decision).toMatchObject({ kind: 'no-action', reason: 'pool d1/small at 0.31 <= 0.50 for 0s of 5m unneeded time' });
    // Meanwhile the candidates are listed, not yet paying: the next ones attrition may close (attrition.test.ts).
    expect(first.decision.kind === 'no-action' && first.decision.rejected?.map((r) => [r.nodeId, r.pending])).toEqual([
      ['node-4.example.com', true],
      ['node-3.example.com', true],
      ['node-1.example.com', true],
      ['node-2.example.com', true],
    ]);
    const later = decidePool(evaluation({ nodes: withGears([45, 45]), pool: pool({ lowSince: minutesAgo(2) }) }));
    expect(later.decision).toMatchObject({ kind: 'no-action', reason: 'pool d1/small at 0.45 <= 0.50 for 2m of 5m unneeded time' });
    expect(later.poolPatch.lowSince).toBe(minutesAgo(2));
  });

  it('drains the chosen node once utilization stayed low for the unneeded time', () => {
    const result = decidePool(evaluation({ nodes: low, pool: pool({ demandHistory: quietDay, lowSince: minutesAgo(7) }) }));
    expect(result.decision).toEqual({
      kind: 'scale-down',
      nodeId: 'node-4.example.com',
      prices: [{ nodeId: 'node-4.example.com', gears: 12, limit: 32, next: 'node-3.example.com', nextGears: 32 }],
      reason:
        "pool d1/small at 0.31 <= 0.50 for 7m; drain node-4.example.com (12 gears, least-disruption); pays: 24.0h unneeded (yesterday's demand) saves $4.61 at $0.192/h >= 2 x $0.27 for 12 disruptive moves",
      rejected: [],
    });
    expect(result.poolPatch.lastScaleUpAt).toBeUndefined();
  });

  it('drains a drifted node first among nodes that restart as many tenants, and says why', () => {
    const cfg = config({}, { template: { imageId: 'ami-0bbbbbbbbbbbbbbbb' } } as never);
    // node-3 (32 gears) was launched from the image the pool named before; node-4 (12 gears) from today's.
    const current = launchedFromTemplate(cfg.pools[0]!.template);
    const nodes = low.map((n) => {
      const idle = { ...n, launchedFrom: n.nodeId === 'node-3.example.com' ? { ...current, image: 'ami-0aaaaaaaaaaaaaaaa' } : current };
      return { ...idle, stats: { ...idle.stats!, idleGears: idle.stats!.activeGears, disruptiveGears: 0 } };
    });
    const input = evaluation({ config: cfg, nodes, pool: pool({ demandHistory: quietDay, lowSince: minutesAgo(7) }) });
    const result = decidePool(input);
    expect(result.decision).toMatchObject({ kind: 'scale-down', nodeId: 'node-3.example.com' });
    expect(explainPool(input).scaleDown.find((check) => check.name === 'candidate')).toEqual({
      name: 'candidate',
      ok: true,
      detail: 'node-3.example.com (32 gears, least-disruption, drifted: image ami-0aaaaaaaaaaaaaaaa -> ami-0bbbbbbbbbbbbbbbb)',
    });
    expect(result.decision.reason).toContain('drain node-3.example.com (32 gears, least-disruption, drifted: image ami-0aaaaaaaaaaaaaaaa -> ami-0bbbbbbbbbbbbbbbb); pays:');
    // The same pool launched from one image: the fewest gears, node-4, as before.
    const same = nodes.map((n) => ({ ...n, launchedFrom: current }));
    expect(decidePool(evaluation({ config: cfg, nodes: same, pool: pool({ demandHistory: quietDay, lowSince: minutesAgo(7) }) })).decision).toMatchObject({ kind: 'scale-down', nodeId: 'node-4.example.com' });
  });

  it('does not drain a node the forecast needs again within the horizon, and says so (pays-off check)', () => {
    // Yesterday the pool held 300 gears from 11:00: without one node, 300 slots cannot hold that.
    const busyLater = history(-25 * 60, -1, (m) => (m >= -23 * 60 && m < -20 * 60 ? 300 : 0));
    const result = decidePool(evaluation({ nodes: low, pool: pool({ demandHistory: busyLater, lowSince: minutesAgo(7) }) }));
    expect(result.decision.kind).toBe('no-action');
    expect(result.decision.reason).toContain("node-4.example.com: needed again in 30m (yesterday's demand reaches 210 gears, 90 below the 300 slots without it, set by the target: 0.7 x 300 slots), within the 4h horizon");
    // Without a day behind it, a pool low for only 7 minutes is not trusted to stay low for the horizon.
    const fresh = decidePool(evaluation({ nodes: low, pool: pool({ lowSince: minutesAgo(7) }) }));
    expect(fresh.decision.kind).toBe('no-action');
    expect(fresh.decision.reason).toMatch(/unneeded for only 0s so far \(recent demand\), within the 2h horizon/);
  });

  it('between jobs that repeat every day, keeps the next job and not the jobs\' whole rise on top of it', () => {
    // 200 gears, and a job to 400 for 30 minutes every 2 hours; the last ended 75 minutes ago, the next starts in 15.
    const phase = (m: number) => (((m % 120) + 120) % 120);
    const jobs = history(-50 * 60, -1, (m) => (phase(m) >= 15 && phase(m) < 45 ? 400 : 200));
    const nodes = withGears([30, 30, 30, 30, 30, 30, 20]); // 200 gears on 700 slots
    const input = (elevationWindow: string) =>
      evaluation({ config: config({ scaleUp: { observedHeadroom: { elevationWindow } } }), nodes, pool: pool({ demandHistory: jobs, lowSince: minutesAgo(7) }) });
    // Without node-7 the pool holds 420 gears (0.7 x 600 slots): the next job's 400 and nothing rises on top of a job.
    expect(decidePool(input('4h')).decision).toMatchObject({ kind: 'scale-down', nodeId: 'node-7.example.com' });
    // Read without the elevation window, every level keeps the jobs' 200-gear rise: 600 - 200 = 400 slots, reached by the next job.
    const full = decidePool(input('0m'));
    expect(full.decision.kind).toBe('no-action');
    expect(full.decision.reason).toContain('node-7.example.com: needed again');
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
      rejected: [{ nodeId: 'node-4.example.com', pending: true, reason: 'drained once delayAfterAdd until 10:05:00Z is over' }],
      // What a renewal waits for (renewal.ts): this drain comes within minutes.
      scaleDownWaits: 'delayAfterAdd until 10:05:00Z',
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

  it('waits delayAfterFailure after a failed drain too, from the later of a host failure and a drain failure', () => {
    const lastDrainFailureAt = new Date(NOW.getTime() - 10_000).toISOString();
    const afterDrain = decidePool(evaluation({ nodes: low, pool: pool({ demandHistory: quietDay, lowSince: minutesAgo(7), lastDrainFailureAt }) }));
    expect(afterDrain.decision.reason).toBe('pool d1/small at 0.31 <= 0.50 for 7m; scale-down blocked: delayAfterFailure until 10:00:20Z');
    const older = decidePool(evaluation({ nodes: low, pool: pool({ demandHistory: quietDay, lowSince: minutesAgo(7), lastDrainFailureAt, lastFailureAt: minutesAgo(5) }) }));
    expect(older.decision.reason).toBe('pool d1/small at 0.31 <= 0.50 for 7m; scale-down blocked: delayAfterFailure until 10:00:20Z');
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
