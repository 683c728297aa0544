import { describe, expect, it } from 'vitest';
import { CLUSTER_AUTOSCALER, runBaseline } from '../../lib/sim/baselines.js';
import { singlePool } from '../../lib/sim/pools.js';
import { parseTrace, type Trace } from '../../lib/sim/trace.js';

const options = { bootDelaySeconds: 120, tickSeconds: 60, moveSeconds: 30, maxConcurrentMoves: 3, seed: 1, sampleEverySeconds: 60, maxNodesTotal: 100 };

/** One row per `stepSeconds`, demand in gears as given (peak scaling keeps the values: peakGears = their max). */
function trace(values: number[], stepSeconds = 300): Trace {
  const rows = ['t,gears', ...values.map((v, i) => `${i * stepSeconds},${v}`)];
  return parseTrace(rows.join('\n'), 'tiny.csv', { stepSeconds, peakGears: values.reduce((m, v) => Math.max(m, v), 0) });
}

describe('baselines on tiny traces', () => {
  it('static-peak keeps the peak node count all the time, moving nothing', () => {
    const result = runBaseline('static-peak', [singlePool(trace([300, 1000, 300, 300]), 100)], options);
    expect(result.maxNodes).toBe(10);
    expect(result.nodeHours).toBeCloseTo((10 * 20) / 60, 5);
    expect(result.gearMoves).toBe(0);
    expect(result.unplacedGearMinutes).toBe(0);
  });

  it('cluster-autoscaler never drains a node at or above 0.5 utilization, however long demand stays low', () => {
    // 5 nodes start full for 500 gears; demand then holds at 300: about 0.6 per node, none under 0.5.
    const result = runBaseline('cluster-autoscaler', [singlePool(trace([500, ...Array<number>(36).fill(300)]), 100)], options);
    expect(result.drainsStarted).toBe(0);
    expect(result.gearMoves).toBe(0);
    expect(result.series.at(-1)!.nodes).toBe(5);
    // Karpenter, on the same trace, drains: two nodes' gears fit on the other three.
    expect(runBaseline('karpenter', [singlePool(trace([500, ...Array<number>(36).fill(300)]), 100)], options).drainsStarted).toBeGreaterThan(0);
    expect(CLUSTER_AUTOSCALER.utilizationThreshold).toBe(0.5);
  });

  it('cluster-autoscaler drains an under-used node only after 10 minutes under 0.5, one at a time', () => {
    // 6 nodes for 600 gears, then 120 gears: every node falls to about 0.2.
    const result = runBaseline('cluster-autoscaler', [singlePool(trace([600, ...Array<number>(24).fill(120)]), 100)], options);
    expect(result.drainsStarted).toBeGreaterThan(0);
    const firstDown = result.events.find((e) => e.kind === 'down')!;
    expect(firstDown.at).toBeGreaterThanOrEqual(300 + CLUSTER_AUTOSCALER.unneededSeconds);
    // Never more than one non-empty node drains at once: node count falls by at most one per drain.
    expect(result.series.at(-1)!.nodes).toBeLessThan(6);
  });

  it('karpenter drains a node whose gears fit on the others, within its 10 % budget', () => {
    // 10 nodes for 1000 gears, then 500: half the nodes are surplus and their gears fit on the rest.
    const result = runBaseline('karpenter', [singlePool(trace([1000, ...Array<number>(24).fill(500)]), 100, { min: 1 })], options);
    expect(result.drainsStarted).toBeGreaterThanOrEqual(5);
    expect(result.gearMoves).toBeGreaterThan(0);
    expect(result.series.at(-1)!.nodes).toBeLessThanOrEqual(6);
    // Budget: ceil(10 % of 10) = 1 node at a time at first, so no two drains start in the same minute then.
    const downs = result.events.filter((e) => e.kind === 'down').map((e) => e.at);
    expect(new Set(downs.slice(0, 2)).size).toBe(2);
  });

  it('karpenter scales up for waiting gears only', () => {
    const result = runBaseline('karpenter', [singlePool(trace([100, 100, 900, 900, 900]), 100)], options);
    expect(result.scaleUps).toBeGreaterThan(0);
    expect(result.maxNodes).toBeGreaterThanOrEqual(9);
    expect(result.unplacedGearMinutes).toBeGreaterThan(0);
  });

  it('clairvoyant-4h holds its node count through a block, sized for the block peak, launching a boot delay early', () => {
    // 4-hour blocks of 5-minute rows: block 0 peaks at 800 (one spike), block 1 at 300.
    const block0 = Array.from({ length: 48 }, (_, i) => (i === 20 ? 800 : 200));
    const block1 = Array<number>(48).fill(300);
    const result = runBaseline('clairvoyant-4h', [singlePool(trace([...block0, ...block1]), 100)], options);
    const inBlock0 = result.series.filter((p) => p.at < 4 * 3600 - options.bootDelaySeconds);
    expect(new Set(inBlock0.map((p) => p.nodes))).toEqual(new Set([8]));
    expect(inBlock0.every((p) => p.unplaced === 0)).toBe(true);
    const lateBlock1 = result.series.filter((p) => p.at >= 4.5 * 3600);
    expect(new Set(lateBlock1.map((p) => p.nodes))).toEqual(new Set([3]));
    expect(result.drainsStarted).toBe(5);
  });

  it('clairvoyant-1h follows the peak of each hour, so it runs fewer node-hours than clairvoyant-4h', () => {
    const values = Array.from({ length: 96 }, (_, i) => 200 + 600 * Math.abs(Math.sin(i / 10)));
    const pools = [singlePool(trace(values.map(Math.round)), 100)];
    const oneHour = runBaseline('clairvoyant-1h', pools, options);
    const fourHours = runBaseline('clairvoyant-4h', pools, options);
    expect(oneHour.nodeHours).toBeLessThan(fourHours.nodeHours);
    expect(oneHour.unplacedGearMinutes).toBe(0);
  });

  it('the global node limit holds across pools', () => {
    const a = { ...singlePool(trace([100, 900, 900, 900]), 100), id: 'a/small', district: 'a' };
    const b = { ...singlePool(trace([100, 900, 900, 900]), 100), id: 'b/small', district: 'b' };
    const result = runBaseline('karpenter', [a, b], { ...options, maxNodesTotal: 12 });
    expect(result.pools.map((p) => p.pool)).toEqual(['a/small', 'b/small']);
    expect(result.maxNodes).toBeLessThanOrEqual(12);
    expect(result.unplacedGearMinutes).toBeGreaterThan(0);
  });
});
