import { describe, expect, it } from 'vitest';
import { epochMinute, forecastDemand, recordDemand, MAX_HISTORY_SAMPLES } from '../../lib/domain/forecast.js';
import type { DemandSample } from '../../lib/domain/model.js';
import { NOW } from '../support/builders.js';

const MIN = 60_000;
const WINDOW = 30 * MIN;
const at = (minutesFromNow: number) => new Date(NOW.getTime() + minutesFromNow * MIN);
const nowMinute = epochMinute(NOW);

/** Record `demandAt(minute offset)` once a minute from `from` to `to` minutes (relative to NOW). */
function simulate(from: number, to: number, demandAt: (offset: number) => number, keepDaily = true): DemandSample[] {
  let history: DemandSample[] = [];
  for (let m = from; m <= to; m++) history = recordDemand(history, at(m), demandAt(m), { window: WINDOW, keepDaily });
  return history;
}

/** `demandAt` of the last 25 hours, with the day before them repeating yesterday: both kept days rose alike. */
function twoKeptDays(demandAt: (offset: number) => number): DemandSample[] {
  return simulate(-49 * 60, 0, (m) => (m < -25 * 60 ? demandAt(m + 24 * 60) : demandAt(m)));
}

describe('recordDemand', () => {
  it('keeps one sample per minute, a later sample of the same minute replacing the earlier one', () => {
    let history = recordDemand([], NOW, 10, { window: WINDOW, keepDaily: true });
    history = recordDemand(history, new Date(NOW.getTime() + 30_000), 12, { window: WINDOW, keepDaily: true });
    expect(history).toEqual([[nowMinute, 12]]);
    history = recordDemand(history, at(1), 15, { window: WINDOW, keepDaily: true });
    expect(history).toEqual([
      [nowMinute, 12],
      [nowMinute + 1, 15],
    ]);
  });

  it('does not change the history it is given', () => {
    const history: DemandSample[] = [[nowMinute - 1, 5]];
    recordDemand(history, NOW, 10, { window: WINDOW, keepDaily: true });
    expect(history).toEqual([[nowMinute - 1, 5]]);
  });

  it('folds samples older than the window into 10-minute buckets holding their maximum', () => {
    const history = simulate(-60, 0, (m) => 100 + m); // rising: 40..100
    const fine = history.filter(([minute]) => minute > nowMinute - 30);
    const coarse = history.filter(([minute]) => minute <= nowMinute - 30);
    expect(fine).toHaveLength(30);
    expect(fine.every(([minute], i) => minute === nowMinute - 29 + i)).toBe(true);
    expect(coarse.every(([minute]) => minute % 10 === 0)).toBe(true);
    // the bucket starting 60 minutes ago held 40..49: its maximum is kept
    expect(coarse.find(([minute]) => minute === nowMinute - 60)).toEqual([nowMinute - 60, 49]);
    expect(history.map(([m]) => m)).toEqual([...history.map(([m]) => m)].sort((a, b) => a - b));
  });

  it('keeps two days of buckets (and the two hours before them) with keepDaily, and stays bounded', () => {
    const history = simulate(-51 * 60, 0, () => 7);
    expect(history.length).toBeLessThanOrEqual(MAX_HISTORY_SAMPLES);
    expect(history.length).toBeLessThan(700);
    expect(history[0]![0]).toBeGreaterThanOrEqual(nowMinute - 50 * 60);
    expect(history[0]![0]).toBeLessThanOrEqual(nowMinute - 50 * 60 + 5);
  });

  it('drops everything older than the window without keepDaily', () => {
    const history = simulate(-90, 0, () => 7, false);
    expect(history).toHaveLength(30);
    expect(history[0]![0]).toBe(nowMinute - 29);
  });

  it('bounds the history even with a window longer than an hour', () => {
    let history: DemandSample[] = [];
    for (let m = -26 * 60; m <= 0; m++) history = recordDemand(history, at(m), 1, { window: 6 * 60 * MIN, keepDaily: true });
    expect(history.length).toBeLessThanOrEqual(MAX_HISTORY_SAMPLES);
  });

  it('repairs an unsorted history and ignores malformed samples', () => {
    const messy = [[nowMinute - 2, 3], [nowMinute - 3, 2], ['x', 1] as unknown as DemandSample] as DemandSample[];
    expect(recordDemand(messy, NOW, 4, { window: WINDOW, keepDaily: true })).toEqual([
      [nowMinute - 3, 2],
      [nowMinute - 2, 3],
      [nowMinute, 4],
    ]);
  });
});

describe('forecastDemand', () => {
  const options = { window: WINDOW, dailySeasonality: true };

  it('is the current demand with no history', () => {
    expect(forecastDemand([], NOW, 5 * MIN, { ...options, current: 42 })).toMatchObject({ demand: 42, basis: 'no history' });
    expect(forecastDemand([[nowMinute, 9]], NOW, 5 * MIN, options)).toMatchObject({ demand: 9, basis: 'no history' });
  });

  it('projects a linear trend to now + lookahead', () => {
    const history = simulate(-20, 0, (m) => 200 + 4 * m); // +4 gears a minute
    const f = forecastDemand(history, NOW, 5 * MIN, options);
    expect(f.demand).toBeCloseTo(220);
    expect(f.basis).toBe('trend +40 gears/10m');
    expect(f.slopePerMinute).toBeCloseTo(4);
  });

  it('starts from the current demand, so a sudden drop does not forecast the old level', () => {
    const history = simulate(-20, -1, () => 1000);
    const f = forecastDemand(recordDemand(history, NOW, 140, { window: WINDOW, keepDaily: true }), NOW, 3 * MIN, options);
    expect(f.demand).toBe(140);
    expect(f.basis).toMatch(/^trend -\d+ gears\/10m$/);
  });

  it('needs 5 samples covering 5 minutes for a trend', () => {
    const four = simulate(-3, 0, (m) => 100 + 10 * m);
    expect(forecastDemand(four, NOW, 5 * MIN, options)).toMatchObject({ demand: 100, basis: 'no history' });
    const five = simulate(-4, 0, (m) => 100 + 10 * m);
    expect(forecastDemand(five, NOW, 5 * MIN, options).demand).toBeCloseTo(150);
    // five samples squeezed into two minutes' worth of span are not enough either
    const sparse: DemandSample[] = [[nowMinute - 1, 90], [nowMinute, 100]];
    expect(forecastDemand(sparse, NOW, 5 * MIN, options).basis).toBe('no history');
  });

  it('only uses the samples of the window for the trend', () => {
    // steep growth long ago, flat for the last 30 minutes
    const history = simulate(-60, 0, (m) => (m < -30 ? 10 * (m + 60) : 300));
    const f = forecastDemand(history, NOW, 10 * MIN, { window: WINDOW, dailySeasonality: false });
    expect(f.demand).toBeCloseTo(300);
    expect(f.basis).toBe('trend +0 gears/10m');
  });

  it('projects only the part of a rising slope trendConfidence standard errors above zero', () => {
    // Fitted slope 50 gears a minute; residuals -60, 90, -60, 90, -60 give it a standard error of 30.
    const history = simulate(-4, 0, (m) => [0, 200, 100, 300, 200][m + 4]!);
    const flat = { window: WINDOW, dailySeasonality: false };
    expect(forecastDemand(history, NOW, 10 * MIN, flat)).toMatchObject({ demand: 700, basis: 'trend +500 gears/10m' });
    const sure = forecastDemand(history, NOW, 10 * MIN, { ...flat, trendConfidence: 1 });
    expect(sure.demand).toBeCloseTo(400);
    expect(sure.slopePerMinute).toBeCloseTo(20);
    expect(sure.basis).toBe('trend +200 gears/10m');
    // Two standard errors take more than the whole slope: the level is all the window is sure of.
    expect(forecastDemand(history, NOW, 10 * MIN, { ...flat, trendConfidence: 2 })).toMatchObject({ demand: 200, basis: 'trend +0 gears/10m', slopePerMinute: 0 });
  });

  it('counts a level reported every minute but changing every five as the five levels it is, not thirty samples', () => {
    // A noisy level load with a chance upward fit: six 5-minute levels, reported once a minute.
    const levels = [1000, 1040, 990, 1050, 1000, 1060];
    const history = simulate(-29, 0, (m) => levels[Math.floor((m + 29) / 5)]!, false);
    const flat = { window: WINDOW, dailySeasonality: false };
    const fitted = forecastDemand(history, NOW, 10 * MIN, flat);
    expect(fitted.slopePerMinute).toBeCloseTo(1.33, 2);
    // The repeated residuals widen the slope's standard error: one of them leaves under a sixth of the slope...
    expect(forecastDemand(history, NOW, 10 * MIN, { ...flat, trendConfidence: 1 }).slopePerMinute).toBeLessThan(fitted.slopePerMinute! / 6);
    // ...and two leave the level alone.
    expect(forecastDemand(history, NOW, 10 * MIN, { ...flat, trendConfidence: 2 })).toMatchObject({ demand: 1060, slopePerMinute: 0 });
  });

  it('projects a clean rise in full whatever trendConfidence asks (no residuals, no doubt)', () => {
    const history = simulate(-20, 0, (m) => 200 + 4 * m);
    expect(forecastDemand(history, NOW, 5 * MIN, { ...options, trendConfidence: 3 }).demand).toBeCloseTo(220);
  });

  it('never forecasts below the current demand', () => {
    const history = simulate(-20, 0, (m) => 200 - 3 * m);
    const f = forecastDemand(history, NOW, 10 * MIN, options);
    expect(f.demand).toBe(200);
    expect(f.trend).toBeLessThan(200);
    expect(f.basis).toBe('trend -30 gears/10m');
  });

  it('uses what happened yesterday over the same lookahead (daily seasonality)', () => {
    // flat today; yesterday demand went from 100 to 150 between 10 and 40 minutes after this time of day
    const history = twoKeptDays((m) => {
      const sinceYesterday = m + 24 * 60;
      if (m > -60) return 100;
      return sinceYesterday <= 10 ? 100 : sinceYesterday <= 40 ? 100 + (50 * (sinceYesterday - 10)) / 30 : 150;
    });
    const f = forecastDemand(history, NOW, 45 * MIN, options);
    expect(f.dailyRatio).toBeCloseTo(1.5);
    expect(f.demand).toBeCloseTo(150);
    expect(f.basis).toBe('yesterday +50%');
    // a shorter lookahead sees less of yesterday's growth
    const soon = forecastDemand(history, NOW, 25 * MIN, options);
    expect(soon.demand).toBeGreaterThan(100);
    expect(soon.demand).toBeLessThan(150);
    // without seasonality, only the flat trend remains
    expect(forecastDemand(history, NOW, 45 * MIN, { ...options, dailySeasonality: false }).demand).toBe(100);
  });

  it('takes the higher of trend and seasonality', () => {
    const history = twoKeptDays((m) => {
      if (m > -30) return 100 + 2 * (m + 30); // today: +2 a minute, 160 now
      const sinceYesterday = m + 24 * 60;
      return sinceYesterday <= 10 ? 100 : 200; // yesterday: doubled ten minutes after this time
    });
    const f = forecastDemand(history, NOW, 10 * MIN, options);
    // Yesterday doubled; today stands above yesterday's level only by its last half hour's climb (a mean of 83 gears over
    // the hour), so the seasonal forecast is yesterday's 200 raised by that, not today's 160 doubled.
    expect(f.dailyRatio).toBe(2);
    expect(f.dailyCeiling).toBeCloseTo(282.7, 0);
    expect(f.basis).toBe('yesterday +77%');
    expect(f.demand).toBeCloseTo(282.7, 0);
    expect(f.demand).toBeGreaterThan(f.trend!);
  });

  it('does not forecast a level load above the level its kept days held (a chance rise on noise)', () => {
    // A level load between 90 and 110 (the same pattern every day); yesterday, the bucket ten minutes after this time of
    // day happened to be its highest (110) after a lower half hour (100): a +10% "rise". Today is at 108, on a noisy peak.
    const level = (m: number) => {
      const minuteOfDay = ((m % 1440) + 1440) % 1440;
      if (minuteOfDay > 1440 - 30 || minuteOfDay <= 10) return 100;
      if (minuteOfDay <= 20) return 110;
      return 90 + ((minuteOfDay * 7) % 21);
    };
    const history = twoKeptDays((m) => (m === 0 ? 108 : level(m)));
    const f = forecastDemand(history, NOW, 20 * MIN, options);
    expect(f.dailyRatio).toBeCloseTo(1.1);
    // 108 x 1.1 = 118.8 would be a level never held; the forecast stops at yesterday's 110 (today is not above yesterday)
    expect(f.dailyCeiling).toBeCloseTo(110, 0);
    expect(f.demand).toBeCloseTo(110, 0);
  });

  it('follows a kept day\'s rise at today\'s higher level (growth)', () => {
    // Yesterday rose from 100 to 150 ten minutes after this time of day; today runs 50 gears above yesterday.
    const yesterday = (m: number) => (m + 24 * 60 > 10 && m + 24 * 60 <= 70 ? 150 : 100);
    const history = twoKeptDays((m) => (m > -23 * 60 ? yesterday(m) + 50 : yesterday(m)));
    const f = forecastDemand(history, NOW, 20 * MIN, options);
    expect(f.dailyRatio).toBeCloseTo(1.5);
    // 150 x 1.5 = 225 scales the rise by today's level; the kept day's 150 raised by today's 50 above it is 200
    expect(f.dailyCeiling).toBeCloseTo(200);
    expect(f.demand).toBeCloseTo(200);
  });

  it('ignores yesterday when it had no demand to compare with', () => {
    const history = simulate(-25 * 60, 0, (m) => (m > -60 ? 50 : m + 24 * 60 <= 10 ? 0 : 30));
    const f = forecastDemand(history, NOW, 10 * MIN, options);
    expect(f.dailyRatio).toBeUndefined();
    expect(f.demand).toBe(50);
  });

  it('counts a rise as seasonal only when it recurred on each of the last two days', () => {
    // flat at 100 today; a jump to 300 ten minutes after this time of day yesterday, and (second case) the day before too
    const burst = (days: number[]) => (m: number) => (days.some((d) => m + d * 24 * 60 > 10 && m + d * 24 * 60 <= 60) ? 300 : 100);
    const once = forecastDemand(simulate(-50 * 60, 0, burst([1])), NOW, 10 * MIN, options);
    expect(once.dailyRatio).toBe(1);
    expect(once.demand).toBe(100);
    const twice = forecastDemand(simulate(-50 * 60, 0, burst([1, 2])), NOW, 10 * MIN, options);
    expect(twice.dailyRatio).toBe(3);
    expect(twice.demand).toBe(300);
  });

  it('buys for no rise a new pool has seen on one day only (a burst, a one-off step)', () => {
    // 25 hours of history, one kept day: yesterday jumped from 100 to 300 ten minutes after this time of day
    const stepOnce = (m: number) => (m > -60 ? 100 : m + 24 * 60 > 10 ? 300 : 100);
    const newPool = forecastDemand(simulate(-25 * 60, 0, stepOnce), NOW, 20 * MIN, options);
    expect(newPool.dailyRatio).toBeUndefined();
    expect(newPool.demand).toBe(100);
    expect(newPool.basis).not.toMatch(/yesterday/);
    // the same day kept twice is a daily rise
    const daily = forecastDemand(twoKeptDays(stepOnce), NOW, 20 * MIN, options);
    expect(daily.dailyRatio).toBe(3);
    expect(daily.demand).toBeGreaterThan(100);
  });
});
