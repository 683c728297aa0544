import { describe, expect, it } from 'vitest';
import { epochMinute } from '../../lib/domain/forecast.js';
import type { DemandSample } from '../../lib/domain/model.js';
import { boughtWait, boughtWaitText, lastNeed, needRecurred, oneOffWait, oneOffWaitText } from '../../lib/domain/one-off-need.js';
import { drainPayoff } from '../../lib/domain/payoff.js';
import { payoffSettings } from '../support/builders.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const now = new Date('2026-01-07T12:00:00Z');
const nowMinute = epochMinute(now);
const price = { factor: 1, nodeHourPrice: 0.2 };

/** Two days and an hour of history: 10-minute buckets, per minute for the last hour; `at(m)` gives demand m minutes from now. */
function history(at: (m: number) => number): DemandSample[] {
  const samples: DemandSample[] = [];
  for (let m = -49 * 60; m <= 0; m += m < -60 ? 10 : 1) samples.push([nowMinute + m, at(m)]);
  return samples;
}

/** 400 gears, and 1,600 from 90 to 30 minutes ago (a burst, ended half an hour ago). */
const burstToday = (m: number) => (m >= -90 && m < -30 ? 1600 : 400);
/** The same burst at the same hour on each of the two days before too. */
const burstDaily = (m: number) => {
  const ofDay = ((m % 1440) + 1440) % 1440;
  return ofDay >= 1440 - 90 && ofDay < 1440 - 30 ? 1600 : 400;
};

describe('lastNeed', () => {
  it('is the newest sample at or above the limit, at the end of a coarse bucket', () => {
    expect(lastNeed(history(burstToday), 1200)).toEqual({ minute: nowMinute - 31, gears: 1600 });
    const coarse: DemandSample[] = [[100, 1500], [110, 300], [120, 300]];
    expect(lastNeed(coarse, 1200)).toEqual({ minute: 109, gears: 1500 });
    expect(lastNeed(history(() => 400), 1200)).toBeUndefined();
  });
});

describe('needRecurred', () => {
  it('a rise each kept day had at about that hour recurred; one a kept day lacked did not', () => {
    expect(needRecurred(history(burstDaily), nowMinute - 31, 1600)).toBe(true);
    expect(needRecurred(history(burstToday), nowMinute - 31, 1600)).toBe(false);
    // seen yesterday, not the day before: the forecast does not call it seasonal either
    const yesterdayToo = (m: number) => (burstDaily(m) > 400 && m > -2 * 1440 + 600 ? 1600 : 400);
    expect(needRecurred(history(yesterdayToo), nowMinute - 31, 1600)).toBe(false);
  });

  it('a day within the level-shift margin recurred (days of one cycle differ by less); no kept day: it did not', () => {
    const lower = (m: number) => (m < -1440 + 60 ? 1300 : burstToday(m)); // 1,300 all day on the kept days: 81 % of 1,600
    expect(needRecurred(history(lower), nowMinute - 31, 1600)).toBe(true);
    const muchLower = (m: number) => (m < -1440 + 60 ? 1200 : burstToday(m)); // 75 %
    expect(needRecurred(history(muchLower), nowMinute - 31, 1600)).toBe(false);
    expect(needRecurred([[nowMinute - 31, 1600]], nowMinute - 31, 1600)).toBe(false);
  });
});

describe('oneOffWait (rent or buy)', () => {
  const limit = 1200;
  it('after a one-off rise, a node waits until its idle rent pays factor x its moves', () => {
    // $0.40 of moves at $0.20 an hour: 2 hours; idle for 31 minutes so far
    const wait = oneOffWait({ history: history(burstToday), now, limit, costDollars: 0.4, config: price });
    expect(wait).toMatchObject({ waitHours: 2, neededGears: 1600 });
    expect(wait!.idleHours).toBeCloseTo(31 / 60);
    expect(oneOffWaitText(wait!, 1)).toBe('a one-off rise (1600 gears, not on the kept days) needed it 31m ago: drained once its idle rent pays 1 x its moves (2h, 1h29m to go)');
    // twice the factor, twice the wait
    expect(oneOffWait({ history: history(burstToday), now, limit, costDollars: 0.4, config: { ...price, factor: 2 } })?.waitHours).toBe(4);
  });

  it('owes nothing once paid, for an empty node, for a need that recurred, or with the rule off', () => {
    const later = new Date(now.getTime() + 2 * HOUR);
    const h = [...history(burstToday), ...Array.from({ length: 120 }, (_, i): DemandSample => [nowMinute + 1 + i, 400])];
    expect(oneOffWait({ history: h, now: later, limit, costDollars: 0.4, config: price })).toBeUndefined();
    expect(oneOffWait({ history: history(burstToday), now, limit, costDollars: 0, config: price })).toBeUndefined();
    expect(oneOffWait({ history: history(burstDaily), now, limit, costDollars: 0.4, config: price })).toBeUndefined();
    expect(oneOffWait({ history: history(burstToday), now, limit, costDollars: 0.4, config: { ...price, factor: 0 } })).toBeUndefined();
  });
});

describe('drainPayoff after a one-off rise', () => {
  const payoff = payoffSettings();
  const stats = { activeGears: 20, idleGears: 5, disruptiveGears: 8 }; // 8 x $0.03 + 7 x $0.006 = $0.282
  it('refuses, as pending (attrition may empty it meanwhile), until the rent is paid', () => {
    const verdict = drainPayoff({ history: history(burstToday), now, confident: 400, limit: 1200, stats, config: payoff });
    expect(verdict.pays).toBe(false);
    if (!verdict.pays) {
      expect(verdict.pending).toBe(true);
      expect(verdict.reason).toMatch(/^a one-off rise \(1600 gears, not on the kept days\) needed it 31m ago: drained once its idle rent pays 1 x its moves \(1h6m, 35m to go\)$/);
    }
    const emptied = drainPayoff({ history: history(burstToday), now, confident: 400, limit: 1200, stats: { activeGears: 0 }, config: payoff });
    expect(emptied.pays).toBe(true);
  });

  it('a burst that recurs daily is the forecast\'s to judge: drained at once if it pays', () => {
    expect(drainPayoff({ history: history(burstDaily), now, confident: 400, limit: 1200, stats, config: payoff }).pays).toBe(true);
  });
});

describe('boughtWait (rent or buy from the last scale-up)', () => {
  const ago = (minutes: number) => new Date(now.getTime() - minutes * MIN).toISOString();
  it.each([
    // [case, last scale-up, moves' cost, factor, expected wait hours or undefined]
    ['bought 10 minutes ago, $0.40 of moves at $0.20 an hour: 2 h owed', ago(10), 0.4, 1, 2],
    ['twice the factor, twice the wait', ago(10), 0.4, 2, 4],
    ['bought 2 hours ago: the rent has paid the moves', ago(120), 0.4, 1, undefined],
    ['an empty node owes no wait', ago(10), 0, 1, undefined],
    ['the rule off (factor 0)', ago(10), 0.4, 0, undefined],
    ['a pool that never scaled up', undefined, 0.4, 1, undefined],
    ['an unreadable time', 'yesterday', 0.4, 1, undefined],
  ] as const)('%s', (_case, lastDemandScaleUpAt, costDollars, factor, expected) => {
    const wait = boughtWait({ ...(lastDemandScaleUpAt ? { lastDemandScaleUpAt } : {}), now, costDollars, config: { ...price, factor } });
    if (expected === undefined) expect(wait).toBeUndefined();
    else expect(wait?.waitHours).toBe(expected);
  });

  it('says how long ago the pool bought nodes and how long is left', () => {
    const wait = boughtWait({ lastDemandScaleUpAt: ago(10), now, costDollars: 0.4, config: price })!;
    expect(wait.idleHours).toBeCloseTo(10 / 60);
    expect(boughtWaitText(wait, 1)).toBe(
      'the pool bought nodes 10m ago (its last scale-up): drained once its idle rent since pays 1 x its moves (2h, 1h50m to go; attrition may empty it meanwhile)',
    );
  });
});

describe('drainPayoff right after a scale-up', () => {
  const payoff = payoffSettings();
  const stats = { activeGears: 20, idleGears: 5, disruptiveGears: 8 }; // $0.282 of moves: 1h25m of rent at $0.198
  const level = () => 400; // a level load: the kept days call every node above 400 gears unneeded for the day
  const at = (minutesAgo: number) => new Date(now.getTime() - minutesAgo * MIN).toISOString();
  it.each([
    ['bought 10 minutes ago: refused as pending, so attrition closes it meanwhile', 10, false],
    ['bought 3 hours ago: the rent paid its moves, it is drained', 180, true],
  ] as const)('%s', (_case, minutesAgo, pays) => {
    const verdict = drainPayoff({ history: history(level), now, confident: 400, limit: 1200, stats, lastDemandScaleUpAt: at(minutesAgo), config: payoff });
    expect(verdict.pays).toBe(pays);
    if (!verdict.pays) {
      expect(verdict.pending).toBe(true);
      expect(verdict.reason).toMatch(/^the pool bought nodes 10m ago \(its last scale-up\): drained once its idle rent since pays 1 x its moves/);
    }
  });

  it('an emptied node is drained at once, however recent the scale-up', () => {
    expect(drainPayoff({ history: history(level), now, confident: 400, limit: 1200, stats: { activeGears: 0 }, lastDemandScaleUpAt: at(1), config: payoff }).pays).toBe(true);
  });
});
