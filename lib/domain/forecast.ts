/**
 * Demand history and the demand forecast.
 *
 * A pool keeps `demandHistory` ([epoch minute, gears], oldest first): one
 * sample per minute for the trend window (at most the last hour), and one
 * sample per 10-minute bucket (the highest demand of the bucket, dated at the
 * bucket's first minute) back two days and two hours when daily seasonality
 * is used (daily-demand.ts). That is at most 60 + 300 samples, so the pool
 * item stays small.
 *
 * The forecast is the higher of a linear trend over the window (the part of
 * its slope the window is sure of, `trendConfidence`) and what happened on
 * the kept days over the same lookahead (the lowest of their rises: only a
 * rise that recurred counts); it never goes below the current demand (it only
 * ever asks for more capacity, never less).
 */
import { BUCKET_MINUTES, DAYS_KEPT, LEVEL_SHIFT_MINUTES, firstAfter, levelRise } from './daily-demand.js';
import type { DemandSample } from './model.js';

export { BUCKET_MINUTES, firstAfter };

const MINUTE_MS = 60_000;
/** Per-minute samples kept at most this far back, whatever the window (bounds the history's size). */
export const MAX_FINE_MINUTES = 60;
/** How far back the coarse buckets go: the kept days, and the hours before them a level shift is judged on. */
export const DAILY_KEEP_MINUTES = DAYS_KEPT * 24 * 60 + LEVEL_SHIFT_MINUTES;
/** The history never holds more than this many samples (per-minute ones, the buckets, a little slack). */
export const MAX_HISTORY_SAMPLES = MAX_FINE_MINUTES + DAILY_KEEP_MINUTES / BUCKET_MINUTES + 12;
/** The trend needs this many samples covering this many distinct minutes. */
export const TREND_MIN_SAMPLES = 5;
export const TREND_MIN_SPAN_MINUTES = 5;
/** The residuals' lag-one correlation the slope's standard error is widened for, at most. */
const MAX_RESIDUAL_CORRELATION = 0.95;
/** Yesterday's demand is read from the sample nearest the instant, within this many minutes. */
const DAILY_TOLERANCE_MINUTES = BUCKET_MINUTES;
const DAY_MINUTES = 24 * 60;

export interface RecordDemandOptions {
  /** The trend window, in milliseconds (per-minute samples are kept this far back, at most an hour). */
  window: number;
  /** Keep 10-minute buckets back two days (for daily seasonality). */
  keepDaily: boolean;
}

export function epochMinute(now: Date | number): number {
  return Math.floor((typeof now === 'number' ? now : now.getTime()) / MINUTE_MS);
}

function isSample(sample: unknown): sample is DemandSample {
  return Array.isArray(sample) && Number.isFinite(sample[0]) && Number.isFinite(sample[1]);
}

/**
 * The history with `demand` recorded at `now`'s minute (replacing a sample of
 * the same minute), per-minute samples that left the window folded into
 * 10-minute buckets (their maximum) when `keepDaily`, and everything older
 * than `DAILY_KEEP_MINUTES` (or than the window, without `keepDaily`) dropped. Returns a
 * new array; the input is not changed.
 */
export function recordDemand(
  history: readonly DemandSample[] | undefined,
  now: Date,
  demand: number,
  options: RecordDemandOptions,
): DemandSample[] {
  const current = epochMinute(now);
  const fineMinutes = Math.max(1, Math.min(MAX_FINE_MINUTES, Math.ceil(options.window / MINUTE_MS)));
  const fineCutoff = current - fineMinutes; // samples after it stay per minute
  const dailyCutoff = current - DAILY_KEEP_MINUTES;

  const coarse: DemandSample[] = [];
  const fine: DemandSample[] = [];
  const samples = history ?? [];
  // By index, not destructured (DemandSample).
  for (let i = 0; i < samples.length; i++) {
    const sample = samples[i];
    if (!isSample(sample)) continue;
    const { 0: minute, 1: gears } = sample;
    if (minute === current) continue; // replaced by this sample
    // Samples that stay as they were are shared, not rebuilt (the history is recorded every minute and may be frozen):
    // a changed bucket gets a new sample instead of being written to.
    if (minute > fineCutoff) {
      fine.push(sample.length === 2 ? sample : [minute, gears]);
    } else if (options.keepDaily) {
      const bucket = minute - (((minute % BUCKET_MINUTES) + BUCKET_MINUTES) % BUCKET_MINUTES);
      if (bucket < dailyCutoff) continue;
      const last = coarse[coarse.length - 1];
      if (last && last[0] === bucket) {
        if (gears > last[1]) coarse[coarse.length - 1] = [bucket, gears];
      } else coarse.push(minute === bucket && sample.length === 2 ? sample : [bucket, gears]);
    }
  }
  fine.push([current, demand]);

  // The input is normally sorted and so are both parts; repair one that was not (a clock that went back).
  const byMinute = (a: DemandSample, b: DemandSample) => a[0] - b[0];
  if (!isSorted(coarse)) {
    coarse.sort(byMinute);
    mergeEqualMinutes(coarse);
  }
  if (!isSorted(fine)) fine.sort(byMinute);

  const result = coarse.concat(fine);
  return result.length > MAX_HISTORY_SAMPLES ? result.slice(result.length - MAX_HISTORY_SAMPLES) : result;
}

function isSorted(samples: readonly DemandSample[]): boolean {
  for (let i = 1; i < samples.length; i++) if (samples[i - 1]![0] >= samples[i]![0]) return false;
  return true;
}

function mergeEqualMinutes(samples: DemandSample[]): void {
  let out = 0;
  for (const sample of samples) {
    const last = samples[out - 1];
    if (last && last[0] === sample[0]) samples[out - 1] = [last[0], Math.max(last[1], sample[1])];
    else samples[out++] = sample;
  }
  samples.length = out;
}

export interface ForecastOptions {
  /** The trend window, in milliseconds. */
  window: number;
  /** Standard errors taken off a rising slope before it is projected (0 or unset: the fitted slope). */
  trendConfidence?: number;
  dailySeasonality: boolean;
  /** The current demand; defaults to the newest sample of the history. */
  current?: number;
}

export interface Forecast {
  /** Forecast demand at now + lookahead, never below the current demand. */
  demand: number;
  /** Short text for reasons: `trend +12 gears/10m`, `yesterday +8%`, `no history`. */
  basis: string;
  /** The trend's projection, current + slope x lookahead (before the floor at the current demand), when the window had enough samples. */
  trend?: number;
  /** Gears per minute of the trend. */
  slopePerMinute?: number;
  /** Yesterday's ratio demand(now + lookahead - 24h) / demand(now - 24h), when known. */
  dailyRatio?: number;
  /** The most the kept days say demand reaches over the lookahead (their highest then, raised by today's level rise above them). */
  dailyCeiling?: number;
}

/** Today's level is compared with each kept day's over this many minutes (the hour the headroom also judges a level by). */
export const LEVEL_RISE_MINUTES = 60;

/**
 * Demand expected at `now + lookaheadMs`: the higher of (a) the current
 * demand plus the slope of the least-squares line through the window's
 * samples (at least 5 samples covering at least 5 minutes), less
 * `trendConfidence` standard errors when rising, times the lookahead and
 * (b), with daily seasonality, the current demand scaled by how demand
 * changed over the same lookahead on the kept days, once both are kept. Never below the current
 * demand; with no usable history it is the current demand (`no history`).
 */
export function forecastDemand(
  history: readonly DemandSample[] | undefined,
  now: Date,
  lookaheadMs: number,
  options: ForecastOptions,
): Forecast {
  const samples = history ?? [];
  const current = options.current ?? samples[samples.length - 1]?.[1] ?? 0;
  const nowMinute = epochMinute(now);
  const lookaheadMinutes = Math.max(0, lookaheadMs) / MINUTE_MS;

  const result: Forecast = { demand: current, basis: 'no history' };
  let best = current;
  let bestBasis: string | undefined;
  let fallbackBasis: string | undefined;

  // (a) Linear trend over the window.
  const trend = linearTrend(samples, nowMinute, options.window);
  if (trend) {
    // Anchored at the current demand: the line's own level lags a sudden change
    // (a pool that just lost half its gears must not forecast its old level).
    const slope = confidentSlope(trend, options.trendConfidence ?? 0);
    const projected = current + slope * lookaheadMinutes;
    result.trend = projected;
    result.slopePerMinute = slope;
    const basis = `trend ${signed(Math.round(slope * 10))} gears/10m`;
    fallbackBasis = basis;
    if (projected > best) {
      best = projected;
      bestBasis = basis;
    }
  }

  // (b) The same lookahead on the kept days: the lowest of their rises, so only a rise that recurred counts.
  if (options.dailySeasonality) {
    const daily = dailyRise(samples, nowMinute, Math.ceil(options.window / MINUTE_MS), lookaheadMinutes);
    if (daily !== undefined) {
      const { ratio, ceiling } = daily;
      result.dailyRatio = ratio;
      result.dailyCeiling = ceiling;
      // The rise scaled to today's demand, but never above what the kept days reached (raised by today's level above them):
      // a noisy level load's chance "rise" on a noisy peak would otherwise forecast a level the pool never held.
      const seasonal = current > 0 ? Math.min(current * ratio, Math.max(current, ceiling)) : current;
      const basis = `yesterday ${signed(Math.round((current > 0 ? seasonal / current - 1 : ratio - 1) * 100))}%`;
      fallbackBasis ??= basis;
      if (seasonal > best) {
        best = seasonal;
        bestBasis = basis;
      }
    }
  }

  result.demand = best;
  result.basis = bestBasis ?? fallbackBasis ?? 'no history';
  return result;
}

/**
 * How demand changed over the lookahead at this hour on the kept days, the
 * lowest of their ratios: each day's highest demand over the lookahead against
 * its highest over the window before (the highest of a few noisy points
 * against a single one would read noise as growth, and buy a node for it).
 * A burst seen on one day only is not expected again, so a rise is expected
 * only when every kept day can be read, with demand before this hour to
 * compare with (undefined otherwise): a new pool's one
 * day cannot tell a burst or a one-off step from a daily rise, and bought
 * nodes for each of them the next day (a step to 2.3 x at hour 19 of the
 * suite's 2-day step change, a 4.5 x spike at hour 8 of held-out w5-7),
 * then moved their gears off again. `ceiling`: the lowest of
 * the days' highest demand over the lookahead, each raised by how far today's
 * level stands above that day's (`levelRise`, never lowered): the level that
 * recurred, followed when today grew.
 */
function dailyRise(
  samples: readonly DemandSample[],
  nowMinute: number,
  windowMinutes: number,
  lookaheadMinutes: number,
): { ratio: number; ceiling: number } | undefined {
  let lowest: number | undefined;
  let ceiling = Infinity;
  for (let daysAgo = 1; daysAgo <= DAYS_KEPT; daysAgo++) {
    const then = nowMinute - daysAgo * DAY_MINUTES;
    const before = highestIn(samples, then - Math.max(DAILY_TOLERANCE_MINUTES, windowMinutes), then);
    const after = highestIn(samples, then, Math.round(then + Math.max(lookaheadMinutes, 1)));
    if (before === undefined || after === undefined || (before === 0 && after > 0)) return undefined;
    const ratio = before > 0 ? after / before : 1;
    if (lowest === undefined || ratio < lowest) lowest = ratio;
    const rise = levelRise(samples, nowMinute, daysAgo * DAY_MINUTES, LEVEL_RISE_MINUTES);
    // A day whose level cannot be compared with today's (history starting, a gap) is taken at its own level.
    ceiling = Math.min(ceiling, after + Math.max(0, rise ?? 0));
  }
  return lowest === undefined ? undefined : { ratio: lowest, ceiling };
}

function signed(value: number): string {
  return value > 0 ? `+${value}` : value < 0 ? `${value}` : '+0';
}

/**
 * A rising slope less `z` standard errors, never below 0 (a level load's noise fits a slope of either sign, and only
 * the part the window is sure of may buy a node); a falling slope as fitted (the forecast never goes below the current
 * demand anyway).
 */
function confidentSlope(trend: { slope: number; standardError: number }, z: number): number {
  if (trend.slope <= 0 || z <= 0) return trend.slope;
  return Math.max(0, trend.slope - z * trend.standardError);
}

/**
 * The least-squares line through the samples of the window, with x in minutes
 * relative to now; undefined without enough samples. `intercept` is the
 * line's value now (unused by the forecast, kept for diagnostics).
 * `standardError` is the slope's, from the residuals, widened by their lag-one
 * autocorrelation: demand held for several samples (a report every minute of
 * a level that changes every five) repeats each residual, and the plain
 * formula would count every repeat as fresh evidence. 0 with too few samples.
 */
function linearTrend(samples: readonly DemandSample[], nowMinute: number, windowMs: number): { slope: number; intercept: number; standardError: number } | undefined {
  const windowMinutes = Math.max(1, Math.ceil(windowMs / MINUTE_MS));
  const from = nowMinute - windowMinutes; // exclusive
  const points: Array<[x: number, y: number]> = [];
  for (let i = samples.length - 1; i >= 0; i--) {
    const { 0: minute, 1: gears } = samples[i]!;
    if (minute <= from) break; // oldest first: everything before is older still
    if (minute > nowMinute) continue;
    points.push([minute - nowMinute, gears]);
  }
  const n = points.length;
  if (n < TREND_MIN_SAMPLES) return undefined;
  let sumX = 0;
  let sumY = 0;
  let sumXX = 0;
  let sumXY = 0;
  for (const [x, y] of points) {
    sumX += x;
    sumY += y;
    sumXX += x * x;
    sumXY += x * y;
  }
  // Newest first, so the span is the first x less the last.
  if (points[0]![0] - points[n - 1]![0] + 1 < TREND_MIN_SPAN_MINUTES) return undefined;
  const denominator = n * sumXX - sumX * sumX;
  if (denominator === 0) return undefined;
  const slope = (n * sumXY - sumX * sumY) / denominator;
  const intercept = (sumY - slope * sumX) / n;
  return { slope, intercept, standardError: slopeStandardError(points, slope, intercept, denominator) };
}

function slopeStandardError(points: ReadonlyArray<[number, number]>, slope: number, intercept: number, denominator: number): number {
  const n = points.length;
  if (n <= 2) return 0;
  let squares = 0;
  let lagged = 0;
  let previous: number | undefined;
  for (const [x, y] of points) {
    const residual = y - (intercept + slope * x);
    squares += residual * residual;
    if (previous !== undefined) lagged += residual * previous;
    previous = residual;
  }
  if (squares === 0) return 0;
  // Only positive correlation widens; capped so a window of one repeated level stays finite.
  const rho = Math.min(MAX_RESIDUAL_CORRELATION, Math.max(0, lagged / squares));
  return Math.sqrt((squares / (n - 2)) * (n / denominator) * ((1 + rho) / (1 - rho)));
}

/** The highest demand of the samples covering minutes (from, to]: a coarse bucket covers its BUCKET_MINUTES. */
function highestIn(samples: readonly DemandSample[], from: number, to: number): number | undefined {
  let highest: number | undefined;
  for (let i = firstAfter(samples, from - BUCKET_MINUTES); i < samples.length; i++) {
    const { 0: minute, 1: gears } = samples[i]!;
    if (minute > to) break;
    const next = samples[i + 1]?.[0] ?? minute + 1;
    if (Math.min(next, minute + BUCKET_MINUTES) - 1 <= from) continue; // ends before the range
    if (highest === undefined || gears > highest) highest = gears;
  }
  return highest;
}
