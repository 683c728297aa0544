import { describe, expect, it } from 'vitest';
import { drainPayoff, savingHours, unneededFor } from '../../lib/domain/payoff.js';
import { rebuyLevel } from '../../lib/domain/wanted.js';
import type { DemandSample } from '../../lib/domain/model.js';
import { epochMinute } from '../../lib/domain/forecast.js';
import { demandHistory, payoffSettings } from '../support/builders.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const payoff = payoffSettings();

/** Two days and a bit of history: a sample every 5 minutes, per minute for the last half hour. */
const history = (now: Date, demandAt: (minutesFromNow: number) => number, hours = 50) => demandHistory(now, demandAt, hours);

/** A shallow daily trough by minute of the day (UTC): 1,900 gears from 19:00 to 09:00, 1,500 from 09:00 to 19:00. */
const trough = (now: Date) => (m: number) => {
  const hour = new Date(now.getTime() + m * MIN).getUTCHours();
  return hour >= 9 && hour < 19 ? 1500 : 1900;
};

describe('rebuyLevel', () => {
  it('is where a scale-up fires: the threshold, or the headroom, whichever comes first', () => {
    expect(rebuyLevel(1800, { threshold: 0.98, headroomGears: 30 })).toBe(1764);
    expect(rebuyLevel(1800, { threshold: 0.98, headroomGears: 100 })).toBe(1700);
  });
});

describe('savingHours: a drain saves until the scale-up buys the node back', () => {
  const noon = new Date('2026-01-07T09:30:00Z');
  const h = history(noon, trough(noon));
  const limit = 1700;

  it("counts the trough to the hour the kept days rise again, not the half hour early that 'needed again' reads", () => {
    const unneeded = unneededFor(h, noon, 1500, limit, 24 * HOUR);
    expect(unneeded.neededAt?.toISOString()).toBe('2026-01-07T18:30:00.000Z'); // safety: half an hour early
    expect(savingHours(h, noon, 1500, limit, 24 * HOUR, unneeded)).toBe(9.5); // until 19:00, when it is bought back
  });

  it('a node unneeded for most of the trough pays; the same node needed again within the horizon does not', () => {
    // 50 gears to move, 10 of them tenant outages, 30 siblings: $0.225 + $0.135 at the default weights
    const stats = { activeGears: 50, idleGears: 10, disruptiveGears: 10 };
    const early = drainPayoff({ history: h, now: noon, confident: 1500, limit, stats, config: payoff });
    expect(early.pays).toBe(true);
    if (early.pays) expect(early.text).toMatch(/^pays: 9\.5h unneeded \(yesterday's demand\) saves \$1\.82 at \$0\.192\/h >= /);

    const late = new Date('2026-01-07T17:00:00Z'); // an hour and a half before it is needed again
    const verdict = drainPayoff({ history: history(late, trough(late)), now: late, confident: 1500, limit, stats, config: payoff });
    expect(verdict.pays).toBe(false);
    if (!verdict.pays) expect(verdict.reason).toMatch(/^needed again in 1h30m .*within the 4h horizon$/);
  });

  it("by default a full node of the usual mix is drained for a shallow trough's 9.5 hours (the old weights needed 11)", () => {
    // 85 gears: 30 restarts, 25 siblings, 30 idle: $0.675 + $0.1125 at the default weights, twice: $1.58 <= $1.82
    const stats = { activeGears: 85, idleGears: 30, disruptiveGears: 30 };
    expect(drainPayoff({ history: h, now: noon, confident: 1500, limit, stats, config: payoff }).pays).toBe(true);
    const old = { ...payoff, moveCost: { idle: 0, sibling: 0.006, disruptive: 0.03 } }; // $1.05, twice: $2.10
    expect(drainPayoff({ history: h, now: noon, confident: 1500, limit, stats, config: old }).pays).toBe(false);
    // six hours into the trough, 3.5 hours of it are left: needed again within the horizon
    const later = new Date('2026-01-07T15:30:00Z');
    expect(drainPayoff({ history: history(later, trough(later)), now: later, confident: 1500, limit, stats, config: payoff }).pays).toBe(false);
  });

  it('on a slow rise, counts the hysteresis band: the node is bought back only when demand reaches the scale-up threshold', () => {
    // demand climbs 1 gear a minute from 1,500 at 10:00 every day: the drain's level (1,700) comes at 13:20, the scale-up
    // (1,760) at 14:20
    const now = new Date('2026-01-07T09:00:00Z');
    const ramp = (m: number) => {
      const at = new Date(now.getTime() + m * MIN);
      const minuteOfDay = at.getUTCHours() * 60 + at.getUTCMinutes();
      return minuteOfDay < 600 ? 1500 : 1500 + (minuteOfDay - 600);
    };
    const slow = history(now, ramp);
    const unneeded = unneededFor(slow, now, 1500, limit, 24 * HOUR);
    const atLimit = savingHours(slow, now, 1500, limit, 24 * HOUR, unneeded);
    const atRebuy = savingHours(slow, now, 1500, 1760, 24 * HOUR, unneeded);
    expect(atLimit).toBeCloseTo(4 + 1 / 3, 5);
    expect(atRebuy).toBeCloseTo(5 + 1 / 3, 5);
    expect(unneeded.hours).toBeLessThan(atLimit);
  });

  it('on recent demand (no kept day) it is how long demand has stayed low, as before', () => {
    const now = new Date('2026-01-06T12:00:00Z');
    const h2: DemandSample[] = [];
    for (let m = -300; m <= 0; m++) h2.push([epochMinute(now) + m, m < -270 ? 1900 : 1000]);
    const unneeded = unneededFor(h2, now, 1000, limit, 24 * HOUR);
    expect(unneeded.basis).toBe('recent');
    expect(savingHours(h2, now, 1000, 1760, 24 * HOUR, unneeded)).toBe(unneeded.hours);
  });
});
