import { describe, expect, it } from 'vitest';
import { dailyOutlook, fallenShare, LEVEL_SHIFT_MINUTES, shareHeld, stayedBelow } from '../../lib/domain/daily-demand.js';
import { epochMinute, recordDemand } from '../../lib/domain/forecast.js';
import type { DemandSample } from '../../lib/domain/model.js';
import { NOW } from '../support/builders.js';

const MIN = 60_000;
const DAY = 24 * 60;
const nowMinute = epochMinute(NOW);

/** The history recordDemand keeps when `demandAt(minutes from NOW)` is recorded every minute. */
function recorded(fromMinutes: number, demandAt: (m: number) => number): DemandSample[] {
  let history: DemandSample[] = [];
  for (let m = fromMinutes; m <= 0; m++) history = recordDemand(history, new Date(NOW.getTime() + m * MIN), demandAt(m), { window: 30 * MIN, keepDaily: true });
  return history;
}

describe('dailyOutlook', () => {
  it('is undefined without a kept day at this hour', () => {
    expect(dailyOutlook(recorded(-3 * 60, () => 100), nowMinute, 100)).toBeUndefined();
  });

  it('expects the lower of the kept days, each raised to today level', () => {
    // yesterday 200 in the coming hour, the day before 150; both 100 now, today 120
    const h = recorded(-2 * DAY - 3 * 60, (m) => {
      if (m > -60) return 120;
      if (m > -DAY + 10 && m <= -DAY + 70) return 200;
      if (m > -2 * DAY + 10 && m <= -2 * DAY + 70) return 150;
      return 100;
    });
    const outlook = dailyOutlook(h, nowMinute, 120)!;
    expect(outlook.days.map((d) => [d.daysAgo, d.shift, d.levelShift])).toEqual([
      [1, 20, false],
      [2, 20, false],
    ]);
    expect(outlook.at(30)).toBe(170); // the day before's 150 + 20
    expect(outlook.at(120)).toBe(120);
  });

  it('follows today below a day only after a level shift', () => {
    // 500 until four hours ago, 300 since: the kept days are 500 all day
    const h = recorded(-2 * DAY - 3 * 60, (m) => (m > -4 * 60 ? 300 : 500));
    const outlook = dailyOutlook(h, nowMinute, 300)!;
    expect(outlook.days.every((d) => d.levelShift && d.shift === 0 && d.scale === 0.6)).toBe(true);
    expect(outlook.at(60)).toBe(300);
    // one hour below is not enough
    const early = recorded(-2 * DAY - 3 * 60, (m) => (m > -60 ? 300 : 500));
    expect(dailyOutlook(early, nowMinute, 300)!.at(60)).toBe(500);
  });

  it('follows a level shift in proportion: a quiet day at 60 % of the kept days has its crest at 60 % too', () => {
    // Kept days: 1,000 at night, 2,000 from three hours ahead on; today (a weekend) at 600 for the last four hours.
    const cycle = (m: number) => (((m % DAY) + DAY) % DAY >= 3 * 60 && ((m % DAY) + DAY) % DAY < 9 * 60 ? 2000 : 1000);
    const h = recorded(-2 * DAY - 3 * 60, (m) => (m > -4 * 60 ? 0.6 * cycle(m) : cycle(m)));
    const outlook = dailyOutlook(h, nowMinute, 600)!;
    expect(outlook.days.map((d) => [d.daysAgo, d.levelShift, d.scale])).toEqual([
      [1, true, 0.6],
      [2, true, 0.6],
    ]);
    expect(outlook.at(60)).toBe(600);
    // Lowered by the night's difference (400 gears), the crest would be expected at 1,600 and hold nodes for it.
    expect(outlook.at(4 * 60)).toBe(1200);
  });
});

describe('dailyOutlook with riseMinutes: the kept days raised to today level over the last hour', () => {
  // The kept days are 1,000 gears all day; today differs over its last `hours` (the newest 4 minutes may dip).
  const cases = [
    { name: 'a dip now, in a day running 300 above the kept days', hours: 3, today: 1300, newest: 1000, without: 1000, within: 1300 },
    { name: 'a dip now, in a day at the kept level', hours: 3, today: 1000, newest: 800, without: 1000, within: 1000 },
    { name: 'the newest sample above the last hour (the larger shift wins)', hours: 3, today: 1100, newest: 1500, without: 1500, within: 1500 },
    { name: 'today a little below the kept days: never lowered', hours: 3, today: 900, newest: 900, without: 1000, within: 1000 },
    { name: 'a level shift down: followed in proportion, whatever the rise', hours: 4, today: 500, newest: 500, without: 500, within: 500 },
  ];
  it.each(cases)('$name: $without without, $within with', ({ hours, today, newest, without, within }) => {
    const h = recorded(-2 * DAY - 3 * 60, (m) => (m > -4 ? newest : m > -hours * 60 ? today : 1000));
    expect(dailyOutlook(h, nowMinute, newest)!.at(60)).toBe(without);
    expect(dailyOutlook(h, nowMinute, newest, 60)!.at(60)).toBe(within);
  });
});

describe('dailyOutlook with fallMinutes: a day today stayed below all that span followed at today\'s share of it', () => {
  // The kept days: 1,000 gears, 1,200 from two hours ahead on (a crest). Today differs over its last `hours`.
  const crest = (m: number) => (((m % DAY) + DAY) % DAY >= 2 * 60 && ((m % DAY) + DAY) % DAY < 6 * 60 ? 1200 : 1000);
  const history = (today: (m: number) => number, hours = 3) => recorded(-2 * DAY - 3 * 60, (m) => (m > -hours * 60 ? today(m) : crest(m)));

  it('follows a load falling a few percent a day: the crest expected at the share today held, the least decline of the hour', () => {
    // Today 5 to 8 % below the kept days at every bucket (in turn, bucket by bucket), well within LEVEL_SHIFT_MARGIN.
    const h = history((m) => (Math.floor(m / 10) % 2 === 0 ? 950 : 920));
    const outlook = dailyOutlook(h, nowMinute, 950, 60, 60)!;
    expect(outlook.days.map((d) => [d.daysAgo, d.scale, d.levelShift])).toEqual([
      [1, 0.95, false],
      [2, 0.95, false],
    ]);
    expect(outlook.at(3 * 60)).toBe(1140); // 0.95 x the crest's 1,200
    // Without fallMinutes the crest is expected whole, as yesterday had it.
    expect(dailyOutlook(h, nowMinute, 950, 60)!.at(3 * 60)).toBe(1200);
  });

  it('keeps the day whole when one bucket of the hour stood at or above it (noise on a level load)', () => {
    const h = history((m) => (m > -25 && m <= -15 ? 1000 : 930));
    expect(shareHeld(h, nowMinute, DAY, 60)).toBeUndefined();
    expect(dailyOutlook(h, nowMinute, 930, 60, 60)!.at(3 * 60)).toBe(1200);
  });

  it('keeps the days whole when today is below yesterday only: a burst yesterday, which the day before did not have', () => {
    // Yesterday's burst (1,500) covered the last hour and the next one; the day before and today run at the kept level.
    const h = recorded(-2 * DAY - 3 * 60, (m) => (m > -DAY - 60 && m <= -DAY + 60 ? 1500 : crest(m)));
    expect(shareHeld(h, nowMinute, DAY, 60)).toBeCloseTo(1000 / 1500);
    expect(fallenShare(h, nowMinute, 60)).toBeUndefined();
    expect(dailyOutlook(h, nowMinute, 1000, 60, 60)!.at(3 * 60)).toBe(1200);
  });

  it('never expects less than today\'s demand now', () => {
    const h = history(() => 900);
    const outlook = dailyOutlook(h, nowMinute, 990, 60, 60)!;
    expect(outlook.days[0]!.scale).toBe(0.9);
    expect(outlook.at(30)).toBe(990); // 0.9 x 1,000 shifted up to today's 990
  });

  it('reads a span only where both days have buckets', () => {
    expect(shareHeld(recorded(-3 * 60, () => 900), nowMinute, DAY, 60)).toBeUndefined();
    expect(shareHeld(history(() => 900), nowMinute, DAY, 5)).toBeUndefined(); // shorter than a bucket
  });
});

describe('stayedBelow', () => {
  it('needs every bucket of the span below the same bucket a day earlier', () => {
    const below = recorded(-DAY - 3 * 60, (m) => (m > -3 * 60 ? 70 : 100));
    expect(stayedBelow(below, nowMinute, DAY, LEVEL_SHIFT_MINUTES)).toBe(true);
    const once = recorded(-DAY - 3 * 60, (m) => (m === -47 ? 100 : m > -3 * 60 ? 70 : 100));
    expect(stayedBelow(once, nowMinute, DAY, LEVEL_SHIFT_MINUTES)).toBe(false);
    expect(stayedBelow(recorded(-3 * 60, () => 90), nowMinute, DAY, LEVEL_SHIFT_MINUTES)).toBe(false); // no day before
  });
});
