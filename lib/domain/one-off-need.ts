/**
 * After a one-off rise (a burst), a node waits before it is drained until the
 * hours it has already stood unneeded paid for its moves: rent-or-buy (the
 * ski-rental rule), with the drain's moves as the price of "buying".
 *
 * Why: the pays-off check (payoff.ts) believes the kept days, and a rise that
 * did not recur on them is expected never to come back, so the nodes a burst
 * bought are drained as soon as it ends, and bought again when the next burst
 * comes an hour or three later; bursts come unannounced, and their gears are
 * moved each time. A rule that waits until the node's idle rent equals
 * `factor` x its moves' cost pays at most `1 + factor` times the better of
 * draining at once and keeping the node, whenever the next rise comes (for
 * `factor` >= 1), and it drains a node that emptied (attrition, departing
 * gears) at once: an empty node's moves cost nothing.
 *
 * The same wait follows the pool's last scale-up (`boughtWait`), whatever the kept days say.
 *
 * It applies only to a need that did not recur: demand at the node's last
 * need stood more than `LEVEL_SHIFT_MARGIN` above a kept day at about that
 * hour (days of one cycle differ by less, daily-demand.ts). A daily crest,
 * which the kept days had too, is the forecast's to judge, and a pool with no
 * kept day has the pays-off check's own wait (`recentHorizon`, on recent demand).
 *
 * Pure functions of data.
 */
import { BUCKET_MINUTES, DAYS_KEPT, LEVEL_SHIFT_MARGIN, RECUR_WINDOW_MINUTES, highestBetween } from './daily-demand.js';
import { formatDuration } from './duration.js';
import { epochMinute } from './forecast.js';
import type { DemandSample } from './model.js';

const DAY_MINUTES = 24 * 60;
const MINUTE_MS = 60_000;

/** The newest sample at or above `limit`: its minute (the end of a coarse bucket) and gears; undefined if none. */
export function lastNeed(samples: readonly DemandSample[], limit: number): { minute: number; gears: number } | undefined {
  for (let i = samples.length - 1; i >= 0; i--) {
    const { 0: minute, 1: gears } = samples[i]!;
    if (gears < limit) continue;
    // A coarse bucket's maximum may be from any of its minutes: the latest is the safe side.
    const next = samples[i + 1];
    const end = next && next[0] - minute >= BUCKET_MINUTES ? minute + BUCKET_MINUTES - 1 : minute;
    return { minute: end, gears };
  }
  return undefined;
}

/**
 * Whether `gears` at `minute` recurred: each kept day with samples then had at least `(1 - LEVEL_SHIFT_MARGIN) x gears`
 * within `RECUR_WINDOW_MINUTES` of that hour, as the forecast calls a rise seasonal only when it recurred on each kept
 * day (daily-demand.ts). False when no kept day has a sample there.
 */
export function needRecurred(samples: readonly DemandSample[], minute: number, gears: number): boolean {
  const floor = (1 - LEVEL_SHIFT_MARGIN) * gears;
  let known = 0;
  for (let daysAgo = 1; daysAgo <= DAYS_KEPT; daysAgo++) {
    const at = minute - daysAgo * DAY_MINUTES;
    const highest = highestBetween(samples, at - RECUR_WINDOW_MINUTES, at + RECUR_WINDOW_MINUTES);
    if (highest === undefined) continue;
    if (highest < floor) return false;
    known++;
  }
  return known > 0;
}

export interface OneOffWaitInput {
  history: readonly DemandSample[] | undefined;
  now: Date;
  /** Most gears the pool holds without the node. */
  limit: number;
  /** What the node's moves cost, in dollars (payoff.ts moveCost). */
  costDollars: number;
  /** `factor`: the rent owed is this many times the moves' cost (0: no wait). */
  config: { factor: number; nodeHourPrice: number };
}

export interface OneOffWait {
  /** Hours since the node was last needed. */
  idleHours: number;
  /** Hours of idle rent that pay `factor` x its moves. */
  waitHours: number;
  /** Demand at the last need. */
  neededGears: number;
}

/**
 * The wait still owed by a node whose last need was a one-off rise, or
 * undefined when it owes none (never needed in the kept history, a need that
 * recurred, or rent already paid).
 */
export function oneOffWait(input: OneOffWaitInput): OneOffWait | undefined {
  const { config } = input;
  const samples = input.history ?? [];
  const need = lastNeed(samples, input.limit);
  if (!need || needRecurred(samples, need.minute, need.gears)) return undefined;
  return rentOwed(Math.max(0, epochMinute(input.now) - need.minute) / 60, input.costDollars, config, need.gears);
}

/**
 * The rent-or-buy rule itself: a node idle `idleHours` owes a wait until its idle rent pays `factor` x its moves'
 * cost; undefined once paid (or when the moves cost nothing).
 */
export function rentOwed(idleHours: number, costDollars: number, config: { factor: number; nodeHourPrice: number }, neededGears = 0): OneOffWait | undefined {
  const waitHours = config.nodeHourPrice > 0 ? (config.factor * costDollars) / config.nodeHourPrice : 0;
  return idleHours >= waitHours ? undefined : { idleHours, waitHours, neededGears };
}

/** The refusal's sentence. */
export function oneOffWaitText(wait: OneOffWait, factor: number): string {
  const hours = (h: number) => formatDuration(Math.round(h * 60) * MINUTE_MS);
  return (
    `a one-off rise (${Math.round(wait.neededGears)} gears, not on the kept days) needed it ${hours(wait.idleHours)} ago: ` +
    `drained once its idle rent pays ${factor} x its moves (${hours(wait.waitHours)}, ${hours(wait.waitHours - wait.idleHours)} to go)`
  );
}

export interface BoughtWaitInput {
  /** When the pool last bought nodes for demand (its last scale-up that was not a replacement), if ever. */
  lastDemandScaleUpAt?: string;
  now: Date;
  /** What the node's moves cost, in dollars (payoff.ts moveCost). */
  costDollars: number;
  config: { factor: number; nodeHourPrice: number };
}

/**
 * The wait still owed by a node of a pool that bought nodes recently: the same rent-or-buy as `oneOffWait`, with the
 * pool's last scale-up as its last need. A scale-up is the pool saying it needs more nodes; when the pays-off check
 * calls a node unneeded minutes later (a forecast rise that did not come, noise at a node boundary), the two readings
 * disagree, and moving the node's gears at once is the ski-rental's worst case: the nodes the scale-up bought were
 * drained full, each gear moved, right after they were bought. Waiting until the idle rent since the scale-up pays
 * `factor` x the moves bounds that loss, and the refusal is pending, so attrition may close the node meanwhile and
 * departing gears make its drain cheaper. An empty node owes no wait; undefined when none is owed.
 */
export function boughtWait(input: BoughtWaitInput): OneOffWait | undefined {
  if (input.lastDemandScaleUpAt === undefined || input.costDollars <= 0) return undefined;
  const boughtAt = Date.parse(input.lastDemandScaleUpAt);
  if (!Number.isFinite(boughtAt)) return undefined;
  return rentOwed(Math.max(0, input.now.getTime() - boughtAt) / 3_600_000, input.costDollars, input.config);
}

/** The refusal's sentence for `boughtWait`. */
export function boughtWaitText(wait: OneOffWait, factor: number): string {
  const hours = (h: number) => formatDuration(Math.round(h * 60) * MINUTE_MS);
  return (
    `the pool bought nodes ${hours(wait.idleHours)} ago (its last scale-up): drained once its idle rent since pays ${factor} x its moves ` +
    `(${hours(wait.waitHours)}, ${hours(wait.waitHours - wait.idleHours)} to go; attrition may empty it meanwhile)`
  );
}
