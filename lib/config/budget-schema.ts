/**
 * The disruption budget's part of the configuration schema
 * (`scaleDown.budget`, and a pool's own `budget` overriding it key by key).
 * A gear move restarts a tenant's gear, so scale-down is bounded the way
 * Karpenter's disruption budgets bound consolidation: how many nodes drain at
 * once, how many drains start an hour, how often one gear may be moved in a
 * rolling week, when scale-down may start at all, and which applications are
 * never moved for it. The rules themselves live in lib/domain/budget.ts.
 */
import { parseDuration } from '../domain/duration.js';
import { MAX_SCHEDULE_DURATION, parseCron } from '../domain/schedule.js';
import * as z from '../zod.js';

export const MAX_DRAINING_MESSAGE = 'expected a number of nodes (1 or more) or a percentage of the pool such as "10%"';

/** `maxDraining` as written: a count of nodes, or a share of the pool's nodes. */
export type MaxDraining = { nodes: number } | { percent: number };

/** A count of nodes (1 or more) or a percentage of the pool's nodes (`"10%"`); also scaleUp.maxNodesPerDecision's form. */
export function countOrPercent() {
  return z.pipe(
    z.union([z.number(), z.string()], { error: MAX_DRAINING_MESSAGE }),
    z.transform((value: number | string, ctx): MaxDraining => {
      if (typeof value === 'number') {
        if (Number.isInteger(value) && value >= 1) return { nodes: value };
      } else {
        const match = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(value);
        const percent = match ? Number(match[1]) : NaN;
        if (percent > 0 && percent <= 100) return { percent };
      }
      ctx.issues.push({ code: 'custom', message: MAX_DRAINING_MESSAGE, input: value });
      return z.NEVER;
    }),
  );
}

/** A scale-down window: scale-down may start from each time `cron` (UTC) matches, for `for`. */
function windowSchema() {
  return z.strictObject({
    cron: z.string().check(
      z.superRefine((text, ctx) => {
        const cron = parseCron(text);
        if (typeof cron === 'string') ctx.addIssue({ code: 'custom', message: `invalid cron (UTC minute hour day month weekday): ${cron}`, input: text });
      }),
    ),
    for: z.pipe(
      z.string({ error: 'expected a duration like 30s, 10m, 1h' }),
      z.transform((text: string, ctx) => {
        const ms = parseDuration(text);
        if (ms === undefined || ms <= 0 || ms > MAX_SCHEDULE_DURATION) {
          ctx.issues.push({ code: 'custom', message: 'expected a duration from 1m to 7d, like 8h', input: text });
          return z.NEVER;
        }
        return ms;
      }),
    ),
  });
}

function budgetKeys() {
  const int = (min: number) => z.int().check(z.gte(min));
  return {
    /** Nodes of the pool draining at once: a count, or a percentage of the pool's nodes (rounded up, at least 1). */
    maxDraining: countOrPercent(),
    /** Drains a pool may start in any rolling hour; unset: no hourly limit. */
    maxDrainsPerHour: int(1),
    /** Times one gear may be moved by scale-down in a rolling 7 days; a node holding a gear at the limit is not a candidate. */
    maxMovesPerGear: int(1),
    /** When scale-down may start (UTC cron + duration); empty: at any time. */
    windows: z.array(windowSchema()),
    /**
     * When a renewal of drifted or expired nodes may start, within `windows` (as Karpenter's budgets per disruption
     * reason): Sunday nights for a rollout, while scale-down saves hosts every night. Empty: whenever `windows` allows.
     */
    renewalWindows: z.array(windowSchema()),
    /** Applications whose gears scale-down never moves (an operator's or an urgent drain still does). */
    doNotMoveApps: z.array(z.string().check(z.minLength(1, 'must not be empty'))),
  };
}

/** `scaleDown.budget`: every key has its default. */
export function budgetSchema() {
  const keys = budgetKeys();
  return z.strictObject({
    maxDraining: z.optional(keys.maxDraining),
    maxDrainsPerHour: z.optional(keys.maxDrainsPerHour),
    maxMovesPerGear: z._default(keys.maxMovesPerGear, 2),
    windows: z._default(keys.windows, []),
    renewalWindows: z._default(keys.renewalWindows, []),
    doNotMoveApps: z._default(keys.doNotMoveApps, []),
  });
}

/** A pool's `budget`: any key of `scaleDown.budget`, replacing the global value for that pool. */
export function poolBudgetSchema() {
  const keys = budgetKeys();
  return z.strictObject({
    maxDraining: z.optional(keys.maxDraining),
    maxDrainsPerHour: z.optional(keys.maxDrainsPerHour),
    maxMovesPerGear: z.optional(keys.maxMovesPerGear),
    windows: z.optional(keys.windows),
    renewalWindows: z.optional(keys.renewalWindows),
    doNotMoveApps: z.optional(keys.doNotMoveApps),
  });
}

/**
 * `scaleDown.maxConcurrentDrains` is the old name of `scaleDown.budget.maxDraining`
 * (a count): still read alone, refused next to the new key so the two cannot disagree.
 */
export function legacyDrainsIssue(scaleDown: Record<string, unknown> | undefined): string | undefined {
  const budget = scaleDown?.budget;
  const hasNew = budget !== null && typeof budget === 'object' && (budget as Record<string, unknown>).maxDraining !== undefined;
  if (scaleDown?.maxConcurrentDrains !== undefined && hasNew) {
    return 'scaleDown.maxConcurrentDrains is the old name of scaleDown.budget.maxDraining: give only scaleDown.budget.maxDraining';
  }
  return undefined;
}
