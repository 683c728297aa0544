import { describe, expect, it } from 'vitest';
import { peakDemand } from '../../lib/sim/pools.js';
import { SYNTHETIC_FAMILIES, syntheticTrace } from '../../lib/sim/synthetic.js';
import { parseTrace } from '../../lib/sim/trace.js';
import { windowOf } from '../../lib/sim/window.js';

describe('the replayed window', () => {
  // A quiet first day (peak 50) and a busy second one (peak 100), scaled to 1,000 gears over both.
  const trace = parseTrace(['t,load', ...Array.from({ length: 48 }, (_, i) => `${i * 3600},${i < 24 ? 25 + i : 100}`)].join('\n'), 'two-days.csv', { stepSeconds: 3600, peakGears: 1000 });

  it('scales the first days to their own peak, not to the peak of the whole trace', () => {
    const day = windowOf(trace, 86400, 1000);
    expect(day.durationSeconds).toBe(86400);
    expect(day.steps).toHaveLength(24);
    expect(peakDemand(day)).toBe(1000);
    expect(day.steps[0]!.demand).toBe(Math.round((250 / 480) * 1000));
  });

  it('leaves a whole trace already at its peak as it is', () => {
    expect(windowOf(trace, undefined, 1000)).toBe(trace);
    expect(windowOf(trace, 10 * 86400, 1000)).toBe(trace);
  });
});

describe('synthetic families', () => {
  it('are seeded, as long as asked and scaled to the peak', () => {
    for (const family of SYNTHETIC_FAMILIES) {
      const one = syntheticTrace(family, { days: 3, peakGears: 500, seed: 9 });
      expect(one.durationSeconds).toBe(3 * 86400);
      expect(peakDemand(one)).toBe(500);
      expect(syntheticTrace(family, { days: 3, peakGears: 500, seed: 9 }).steps).toEqual(one.steps);
    }
  });

  it('have the shapes they are named for', () => {
    const bursts = syntheticTrace('bursts-5x', { days: 10, peakGears: 1000, seed: 1 }).steps.map((s) => s.demand);
    expect(bursts.filter((d) => d >= 900).length).toBeGreaterThan(0);
    expect(bursts.filter((d) => d < 250).length / bursts.length).toBeGreaterThan(0.8);
    const growth = syntheticTrace('steady-growth', { days: 10, peakGears: 1000, seed: 1 }).steps.map((s) => s.demand);
    expect(growth.slice(-288).reduce((a, b) => a + b, 0)).toBeGreaterThan(2 * growth.slice(0, 288).reduce((a, b) => a + b, 0));
    const step = syntheticTrace('step-change', { days: 10, peakGears: 1000, seed: 1 }).steps.map((s) => s.demand);
    expect(step[Math.floor(step.length * 0.5)]! / step[0]!).toBeGreaterThan(2);
    const weekly = syntheticTrace('weekly-cycle', { days: 14, peakGears: 1000, seed: 1 }).steps.map((s) => s.demand);
    const dayMean = (d: number) => weekly.slice(d * 288, (d + 1) * 288).reduce((a, b) => a + b, 0) / 288;
    expect(dayMean(5)).toBeLessThan(0.7 * dayMean(2));
  });
});
