/**
 * Headroom sized from the pool's own history. A fixed headroomGears kept the
 * same free slots above a flat pool as above a spiky one: a node over
 * cluster-autoscaler on flat loads, and too little where demand jumps. What a
 * boot delay must absorb is demand rising above anything the pool already
 * had to hold: so the headroom is a high quantile of how far demand rose,
 * within one boot delay, above its highest level of the hour before (buckets
 * of BUCKET_MINUTES over the demand history, the highest sample of each). A flat pool
 * keeps a few slots, a spiky one what its spikes took. Until the history
 * covers `minHistory`, the configured headroomGears stands.
 *
 * With an elevation window, a scale-up where demand stands high against its
 * median over that window (a job on a clock running, a burst at its top)
 * buys only what demand rose the last times it stood that high, if less: a
 * job that lifts demand 70 % every 2 hours is most of the rises the quantile
 * sees, and counted on top of the job itself it bought nodes above the pool's
 * peak. What the pool keeps between jobs is the full headroom: after the job
 * comes the next job's rise; above a job the kept days expect, it keeps what
 * that level keeps (level-headroom.ts).
 * Pure functions of data.
 */
import type { Config } from '../config/index.js';
import { BUCKET_MINUTES, epochMinute } from './forecast.js';
import type { DemandSample } from './model.js';
import { measuredOnce, type MeasureCache } from './memo.js';

/** What "the level the pool already had to hold" looks back over. */
export const LEVEL_MINUTES = 60;

export interface ObservedHeadroom {
  /** Gears of headroom to keep. */
  gears: number;
  /**
   * What a scale-up buys on top of demand now: `gears`, or less where demand stands as high as when it last rose by
   * little (an elevation window). Never what the pool keeps: a drain must still leave room for the rise that comes
   * once the job is over.
   */
  forScaleUp: number;
  /** `observed` when sized from the history, `configured` (headroomGears) while the history is too short. */
  source: 'observed' | 'configured';
  /** Rises measured (buckets with an hour before them). */
  samples: number;
  /** What was measured, for the scale-down's headroom above a level (level-headroom.ts); absent when nothing was. */
  measured?: MeasuredRises;
}

/** The history's bucket maxima and rises, measured once per evaluation for the scale-up's and the scale-down's headroom. */
export interface MeasuredRises {
  buckets: BucketSeries;
  /** Every rise, from the highest standing first (ties in history order). */
  byStanding: readonly Rise[];
  /** The median of the elevation window's buckets before the next bucket; undefined without a window or buckets. */
  usualNow: number | undefined;
}

/**
 * The highest sample of each BUCKET_MINUTES bucket, as an array: the decision reads the buckets some 20,000 times a
 * minute (the rises, the usual level, the kept days' spread), which looked up in a map was a tenth of a replay's time.
 */
export interface BucketSeries {
  /** The bucket `values[0]` holds: `PAD_BUCKETS` before the first known one, so a day's look back never leaves the array. */
  first: number;
  /** Each bucket's highest sample from `first` on; NaN where no sample fell. */
  values: Float64Array;
  /** The known buckets, ascending. */
  keys: readonly number[];
}

/** Unknown buckets kept before the first known one: a day and an hour, what the kept days' spread looks back. */
export const PAD_BUCKETS = (24 * 60 + LEVEL_MINUTES) / BUCKET_MINUTES;

/** The most buckets a series holds: a week, three times what a stored history spans. */
const MAX_SPAN_BUCKETS = (7 * 24 * 60) / BUCKET_MINUTES;

/** Bucket `bucket` of `series`, NaN when unknown (outside the array too). */
export function bucketAt(series: BucketSeries, bucket: number): number {
  const index = bucket - series.first;
  return index >= 0 && index < series.values.length ? series.values[index]! : Number.NaN;
}

/** The rises of `history`, each with its standing against the median of the `elevationMinutes` before it (none when 0). */
export function measurePoolRises(history: readonly DemandSample[] | undefined, bootMs: number, elevationMinutes = 0): MeasuredRises {
  const buckets = bucketMaxima(history);
  return measuredOnce(measuredBySeries, buckets, `${bootMs}|${elevationMinutes}`, () => measureSeries(buckets, bootMs, elevationMinutes));
}

/** What `measurePoolRises` measured from a series (one the same in content is the same object: `bucketMaxima`). */
const measuredBySeries: MeasureCache<BucketSeries, MeasuredRises> = new WeakMap();

/** `measurePoolRises` of a series, worked out afresh. */
export function measureSeries(buckets: BucketSeries, bootMs: number, elevationMinutes: number): MeasuredRises {
  const baseline = Math.round(elevationMinutes / BUCKET_MINUTES);
  const usual = baseline > 0 ? new UsualLevel(buckets, baseline) : undefined;
  const rises = measureRises(buckets, bootMs, usual);
  const usualNow = usual?.medianBefore((buckets.keys.at(-1) ?? 0) + 1);
  return { buckets, byStanding: byStandingDescending(rises), usualNow };
}

/**
 * `rises` sorted by standing, highest first, ties in their order: as `sort((a, b) => b.elevation - a.elevation)`, but
 * from one native sort of the standings (a comparator called some 5,000 times per decision was a third of measuring).
 */
function byStandingDescending(rises: readonly Rise[]): Rise[] {
  const keys = new Float64Array(rises.length);
  for (let i = 0; i < rises.length; i++) keys[i] = -rises[i]!.elevation;
  const sorted = keys.slice().sort();
  // Each rise goes to the first slot of its standing not yet taken: in order, so ties keep theirs.
  const taken = new Int32Array(rises.length);
  const out = new Array<Rise>(rises.length);
  for (let i = 0; i < rises.length; i++) {
    const first = lowerBound(sorted, keys[i]!);
    out[first + taken[first]!++] = rises[i]!;
  }
  return out;
}

/**
 * The headroom for a pool whose demand history is `history` (before this evaluation's sample): the `quantile` of the
 * rises above the previous hour's highest bucket over the next ceil(boot / BUCKET_MINUTES) buckets; `fallback` while fewer than
 * `minSamples` rises were measured.
 */
export function observedHeadroom(
  history: readonly DemandSample[] | undefined,
  options: { bootMs: number; quantile: number; minSamples: number; fallback: number; elevationMinutes?: number; demandNow?: number; nowMinute?: number },
): ObservedHeadroom {
  const measured = measurePoolRises(history, options.bootMs, options.elevationMinutes);
  const rises = measured.byStanding;
  if (rises.length < options.minSamples) return { gears: options.fallback, forScaleUp: options.fallback, source: 'configured', samples: rises.length };
  const byPrefix = risePrefixQuantiles(measured, options.quantile);
  const gears = byPrefix[rises.length - 1]!;
  const observed = { gears, source: 'observed' as const, samples: rises.length, measured };
  if (measured.usualNow === undefined) return { ...observed, forScaleUp: gears };
  const { buckets } = measured;
  const demandNow = options.demandNow ?? bucketAt(buckets, buckets.keys.at(-1)!);
  const usual = Math.max(1, measured.usualNow);
  // Only ever less: the standing tells which rises cannot come on top of it, not that bigger ones will.
  const aboveAt = (demand: number) => Math.min(gears, byPrefix[risesFromAlike(rises, demand / usual, options.minSamples) - 1]!);
  const aboveNow = aboveAt(demandNow);
  // A fall is not a rise. Demand below the high of the newest bucket (the high every rise's standing is read from: the
  // bucket before it) asks no more capacity than that high asked, with what its standing keeps above it. Read from
  // this minute alone, a job's last minutes stood back at the usual level and asked the full headroom on top of the
  // fall: every job's end bought nodes on a pool emptying, and the pays-off check drained them (w29-7: 3.37 x
  // clairvoyant-4h's moves). A high older than that bucket is not the standing: it may be a level's noise, and a
  // rise from the usual level may follow it (w14-4's next job, read so over the hour, found 8 nodes where 13 were).
  const newest = buckets.keys.at(-1)!;
  // After a gap in the history (an evaluator stopped for a while) its newest bucket is no standing of now's.
  const current = options.nowMinute === undefined || newest >= Math.floor(options.nowMinute / BUCKET_MINUTES) - 1;
  const high = current ? bucketAt(buckets, newest) : Number.NaN;
  if (!(high > demandNow)) return { ...observed, forScaleUp: aboveNow };
  return { ...observed, forScaleUp: Math.min(aboveNow, Math.ceil(high - demandNow) + aboveAt(high)) };
}

/**
 * The highest sample of each BUCKET_MINUTES bucket of the history (at least 0), and the buckets in order. A series the
 * same as one returned lately is that one (`recentSeries`): do not write to it.
 */
export function bucketMaxima(history: readonly DemandSample[] | undefined): BucketSeries {
  const samples = history ?? [];
  let lowest = Infinity;
  let highest = -Infinity;
  for (let i = 0; i < samples.length; i++) {
    const { 0: minute, 1: gears } = samples[i]!;
    if (!Number.isFinite(minute) || !Number.isFinite(gears)) continue;
    const bucket = Math.floor(minute / BUCKET_MINUTES);
    if (bucket < lowest) lowest = bucket;
    if (bucket > highest) highest = bucket;
  }
  if (lowest > highest) return EMPTY_SERIES;
  // A stored history spans two days and an hour; one sample far from the rest (a clock that jumped) must not size the
  // array by the gap: what lies more than MAX_SPAN_BUCKETS before the newest is left out.
  const first = Math.max(lowest, highest - MAX_SPAN_BUCKETS) - PAD_BUCKETS;
  const length = highest - first + 1;
  // Worked out in a scratch array, copied only when no series lately returned is the same: a new typed array each
  // minute cost three times the loop that fills it.
  if (scratch.length < length) scratch = new Float64Array(length);
  const values = scratch.fill(Number.NaN, 0, length);
  for (let i = 0; i < samples.length; i++) {
    const { 0: minute, 1: gears } = samples[i]!;
    if (!Number.isFinite(minute) || !Number.isFinite(gears)) continue;
    const index = Math.floor(minute / BUCKET_MINUTES) - first;
    if (index < PAD_BUCKETS) continue;
    const known = values[index]!;
    values[index] = Math.max(Number.isNaN(known) ? 0 : known, gears);
  }
  const seen = recentSeries.findIndex((series) => series.first === first && sameValues(series.values, values, length));
  if (seen >= 0) {
    const series = recentSeries.splice(seen, 1)[0]!;
    recentSeries.unshift(series);
    return series;
  }
  const keys: number[] = [];
  for (let index = PAD_BUCKETS; index < length; index++) if (!Number.isNaN(values[index]!)) keys.push(first + index);
  const series = { first, values: values.slice(0, length), keys };
  recentSeries.unshift(series);
  if (recentSeries.length > RECENT_SERIES) recentSeries.pop();
  return series;
}

const EMPTY_SERIES: BucketSeries = { first: 0, values: new Float64Array(0), keys: [] };

/**
 * The series `bucketMaxima` returned lately, the latest first. A warm evaluator measures the same pools every minute,
 * and in four minutes of five a pool's buckets are what they were (a bucket's highest sample seldom moves after its
 * first minutes): handing back the same object lets what is measured from it (the rises, their quantiles, the spreads)
 * be worked out once per change, not every minute. Enough for the pools one evaluator sees.
 */
const recentSeries: BucketSeries[] = [];
const RECENT_SERIES = 32;
let scratch = new Float64Array(0);

/** `a` holds the first `length` values of `b` (NaN equal to NaN) and no more, compared from the newest bucket: the one most likely to differ. */
function sameValues(a: Float64Array, b: Float64Array, length: number): boolean {
  if (a.length !== length) return false;
  for (let i = length - 1; i >= 0; i--) {
    const x = a[i]!;
    const y = b[i]!;
    if (x !== y && !(x !== x && y !== y)) return false;
  }
  return true;
}

/** A rise above the hour before, within one boot delay, and how high demand stood just before it (`UsualLevel`; 0 without one). */
export interface Rise {
  rise: number;
  elevation: number;
}

/** Every bucket's rise above the highest bucket of the hour before it, over the buckets a boot delay spans. */
export function measureRises(buckets: BucketSeries, bootMs: number, usual?: UsualLevel): Rise[] {
  const span = Math.max(1, Math.ceil(bootMs / (BUCKET_MINUTES * 60_000)));
  const back = LEVEL_MINUTES / BUCKET_MINUTES;
  const { first, values } = buckets;
  const rises: Rise[] = [];
  for (const key of buckets.keys) {
    const at = key - first;
    let level = -Infinity;
    let seen = 0;
    // A known bucket has a whole day and an hour of padding before it: the hour before never leaves the array.
    for (let b = at - back; b < at; b++) {
      const value = values[b]!;
      if (Number.isNaN(value)) continue;
      seen++;
      if (value > level) level = value;
    }
    // An hour with half its buckets missing (the first hour, a gap) says too little about the level.
    if (seen < back / 2) continue;
    let reached = values[at]!;
    for (let b = at + 1; b < at + span && b < values.length; b++) {
      const value = values[b]!;
      if (value > reached) reached = value;
    }
    rises.push({ rise: Math.max(0, reached - level), elevation: usual ? usual.standingBefore(key, values[at - 1]!) : 0 });
  }
  return rises;
}

const prefixQuantiles = new WeakMap<MeasuredRises, { quantile: number; values: readonly number[] }>();

/**
 * The `quantile` (rounded up) of each prefix of the rises by standing: element i is that of the i + 1 highest standing.
 * The scale-up's headroom (every rise), its `forScaleUp` (the alike) and the scale-down's margin above each level it
 * asks about (level-headroom.ts) all read it: worked out once per measure, not sorted again for each.
 */
export function risePrefixQuantiles(measured: MeasuredRises, quantile: number): readonly number[] {
  const known = prefixQuantiles.get(measured);
  if (known?.quantile === quantile) return known.values;
  const values: number[] = [];
  const sorted: number[] = [];
  for (const { rise } of measured.byStanding) {
    insertSorted(sorted, rise);
    values.push(Math.ceil(quantileOfSorted(sorted, quantile)));
  }
  prefixQuantiles.set(measured, { quantile, values });
  return values;
}

/** The `quantile` of ascending `sorted` (not empty): the value with that share of them at or below it. */
export function quantileOfSorted(sorted: ArrayLike<number>, quantile: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(quantile * sorted.length) - 1))]!;
}

/**
 * How high demand stood just before a bucket against its median over the `baseline` buckets before: 1 at its usual
 * level, 1.7 in the middle of a job that lifts it 70 %; 1 when either is unknown. Asked for buckets in ascending order,
 * it slides one sorted window along them: a sort of the window per bucket (some 300 each evaluation) was most of the
 * time a small pool's decision took.
 */
export class UsualLevel {
  private readonly window: number[] = [];
  /** Index into `keys` of the oldest bucket in the window, and of the first not yet in it. */
  private oldest = 0;
  private newest = 0;

  constructor(
    private readonly buckets: BucketSeries,
    private readonly baseline: number,
  ) {}

  /** The median of [key - baseline, key), undefined when none is known; keys ascending. */
  medianBefore(key: number): number | undefined {
    this.standingBefore(key, undefined);
    return this.window.length === 0 ? undefined : this.window[Math.floor(this.window.length / 2)];
  }

  /** `last` (the demand just before bucket `key`, NaN or undefined: unknown) against the median of [key - baseline, key); keys ascending. */
  standingBefore(key: number, last: number | undefined): number {
    const { window } = this;
    const { keys, values, first } = this.buckets;
    for (; this.newest < keys.length && keys[this.newest]! < key; this.newest++) insertSorted(window, values[keys[this.newest]! - first]!);
    for (; this.oldest < this.newest && keys[this.oldest]! < key - this.baseline; this.oldest++) removeSorted(window, values[keys[this.oldest]! - first]!);
    if (last === undefined || Number.isNaN(last) || window.length === 0) return 1;
    return last / Math.max(1, window[Math.floor(window.length / 2)]!);
  }
}

function insertSorted(sorted: number[], value: number): void {
  sorted.splice(lowerBound(sorted, value), 0, value);
}

function removeSorted(sorted: number[], value: number): void {
  sorted.splice(lowerBound(sorted, value), 1);
}

function lowerBound(sorted: ArrayLike<number>, value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * How many of `byStanding` (highest standing first) rose from a standing at least as high as `now`'s; when fewer than
 * a quarter of `minSamples` did, that many from the highest standings. Demand that already stands at a job's or a
 * burst's top rose, the last times it stood there, by little: the pool's every other rise, counted on top of it, buys
 * nodes for a level it never reaches.
 */
export function risesFromAlike(byStanding: readonly Rise[], now: number, minSamples: number): number {
  let alike = 0;
  for (let hi = byStanding.length; alike < hi; ) {
    const mid = (alike + hi) >> 1;
    if (byStanding[mid]!.elevation >= now) alike = mid + 1;
    else hi = mid;
  }
  return Math.min(byStanding.length, Math.max(alike, Math.ceil(minSamples / 4)));
}

/** The pool's headroom by its configuration: observed when `scaleUp.observedHeadroom` is on and the history is long enough. */
export function poolHeadroom(config: Pick<Config, 'scaleUp'>, history: readonly DemandSample[] | undefined, bootMs: number, demandNow?: number, now?: Date): ObservedHeadroom {
  const { headroomGears, observedHeadroom: observed } = config.scaleUp;
  if (!observed.enabled) return { gears: headroomGears, forScaleUp: headroomGears, source: 'configured', samples: 0 };
  return observedHeadroom(history, {
    bootMs,
    quantile: observed.quantile,
    elevationMinutes: observed.elevationWindow / 60_000,
    ...(demandNow !== undefined ? { demandNow } : {}),
    ...(now !== undefined ? { nowMinute: epochMinute(now) } : {}),
    minSamples: Math.ceil(observed.minHistory / (BUCKET_MINUTES * 60_000)),
    fallback: headroomGears,
  });
}
