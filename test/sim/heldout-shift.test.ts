import { describe, expect, it } from 'vitest';
import { familyShapes } from '../../lib/sim/heldout-families.js';
import { shiftShape } from '../../lib/sim/heldout-shift.js';
import { surgeShape } from '../../lib/sim/heldout-surge.js';
import { demandsOf, expectHeldoutBenchOutput, expectValidMinuteTraces, runHeldoutBench } from '../support/heldout-shapes.js';

const OPTIONS = { seed: 1, days: 7, peakGears: 2000 };
const shapes = (count: number, options = OPTIONS) => Array.from({ length: count }, (_, index) => shiftShape(index, options));
const demands = demandsOf;
/** A shape of seed 1 whose description matches `component` and draws nothing that `without` names. */
const plainShape = (component: RegExp, without: RegExp) => shapes(300).find((s) => component.test(s.description) && !without.test(s.description));
const dayMean = (values: readonly number[], day: number) => values.slice(day * 1440, (day + 1) * 1440).reduce((a, b) => a + b, 0) / 1440;
const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

describe('held-out shifting shapes', () => {
  it('are the same for the same seed and index, and differ from shape to shape, seed to seed and from the surging family', () => {
    expect(shiftShape(4, OPTIONS)).toEqual(shiftShape(4, OPTIONS));
    const all = [...shapes(8), ...shapes(8, { ...OPTIONS, seed: 2 })];
    expect(new Set(all.map((s) => demands(s).join(','))).size).toBe(16);
    expect(demands(shiftShape(0, OPTIONS))).not.toEqual(demands(surgeShape(0, OPTIONS)));
    expect(familyShapes('shift', { ...OPTIONS, count: 3 }).map((s) => s.name)).toEqual(['heldout:f1-1', 'heldout:f1-2', 'heldout:f1-3']);
    const descriptions = shapes(60).map((s) => s.description).join('\n');
    for (const component of ['regions', 'arrivals', 'departure', 'odd days', 'clocks', 'flapping', 'blips', 'noise', 'churn']) expect(descriptions).toContain(component);
  });

  it('are valid minute-by-minute traces: whole gears, never negative, peak exactly peakGears', () => {
    expectValidMinuteTraces(shiftShape);
  });

  it('a region that grows raises the last day above the first', () => {
    const shape = plainShape(/^regions \d+h \d+ % \+([5-9]\d) %, noise/, /arrivals|departure|odd days|clocks|flapping|blips/)!;
    expect(shape, 'a shape of seed 1 with one growing region and nothing else').toBeDefined();
    const growth = Number(/\+(\d+) %/.exec(shape.description)![1]) / 100;
    const values = demands(shape);
    expect(dayMean(values, 6) / dayMean(values, 0)).toBeGreaterThan(1 + growth / 2);
  });

  it('an arrival raises the level for good; a departure lowers it within minutes', () => {
    const arriving = plainShape(/^arrivals \+(\d+) %@[\d.]+d over [\d.]+ h, noise/, /regions|departure|odd days|clocks|flapping|blips/)!;
    expect(arriving, 'a shape of seed 1 with one arrival and nothing else').toBeDefined();
    const [by, at, over] = /arrivals \+(\d+) %@([\d.]+)d over ([\d.]+) h/.exec(arriving.description)!.slice(1).map(Number) as [number, number, number];
    const values = demands(arriving);
    const minute = Math.round(at * 1440);
    const before = mean(values.slice(minute - 180, minute - 60));
    const after = mean(values.slice(minute + Math.ceil(over * 60) + 60, minute + Math.ceil(over * 60) + 180));
    expect(after / before).toBeCloseTo(1 + by / 100, 1);

    const leaving = plainShape(/^departure -(\d+) %@[\d.]+d, noise/, /regions|arrivals|odd days|clocks|flapping|blips/)!;
    expect(leaving, 'a shape of seed 1 with a departure and nothing else').toBeDefined();
    const [share, day] = /departure -(\d+) %@([\d.]+)d/.exec(leaving.description)!.slice(1).map(Number) as [number, number];
    const gone = demands(leaving);
    const at2 = Math.round(day * 1440);
    expect(mean(gone.slice(at2 + 20, at2 + 80)) / mean(gone.slice(at2 - 80, at2 - 20))).toBeCloseTo(1 - share / 100, 1);
  });

  it('an odd day stands at its share of the day before it', () => {
    const shape = plainShape(/^odd days \d at \d+ %, noise/, /regions|arrivals|departure|clocks|flapping|blips/)!;
    expect(shape, 'a shape of seed 1 with one odd day and nothing else').toBeDefined();
    const [day, share] = /odd days (\d) at (\d+) %/.exec(shape.description)!.slice(1).map(Number) as [number, number];
    const values = demands(shape);
    expect(dayMean(values, day) / dayMean(values, day - 1)).toBeCloseTo(share / 100, 1);
  });

  it('a clock change moves the daily crest by the hour', () => {
    const shape = plainShape(/^regions \d+h \d+ % [+-]\d+ %, clocks [+-]1 h from day [2-6], noise/, /arrivals|departure|odd days|flapping|blips/)!;
    expect(shape, 'a shape of seed 1 with one region and a clock change').toBeDefined();
    const [sign, day] = /clocks ([+-])1 h from day (\d)/.exec(shape.description)!.slice(1) as [string, string];
    const values = demands(shape);
    // The minute of the day's crest, from the phase of its daily wave; a growing region moves it the same every day.
    const crestMinute = (d: number) => {
      let [sin, cos] = [0, 0];
      for (let m = 0; m < 1440; m++) {
        sin += values[d * 1440 + m]! * Math.sin((2 * Math.PI * m) / 1440);
        cos += values[d * 1440 + m]! * Math.cos((2 * Math.PI * m) / 1440);
      }
      return (Math.atan2(sin, cos) / (2 * Math.PI)) * 1440;
    };
    const moved = (d: number) => crestMinute(d) - crestMinute(d - 1);
    // Clocks +1 h: the crest comes an hour earlier by the wall clock the trace keeps.
    const hour = sign === '+' ? -60 : 60;
    expect(Math.abs(moved(Number(day)) - moved(Number(day) - 1) - hour)).toBeLessThan(15);
  });

  it('npm run bench -- heldout --family shift replays them with the goal line, and names them f<seed>-<n>', () => {
    expectHeldoutBenchOutput(runHeldoutBench('shift'), { label: 'shifting shapes', prefix: 'f' });
  });
});
