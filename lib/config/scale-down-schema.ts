/**
 * The `scaleDown` section of the configuration schema (schema.ts): when a
 * node is drained, how its gears move, when a drain pays (payoff) and the
 * disruption budget (budget-schema.ts).
 */
import * as z from '../zod.js';
import { budgetSchema } from './budget-schema.js';
import { dur, duration, expiryDuration, primitives } from './schema-primitives.js';

export const CANDIDATE_STRATEGIES = ['least-disruption', 'least-gears', 'least-utilized', 'oldest', 'newest'] as const;

export function buildScaleDownSchema() {
  const { fraction, int } = primitives();

  /** When a drain pays (lib/domain/payoff.ts): its expected saving against the tenant restarts it costs. */
  const payoffSchema = z.strictObject({
    enabled: z._default(z.boolean(), true),
    /** The saving must be at least this many times the disruption cost (Karpenter's Balanced policy uses 2). */
    factor: z._default(z.number().check(z.gte(0)), 2),
    /** A node the forecast needs again sooner than this is not drained. */
    horizon: dur('4h'),
    /**
     * With no kept day to say when the node is needed again (a pool's first day), how long it must have stood unneeded
     * before it may drain (at most `horizon`). Chosen on the suite and held-out seeds 1, 2 and 24 (docs/HISTORY.md, session 22):
     * 4h held a bursty pool's first-day nodes for hours after each burst; 2h costs a few more first-day moves.
     */
    recentHorizon: dur('2h'),
    /** How far ahead the saving is counted (at most a day: each kept day of demand covers the coming 24 hours). */
    lookahead: z.prefault(duration({ positive: true }).check(z.refine((ms) => ms <= 86_400_000, 'must be at most 24h')), '24h'),
    /**
     * What one node-hour costs, in dollars, for every pool without its own `pools[].nodeHourPrice`. Unset: a spot
     * pool's spot price as the evaluator last read it, else each node's on-demand price by its instance type, as
     * last read for the region or as the built-in list has it (lib/domain/node-price.ts), else 0.192 (m5.xlarge, us-east-1).
     */
    nodeHourPrice: z.optional(z.number().check(z.gte(0))),
    /** Cost of one move, in dollars, by what it restarts; gears whose kind the node does not report count as `disruptive`. */
    moveCost: z.prefault(
      z.strictObject({
        idle: z._default(z.number().check(z.gte(0)), 0),
        // Chosen on the whole replay suite (8 traces) and held-out shapes of seeds 1 and 2: at these weights an m5.xlarge
        // ($0.192/h) of about 90 gears (30 restarts, 25 siblings) pays when it stays unneeded about 8 hours (a node of twice
        // the gears pays as soon only at twice the price: docs/HISTORY.md, session 36), so nights, weekends and
        // shallow daily troughs are drained and short dips are not (0.006 / 0.03, about 11 hours, left 27 %-deep daily
        // troughs and weekday nights undrained; 0.002 / 0.01 moved 1.5-6.6x clairvoyant-4h).
        sibling: z._default(z.number().check(z.gte(0)), 0.0045),
        disruptive: z._default(z.number().check(z.gte(0)), 0.0225),
      }),
      {},
    ),
    /** Scale-down judges demand by this quantile over time of the last `confidenceWindow` (never ignoring a level held longer than scaleUp.sustain), not by the newest sample. */
    confidenceWindow: dur('1h', { positive: true }),
    confidenceQuantile: z._default(fraction, 0.95),
    /**
     * After a one-off rise (not on the kept days), and after the pool's last scale-up, a node is drained only once its
     * idle hours since then cost this many times its moves, closed for attrition meanwhile (lib/domain/one-off-need.ts);
     * 0: no wait.
     */
    oneOffRentFactor: z._default(z.number().check(z.gte(0)), 1),
    /**
     * A node is not drained while most of the pool's recent spells below the level that buys it back, as long as the
     * current one so far, ended within `horizon`, the current one counted as one that did not (lib/domain/recent-returns.ts):
     * rises that recur but not daily (bursts hours apart, noise at a node boundary).
     */
    recentReturns: z._default(z.boolean(), true),
    /**
     * The saving is counted at most as long as the pool's recent spells below that level, as old as the current one,
     * typically (their median) lasted more, until the node's idle rent pays `oneOffRentFactor` x its moves
     * (lib/domain/recent-returns.ts): the kept days do not show rises that are not daily.
     */
    recentDips: z._default(z.boolean(), true),
    /**
     * The kept days are raised to today's level over the last hour (how far today's buckets stood above theirs, as the
     * scale-up's forecast reads them), not only to today's newest demand: a dip in a day running above yesterday does
     * not make yesterday's quieter evening the outlook (lib/domain/daily-demand.ts).
     */
    followLevelRise: z._default(z.boolean(), true),
    /**
     * The kept days are lowered to today's share of them when today stood below each of them at every 10-minute bucket
     * of the last hour (the highest share there): a load falling a few percent a day is followed, a burst that only
     * yesterday had is not (lib/domain/daily-demand.ts).
     */
    followLevelFall: z._default(z.boolean(), true),
    /** Close the next node to drain to new gears early, so departing gears empty it (lib/domain/attrition.ts). */
    attrition: z._default(z.boolean(), true),
    /**
     * Attrition also closes the nodes scale-down would drain while it waits out `unneededTime` or a delay
     * (`delayAfterAdd`, `delayAfterDelete`, `delayAfterFailure`): a node bought for a blip joins after it, empty, and
     * the broker puts every new gear on it (the emptiest) until the wait is over, gears its drain then moves.
     */
    attritionWhileDelayed: z._default(z.boolean(), true),
    /**
     * Closing leaves the open nodes free slots for this quantile of the rises the pool's headroom measured (1: the
     * largest), if more than the headroom: a closed node's slots reach a gear only once the next evaluation reopens it,
     * so a jump the headroom does not cover waits beside them (lib/domain/attrition.ts). 0: the headroom alone.
     */
    attritionReserve: z._default(fraction, 1),
  });

  const scaleDownSchema = z.strictObject({
    enabled: z._default(z.boolean(), true),
    utilizationThreshold: z._default(fraction, 0.93),
    unneededTime: dur('5m'),
    delayAfterAdd: dur('10m'),
    // One minute, not five: a release already waits for its drain, and five quiet minutes after each one held a pool that
    // a burst left 160 nodes too big at one release per 5 minutes (bursts at 20,000 gears: 1.150 -> 1.005 x c-4h). As
    // cluster-autoscaler, whose default is its scan interval.
    delayAfterDelete: dur('1m'),
    delayAfterFailure: dur('30s'),
    /** The old name of budget.maxDraining (a count); unset: the budget's. */
    maxConcurrentDrains: z.optional(int(1)),
    maxConcurrentMoves: z._default(int(1), 3),
    drainTimeout: dur('30m', { positive: true }),
    /** Attempts of one gear move before the drain gives up on that gear (and aborts). */
    moveAttempts: z._default(int(1, 10), 3),
    /** Backoff before a failed move is tried again; doubles per attempt (capped at 10x). */
    moveRetryDelay: dur('30s'),
    /** `preferred`: gears of one application go to different nodes when there is room; `required`: a drain that cannot keep them apart aborts. */
    antiAffinity: z._default(z.enum(['preferred', 'required']), 'preferred'),
    /** How often an invocation checks moves in flight while it has time left. */
    movePollInterval: dur('5s', { positive: true }),
    /** Request a replacement node (through the pool lease, as the evaluator does) when an interrupted node's gears do not fit elsewhere. */
    replaceInterrupted: z._default(z.boolean(), true),
    candidateStrategy: z._default(z.enum(CANDIDATE_STRATEGIES), 'least-disruption'),
    /**
     * Renew nodes drifted from their pool's template (lib/domain/renewal.ts): a replacement first, then the drifted
     * node's drain, a batch at a time a pool (half of maxDraining), within the disruption budget. Off: every renewal restarts
     * the node's tenants.
     */
    renewDrifted: z._default(z.boolean(), false),
    /**
     * Renew nodes nodescaler launched this long ago (Karpenter's expireAfter; lib/domain/expiry.ts), as drifted nodes
     * are renewed: a replacement first, within the disruption budget. Unset or `never` (the default): nodes live until
     * scale-down drains them; `pools[].expireAfter` overrides it. At least 1h: every renewal restarts the node's tenants.
     */
    expireAfter: z.optional(expiryDuration()),
    /**
     * How long past its expireAfter an expired node's renewal still honours the gear cap (budget.maxMovesPerGear;
     * lib/domain/renewal-grace.ts): after it, the renewal moves gears at their limit, as Karpenter's
     * terminationGracePeriod bounds what holds an expired node. Do-not-move gears still hold it. Unset: the cap holds
     * expired nodes for as long as it lasts (up to 7 days past expireAfter).
     */
    expireGrace: z.optional(duration()),
    /**
     * As expireGrace, for drifted nodes (with renewDrifted): how long after a node was first seen drifted (the
     * evaluator records when the pool's template changed; lib/domain/renewal-grace.ts) its renewal still honours the
     * gear cap. A patched image is usually more urgent than a routine expiry. Unset: the cap holds drifted nodes for
     * as long as it lasts (up to 7 days).
     */
    driftGrace: z.optional(duration()),
    payoff: z.prefault(payoffSchema, {}),
    /** The disruption budget (lib/config/budget-schema.ts); a pool's `budget` overrides it key by key. */
    budget: z.prefault(budgetSchema(), {}),
  });

  return scaleDownSchema;
}
