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
    const keep = headroomAtLevel(history, measured(history), { ...at, full })!;
    expect(keep.usual).toBe(400);
    expect(keep.at(400)).toBe(300);
    expect(keep.at(700)).toBe(0);
  });

  it('keeps the day-to-day spread of the next hours\' highest demand above a job whose height wanders', () => {
    const random = seededRandom(11);
    const heights = Array.from({ length: 30 }, () => 500 + Math.round(random() * 400));
    const history = jobs((job) => heights[job]!);
    const full = observedHeadroom(history, options).gears;
    const keep = headroomAtLevel(history, measured(history), { ...at, full })!;
    // The jobs rose nothing further once they stood high, but a job may come 30 % or more above yesterday's.
    expect(keep.at(700)).toBeGreaterThanOrEqual(0.3 * 700);
    expect(keep.at(700)).toBeLessThanOrEqual(full);
    expect(keep.at(400)).toBe(full);
  });

  it('says nothing without a day behind the history or without an elevation window', () => {
    const history = jobs(() => 700);
    expect(headroomAtLevel(history.slice(-12 * 20), measured(history.slice(-12 * 20)), { ...at, full: 300 })).toBeUndefined();
    expect(headroomAtLevel(history, measured(history, 0), { ...at, full: 300 })).toBeUndefined();
  });

  it('is read with the pool\'s settings, and not at all when the observed headroom or the pays-off check is off', () => {
    const history = jobs(() => 700);
    const keep = poolHeadroomAtLevel(config({ scaleUp: { headroomGears: 300 } }), history, measured(history));
    expect(keep?.at(700)).toBe(0);
    expect(keep?.at(400)).toBe(300);
    expect(poolHeadroomAtLevel(config({ scaleUp: { headroomGears: 300, observedHeadroom: { enabled: false } } }), history, measured(history))).toBeUndefined();
    expect(poolHeadroomAtLevel(config({ scaleUp: { headroomGears: 300 }, scaleDown: { payoff: { enabled: false } } }), history, measured(history))).toBeUndefined();
  });
});
