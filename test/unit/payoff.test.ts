import { describe, expect, it } from 'vitest';
import { confidentDemand, drainPayoff, keptDaysFor, moveCost, unneededFor } from '../../lib/domain/payoff.js';
import type { DemandSample } from '../../lib/domain/model.js';
import { epochMinute } from '../../lib/domain/forecast.js';
import { demandHistory, payoffSettings } from '../support/builders.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const payoff = payoffSettings();

/** A pool's history: a sample every 5 minutes back `hours` (25: one day, 50: two), per minute for the last half hour. */
const history = (now: Date, demandAt: (minutesFromNow: number) => number, hours = 25) => demandHistory(now, demandAt, hours);

/** A day of demand by hour of day (UTC): 1,900 gears 07:00-22:00, 1,000 at night. */
const dailyCycle = (now: Date) => (m: number) => {
  const hour = new Date(now.getTime() + m * MIN).getUTCHours();
  return hour >= 7 && hour < 22 ? 1900 : 1000;
};

describe('confidentDemand', () => {
  const now = new Date('2026-01-05T12:00:00Z');
  it('is an upper quantile of the last window, not the newest dip', () => {
    // 1,500 all hour, 1,200 for the last 5 minutes
    const h = history(now, (m) => (m > -5 ? 1200 : 1500));
    expect(confidentDemand(h, now, 1200, HOUR, 0.95)).toBe(1500);
  });
  it('never goes below the current demand, and is the current demand without history', () => {
    expect(confidentDemand(history(now, () => 800), now, 900, HOUR, 0.95)).toBe(900);
    expect(confidentDemand(undefined, now, 700, HOUR, 0.95)).toBe(700);
  });
  it('ignores samples older than the window', () => {
    const h = history(now, (m) => (m < -90 ? 3000 : 1000));
    expect(confidentDemand(h, now, 1000, HOUR, 0.95)).toBe(1000);
  });
  it('weighs each sample by the minutes it stands for: a kept 10-minute bucket maximum is ten minutes of demand, not one', () => {
    const nowMinute = epochMinute(now);
    // The history as recordDemand keeps it: 10-minute bucket maxima before the last half hour, per minute after.
    const h: DemandSample[] = [];
    for (let m = -60; m < -30; m += 10) h.push([nowMinute + m, m === -50 ? 1900 : 1500]);
    for (let m = -30; m <= 0; m++) h.push([nowMinute + m, 1500]);
    // 1,900 for a bucket: ten minutes of 60, more than the 3 the 0.95 quantile may ignore. Counted as one sample of 34 it was ignored.
    expect(confidentDemand(h, now, 1500, HOUR, 0.95)).toBe(1900);
  });
  it('never ignores a level held longer than the scale-up sustain window (a level that bought a node)', () => {
    // 1,800 for the 2 minutes 20 and 19 minutes ago, 1,500 otherwise (56 minutes of history in the window).
    const h = history(now, (m) => (m === -20 || m === -19 ? 1800 : 1500), 1);
    expect(confidentDemand(h, now, 1500, HOUR, 0.95)).toBe(1500); // 2 of 56 minutes: within the 2.8 the quantile ignores
    // A 1-minute sustain fires on the second minute at a level: it bought a node for 1,800, so the drain keeps it.
    expect(confidentDemand(h, now, 1500, HOUR, 0.95, 1 * MIN)).toBe(1800);
    // A 2-minute sustain fires on the third: two minutes at 1,800 bought nothing.
    expect(confidentDemand(h, now, 1500, HOUR, 0.95, 2 * MIN)).toBe(1500);
  });
});

describe('moveCost', () => {
  const weights = { idle: 0, sibling: 0.002, disruptive: 0.01 };
  it('charges each move by what it restarts: idle nothing, a sibling a little, a single or head gear most', () => {
    const cost = moveCost({ activeGears: 50, idleGears: 10, disruptiveGears: 15 }, weights);
    expect(cost).toMatchObject({ idle: 10, sibling: 25, disruptive: 15 });
    expect(cost.dollars).toBeCloseTo(25 * 0.002 + 15 * 0.01);
  });
  it('charges gears of unknown kind as disruptive', () => {
    expect(moveCost({ activeGears: 40 }, weights)).toMatchObject({ disruptive: 40, sibling: 0, idle: 0, dollars: 0.4 });
    expect(moveCost({ activeGears: 40, idleGears: 10 }, weights)).toMatchObject({ disruptive: 30, idle: 10 });
  });
});

describe('drainPayoff', () => {
  const tonight = new Date('2026-01-06T22:30:00Z');
  const limit = 1800; // what the pool holds without the node
  const base = { history: history(tonight, dailyCycle(tonight)), now: tonight, confident: 1000, limit, config: payoff };

  it('a node needed again tomorrow morning is not drained tonight when its moves cost more than the night saves', () => {
    // A full node of 30 restarts, 40 siblings and 30 idle gears: the night (8.5 h, until yesterday's 07:00: $1.63)
    // saves less than twice their cost ($0.675 + $0.18 at the default weights).
    const verdict = drainPayoff({ ...base, stats: { activeGears: 100, idleGears: 30, disruptiveGears: 30 } });
    expect(verdict.unneeded.basis).toBe('yesterday');
    expect(verdict.unneeded.neededAt?.toISOString()).toBe('2026-01-07T06:30:00.000Z');
    expect(verdict.pays).toBe(false);
    if (!verdict.pays) expect(verdict.reason).toMatch(/^does not pay: 8\.5h unneeded \(yesterday's demand\) saves \$1\.63 at \$0\.192\/h < 2 x \$0\.8[56] for 30 disruptive, 40 sibling, 30 idle moves/);
  });

  it('the same node is drained when the forecast does not need it for a day (a weekend)', () => {
    const quiet = { ...base, history: history(tonight, () => 1000) };
    const verdict = drainPayoff({ ...quiet, stats: { activeGears: 100, idleGears: 30, disruptiveGears: 30 } });
    expect(verdict.pays).toBe(true);
    expect(verdict.unneeded.hours).toBe(24);
  });

  it('by default a node whose every gear is a tenant outage is worth draining only for a whole day unneeded, not a night', () => {
    // 100 restarts at $0.0225 each, twice: $4.50, under 24 h x $0.192 ($4.61) but over the 8.5 h night's $1.63.
    const outages = { activeGears: 100, idleGears: 0, disruptiveGears: 100 };
    const night = drainPayoff({ ...base, stats: outages });
    expect(night.pays).toBe(false);
    if (!night.pays) expect(night.pending).toBe(true); // attrition may still empty it for free
    const quiet = { ...base, history: history(tonight, () => 1000) };
    expect(drainPayoff({ ...quiet, stats: outages }).pays).toBe(true);
  });

  it('a node of idle gears and siblings pays over the night', () => {
    const verdict = drainPayoff({ ...base, stats: { activeGears: 100, idleGears: 40, disruptiveGears: 10 } });
    expect(verdict.pays).toBe(true);
    if (verdict.pays) expect(verdict.text).toBe("pays: 8.5h unneeded (yesterday's demand) saves $1.63 at $0.192/h >= 2 x $0.45 for 10 disruptive, 50 sibling, 40 idle moves");
  });

  it('a node the forecast needs again within the horizon is not drained, however cheap', () => {
    const evening = new Date('2026-01-06T05:00:00Z'); // needed again at 07:00, half an hour early to be safe
    const verdict = drainPayoff({ ...base, now: evening, history: history(evening, dailyCycle(evening)), stats: { activeGears: 0 } });
    expect(verdict.pays).toBe(false);
    if (!verdict.pays) expect(verdict.reason).toBe("needed again in 1h30m (yesterday's demand reaches 1800 gears), within the 4h horizon");
  });

  it('reads the same verdicts from kept days read once for every candidate as from kept days read per candidate', () => {
    const keptDays = keptDaysFor(base.history, tonight, base.confident, payoff);
    const stats = [{ activeGears: 100, idleGears: 30, disruptiveGears: 30 }, { activeGears: 100, idleGears: 40, disruptiveGears: 10 }, { activeGears: 0 }];
    for (const [i, limitOf] of [1800, 1500, 1100].entries()) {
      const candidate = { ...base, limit: limitOf, stats: stats[i]! };
      expect(drainPayoff({ ...candidate, keptDays })).toEqual(drainPayoff(candidate));
    }
    expect(drainPayoff({ ...base, limit: 1100, stats: { activeGears: 0 }, keptDays }).unneeded.neededAt?.toISOString()).toBe('2026-01-07T06:30:00.000Z');
  });

  it('today higher than yesterday shifts yesterday up: the node is needed sooner', () => {
    // 500 gears more than yesterday at this hour: yesterday's 1,400 at 03:00 becomes 1,900 (from 02:30, half an hour early)
    const now = new Date('2026-01-06T22:00:00Z');
    const h = history(now, (m) => {
      const hour = new Date(now.getTime() + m * MIN).getUTCHours();
      return m > -60 ? 1500 : hour >= 3 && hour < 21 ? 1400 : 1000;
    });
    const seen = unneededFor(h, now, 1500, limit, 24 * HOUR);
    expect(seen.neededAt?.toISOString()).toBe('2026-01-07T02:30:00.000Z');
  });

  it('a dip now, in a day running above yesterday, does not make yesterday\'s quieter evening the outlook (followLevelRise)', () => {
    // Yesterday 1,400 gears 03:00-21:00; today 1,900 for the last three hours, 1,400 for the last four minutes.
    const now = new Date('2026-01-06T18:00:00Z');
    const h = history(now, (m) => {
      const hour = new Date(now.getTime() + m * MIN).getUTCHours();
      return m > -5 ? 1400 : m > -180 ? 1900 : hour >= 3 && hour < 21 ? 1400 : 1000;
    });
    const input = { history: h, now, confident: 1400, limit, stats: { activeGears: 20, idleGears: 20 } };
    const followed = drainPayoff({ ...input, config: payoff });
    expect(followed.pays).toBe(false);
    if (!followed.pays) expect(followed.reason).toBe("needed again in 10m (yesterday's demand reaches 1800 gears), within the 4h horizon");
    // Shifted by the newest sample only, yesterday's 1,400 never reaches the 1,800 the pool holds without the node.
    const instant = drainPayoff({ ...input, config: { ...payoff, followLevelRise: false } });
    expect(instant.pays).toBe(true);
    // Not until today's own rise at 15:00 comes round again (half an hour early), beyond the horizon.
    expect(instant.unneeded.neededAt?.toISOString()).toBe('2026-01-07T14:40:00.000Z');
  });

  it('a load falling a few percent a day is followed at today\'s share of yesterday, not held at yesterday\'s level (followLevelFall)', () => {
    // A crest of 1,780 gears 19:00-23:00 on 1,500, the whole load 6 % lower each day: yesterday's crest stood at 1,883.
    const now = new Date('2026-01-06T17:00:00Z');
    const cycle = (m: number) => (new Date(now.getTime() + m * MIN).getUTCHours() >= 19 && new Date(now.getTime() + m * MIN).getUTCHours() < 23 ? 1780 : 1500);
    const h = history(now, (m) => Math.round(cycle(m) * 0.94 ** (m / (24 * 60))));
    const input = { history: h, now, confident: 1500, limit, stats: { activeGears: 20, idleGears: 20 } };
    const held = drainPayoff({ ...input, config: { ...payoff, followLevelFall: false } });
    expect(held.pays).toBe(false);
    if (!held.pays) expect(held.reason).toMatch(/^needed again in 1h\d+m \(yesterday's demand reaches 1800 gears\), within the 4h horizon$/);
    const followed = drainPayoff({ ...input, config: { ...payoff, followLevelFall: true } });
    expect(followed.pays).toBe(true);
    // Today's crest, 6 % below yesterday's 1,883, stays under the 1,800 the pool holds without the node.
    if (followed.pays) expect(followed.text).toMatch(/^pays: \d+\.\dh unneeded \(yesterday's demand at today's 94 % of it\) saves /);
  });

  it('without a day of history, the node is expected to stay unneeded as long as it has been', () => {
    const now = new Date('2026-01-06T12:00:00Z');
    const h: DemandSample[] = [];
    for (let m = -180; m <= 0; m++) h.push([epochMinute(now) + m, m < -150 ? 1900 : 1000]); // low for the last 150 minutes
    const seen = unneededFor(h, now, 1000, limit, 24 * HOUR);
    expect(seen.basis).toBe('recent');
    expect(seen.hours).toBe(2.5);
    // Past the 2h recent horizon (the 4h horizon is the forecast's): an empty node drains, a full one waits for the saving.
    expect(drainPayoff({ ...base, now, history: h, stats: { activeGears: 0 } }).pays).toBe(true);
    const full = drainPayoff({ ...base, now, history: h, stats: { activeGears: 100 } });
    expect(full.pays).toBe(false);
    if (!full.pays) expect(full.reason).toBe('does not pay: 2.5h unneeded (recent demand) saves $0.48 at $0.192/h < 2 x $2.25 for 100 disruptive moves');
  });

  it('on recent demand alone, a node waits the recent horizon, however cheap', () => {
    const now = new Date('2026-01-06T12:00:00Z');
    const h: DemandSample[] = [];
    for (let m = -180; m <= 0; m++) h.push([epochMinute(now) + m, m < -90 ? 1900 : 1000]); // low for the last 90 minutes
    const early = drainPayoff({ ...base, now, history: h, stats: { activeGears: 0 } });
    expect(early.pays).toBe(false);
    if (!early.pays) {
      expect(early.reason).toBe('unneeded for only 1h30m so far (recent demand), within the 2h horizon');
      expect(early.pending).toBe(true); // attrition may close it meanwhile
    }
    // Never longer than the forecast's horizon: an operator who shortens that shortens this too.
    expect(drainPayoff({ ...base, config: { ...payoff, horizon: HOUR }, now, history: h, stats: { activeGears: 0 } }).pays).toBe(true);
    // The operator's longer wait still holds it.
    const later = new Date(now.getTime() + 60 * MIN);
    for (let m = 1; m <= 60; m++) h.push([epochMinute(now) + m, 1000]);
    expect(drainPayoff({ ...base, now: later, history: h, stats: { activeGears: 0 } }).pays).toBe(true);
    const patient = drainPayoff({ ...base, config: { ...payoff, recentHorizon: 4 * HOUR }, now: later, history: h, stats: { activeGears: 0 } });
    expect(patient.pays).toBe(false);
    if (!patient.pays) expect(patient.reason).toBe('unneeded for only 2h30m so far (recent demand), within the 4h horizon');
  });

  it('on recent demand, each level is judged with the headroom that level keeps (limitAt), not the full headroom above a job', () => {
    const now = new Date('2026-01-06T12:00:00Z');
    // 1,000 gears standing, a job to 1,600 for 10 minutes each hour; the last one ended 40 minutes ago.
    const h: DemandSample[] = [];
    for (let m = -180; m <= 0; m++) h.push([epochMinute(now) + m, ((m % 60) + 60) % 60 >= 10 && ((m % 60) + 60) % 60 < 20 ? 1600 : 1000]);
    const held = 1500; // the slots left less the full headroom: every job reaches it
    const limitAt = (level: number) => (level >= 1500 ? 1850 : held); // above a job, a margin of its day-to-day spread
    expect(unneededFor(h, now, 1600, held, 24 * HOUR).hours).toBe(0);
    expect(unneededFor(h, now, 1000, held, 24 * HOUR).hours).toBeCloseTo(40 / 60);
    // The jobs stay below what the pool holds at their level: unneeded since the history began.
    expect(unneededFor(h, now, 1600, held, 24 * HOUR, limitAt)).toEqual({ hours: 3, basis: 'recent' });
    const input = { ...base, now, history: h, confident: 1600, limit: held, stats: { activeGears: 0 } };
    const full = drainPayoff(input);
    expect(full.pays).toBe(false);
    if (!full.pays) expect(full.reason).toBe('needed now: recent demand 1600 gears >= the 1500 the pool holds without it');
    expect(drainPayoff({ ...input, limitAt }).pays).toBe(true);
    // A job above what its level keeps is still needed now, and says by what.
    const tall = drainPayoff({ ...input, confident: 1900, limitAt });
    expect(tall.pays).toBe(false);
    if (!tall.pays) expect(tall.reason).toBe('needed now: recent demand 1900 gears >= the 1850 the pool holds without it (with the headroom kept above that level)');
    // With the level's margin in words, the refusal names it.
    const named = drainPayoff({ ...input, confident: 1900, limitAt, limitAtWhy: (level) => `set by the kept days' spread: 8 % of ${level} gears expected` });
    expect(named.pays).toBe(false);
    if (!named.pays) expect(named.reason).toBe("needed now: recent demand 1900 gears >= the 1850 the pool holds without it (set by the kept days' spread: 8 % of 1900 gears expected)");
  });
});

describe('unneededFor: recurring against one-off demand', () => {
  const tonight = new Date('2026-01-06T22:30:00Z');
  const limit = 1800;
  const hourOf = (m: number) => new Date(tonight.getTime() + m * MIN).getUTCHours();
  /** 0 for the last 24 hours (the coming hours as they went yesterday), 1 for the 24 before. */
  const dayOf = (m: number) => Math.floor(-m / (24 * 60));
  /** 1,000 gears, and 1,900 from 03:00 to 04:00 on the days given (0: this morning, 1: the morning before). */
  const burstOn = (days: number[]) => (m: number) => (m < 0 && days.includes(dayOf(m)) && hourOf(m) === 3 ? 1900 : 1000);

  it('a burst seen once yesterday does not hold a node tonight', () => {
    const seen = unneededFor(history(tonight, burstOn([0]), 50), tonight, 1000, limit, 24 * HOUR);
    expect(seen).toEqual({ hours: 24, basis: 'yesterday' });
  });

  it('a burst seen at the same hour on each of the last two days does', () => {
    const seen = unneededFor(history(tonight, burstOn([0, 1]), 50), tonight, 1000, limit, 24 * HOUR);
    expect(seen.neededAt?.toISOString()).toBe('2026-01-07T02:30:00.000Z');
    expect(verdictOf(history(tonight, burstOn([0, 1]), 50)).pays).toBe(false);
  });

  it('a rise that came 20 minutes later the day before still recurs (days do not repeat to the minute)', () => {
    const later = (m: number) => {
      const at = new Date(tonight.getTime() + m * MIN);
      const minuteOfDay = at.getUTCHours() * 60 + at.getUTCMinutes();
      const start = dayOf(m) === 0 ? 180 : 200; // 03:00 this morning, 03:20 the morning before
      return m < 0 && dayOf(m) <= 1 && minuteOfDay >= start && minuteOfDay < start + 60 ? 1900 : 1000;
    };
    const seen = unneededFor(history(tonight, later, 50), tonight, 1000, limit, 24 * HOUR);
    expect(seen.neededAt?.toISOString()).toBe('2026-01-07T02:50:00.000Z'); // half an hour before the later of the two
  });

  it('with a single day of history, a burst yesterday still holds it (one day cannot tell a burst from a cycle)', () => {
    const seen = unneededFor(history(tonight, burstOn([0])), tonight, 1000, limit, 24 * HOUR);
    expect(seen.neededAt?.toISOString()).toBe('2026-01-07T02:30:00.000Z');
  });

  it('a node needed again tomorrow morning is still not drained tonight with two days of the daily cycle', () => {
    const seen = unneededFor(history(tonight, dailyCycle(tonight), 50), tonight, 1000, limit, 24 * HOUR);
    expect(seen.neededAt?.toISOString()).toBe('2026-01-07T06:30:00.000Z');
  });

  it('a step down is followed within hours: below both days at every bucket for 2 hours, their level no longer holds the node', () => {
    // 1,900 for two days, 1,000 since 19:00 today
    const stepAt = (now: Date) => (m: number) => (now.getTime() + m * MIN < Date.parse('2026-01-06T19:00:00Z') ? 1900 : 1000);
    const soon = new Date('2026-01-06T20:00:00Z');
    const held = unneededFor(history(soon, stepAt(soon), 50), soon, 1000, limit, 24 * HOUR);
    expect(held.hours).toBeLessThan(1); // an hour below could be a dip: yesterday's level still holds
    const later = new Date('2026-01-06T21:10:00Z');
    const followed = unneededFor(history(later, stepAt(later), 50), later, 1000, limit, 24 * HOUR);
    expect(followed).toEqual({ hours: 24, basis: 'yesterday' });
  });

  it('today a little below the last days at some buckets is not a level shift: tomorrow morning still holds the node', () => {
    // the daily cycle, 150 gears lower every other 5 minutes over the last 6 hours (850 now): shifted down by
    // those 150, tomorrow's 1,900 would fall under the limit
    const cycle = dailyCycle(tonight);
    const h = history(tonight, (m) => (m > -6 * 60 && Math.floor(m / 5) % 2 === 0 ? cycle(m) - 150 : cycle(m)), 50);
    const seen = unneededFor(h, tonight, 850, limit, 24 * HOUR);
    expect(seen.neededAt?.toISOString()).toBe('2026-01-07T06:30:00.000Z');
  });

  function verdictOf(h: DemandSample[]) {
    return drainPayoff({ history: h, now: tonight, confident: 1000, limit, stats: { activeGears: 100, idleGears: 0, disruptiveGears: 100 }, config: payoff });
  }
});
