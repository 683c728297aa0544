/**
 * Whether draining one node pays: the hours it is expected to stay unneeded
 * times the node's price must be at least `factor` times what its moves cost
 * the tenants (Karpenter's Balanced consolidation uses a factor of 2), and a
 * node the forecast needs again within `horizon` is not drained at all (it
 * would be drained tonight and bought back tomorrow morning, its gears moved
 * twice for nothing).
 *
 * "Needed" is judged on demand the pool is confident about: an upper quantile
 * of the recent samples, never below the newest (a five-minute dip does not
 * make a node unneeded), and over the lookahead, what the last two days say
 * about the coming hours (daily-demand.ts: each day shifted to today's
 * level, their lower, so only demand that recurred holds a node; a level
 * shift is followed at today's level), each expected level with the headroom
 * that level keeps (level-headroom.ts: above a job the kept days foresaw, not
 * the jobs' whole rise again). Without a day of history, the
 * node is expected to stay unneeded as long as demand has already stayed below
 * what the pool holds without it, each level read with the headroom it keeps,
 * as the fit check reads it: with the full headroom above a job, every job of a
 * pool's first day "needed" the node it was 20 % above.
 *
 * Pure functions of data: the evaluator calls `drainPayoff` for each
 * candidate, in candidate order, and a refusal is a reason in the decision log.
 */
import type { Config } from '../config/index.js';
import { formatDuration } from './duration.js';
import { BUCKET_MINUTES, dailyOutlook, type DailyOutlook } from './daily-demand.js';
import { LEVEL_RISE_MINUTES, epochMinute } from './forecast.js';
import type { DemandSample, NodeStats } from './model.js';
import { listedGearCount } from './node-stats.js';
import { boughtWait, boughtWaitText, oneOffWait, oneOffWaitText, rentOwed } from './one-off-need.js';
import { type RecentReturns, dipHours, recentDipsText, recentReturns, recentReturnsText, returnsWithin } from './recent-returns.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/** The pays-off settings with one node-hour's price resolved for the pool and node (node-price.ts `nodeHourPrice`). */
export type PayoffConfig = Omit<Config['scaleDown']['payoff'], 'nodeHourPrice'> & { nodeHourPrice: number };

/**
 * The demand scale-down relies on: the highest level demand held for more
 * than (1 - `quantile`) of the last `windowMs`, and for more than `sustainMs`
 * (the scale-up's sustain window: a level held that long buys a node, so a
 * drain must not ignore it), never below `current`. Measured in time, not in
 * samples: each sample holds until the next one, so a 10-minute bucket
 * maximum of the kept history stands for its 10 minutes (counted as one
 * sample, it was the peak a scale-up had just bought a node for that its
 * drain then ignored).
 */
export function confidentDemand(
  history: readonly DemandSample[] | undefined,
  now: Date,
  current: number,
  windowMs: number,
  quantile: number,
  sustainMs = Infinity,
): number {
  const nowMinute = epochMinute(now);
  const from = nowMinute - Math.max(1, Math.ceil(windowMs / MINUTE_MS));
  const held: Array<[gears: number, minutes: number]> = [];
  let until = nowMinute + 1;
  let total = 0;
  for (let i = (history?.length ?? 0) - 1; i >= 0; i--) {
    const { 0: minute, 1: gears } = history![i]!;
    if (minute <= from) break;
    const minutes = Math.max(0, until - minute);
    until = Math.min(until, minute);
    if (minutes === 0) continue;
    held.push([gears, minutes]);
    total += minutes;
  }
  if (held.length === 0) return current;
  held.sort((a, b) => b[0] - a[0]);
  const ignored = Math.min((1 - quantile) * total, sustainMs / MINUTE_MS);
  let covered = 0;
  for (const [gears, minutes] of held) {
    covered += minutes;
    if (covered > ignored + 1e-9) return Math.max(current, gears);
  }
  return Math.max(current, held[held.length - 1]![0]);
}

/** `confidentDemand` with the pool's settings: what scale-down, its pays-off check and attrition all rely on. */
export function poolConfidentDemand(config: Pick<Config, 'scaleUp' | 'scaleDown'>, history: readonly DemandSample[] | undefined, now: Date, current: number): number {
  const { confidenceWindow, confidenceQuantile } = config.scaleDown.payoff;
  return confidentDemand(history, now, current, confidenceWindow, confidenceQuantile, config.scaleUp.sustain);
}

/** Moves of one node by what they restart, and their cost in dollars. */
export interface MoveCost {
  dollars: number;
  idle: number;
  sibling: number;
  disruptive: number;
}

/**
 * What moving every gear of a node costs. A node that reports `idleGears` and
 * `disruptiveGears` is charged by kind (the rest are siblings of a scaled
 * application); gears of unknown kind are charged as disruptive.
 */
export function moveCost(stats: Pick<NodeStats, 'activeGears' | 'idleGears' | 'disruptiveGears'>, weights: PayoffConfig['moveCost']): MoveCost {
  const gears = Math.max(0, stats.activeGears);
  const known = stats.disruptiveGears !== undefined || stats.idleGears !== undefined;
  const idle = known ? Math.min(gears, stats.idleGears ?? 0) : 0;
  const disruptive = known ? Math.min(gears - idle, stats.disruptiveGears ?? 0) : gears;
  const sibling = known && stats.disruptiveGears !== undefined ? gears - idle - disruptive : 0;
  const unknownAsDisruptive = known && stats.disruptiveGears === undefined ? gears - idle : 0;
  const all = { idle, sibling, disruptive: disruptive + unknownAsDisruptive };
  return { ...all, dollars: all.idle * weights.idle + all.sibling * weights.sibling + all.disruptive * weights.disruptive };
}

export interface Unneeded {
  /** Hours the node is expected to stay unneeded, at most the lookahead. */
  hours: number;
  /** When the forecast needs it again, if within the lookahead. */
  neededAt?: Date;
  /** The most the pool holds without the node at `neededAt`, which the forecast reaches (below a level it expects, `limitAt`'s). */
  reaches?: number;
  /** The level the forecast expects at `neededAt`. */
  expected?: number;
  basis: 'yesterday' | 'recent';
}

/**
 * The kept days' outlook at a confident demand (`dailyOutlook`), read once by a decision whose candidates all ask it
 * for the same hours; `outlook` undefined when no kept day has a sample at this hour.
 */
export interface KeptDays {
  outlook: DailyOutlook | undefined;
}

/**
 * The kept days as `drainPayoff` reads them for `config`: with `followLevelRise`, raised by today's level over the last
 * hour, not only its newest sample, as the scale-up's forecast reads them; with `followLevelFall`, lowered to today's
 * share of them when today stood below them all that hour.
 */
export function keptDaysFor(
  history: readonly DemandSample[] | undefined,
  now: Date,
  confident: number,
  config: Pick<PayoffConfig, 'followLevelRise'> & Partial<Pick<PayoffConfig, 'followLevelFall'>>,
): KeptDays {
  return {
    outlook: dailyOutlook(
      history ?? [],
      epochMinute(now),
      confident,
      config.followLevelRise ? LEVEL_RISE_MINUTES : undefined,
      config.followLevelFall ? LEVEL_RISE_MINUTES : undefined,
    ),
  };
}

/** What the pool holds without the node while demand stands at `gears`: with `limitAt`, what that level keeps, never less than `limit`. */
function heldAtLevel(limit: number, limitAt: ((expected: number) => number) | undefined, gears: number): number {
  return limitAt ? Math.max(limit, limitAt(gears)) : limit;
}

/**
 * How long demand is expected to stay below `limit` (the most the pool holds
 * without the node before it scales up again), from `confident` now; with
 * `limitAt`, each level (now, each past sample, each expected one) against what
 * the pool holds at that level, never less than `limit`.
 */
export function unneededFor(
  history: readonly DemandSample[] | undefined,
  now: Date,
  confident: number,
  limit: number,
  lookaheadMs: number,
  limitAt?: (expected: number) => number,
  keptDays: KeptDays = keptDaysFor(history, now, confident, { followLevelRise: false }),
): Unneeded {
  const samples = history ?? [];
  const nowMinute = epochMinute(now);
  const lookaheadMinutes = Math.floor(lookaheadMs / MINUTE_MS);
  const heldAt = (gears: number) => heldAtLevel(limit, limitAt, gears);
  if (confident >= heldAt(confident)) return { hours: 0, neededAt: now, basis: 'recent' };

  const { outlook } = keptDays;
  if (outlook) {
    let known = 0;
    let steps = 0;
    for (let t = BUCKET_MINUTES; t <= lookaheadMinutes; t += BUCKET_MINUTES) {
      steps++;
      const expected = outlook.at(t);
      if (expected === undefined) continue;
      known++;
      const held = heldAt(expected);
      if (expected >= held) return { hours: t / 60, neededAt: new Date(now.getTime() + t * MINUTE_MS), reaches: held, expected, basis: 'yesterday' };
    }
    if (known * 2 >= steps) return { hours: lookaheadMinutes / 60, basis: 'yesterday' };
  }

  // No usable day: it stays unneeded as long as it has been (the newest sample at or above the limit).
  let since = samples.length > 0 ? samples[0]![0] : nowMinute;
  for (let i = samples.length - 1; i >= 0; i--) {
    // heldAt never returns less than `limit`, so a sample below it cannot reach it: skip the level's headroom read (a hot path at 200 candidates).
    const gears = samples[i]![1];
    if (gears >= limit && gears >= heldAt(gears)) {
      since = samples[i]![0] + 1;
      break;
    }
  }
  const minutes = Math.min(lookaheadMinutes, Math.max(0, nowMinute - since));
  return { hours: minutes / 60, basis: 'recent' };
}

/**
 * The hours a drain is expected to save: until the kept days' demand, read at the hour, reaches `rebuy`, the level
 * at which a scale-up buys the node back. "Needed again" (`unneededFor`) is a safety judgement and reads demand early
 * (each day's highest half an hour either side) against the drain's own level; counting the saving the same way
 * charged every trough up to an hour it does save (on a shallow daily trough, about a tenth of it), so the nights
 * such a trough frees were refused. Never below `unneeded.hours`; on recent demand it is `unneeded.hours`.
 */
export function savingHours(
  history: readonly DemandSample[] | undefined,
  now: Date,
  confident: number,
  rebuy: number,
  lookaheadMs: number,
  unneeded: Unneeded,
  keptDays: KeptDays = keptDaysFor(history, now, confident, { followLevelRise: false }),
): number {
  if (unneeded.basis !== 'yesterday' || unneeded.neededAt === undefined) return unneeded.hours;
  const { outlook } = keptDays;
  if (!outlook) return unneeded.hours;
  const lookaheadMinutes = Math.floor(lookaheadMs / MINUTE_MS);
  for (let t = BUCKET_MINUTES; t <= lookaheadMinutes; t += BUCKET_MINUTES) {
    const expected = outlook.at(t, 0);
    if (expected !== undefined && expected >= rebuy) return Math.max(unneeded.hours, t / 60);
  }
  return lookaheadMinutes / 60;
}

export interface PayoffInput {
  history: readonly DemandSample[] | undefined;
  now: Date;
  /** `confidentDemand` of the pool. */
  confident: number;
  /** Most gears the pool holds without the node before it scales up again. */
  limit: number;
  /** Which setting sets `limit` (the target or the headroom), in words. */
  limitSetBy?: string;
  /** Gears at which a scale-up would buy the node back (wanted.ts `rebuyLevel`); `limit` when not given. */
  rebuy?: number;
  /** The pool's gear slots without the node: a refusal says how many of them the level it reaches keeps free. */
  capacityAfter?: number;
  /** Why `limitAt(expected)` keeps what it keeps free, in words (level-headroom.ts `why`, or the target). */
  limitAtWhy?: (expected: number) => string | undefined;
  stats: Pick<NodeStats, 'activeGears' | 'idleGears' | 'disruptiveGears' | 'gears'>;
  /** When the pool last scaled up for demand, not a replacement (one-off-need.ts `boughtWait`). */
  lastDemandScaleUpAt?: string;
  config: PayoffConfig;
  /** `recentReturns` of `history` at a level (with the lookahead), if the caller keeps them for its candidates; computed here if not. */
  returnsAt?: (level: number) => RecentReturns | undefined;
  /** The most gears the pool holds without the node when the kept days expect a level (level-headroom.ts); `limit` when not given. */
  limitAt?: (expected: number) => number;
  /** `keptDaysFor(history, now, confident, config)`, if the caller reads it once for its candidates; read here if not. */
  keptDays?: KeptDays;
  /** `levelOutlook` of these levels, if the caller reads it once for candidates that leave the same capacity; read here if not. */
  outlook?: LevelOutlook;
}

/** How long the node stays unneeded, the hours its drain saves, and the refusal these levels give whatever the node. */
export interface LevelOutlook {
  unneeded: Unneeded;
  /** What the unneeded time was read from, as the decision log words it. */
  source: string;
  hours: number;
  /** Needed now, or again within the horizon: refused before its moves are priced. */
  refusal?: { reason: string; pending: boolean };
}

/** What `drainPayoff` reads of the history for a drain's levels: the same for every candidate that leaves them. */
export function levelOutlook(input: Omit<PayoffInput, 'stats' | 'outlook'>): LevelOutlook {
  const { config, now } = input;
  const keptDays = input.keptDays ?? keptDaysFor(input.history, now, input.confident, config);
  const unneeded = unneededFor(input.history, now, input.confident, input.limit, config.lookahead, input.limitAt, keptDays);
  const hours = savingHours(input.history, now, input.confident, input.rebuy ?? input.limit, config.lookahead, unneeded, keptDays);
  const limitNow = heldAtLevel(input.limit, input.limitAt, input.confident);
  const source = sourceText(unneeded, keptDays);
  if (input.confident >= limitNow) {
    // Above the pool's limit the level's own margin held it: its words, when the caller has them.
    const setBy = limitNow > input.limit ? (input.limitAtWhy?.(input.confident) ?? 'with the headroom kept above that level') : input.limitSetBy;
    return { unneeded, source, hours, refusal: { reason: `needed now: recent demand ${Math.round(input.confident)} gears >= the ${Math.round(limitNow)} the pool holds without it${setBy ? ` (${setBy})` : ''}`, pending: false } };
  }
  // On recent demand alone the node's own quiet time is the only evidence: a shorter wait than the forecast's horizon.
  const horizon = unneeded.basis === 'recent' ? Math.min(config.recentHorizon, config.horizon) : config.horizon;
  if (unneeded.hours * HOUR_MS < horizon) {
    const when = unneeded.neededAt ? `needed again in ${formatDuration(Math.round(unneeded.hours * 60) * MINUTE_MS)} (${source} reaches ${reachedText(unneeded.reaches ?? input.limit, input.capacityAfter, keptFreeWhy(input, unneeded))})` : `unneeded for only ${formatDuration(Math.round(unneeded.hours * 60) * MINUTE_MS)} so far (${source})`;
    return { unneeded, source, hours, refusal: { reason: `${when}, within the ${formatDuration(horizon)} horizon`, pending: unneeded.neededAt === undefined } };
  }
  return { unneeded, source, hours };
}

/**
 * The level the forecast reaches, and how far below the slots left it is: "reaches 1134 gears" alone, on a pool of 18
 * nodes of 100, reads as if 12 nodes would do; the 566 the pool keeps free above that level are the rest.
 */
function reachedText(reaches: number, capacityAfter: number | undefined, why: string | undefined): string {
  const level = Math.round(reaches);
  if (capacityAfter === undefined || capacityAfter <= level) return `${level} gears`;
  return `${level} gears, ${Math.round(capacityAfter) - level} below the ${Math.round(capacityAfter)} slots without it${why ? `, ${why}` : ''}`;
}

/** What sets the level a refusal's forecast reached: the level's own margin (`limitAt`), else the pool's limit. */
function keptFreeWhy(input: Pick<PayoffInput, 'limit' | 'limitSetBy' | 'limitAtWhy'>, unneeded: Unneeded): string | undefined {
  if (unneeded.reaches === undefined || unneeded.reaches <= input.limit || unneeded.expected === undefined) return input.limitSetBy;
  return input.limitAtWhy?.(unneeded.expected);
}

/** "yesterday's demand", with the share it was followed at when today ran below it (a fall or a level shift). */
function sourceText(unneeded: Unneeded, keptDays: KeptDays): string {
  if (unneeded.basis !== 'yesterday') return 'recent demand';
  const scale = keptDays.outlook?.days[0]?.scale ?? 1;
  return scale < 1 ? `yesterday's demand at today's ${Math.round(scale * 100)} % of it` : "yesterday's demand";
}

export type PayoffVerdict =
  | { pays: true; text: string; unneeded: Unneeded; cost: MoveCost }
  /** `pending`: the forecast does not need the node, but its saving is not due yet (not enough evidence, or moves that cost too much). */
  | { pays: false; reason: string; unneeded: Unneeded; cost: MoveCost; pending: boolean };

/** Whether draining the node pays, with the sentence that says why (or why not). */
export function drainPayoff(input: PayoffInput): PayoffVerdict {
  const { config, now } = input;
  const { unneeded, source, hours, refusal } = input.outlook ?? levelOutlook(input);
  const cost = moveCost(input.stats, config.moveCost);
  if (refusal) return { pays: false, ...refusal, unneeded, cost };
  const saving = hours * config.nodeHourPrice;
  // Worded only for the verdicts that name it: most candidates of a big pool are refused before.
  const costText = () => `${money(cost.dollars)} for ${costParts(cost)}`;
  // Rises that recur, but not daily (bursts hours apart, noise at a node boundary): the pool's own spells below the
  // level at which the node is bought back say it is needed again within the horizon. Needed, so not closed for
  // attrition (closing it as well gave no fewer moves on held-out shapes, and more node-hours). An empty node owes no move;
  // one that holds only idle gears (out of the agent's activeGears, in its list) still owes their moves.
  const level = input.rebuy ?? input.limit;
  const returnsAt = input.returnsAt ?? ((at: number) => recentReturns(input.history ?? [], now, at, config.horizon, config.lookahead));
  const owesMoves = input.stats.activeGears > 0 || listedGearCount(input.stats) > 0;
  const returns = (config.recentReturns || config.recentDips) && owesMoves ? returnsAt(level) : undefined;
  if (config.recentReturns && returnsWithin(returns)) return { pays: false, reason: recentReturnsText(returns, level, config.horizon), unneeded, cost, pending: false };
  // Without a kept day the recent horizon above is the wait (unneededFor).
  const rent = { factor: config.oneOffRentFactor, nodeHourPrice: config.nodeHourPrice };
  const wait = unneeded.basis === 'yesterday' && oneOffWait({ history: input.history, now, limit: input.limit, costDollars: cost.dollars, config: rent });
  if (wait) return { pays: false, reason: oneOffWaitText(wait, config.oneOffRentFactor), unneeded, cost, pending: true };
  const bought = boughtWait({ ...(input.lastDemandScaleUpAt ? { lastDemandScaleUpAt: input.lastDemandScaleUpAt } : {}), now, costDollars: cost.dollars, config: rent });
  if (bought) return { pays: false, reason: boughtWaitText(bought, config.oneOffRentFactor), unneeded, cost, pending: true };
  const hoursText = `${hours.toFixed(1)}h unneeded (${source})`;
  if (saving < config.factor * cost.dollars) {
    return { pays: false, reason: `does not pay: ${hoursText} saves ${money(saving)} at ${perHour(config.nodeHourPrice)} < ${config.factor} x ${costText()}`, unneeded, cost, pending: true };
  }
  // The kept days say the node stays unneeded, but rises that are not daily are not on them: the pool's own dips below
  // the level that buys it back, as old as this one, say how long it is expected to stay unneeded (recent-returns.ts).
  // At most until the idle rent since demand last needed the level pays its moves (rent-or-buy, as one-off-need.ts): a
  // pool whose dips mislead it then pays at most twice the better of draining at once and keeping the node.
  const byDips = config.recentDips ? dipHours(returns) : undefined;
  const rentPaid = returns !== undefined && rentOwed(returns.ageMinutes / 60, cost.dollars, rent) === undefined;
  if (byDips !== undefined && !rentPaid && byDips < hours && byDips * config.nodeHourPrice < config.factor * cost.dollars) {
    return { pays: false, reason: `does not pay by recent dips: ${recentDipsText(returns!, level)} saves ${money(byDips * config.nodeHourPrice)} at ${perHour(config.nodeHourPrice)} < ${config.factor} x ${costText()}`, unneeded, cost, pending: false };
  }
  return { pays: true, text: `pays: ${hoursText} saves ${money(saving)} at ${perHour(config.nodeHourPrice)} >= ${config.factor} x ${costText()}`, unneeded, cost };
}

function costParts(cost: MoveCost): string {
  const parts: string[] = [];
  if (cost.disruptive > 0) parts.push(`${cost.disruptive} disruptive`);
  if (cost.sibling > 0) parts.push(`${cost.sibling} sibling`);
  if (cost.idle > 0) parts.push(`${cost.idle} idle`);
  return parts.length === 0 ? 'no moves' : `${parts.join(', ')} moves`;
}

function money(dollars: number): string {
  return `$${dollars.toFixed(2)}`;
}

/** A node-hour's price as the operator wrote it or the list shows it ($0.192/h, $0.0832/h). */
function perHour(dollars: number): string {
  // Every refused candidate's reason names it: formatted once a price, not once a candidate (a replay's 1 s in 40).
  let text = perHourTexts.get(dollars);
  if (text === undefined) perHourTexts.set(dollars, (text = `$${Number(dollars.toPrecision(4))}/h`));
  return text;
}

const perHourTexts = new Map<number, string>();
