/**
 * Whether demand, by the pool's own recent history, comes back within the
 * horizon to the level at which a drained node is bought back: the horizon
 * check (payoff.ts) for rises that recur but not daily (bursts a few hours
 * apart, noise around a node boundary).
 *
 * Why: the pays-off check reads the coming hours off the kept days at the
 * same hour, and a rise that is not daily (a burst at 07:00 yesterday, at
 * 11:00 today) is not on them, so after each rise the forecast says "unneeded
 * for a day"; the drain runs, and the next rise, two or three hours later,
 * buys the node back. The kept history tells how this pool behaves: each
 * spell it spent below the level ended when demand came back to it. Of the
 * spells that already lasted as long as the current one (the others say
 * nothing about a spell this old), if most ended within the horizon, the node
 * is expected to be needed again within it, as the forecast's horizon would
 * say of a daily rise. The current spell counts as one more that did not end
 * (returnsWithin). A spell that began before the kept history counts only
 * once it outlasted the horizon (it did not end within it). A spell counts
 * only if it went about as deep as the current one (SPELL_DEPTH_FACTOR).
 *
 * Pure functions of data.
 */
import { BUCKET_MINUTES } from './daily-demand.js';
import { formatDuration } from './duration.js';
import { epochMinute } from './forecast.js';
import type { DemandSample } from './model.js';

const MINUTE_MS = 60_000;

export interface RecentReturns {
  /** Minutes since demand was last at or above the level. */
  ageMinutes: number;
  /** Spells below the level, in the kept history, that lasted longer than `ageMinutes`. */
  comparable: number;
  /** Of them, those that ended (demand back at the level) within the horizon after `ageMinutes`. */
  cameBack: number;
  /** The median of the comparable spells' remaining minutes after `ageMinutes` (Infinity for one that did not end within the history). */
  medianRemainingMinutes: number;
  /**
   * The median of the comparable spells' remaining minutes, each counted up to the lookahead (the one the history
   * begins in, which lasted at least so long, at that; undefined when no lookahead was given or no spell is
   * comparable): how long, by this pool's own dips, a node drained now typically stays unneeded. The median, not the
   * mean: one long night among short wiggles does not make the next wiggle a night.
   */
  typicalMinutes?: number;
  /** How many spells `typicalMinutes` is the median of. */
  dips?: number;
}

/** The pool's spells below one level: where the current one began, and those that ended before it. */
export interface Spells {
  /** Minutes of each spell below the level that ended (demand came back to it) in the kept history. */
  ended: number[];
  /** Minutes of the spell the history begins in, up to its end (it lasted at least this long); undefined if it began above. */
  censored?: number;
  /** The last minute demand was at or above the level; undefined when it never was. */
  lastAboveEnd?: number;
  /** The lowest demand of each ended spell, index for index with `ended`. */
  endedLows: number[];
  /** The lowest demand of the current spell, since `lastAboveEnd`; undefined when demand is at the level now. */
  currentLow?: number;
}

/**
 * A past spell speaks for the current one only if it went about as deep: its lowest demand at most this many times
 * the current spell's. A pool whose demand departs to a much lower level (held-out u30-1: a night's trough at 46 %
 * of the crest, then a departure to 40 % of the usual level) is below the buy-back level as on every night, but far
 * deeper: the nights' spells, which all ended within the horizon, said the node was needed again soon, and kept 8
 * nodes of 12 for three hours after the kept days, scaled to today, let them go. Deeper spells still count: one that
 * went lower and came back says the shallower one comes back too.
 */
export const SPELL_DEPTH_FACTOR = 1.5;

/** One pass over the kept history: the spells it spent below `level`. */
export function spellsBelow(samples: readonly DemandSample[], level: number): Spells {
  const spells: Spells = { ended: [], endedLows: [] };
  if (samples.length === 0) return spells;
  const firstMinute = samples[0]![0];
  let low = Infinity;
  for (let i = 0; i < samples.length; i++) {
    const { 0: minute, 1: gears } = samples[i]!;
    if (gears < level) {
      if (gears < low) low = gears;
      continue;
    }
    if (spells.lastAboveEnd === undefined) {
      if (minute > firstMinute) spells.censored = minute - firstMinute;
    } else if (minute - spells.lastAboveEnd > 1) {
      spells.ended.push(minute - spells.lastAboveEnd - 1);
      spells.endedLows.push(low);
    }
    low = Infinity;
    // A coarse bucket's maximum may be from any of its minutes: the latest is the safe side (as one-off-need.ts).
    const next = samples[i + 1];
    spells.lastAboveEnd = next && next[0] - minute >= BUCKET_MINUTES ? minute + BUCKET_MINUTES - 1 : minute;
  }
  if (low < Infinity) spells.currentLow = low;
  return spells;
}

/**
 * The spells `samples` spent below `level` before now, against the current one: undefined when demand never
 * reached `level` in the kept history (nothing came back) or is at it now. With `lookaheadMs`, also the minutes
 * the current spell typically has left (`typicalMinutes`).
 */
export function recentReturns(samples: readonly DemandSample[], now: Date, level: number, horizonMs: number, lookaheadMs?: number): RecentReturns | undefined {
  return returnsOf(spellsBelow(samples, level), now, horizonMs, lookaheadMs);
}

/** `recentReturns` from spells already found (`spellsBelow`): one scan of the history serves every candidate of a level. */
export function returnsOf(spells: Spells, now: Date, horizonMs: number, lookaheadMs?: number): RecentReturns | undefined {
  if (spells.lastAboveEnd === undefined) return undefined;
  const ageMinutes = epochMinute(now) - spells.lastAboveEnd;
  if (ageMinutes <= 0) return undefined;
  const horizonMinutes = horizonMs / MINUTE_MS;
  const current = spells.currentLow;
  const ended = current === undefined ? spells.ended : spells.ended.filter((_, i) => spells.endedLows[i]! <= current * SPELL_DEPTH_FACTOR);
  const remaining = ended.filter((length) => length > ageMinutes).map((length) => length - ageMinutes);
  const censoredLeft = spells.censored === undefined ? 0 : spells.censored - ageMinutes;
  // The spell the history begins in lasted at least `censored`: known to outlast the horizon, or unknown.
  if (censoredLeft > horizonMinutes) remaining.push(Infinity);
  remaining.sort((a, b) => a - b);
  const cameBack = remaining.filter((minutes) => minutes <= horizonMinutes).length;
  const returns: RecentReturns = { ageMinutes, comparable: remaining.length, cameBack, medianRemainingMinutes: median(remaining) };
  if (lookaheadMs === undefined) return returns;
  const cap = lookaheadMs / MINUTE_MS;
  const left = ended.filter((length) => length > ageMinutes).map((length) => Math.min(cap, length - ageMinutes));
  // It lasted at least this long: a lower bound, on the side of keeping the node.
  if (censoredLeft > 0) left.push(Math.min(cap, censoredLeft));
  if (left.length === 0) return returns;
  left.sort((a, b) => a - b);
  return { ...returns, typicalMinutes: median(left), dips: left.length };
}

/**
 * True when most spells as old as the current one ended within the horizon, counting the current one as a spell that
 * has not come back (it may not): one short spell is no evidence, and a bare majority of few spells is not enough.
 */
export function returnsWithin(returns: RecentReturns | undefined): returns is RecentReturns {
  return returns !== undefined && returns.cameBack * 2 > returns.comparable + 1;
}

/** The hours a node drained now typically stays unneeded by the pool's own dips as old as the current one; undefined without one. */
export function dipHours(returns: RecentReturns | undefined): number | undefined {
  return returns?.typicalMinutes === undefined ? undefined : returns.typicalMinutes / 60;
}

/** What the dips say, for the refusal's sentence. */
export function recentDipsText(returns: RecentReturns, level: number): string {
  const minutes = (m: number) => formatDuration(Math.round(m) * MINUTE_MS);
  return `the ${returns.dips ?? 0} recent spells below ${Math.round(level)} gears that lasted ${minutes(returns.ageMinutes)} lasted a median ${minutes(returns.typicalMinutes ?? 0)} more`;
}

/** The refusal's sentence. */
export function recentReturnsText(returns: RecentReturns, level: number, horizonMs: number): string {
  const minutes = (m: number) => formatDuration(Math.round(m) * MINUTE_MS);
  return (
    `needed again soon by recent demand: ${returns.cameBack} of the ${returns.comparable} recent spells below ${Math.round(level)} gears ` +
    `that lasted ${minutes(returns.ageMinutes)} ended within the ${formatDuration(horizonMs)} horizon (median ${minutes(returns.medianRemainingMinutes)} more)`
  );
}

function median(sorted: readonly number[]): number {
  if (sorted.length === 0) return Infinity;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
