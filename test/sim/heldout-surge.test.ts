import { describe, expect, it } from 'vitest';
import { familyShapes } from '../../lib/sim/heldout-families.js';
import { surgeShape } from '../../lib/sim/heldout-surge.js';
import { wanderShape } from '../../lib/sim/heldout-wander.js';
import { demandsOf, expectHeldoutBenchOutput, expectValidMinuteTraces, runHeldoutBench } from '../support/heldout-shapes.js';

const OPTIONS = { seed: 1, days: 7, peakGears: 2000 };
const shapes = (count: number, options = OPTIONS) => Array.from({ length: count }, (_, index) => surgeShape(index, options));
const demands = demandsOf;
/** A shape of seed 1 whose description matches and draws nothing that `without` names. */
const plainShape = (component: RegExp, without: RegExp) => shapes(200).find((s) => component.test(s.description) && !without.test(s.description));

describe('held-out surging shapes', () => {
  it('are the same for the same seed and index, and differ from shape to shape, seed to seed and from the wandering family', () => {
    expect(surgeShape(4, OPTIONS)).toEqual(surgeShape(4, OPTIONS));
    const all = [...shapes(8), ...shapes(8, { ...OPTIONS, seed: 2 })];
    expect(all.map((s) => s.name).slice(0, 3)).toEqual(['heldout:u1-1', 'heldout:u1-2', 'heldout:u1-3']);
    expect(new Set(all.map((s) => demands(s).join(','))).size).toBe(16);
    expect(demands(surgeShape(0, OPTIONS))).not.toEqual(demands(wanderShape(0, OPTIONS)));
    expect(familyShapes('surge', { ...OPTIONS, count: 3 }).map((s) => s.name)).toEqual(['heldout:u1-1', 'heldout:u1-2', 'heldout:u1-3']);
    const descriptions = shapes(60, { ...OPTIONS, days: 1 }).map((s) => s.description).join('\n');
    for (const component of ['two crests', 'weekends at', 'crowds', 'backlog every', 'departure to', 'noise', 'churn']) expect(descriptions).toContain(component);
  });

  it('are valid minute-by-minute traces: whole gears, never negative, peak exactly peakGears', () => {
    expectValidMinuteTraces(surgeShape);
  });

  it('two crests: a day has two highs with a valley between them', () => {
    const shape = plainShape(/two crests \d+h\+\d+h/, /weekends|crowds|backlog|departure/)!;
    expect(shape, 'a shape of seed 1 with two crests and nothing else').toBeDefined();
    const [first, second] = /two crests (\d+)h\+(\d+)h/.exec(shape.description)!.slice(1).map(Number) as [number, number];
    const hourly = Array.from({ length: 24 }, (_, hour) => {
      const minutes = demands(shape).slice(24 * 60 + hour * 60, 24 * 60 + (hour + 1) * 60);
      return minutes.reduce((a, b) => a + b, 0) / minutes.length;
    });
    const trough = Math.min(...hourly);
    const at = (hour: number) => hourly[((hour % 24) + 24) % 24]!;
    const between = Math.min(...Array.from({ length: 24 }, (_, h) => h).filter((h) => ((h - first + 24) % 24) < ((second - first + 24) % 24)).map(at));
    // Each crest stands above the valley between them, and the valley above the day's trough or at it.
    expect(at(first)).toBeGreaterThan(between);
    expect(at(second)).toBeGreaterThan(between);
    expect(between).toBeGreaterThanOrEqual(trough);
  });

  it('weekends: the two days from the day the description names stand at its share of the others', () => {
    const shape = plainShape(/^weekends at \d+ % from day \d, noise \d %/, /crest|crowds|backlog|departure/)!;
    expect(shape, 'a shape of seed 1 with weekends and nothing else').toBeDefined();
    const [share, first] = /weekends at (\d+) % from day (\d)/.exec(shape.description)!.slice(1).map(Number) as [number, number];
    const values = demands(shape);
    const dayMean = (day: number) => values.slice(day * 1440, (day + 1) * 1440).reduce((a, b) => a + b, 0) / 1440;
    const weekend = [first, (first + 1) % 7];
    const weekdays = [0, 1, 2, 3, 4, 5, 6].filter((day) => !weekend.includes(day));
    const weekdayMean = weekdays.reduce((sum, day) => sum + dayMean(day), 0) / weekdays.length;
    for (const day of weekend) expect(dayMean(day) / weekdayMean).toBeCloseTo(share / 100, 1);
  });

  it('flash crowds fade: an hour after its sharpest rise a crowd is still above the level before it, and below its top', () => {
    const shape = plainShape(/crowds \d+ x[\d.]+ fading by half in (1[2-9]\d|2[0-4]\d) min/, /crest|weekends|backlog|departure/)!;
    expect(shape, 'a shape of seed 1 with slowly fading crowds and nothing else').toBeDefined();
    const values = demands(shape);
    const rises = values.slice(1).map((v, i) => ({ minute: i + 1, rise: v - values[i]! })).sort((a, b) => b.rise - a.rise);
    const { minute } = rises[0]!;
    const before = values[minute - 2]!;
    const top = Math.max(...values.slice(minute, minute + 10));
    const anHourOn = values[minute + 60]!;
    expect(anHourOn).toBeGreaterThan(before * 1.2);
    expect(anHourOn).toBeLessThan(top);
  });

  it('backlogs: demand climbs for hours and is cleared within a minute', () => {
    const shape = plainShape(/backlog every \d+ h \+(1\d\d|[5-9]\d) %/, /crest|weekends|crowds|departure/)!;
    expect(shape, 'a shape of seed 1 with a backlog and nothing else').toBeDefined();
    const values = demands(shape);
    const falls = values.slice(1).map((v, i) => ({ minute: i + 1, fall: values[i]! - v })).sort((a, b) => b.fall - a.fall);
    const { minute, fall } = falls[0]!;
    // The drop is a third of the peak or more, and the hour before it rose, not fell.
    expect(fall).toBeGreaterThan(2000 / 3);
    expect(values[minute - 1]!).toBeGreaterThan(values[minute - 61]!);
  });

  it('npm run bench -- heldout --family surge replays them with the goal line, and names them u<seed>-<n>', () => {
    expectHeldoutBenchOutput(runHeldoutBench('surge'), { label: 'surging shapes', prefix: 'u' });
  });
});
