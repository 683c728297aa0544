/**
 * What the pool keeps free above a level its kept days expect, for the
 * scale-down's pays-off check. The pool's headroom (headroom.ts) is a high
 * quantile of every rise, and on a pool whose jobs run on a clock most of
 * those rises are the jobs themselves: kept in full on top of the next job
 * the kept days expect, the job's rise counted twice, and the pool held a
 * job's rise above its every job (1.10 to 1.25 x clairvoyant-4h on the jobs
 * shapes, docs/HISTORY.md).
 *
 * Above a level it keeps the larger of two margins, never more than the full
 * headroom:
 * - the rises that came on top of demand standing that high against its
 *   usual level (the scale-up's own `forScaleUp`): above a job, little; at
 *   the usual standing, the full headroom, since the next job rises from it;
 * - how far the next hours' highest demand strayed from what yesterday's
 *   same hours said (`peakForecastSpread`), as a share of the level: a job
 *   may come that much above yesterday's. Both ways, since a level that
 *   wandered down may wander back: a pool whose days repeat strays little,
 *   one whose level wanders for hours strays far and keeps its margin.
 *   Before two days can be compared (`peakPersistenceSpread`), how far it
 *   strayed from the hours just before: on a pool's first day and a half the
 *   full headroom above every job held w2-5 at 23 nodes where 18 served.
 * Pure functions of data.
 */
import type { Config } from '../config/index.js';
import { BUCKET_MINUTES } from './forecast.js';
import { LEVEL_MINUTES, bucketAt, quantileOfSorted, risePrefixQuantiles, risesFromAlike, type BucketSeries, type MeasuredRises } from './headroom.js';
import { measuredOnce, type MeasureCache } from './memo.js';

const DAY_BUCKETS = (24 * 60) / BUCKET_MINUTES;
const LEVEL_BUCKETS = LEVEL_MINUTES / BUCKET_MINUTES;

export interface HeadroomAtLevel {
  /** Gears the pool keeps free above `level` gears the kept days expect. */
  at(level: number): number;
  /** Which margin `at(level)` is, in words, for a decision's reason. */
  why?(level: number): string;
  /** The median of the elevation window's buckets: the standing the next rise comes from. */
  usual: number;
}

export interface LevelHeadroomOptions {
  quantile: number;
  /** Rises, and kept-day comparisons, needed before the margins are trusted. */
  minSamples: number;
  /** The pool's headroom: never more is kept. */
  full: number;
  /** The hours ahead a drain must hold (the pays-off horizon). */
  aheadMinutes: number;
}

/**
 * The margins above, from the history and its rises measured once (`measurePoolRises`, with the elevation window);
 * undefined without an elevation window, or before the history holds `minSamples` rises and `minSamples` comparisons
 * of either spread (the kept days', else the hours before's: a pool's first day and a half).
 */
export function headroomAtLevel(measured: MeasuredRises, options: LevelHeadroomOptions): HeadroomAtLevel | undefined {
  const { buckets, byStanding, usualNow: usual } = measured;
  if (byStanding.length < options.minSamples || usual === undefined) return undefined;
  const ahead = Math.max(1, Math.round(options.aheadMinutes / BUCKET_MINUTES));
  const spread = peakSpread(buckets, ahead, options);
  if (spread === undefined) return undefined;
  // Asked for many levels per decision: the quantile of each prefix of the rises by standing, once.
  const prefixQuantile = risePrefixQuantiles(measured, options.quantile);
  const margins = (level: number) => {
    const fromAlike = prefixQuantile[risesFromAlike(byStanding, level / Math.max(1, usual), options.minSamples) - 1]!;
    return { bySpread: Math.ceil(level * spread), fromAlike };
  };
  return {
    usual,
    at(level) {
      const { bySpread, fromAlike } = margins(level);
      return Math.min(options.full, Math.max(bySpread, fromAlike));
    },
    why(level) {
      const { bySpread, fromAlike } = margins(level);
      if (Math.max(bySpread, fromAlike) >= options.full) return `set by the pool's headroom: ${options.full} gears`;
      if (bySpread >= fromAlike) return `set by the kept days' spread: ${Math.round(spread * 100)} % of ${Math.round(level)} gears expected`;
      return `set by the rises from a standing this high: ${fromAlike} gears`;
    },
  };
}

/**
 * The kept days' spread, else the hours before's. Once per series (`bucketMaxima` hands back the same object while
 * the buckets stay as they were, four minutes in five): each reads every bucket of two days.
 */
function peakSpread(buckets: BucketSeries, ahead: number, options: Pick<LevelHeadroomOptions, 'quantile' | 'minSamples'>): number | undefined {
  return measuredOnce(spreadBySeries, buckets, `${ahead}|${options.quantile}|${options.minSamples}`, () => peakForecastSpread(buckets, ahead, options) ?? peakPersistenceSpread(buckets, ahead, options));
}

const spreadBySeries: MeasureCache<BucketSeries, number | undefined> = new WeakMap();

/**
 * The `quantile` of how far the highest demand of the next `ahead` buckets strayed, as a share, from yesterday's
 * highest of the same buckets shifted by how far today stood above or below yesterday over the hour before: over every
 * past bucket whose next `ahead` buckets are known today and yesterday. Undefined with fewer than `minSamples`.
 */
export function peakForecastSpread(
  buckets: BucketSeries,
  ahead: number,
  options: Pick<LevelHeadroomOptions, 'quantile' | 'minSamples'>,
): number | undefined {
  const { keys, first, values } = buckets;
  const last = keys.at(-1);
  if (last === undefined) return undefined;
  const strayed: number[] = [];
  for (const key of keys) {
    if (key + ahead - 1 > last) break;
    // The series keeps a day and an hour of unknown buckets before its first known one: yesterday's never leaves the array.
    const next = highestOfBoth(values, key - first, ahead);
    if (next === undefined) continue;
    // The scale-up's forecast reads today's level against a kept day's the same way (daily-demand.ts `levelRise`, whose
    // samples' highest in a bucket is the bucket).
    const shift = levelRiseBefore(values, key - first);
    if (shift === undefined) continue;
    const foreseen = next.yesterday + shift;
    if (foreseen > 0) strayed.push(Math.abs(next.today / foreseen - 1));
  }
  if (strayed.length < options.minSamples) return undefined;
  return quantileOfSorted(strayed.sort((a, b) => a - b), options.quantile);
}

/** How far the `LEVEL_BUCKETS` buckets before `at` stood above the same buckets a day before, on average over those known on both days (at least half). */
function levelRiseBefore(known: Float64Array, at: number): number | undefined {
  let sum = 0;
  let both = 0;
  for (let i = 1; i <= LEVEL_BUCKETS; i++) {
    const today = known[at - i]!;
    const before = known[at - i - DAY_BUCKETS]!;
    if (Number.isNaN(today) || Number.isNaN(before)) continue;
    sum += today - before;
    both++;
  }
  return both * 2 >= LEVEL_BUCKETS ? sum / both : undefined;
}

/**
 * Before the kept days can say it: the `quantile` of how far the highest demand of the next `ahead` buckets strayed,
 * as a share, from the highest of the `ahead` buckets before them, both ways. A pool whose jobs recur within the
 * window strays little; one that ramps or wanders over hours strays far and keeps the full headroom. Undefined with
 * fewer than `minSamples`.
 */
export function peakPersistenceSpread(
  buckets: BucketSeries,
  ahead: number,
  options: Pick<LevelHeadroomOptions, 'quantile' | 'minSamples'>,
): number | undefined {
  const first = buckets.keys[0];
  const last = buckets.keys.at(-1);
  if (first === undefined || last === undefined) return undefined;
  const strayed: number[] = [];
  for (let key = first + ahead; key + ahead - 1 <= last; key++) {
    const before = highestOf(buckets, key - ahead, key);
    const next = highestOf(buckets, key, key + ahead);
    if (before !== undefined && next !== undefined && before > 0) strayed.push(Math.abs(next / before - 1));
  }
  if (strayed.length < options.minSamples) return undefined;
  return quantileOfSorted(strayed.sort((a, b) => a - b), options.quantile);
}

/** The highest of the buckets [from, to), when at least half of them are known. */
function highestOf(buckets: BucketSeries, from: number, to: number): number | undefined {
  let highest = -Infinity;
  let known = 0;
  for (let b = from; b < to; b++) {
    const value = bucketAt(buckets, b);
    if (Number.isNaN(value)) continue;
    known++;
    highest = Math.max(highest, value);
  }
  return known * 2 < to - from ? undefined : highest;
}

/** The highest of today's `count` buckets from `from` and of yesterday's same buckets, over those known on both days (at least half). */
function highestOfBoth(known: Float64Array, from: number, count: number): { today: number; yesterday: number } | undefined {
  let today = -Infinity;
  let yesterday = -Infinity;
  let both = 0;
  for (let b = from; b < from + count; b++) {
    const now = known[b]!;
    const then = known[b - DAY_BUCKETS]!;
    if (Number.isNaN(now) || Number.isNaN(then)) continue;
    both++;
    today = Math.max(today, now);
    yesterday = Math.max(yesterday, then);
  }
  return both * 2 < count ? undefined : { today, yesterday };
}

/**
 * `headroomAtLevel` with the pool's settings, below its headroom `config.scaleUp.headroomGears`, from the rises its
 * headroom measured; undefined when the observed headroom or the pays-off check (its only reader) is off.
 */
export function poolHeadroomAtLevel(config: Pick<Config, 'scaleUp' | 'scaleDown'>, measured: MeasuredRises | undefined): HeadroomAtLevel | undefined {
  const observed = config.scaleUp.observedHeadroom;
  if (!observed.enabled || !config.scaleDown.payoff.enabled || !measured) return undefined;
  return headroomAtLevel(measured, {
    quantile: observed.quantile,
    minSamples: Math.ceil(observed.minHistory / (BUCKET_MINUTES * 60_000)),
    full: config.scaleUp.headroomGears,
    aheadMinutes: config.scaleDown.payoff.horizon / 60_000,
  });
}
