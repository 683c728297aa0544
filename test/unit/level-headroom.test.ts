import { describe, expect, it } from 'vitest';
import { BUCKET_MINUTES } from '../../lib/domain/forecast.js';
import { measurePoolRises, observedHeadroom } from '../../lib/domain/headroom.js';
import type { DemandSample } from '../../lib/domain/model.js';
import { headroomAtLevel, poolHeadroomAtLevel } from '../../lib/domain/level-headroom.js';
import { seededRandom } from '../../lib/sim/random.js';
import { config } from '../support/builders.js';
import { fiveMinuteHistory } from '../support/decisions.js';

const BOOT = 2 * 60_000;
const minSamples = (6 * 60) / BUCKET_MINUTES;
const options = { bootMs: BOOT, quantile: 0.95, minSamples, fallback: 30 };

describe('headroomAtLevel: what the pool keeps above a level the kept days expect', () => {
  const at = { quantile: 0.95, minSamples, aheadMinutes: 240 };
  const measured = (history: DemandSample[], elevationMinutes = 240) => measurePoolRises(history, BOOT, elevationMinutes);
  // Two days of 400 gears and a job every 2 hours that lifts it to `height(job)` for 30 minutes (6 of every 24 samples).
  const jobs = (height: (job: number) => number) => fiveMinuteHistory(50, (i) => (i % 24 < 6 ? height(Math.floor(i / 24)) : 400));

  it('keeps the full headroom above the usual standing, and nothing above a job that repeats exactly from day to day', () => {
    const history = jobs(() => 700);
    const full = observedHeadroom(history, options).gears;
    expect(full).toBe(300);
    const keep = headroomAtLevel(measured(history), { ...at, full })!;
    expect(keep.usual).toBe(400);
    expect(keep.at(400)).toBe(300);
    expect(keep.at(700)).toBe(0);
  });

  it('keeps the day-to-day spread of the next hours\' highest demand above a job whose height wanders', () => {
    const random = seededRandom(11);
    const heights = Array.from({ length: 30 }, () => 500 + Math.round(random() * 400));
    const history = jobs((job) => heights[job]!);
    const full = observedHeadroom(history, options).gears;
    const keep = headroomAtLevel(measured(history), { ...at, full })!;
    // The jobs rose nothing further once they stood high, but a job may come 30 % or more above yesterday's.
    expect(keep.at(700)).toBeGreaterThanOrEqual(0.3 * 700);
    expect(keep.at(700)).toBeLessThanOrEqual(full);
    expect(keep.at(400)).toBe(full);
    // A decision's reason names the margin: the spread above the job, the full headroom at the usual standing.
    expect(keep.why!(700)).toMatch(/^set by the kept days' spread: \d+ % of 700 gears expected$/);
    expect(keep.why!(400)).toBe(`set by the pool's headroom: ${full} gears`);
  });

  it('names the rises from a standing as the margin where they keep more than the spread', () => {
    // Jobs that repeat exactly (no spread from day to day) and rise in two steps: 400 -> 700 -> 800 gears.
    const history = fiveMinuteHistory(50, (i) => (i % 24 < 3 ? 700 : i % 24 < 6 ? 800 : 400));
    const keep = headroomAtLevel(measured(history), { ...at, full: 400 })!;
    // Standing at the job's first step, the next rise comes on top of it.
    const level = 700;
    const margin = keep.at(level);
    expect(margin).toBeGreaterThan(0);
    expect(margin).toBeLessThan(400);
    expect(keep.why!(level)).toBe(`set by the rises from a standing this high: ${margin} gears`);
  });

  it('before the kept days can say it, keeps how far the next hours\' highest strayed from the hours before', () => {
    // A pool's first 20 hours: jobs that repeat exactly keep nothing above them, the standing the full headroom.
    const first = jobs(() => 700).slice(0, 12 * 20);
    const keep = headroomAtLevel(measured(first), { ...at, full: 300 })!;
    expect(keep.at(700)).toBe(0);
    expect(keep.at(400)).toBe(300);
    // Jobs whose height wanders from job to job keep some of that spread above them (the 4 hours' highest strays less than one job).
    const random = seededRandom(5);
    const heights = Array.from({ length: 12 }, () => 500 + Math.round(random() * 400));
    const wandering = jobs((job) => heights[job]!).slice(0, 12 * 20);
    const margin = headroomAtLevel(measured(wandering), { ...at, full: 300 })!.at(700);
    expect(margin).toBeGreaterThanOrEqual(0.05 * 700);
    expect(margin).toBeLessThan(300);
  });

  it('keeps the full headroom on a first day that ramps over hours (the hours before say little of the next)', () => {
    const ramp = fiveMinuteHistory(20, (i) => 200 + 5 * i + (i % 24 < 6 ? 300 : 0));
    const full = 300;
    const keep = headroomAtLevel(measured(ramp), { ...at, full })!;
    expect(keep.at(1400)).toBe(full);
  });

  it('says nothing without enough comparisons of either kind, or without an elevation window', () => {
    const history = jobs(() => 700);
    expect(headroomAtLevel(measured(history.slice(0, 12 * 9)), { ...at, full: 300 })).toBeUndefined();
    expect(headroomAtLevel(measured(history, 0), { ...at, full: 300 })).toBeUndefined();
  });

  it('is read with the pool\'s settings, and not at all when the observed headroom or the pays-off check is off', () => {
    const history = jobs(() => 700);
    const keep = poolHeadroomAtLevel(config({ scaleUp: { headroomGears: 300 } }), measured(history));
    expect(keep?.at(700)).toBe(0);
    expect(keep?.at(400)).toBe(300);
    expect(poolHeadroomAtLevel(config({ scaleUp: { headroomGears: 300, observedHeadroom: { enabled: false } } }), measured(history))).toBeUndefined();
    expect(poolHeadroomAtLevel(config({ scaleUp: { headroomGears: 300 }, scaleDown: { payoff: { enabled: false } } }), measured(history))).toBeUndefined();
  });
});
