import { describe, expect, it } from 'vitest';
import { epochMinute } from '../../lib/domain/forecast.js';
import type { DemandSample } from '../../lib/domain/model.js';
import { drainPayoff } from '../../lib/domain/payoff.js';
import { dipHours, recentDipsText, recentReturns, recentReturnsText, returnsOf, returnsWithin, spellsBelow } from '../../lib/domain/recent-returns.js';
import { payoffSettings } from '../support/builders.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const now = new Date('2026-01-07T12:00:00Z');
const nowMinute = epochMinute(now);
const horizon = 4 * HOUR;
const DAY = 24 * HOUR;

/** Two days and an hour of history: 10-minute buckets, per minute for the last hour; `at(m)` gives demand m minutes from now. */
function history(at: (m: number) => number): DemandSample[] {
  const samples: DemandSample[] = [];
  for (let m = -49 * 60; m <= 0; m += m < -60 ? 10 : 1) samples.push([nowMinute + m, at(m)]);
  return samples;
}

/** 400 gears, and 1,600 for an hour every `everyHours` (the last one ended `endedAgo` minutes ago). */
const bursts = (everyHours: number, endedAgo: number) => (m: number) => {
  const sinceEnd = -endedAgo - m; // minutes before the last burst's end
  const phase = ((sinceEnd % (everyHours * 60)) + everyHours * 60) % (everyHours * 60);
  return sinceEnd >= 0 && phase < 60 ? 1600 : 400;
};

describe('recentReturns', () => {
  it('bursts every 3 hours: every spell below the level ended within the horizon', () => {
    const returns = recentReturns(history(bursts(3, 30)), now, 1200, horizon);
    // the last burst's last bucket ends 21 minutes before its end (a coarse bucket counts to its last minute)
    expect(returns).toBeDefined();
    expect(returns!.comparable).toBeGreaterThan(10);
    expect(returns!.cameBack).toBe(returns!.comparable);
    expect(returnsWithin(returns)).toBe(true);
    expect(returns!.medianRemainingMinutes).toBeLessThan(3 * 60);
  });

  it('bursts a day apart: the spells outlast the horizon, nothing says the node comes back', () => {
    const returns = recentReturns(history(bursts(24, 30)), now, 1200, horizon);
    expect(returns!.comparable).toBeGreaterThan(0);
    expect(returns!.cameBack).toBe(0);
    expect(returnsWithin(returns)).toBe(false);
  });

  it('only spells as long as the current one count: past the short gaps, the long ones decide', () => {
    // two bursts 3 hours apart 30 hours ago, then nothing until one that ended 4 hours ago
    const at = (m: number) => ((m >= -33 * 60 && m < -32 * 60) || (m >= -29 * 60 && m < -28 * 60) || (m >= -5 * 60 && m < -4 * 60) ? 1600 : 400);
    const early = recentReturns(history(at), new Date(now.getTime() - 3 * HOUR), 1200, horizon);
    // an hour after the last burst: the 3-hour gap and the 23-hour gap both lasted that long; one of two came back
    expect(early).toMatchObject({ comparable: 3, cameBack: 1 });
    expect(returnsWithin(early)).toBe(false);
  });

  it('only spells about as deep as the current one count: a departure far below the usual dips is not one of them', () => {
    // 1,600 gears with a dip to 900 for 3 hours every 6 hours; for the last 2 hours demand stands at `now`.
    const dips = (now: number) => (m: number) => (m > -120 ? now : ((m % 360) + 360) % 360 < 180 ? 900 : 1600);
    // As deep as the dips (800: 900 <= 1.5 x 800): they all came back within the horizon, so this one is expected to.
    const usual = recentReturns(history(dips(800)), now, 1200, horizon);
    expect(usual!.comparable).toBeGreaterThan(5);
    expect(returnsWithin(usual)).toBe(true);
    // Far deeper (250: 900 > 1.5 x 250): the dips say nothing of it.
    const departed = recentReturns(history(dips(250)), now, 1200, horizon);
    expect(departed).toMatchObject({ comparable: 0, cameBack: 0 });
    expect(returnsWithin(departed)).toBe(false);
    // A dip deeper than the current spell speaks for it: one that went lower came back.
    expect(returnsWithin(recentReturns(history(dips(1000)), now, 1200, horizon))).toBe(true);
    expect(spellsBelow(history(dips(250)), 1200)).toMatchObject({ currentLow: 250 });
    expect(spellsBelow(history(dips(250)), 1200).endedLows.every((low) => low === 900)).toBe(true);
  });

  it('the current spell counts as one that did not come back: one short spell, or a bare majority, is not enough', () => {
    const base = { ageMinutes: 60, medianRemainingMinutes: 60 };
    expect(returnsWithin({ ...base, comparable: 1, cameBack: 1 })).toBe(false);
    expect(returnsWithin({ ...base, comparable: 3, cameBack: 2 })).toBe(false);
    expect(returnsWithin({ ...base, comparable: 2, cameBack: 2 })).toBe(true);
    expect(returnsWithin({ ...base, comparable: 4, cameBack: 3 })).toBe(true);
    expect(returnsWithin(undefined)).toBe(false);
  });

  it('most spells short, one long: needed again', () => {
    // bursts every 2 hours for the last 20 hours, before that 29 quiet hours
    const at = (m: number) => (m > -20 * 60 ? bursts(2, 30)(m) : 400);
    const returns = recentReturns(history(at), now, 1200, horizon);
    expect(returns!.cameBack).toBeGreaterThan(returns!.comparable / 2);
    expect(returnsWithin(returns)).toBe(true);
    expect(recentReturnsText(returns!, 1200, horizon)).toMatch(/^needed again soon by recent demand: \d+ of the \d+ recent spells below 1200 gears that lasted \d+m ended within the 4h horizon \(median \d+m more\)$/);
  });

  it('says nothing when demand never reached the level in the kept history, or is at it now', () => {
    expect(recentReturns(history(() => 400), now, 1200, horizon)).toBeUndefined();
    expect(recentReturns(history(() => 1600), now, 1200, horizon)).toBeUndefined();
    expect(recentReturns([], now, 1200, horizon)).toBeUndefined();
  });

  it('the spell the history begins in counts only once it outlasted the horizon', () => {
    // one burst 30 to 90 minutes ago, 400 for the 47 hours before: that spell did not end within 4 hours
    const returns = recentReturns(history((m) => (m >= -90 && m < -30 ? 1600 : 400)), now, 1200, horizon);
    expect(returns).toMatchObject({ comparable: 1, cameBack: 0, medianRemainingMinutes: Infinity });
    // a history of 3 hours: the spell before the burst says nothing either way
    const short = history((m) => (m >= -90 && m < -30 ? 1600 : 400)).filter(([minute]) => minute >= nowMinute - 180);
    expect(recentReturns(short, now, 1200, horizon)).toMatchObject({ comparable: 0, cameBack: 0 });
  });
});

describe('drainPayoff with recent returns', () => {
  const payoff = payoffSettings();
  const stats = { activeGears: 20, idleGears: 5, disruptiveGears: 8 };
  // bursts every 3 hours since 22 hours ago (not on the kept day before), the last ended 80 minutes ago: the one-off wait
  // (an hour for these moves) is paid, and the kept days' lower does not have them
  const recent = (m: number) => (m > -22 * 60 ? bursts(3, 80)(m) : 400);
  const h = history(recent);

  it('drains once demand departs far below the recent dips, which all came back: they were not as deep', () => {
    // Quiet before 22 hours ago; since then 1,600 gears with a dip to 900 for 3 hours every 6 hours; for the last 2
    // hours demand stands at `level`.
    const departure = (level: number) => (m: number) => (m > -120 ? level : m <= -22 * 60 ? 300 : ((m % 360) + 360) % 360 < 180 ? 900 : 1600);
    const deep = drainPayoff({ history: history(departure(250)), now, confident: 250, limit: 1200, stats, config: payoff });
    expect(deep.pays).toBe(true);
    const usual = drainPayoff({ history: history(departure(800)), now, confident: 800, limit: 1200, stats, config: payoff });
    expect(usual.pays).toBe(false);
    if (!usual.pays) expect(usual.reason).toMatch(/^needed again soon by recent demand: \d+ of the \d+ recent spells below 1200 gears/);
  });

  it('refuses a node the pool\'s recent rises need again within the horizon, not as pending', () => {
    const verdict = drainPayoff({ history: h, now, confident: 400, limit: 1200, stats, config: payoff });
    expect(verdict.pays).toBe(false);
    if (!verdict.pays) {
      expect(verdict.pending).toBe(false);
      expect(verdict.reason).toMatch(/^needed again soon by recent demand: /);
    }
  });

  it('drains it with the rule off, and drains an empty node (no move) either way', () => {
    expect(drainPayoff({ history: h, now, confident: 400, limit: 1200, stats, config: { ...payoff, recentReturns: false } }).pays).toBe(true);
    expect(drainPayoff({ history: h, now, confident: 400, limit: 1200, stats: { activeGears: 0 }, config: payoff }).pays).toBe(true);
  });

  it('judges a node holding only idle gears (none active, some listed) as one that owes moves: refused as the pool needs it again', () => {
    const idleOnly = { activeGears: 0, gears: [{ uuid: 'i1', app: 'a', size: 'small', idle: true }] };
    expect(drainPayoff({ history: h, now, confident: 400, limit: 1200, stats: idleOnly, config: payoff }).pays).toBe(false);
  });

  it('judges the spells at the level that buys the node back', () => {
    // rises to 1,100 every 3 hours: above a rebuy level of 1,000, below one of 1,200
    const h2 = history((m) => (recent(m) > 400 ? 1100 : 400));
    expect(drainPayoff({ history: h2, now, confident: 400, limit: 950, rebuy: 1000, stats, config: payoff }).pays).toBe(false);
    expect(drainPayoff({ history: h2, now, confident: 400, limit: 1150, rebuy: 1200, stats, config: payoff }).pays).toBe(true);
  });
});

describe('spellsBelow', () => {
  const at = (minute: number) => nowMinute + minute;
  const cases: Array<{ name: string; samples: DemandSample[]; ended: number[]; censored?: number; lastAboveEnd?: number }> = [
    {
      name: 'two dips that ended, the current one begun',
      samples: [[at(0), 1300], [at(1), 900], [at(2), 800], [at(3), 1300], [at(4), 500], [at(5), 1300], [at(6), 700]],
      ended: [2, 1],
      lastAboveEnd: at(5),
    },
    { name: 'the history begins in a dip: censored', samples: [[at(0), 600], [at(1), 400], [at(2), 1300], [at(3), 1300]], ended: [], censored: 2, lastAboveEnd: at(3) },
    { name: 'never at the level', samples: [[at(0), 600], [at(1), 400]], ended: [] },
    { name: 'no history', samples: [], ended: [] },
  ];
  it.each(cases)('$name', ({ samples, ended, censored, lastAboveEnd }) => {
    const spells = spellsBelow(samples, 1200);
    expect(spells.ended).toEqual(ended);
    expect(spells.censored).toBe(censored);
    expect(spells.lastAboveEnd).toBe(lastAboveEnd);
  });

  it('one scan serves every candidate of a level: returnsOf on its spells is recentReturns', () => {
    const h = history(bursts(3, 30));
    expect(returnsOf(spellsBelow(h, 1200), now, horizon, DAY)).toEqual(recentReturns(h, now, 1200, horizon, DAY));
  });
});

describe('typical dips (returnsOf with a lookahead)', () => {
  /** Per minute for the last `minutes`: 1,300, with dips to 900 of the given lengths, 30 minutes apart, the last one begun `age` minutes ago. */
  function dips(lengths: number[], age: number, minutes = 3000): DemandSample[] {
    const below = new Set<number>();
    for (let m = -age + 1; m <= 0; m++) below.add(m);
    let end = -age - 30;
    for (const length of [...lengths].reverse()) {
      for (let m = end - length + 1; m <= end; m++) below.add(m);
      end -= length + 30;
    }
    const samples: DemandSample[] = [];
    for (let m = -minutes; m <= 0; m++) samples.push([nowMinute + m, below.has(m) ? 900 : 1300]);
    return samples;
  }
  const cases: Array<{ name: string; lengths: number[]; age: number; typical?: number; count?: number }> = [
    { name: 'only dips as old as the current one count: the median of what they had left', lengths: [20, 90, 120, 600], age: 60, typical: 60, count: 3 },
    { name: 'one long night among short wiggles does not make the next wiggle a night', lengths: [100, 100, 2000], age: 60, typical: 40, count: 3 },
    { name: 'each counted up to the lookahead', lengths: [1600, 1600], age: 60, typical: 20 * 60, count: 2 },
    { name: 'none as old: nothing said', lengths: [20, 30], age: 60 },
  ];
  it.each(cases)('$name', ({ lengths, age, typical, count }) => {
    const returns = recentReturns(dips(lengths, age), now, 1200, horizon, 20 * HOUR);
    expect(returns?.typicalMinutes).toBe(typical);
    expect(returns?.dips).toBe(count);
    expect(dipHours(returns)).toBe(typical === undefined ? undefined : typical / 60);
  });

  it('without a lookahead it says nothing of typical dips', () => {
    expect(recentReturns(dips([90, 120], 60), now, 1200, horizon)?.typicalMinutes).toBeUndefined();
  });

  it('the spell the history begins in counts as lasting at least until its end', () => {
    // 900 for the first 200 minutes of the history, then 1,300 until a dip 60 minutes ago
    const samples = dips([], 60, 400).map(([minute, gears]): DemandSample => [minute, minute < nowMinute - 200 ? 900 : gears]);
    expect(recentReturns(samples, now, 1200, horizon, DAY)).toMatchObject({ ageMinutes: 60, typicalMinutes: 200 - 60, dips: 1 });
  });

  it('says so in words', () => {
    const returns = recentReturns(dips([90, 120, 600], 60), now, 1200, horizon, DAY)!;
    expect(recentDipsText(returns, 1200)).toBe('the 3 recent spells below 1200 gears that lasted 1h lasted a median 1h more');
  });
});

describe('drainPayoff with typical dips', () => {
  const payoff = { ...payoffSettings(), recentReturns: false };
  // $0.0225 x 20 + $0.0045 x 10 = $0.495 of moves (printed $0.49): 5.2 hours of rent pay 2 x, 2.6 hours pay 1 x (the rent-or-buy bound)
  const stats = { activeGears: 40, idleGears: 10, disruptiveGears: 20 };
  /**
   * The kept days at 3,000 (today is a level shift below them, so they expect no rise: unneeded for a day), and for the
   * last 22 hours 1,100 with rises to 1,250 for 20 minutes every `period`, the last one ended `age` minutes ago.
   */
  const rises = (period: number, age: number) =>
    history((m) => {
      if (m < -22 * 60) return 3000;
      const sinceEnd = -m - age;
      return sinceEnd >= 0 && sinceEnd % period < 20 ? 1250 : 1100;
    });
  const input = (h: DemandSample[]) => ({ history: h, now, confident: 1100, limit: 1150, rebuy: 1200, stats, config: payoff });

  const cases: Array<{ name: string; h: DemandSample[]; change: Partial<Parameters<typeof drainPayoff>[0]>; pays: boolean; reason?: RegExp }> = [
    { name: 'the pool\'s dips as old as this one came back within the hour: does not pay', h: rises(100, 30), change: {}, pays: false, reason: /^does not pay by recent dips: the 13 recent spells below 1200 gears that lasted 30m lasted a median 50m more saves \$0\.16 at \$0\.192\/h < 2 x \$0\.49 for 20 disruptive/ },
    { name: 'an empty node owes no move', h: rises(100, 30), change: { stats: { activeGears: 0 } }, pays: true },
    { name: 'a node of idle gears owes nothing either', h: rises(100, 30), change: { stats: { activeGears: 40, idleGears: 40 } }, pays: true },
    { name: 'the rule off', h: rises(100, 30), change: { config: { ...payoff, recentDips: false } }, pays: true },
    { name: 'dips of a day: pays', h: rises(24 * 60, 30), change: {}, pays: true },
    // dips of 380 minutes, the current one 170 minutes old: typically 3.5 hours more, short of the 5.2 that pay 2 x
    { name: 'waits at most until the idle rent pays the moves (2.8 hours of rent > $0.50)', h: rises(400, 170), change: {}, pays: true },
    { name: '... at oneOffRentFactor x the moves', h: rises(400, 170), change: { config: { ...payoff, oneOffRentFactor: 3 } }, pays: false, reason: /^does not pay by recent dips: / },
  ];
  it.each(cases)('$name', ({ h, change, pays, reason }) => {
    const verdict = drainPayoff({ ...input(h), ...change });
    expect(verdict.pays).toBe(pays);
    if (!verdict.pays) {
      expect(verdict.reason).toMatch(reason!);
      expect(verdict.pending).toBe(false);
    }
  });
});
