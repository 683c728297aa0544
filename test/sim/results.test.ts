import { describe, expect, it } from 'vitest';
import { MoveLedger } from '../../lib/sim/disruption.js';
import { ResultRecorder, SeriesSampler, combinePools, type PoolResult } from '../../lib/sim/results.js';

function recorder(): ResultRecorder {
  return new ResultRecorder('nodescaler', 100, 60, new MoveLedger());
}

describe('the sampled series', () => {
  it('carries on each point the gear-minutes waited since the one before, including waits between the samples', () => {
    const sampler = new SeriesSampler(300);
    for (let minute = 0; minute <= 10; minute++) {
      const unplaced = minute === 2 ? 40 : minute === 3 ? 10 : minute === 7 ? 5 : 0;
      sampler.add({ at: minute * 60, demand: 100, capacity: 100, nodes: 1, unplaced, moves: minute === 3 ? 2 : 0 });
    }
    expect(sampler.points.map((p) => p.at)).toEqual([0, 300, 600]);
    expect(sampler.points.map((p) => p.unplaced)).toEqual([0, 0, 0]);
    expect(sampler.points.map((p) => p.waited)).toEqual([0, 50, 5]);
    expect(sampler.points.map((p) => p.moves)).toEqual([0, 2, 0]);
  });
});

describe('waiting beside closed nodes', () => {
  it('counts, each step, the waiting gears that closed free slots could have held, in gear-minutes', () => {
    const r = recorder();
    r.step({ at: 0, demand: 300, capacity: 200, nodes: 3, unplaced: 50 }, 60);
    r.closedSlots(50, 30, 60);
    r.step({ at: 60, demand: 300, capacity: 200, nodes: 3, unplaced: 20 }, 60);
    r.closedSlots(20, 80, 60);
    r.step({ at: 120, demand: 200, capacity: 200, nodes: 3, unplaced: 0 }, 60);
    r.closedSlots(0, 80, 60);
    const figures = r.figures(300);
    expect(figures.unplacedGearMinutes).toBe(70);
    expect(figures.waitingBesideClosedGearMinutes).toBe(30 + 20);
  });

  it('is absent where it was not measured (the baselines), and summed over the pools that measured it', () => {
    const r = recorder();
    r.step({ at: 0, demand: 100, capacity: 100, nodes: 1, unplaced: 0 }, 60);
    expect(r.figures(100)).not.toHaveProperty('waitingBesideClosedGearMinutes');
    const pool = (figures: Partial<PoolResult>): PoolResult => ({ ...recorder().figures(0), pool: 'd/p', instanceType: 'm5.xlarge', gearsPerNode: 100, min: 1, max: 10, ...figures });
    const run = { days: 1, maxNodes: 2, series: [], events: [] };
    expect(combinePools('nodescaler', [pool({ waitingBesideClosedGearMinutes: 5 }), pool({ waitingBesideClosedGearMinutes: 7 })], run).waitingBesideClosedGearMinutes).toBe(12);
    expect(combinePools('karpenter', [pool({}), pool({})], run)).not.toHaveProperty('waitingBesideClosedGearMinutes');
  });
});
