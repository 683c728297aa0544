import { describe, expect, it } from 'vitest';
import { activeDemand, activeDemandSeries, firstStepSlots } from '../../lib/sim/active-demand.js';
import { runBaseline } from '../../lib/sim/baselines.js';
import { singlePool } from '../../lib/sim/pools.js';
import { AppModel } from '../../lib/sim/disruption.js';
import { seededRandom } from '../../lib/sim/random.js';
import { parseTrace, type Trace } from '../../lib/sim/trace.js';

const options = { bootDelaySeconds: 120, tickSeconds: 60, moveSeconds: 30, maxConcurrentMoves: 3, seed: 1, sampleEverySeconds: 60, maxNodesTotal: 100 };

function trace(values: number[], stepSeconds = 300, apps?: Trace['apps']): Trace {
  const rows = ['t,gears', ...values.map((v, i) => `${i * stepSeconds},${v}`)];
  const parsed = parseTrace(rows.join('\n'), 'tiny.csv', { stepSeconds, peakGears: values.reduce((m, v) => Math.max(m, v), 0) });
  return apps ? { ...parsed, apps } : parsed;
}

describe('the gears that hold slots when idle ones hold none', () => {
  const rising = trace([400, 600, 900, 900, 700, 500, 500, 800]);

  it('are every gear when no application is idle, and fewer, never more, with the default mix', () => {
    const everyGear = activeDemandSeries(singlePool({ ...rising, apps: { idleShare: 0, sizeExponent: 2.5 } }, 100), 60, 1);
    expect(everyGear[0]).toBe(400);
    expect(everyGear[5]).toBe(600);
    expect(Math.max(...everyGear)).toBe(900);
    const series = activeDemandSeries(singlePool(rising, 100), 60, 1);
    expect(series).toHaveLength(40);
    for (let tick = 0; tick < series.length; tick++) expect(series[tick]).toBeLessThanOrEqual(rising.steps[Math.floor(tick / 5)]!.demand);
    // About 30 % of applications idle: the peak's active gears sit well below its 900.
    expect(Math.max(...series)).toBeGreaterThan(450);
    expect(Math.max(...series)).toBeLessThan(850);
    expect(activeDemand(singlePool(rising, 100), 60, 1).steps.map((s) => s.demand)).toEqual([...series]);
  });

  it("start from the first step's active gears, drawn as the baselines draw their applications", () => {
    const pool = singlePool(rising, 100);
    expect(firstStepSlots(pool, 1, undefined)).toBe(400);
    const apps = new AppModel(seededRandom(1 + 7));
    let active = 0;
    for (let i = 0; i < 400; i++) if (!apps.idle(apps.next().id)) active++;
    expect(firstStepSlots(pool, 1, true)).toBe(active);
    expect(activeDemandSeries(pool, 60, 1)[0]).toBe(active);
  });
});

describe('baselines counting only active gears in slots', () => {
  const flat = trace(Array<number>(48).fill(1000));

  it('size static-peak and clairvoyant-4h for the active gears, and still leave no gear waiting', () => {
    const pool = singlePool(flat, 100);
    const peak = Math.max(...activeDemandSeries(pool, 60, 1));
    const staticPeak = runBaseline('static-peak', [pool], { ...options, idleTakesNoSlot: true });
    expect(staticPeak.maxNodes).toBe(Math.ceil(peak / 100));
    expect(staticPeak.maxNodes).toBeLessThan(10);
    for (const policy of ['static-peak', 'clairvoyant-4h'] as const) {
      const counted = runBaseline(policy, [pool], { ...options, idleTakesNoSlot: true });
      expect(counted.unplacedGearMinutes).toBe(0);
      expect(counted.nodeHours).toBeLessThan(runBaseline(policy, [pool], options).nodeHours);
    }
  });

  it("move a drained node's idle gears too, which hold no slot where they land", () => {
    // Demand falls from 1,000 to 250 gears: karpenter drains nodes, every gear of them moving.
    const falling = singlePool(trace([1000, ...Array<number>(30).fill(250)]), 100);
    const counted = runBaseline('karpenter', [falling], { ...options, idleTakesNoSlot: true });
    expect(counted.drainsStarted).toBeGreaterThan(0);
    expect(counted.gearMoves).toBeGreaterThan(0);
    expect(counted.unplacedGearMinutes).toBe(0);
    // 250 gears of which about 30 % idle fit in fewer nodes than 250 slots take.
    expect(counted.series.at(-1)!.nodes).toBeLessThan(runBaseline('karpenter', [falling], options).series.at(-1)!.nodes);
    expect(counted.series.at(-1)!.nodes).toBeLessThanOrEqual(2);
  });
});
