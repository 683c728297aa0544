/**
 * Demand expected at the coming hours from the same hours of the last days,
 * telling recurring demand from one-off demand.
 *
 * The pool keeps 10-minute bucket maxima for `DAYS_KEPT` days (forecast.ts).
 * A day's demand at an hour is its highest within `RECUR_WINDOW_MINUTES`
 * either side (days do not repeat to the minute, and noise should not decide).
 * Each kept day is shifted to today's level (today's demand now against that
 * day's at the same hour), and the expectation is the LOWER of the shifted
 * days: a rise counts as seasonal only when it happened on every kept day at
 * about that hour, so a burst seen once does not hold a node for a day, while
 * a daily cycle (which recurs) still does.
 *
 * A day is never shifted below its own level for one low sample (today a
 * little lower than yesterday now is noise; tomorrow morning still comes). If
 * today has stayed more than `LEVEL_SHIFT_MARGIN` below that day at every
 * bucket of the last `LEVEL_SHIFT_MINUTES`, the level has shifted (a step
 * down, a quiet weekend day) and the day is followed at today's level, scaled
 * by today's share of it rather than lowered by the difference: a quiet day
 * has fewer users at every hour, so its crest falls by more gears than its
 * trough (a weekend at 60 % of Friday, lowered by the night's difference,
 * still expected Friday's crest less 400 gears, 1,500 where 1,150 came, and
 * held Saturday night's nodes for it). With `fallMinutes`, when today stayed
 * below every kept day at every bucket of that span, by any margin, the days
 * are scaled too, by the highest share today held of any of them there (the
 * least decline seen): a load that falls a few percent a day, followed at
 * yesterday's level, held a node or two all week above what each day needed.
 * One bucket at or above a kept day's (noise on a level load, or a day
 * without yesterday's burst) keeps the days whole.
 *
 * With fewer kept days than `DAYS_KEPT` (a new pool), the days there are are
 * used: one day cannot tell a burst from a cycle, and holding a node for it
 * is the safe side. Buying one for it is not: the scale-up's forecast reads a
 * rise only when every kept day can be read (forecast.ts).
 */
import type { DemandSample } from './model.js';

const DAY_MINUTES = 24 * 60;
/** Width of the coarse buckets kept for daily seasonality (two days of them fit a small pool item). */
export const BUCKET_MINUTES = 10;
/** Days of buckets a pool keeps: a rise is seasonal when it recurred on each of them. */
export const DAYS_KEPT = 2;
/**
 * Today below a kept day at every bucket for this long is a level shift:
 * that day is followed at today's level, even below its own. Two hours of
 * buckets that are all lower do not happen by chance on a level load,
 * and the shift is followed within a morning.
 */
export const LEVEL_SHIFT_MINUTES = 120;
/** A level shift is today below a kept day by more than this share of it (days of one cycle differ by less). */
export const LEVEL_SHIFT_MARGIN = 0.2;
/** A day's demand at an hour is its highest this many minutes either side. */
export const RECUR_WINDOW_MINUTES = 30;

export interface DailyDay {
  /** 1 = yesterday, 2 = the day before. */
  daysAgo: number;
  /** Gears added to that day's demand to bring it to today's level (0 after a level shift, which scales instead). */
  shift: number;
  /** That day's demand is multiplied by this: today's share of it after a level shift or a fall (`fallMinutes`), else 1. */
  scale: number;
  levelShift: boolean;
}

export interface DailyOutlook {
  /** The kept days with demand at this hour, yesterday first. */
  days: DailyDay[];
  /**
   * Demand expected `minutes` from now: the lowest of the shifted days known then (each day's highest within
   * `window` minutes either side, RECUR_WINDOW_MINUTES unless given); undefined when none is.
   */
  at(minutes: number, window?: number): number | undefined;
}

/**
 * What the kept days say about the coming hours, with today's demand
 * `current` now; undefined when no kept day has a sample at this hour.
 * With `riseMinutes`, a day is also raised by how far today's level stood above
 * it over that many minutes (`levelRise`, as the scale-up's forecast reads the
 * kept days): today's demand at one instant can be a dip of a day running
 * above yesterday, and shifting by it alone expected yesterday's evening
 * where today's bigger one was coming.
 */
export function dailyOutlook(samples: readonly DemandSample[], nowMinute: number, current: number, riseMinutes?: number, fallMinutes?: number): DailyOutlook | undefined {
  const days: DailyDay[] = [];
  const fall = fallMinutes === undefined ? undefined : fallenShare(samples, nowMinute, fallMinutes);
  for (let daysAgo = 1; daysAgo <= DAYS_KEPT; daysAgo++) {
    const then = bucketAt(samples, nowMinute - daysAgo * DAY_MINUTES);
    if (then === undefined) continue;
    const levelShift = stayedBelow(samples, nowMinute, daysAgo * DAY_MINUTES, LEVEL_SHIFT_MINUTES);
    // A level shift means today is below `then` by a margin, so `then` is positive.
    if (levelShift) days.push({ daysAgo, shift: 0, scale: current / then, levelShift });
    else if (fall !== undefined) days.push({ daysAgo, shift: Math.max(0, current - then * fall), scale: fall, levelShift });
    else {
      const rise = riseMinutes === undefined ? undefined : levelRise(samples, nowMinute, daysAgo * DAY_MINUTES, riseMinutes);
      days.push({ daysAgo, shift: Math.max(0, current - then, rise ?? 0), scale: 1, levelShift });
    }
  }
  if (days.length === 0) return undefined;
  // A scale-down decision asks each of its candidates for the same hours: each is read once.
  const read = new Map<number, Map<number, number | undefined>>();
  return {
    days,
    at(minutes, window = RECUR_WINDOW_MINUTES) {
      let byMinutes = read.get(window);
      if (!byMinutes) read.set(window, (byMinutes = new Map()));
      if (byMinutes.has(minutes)) return byMinutes.get(minutes);
      let lowest: number | undefined;
      for (const day of days) {
        const at = nowMinute - day.daysAgo * DAY_MINUTES + minutes;
        // The window stays within that day: near the end of the lookahead it would otherwise reach today.
        const dayEnd = nowMinute - (day.daysAgo - 1) * DAY_MINUTES - 1;
        const then = highestBetween(samples, at - window, Math.min(dayEnd, at + window));
        if (then === undefined) continue;
        const expected = Math.max(0, then * day.scale + day.shift);
        if (lowest === undefined || expected < lowest) lowest = expected;
      }
      byMinutes.set(minutes, lowest);
      return lowest;
    },
  };
}

/**
 * Whether each of today's buckets of the last `minutes` was more than
 * `LEVEL_SHIFT_MARGIN` below the same bucket `ago` minutes earlier (all of
 * them known on both sides).
 */
export function stayedBelow(samples: readonly DemandSample[], nowMinute: number, ago: number, minutes: number): boolean {
  return (shareHeld(samples, nowMinute, ago, minutes) ?? 1) < 1 - LEVEL_SHIFT_MARGIN;
}

/**
 * How far a falling load has fallen: today's share of the kept days when today stayed below every one of them at every
 * bucket of the last `minutes` (`shareHeld`), the highest of those shares (the closest day); undefined when today did
 * not stay below one of them. Below yesterday alone is a burst yesterday, not a fall: the day before, without it,
 * keeps every day whole.
 */
export function fallenShare(samples: readonly DemandSample[], nowMinute: number, minutes: number): number | undefined {
  let share: number | undefined;
  for (let daysAgo = 1; daysAgo <= DAYS_KEPT; daysAgo++) {
    if (bucketAt(samples, nowMinute - daysAgo * DAY_MINUTES) === undefined) continue;
    const held = shareHeld(samples, nowMinute, daysAgo * DAY_MINUTES, minutes);
    if (held === undefined) return undefined;
    share = Math.max(share ?? 0, held);
  }
  return share;
}

/**
 * Today's share of the day `ago` minutes earlier when today stayed below it at every complete bucket of the last
 * `minutes` (each known on both sides): the highest share of those buckets, the least decline seen; else undefined.
 */
export function shareHeld(samples: readonly DemandSample[], nowMinute: number, ago: number, minutes: number): number | undefined {
  const lastBucket = nowMinute - mod(nowMinute, BUCKET_MINUTES) - BUCKET_MINUTES;
  const buckets = Math.floor(minutes / BUCKET_MINUTES);
  if (buckets < 1) return undefined;
  let highest = 0;
  for (let i = 0; i < buckets; i++) {
    const start = lastBucket - i * BUCKET_MINUTES;
    const today = highestOfBucket(samples, start);
    const before = highestOfBucket(samples, start - ago);
    if (today === undefined || before === undefined || today >= before) return undefined;
    highest = Math.max(highest, today / before);
  }
  return highest;
}

/**
 * How far today's level stands above the level `ago` minutes earlier: the mean, over the complete buckets of the last
 * `minutes`, of today's bucket maximum minus that day's (both sides known; undefined when fewer than half are). A mean of
 * like against like (bucket maxima on both days), so a level load's noise mostly cancels, while growth and a level
 * shift show.
 */
export function levelRise(samples: readonly DemandSample[], nowMinute: number, ago: number, minutes: number): number | undefined {
  const lastBucket = nowMinute - mod(nowMinute, BUCKET_MINUTES) - BUCKET_MINUTES;
  const buckets = Math.max(1, Math.floor(minutes / BUCKET_MINUTES));
  let sum = 0;
  let known = 0;
  for (let i = 0; i < buckets; i++) {
    const start = lastBucket - i * BUCKET_MINUTES;
    const today = highestOfBucket(samples, start);
    const before = highestOfBucket(samples, start - ago);
    if (today === undefined || before === undefined) continue;
    sum += today - before;
    known++;
  }
  return known * 2 >= buckets ? sum / known : undefined;
}

/** Gears of the sample covering `minute` (the newest at or before it, within a bucket), else undefined. */
export function bucketAt(samples: readonly DemandSample[], minute: number): number | undefined {
  const before = samples[firstAfter(samples, minute) - 1];
  return before && minute - before[0] < BUCKET_MINUTES ? before[1] : undefined;
}

/** The highest sample dated in the bucket starting at `start`: a coarse bucket, or its per-minute samples. */
function highestOfBucket(samples: readonly DemandSample[], start: number): number | undefined {
  return highestBetween(samples, start, start + BUCKET_MINUTES - 1, false);
}

/**
 * The highest demand of minutes [from, to]: the samples dated in it, and
 * (`covering`) the one before it when its bucket reaches `from`.
 */
export function highestBetween(samples: readonly DemandSample[], from: number, to: number, covering = true): number | undefined {
  let i = firstAfter(samples, from - 1);
  const before = samples[i - 1];
  let highest = covering && before && from - before[0] < BUCKET_MINUTES ? before[1] : undefined;
  for (; i < samples.length; i++) {
    const { 0: minute, 1: gears } = samples[i]!;
    if (minute > to) break;
    if (highest === undefined || gears > highest) highest = gears;
  }
  return highest;
}

function mod(value: number, by: number): number {
  return ((value % by) + by) % by;
}

/** Index of the first sample dated after `minute` (samples are sorted by minute): binary search. */
export function firstAfter(samples: readonly DemandSample[], minute: number): number {
  let lo = 0;
  let hi = samples.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (samples[mid]![0] <= minute) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
