/**
 * The `scaleUp` section of the configuration schema (schema.ts): when a pool
 * is full enough to add nodes, how many, and how the provisioner backs off.
 */
import * as z from '../zod.js';
import { countOrPercent } from './budget-schema.js';
import { dur, duration, primitives } from './schema-primitives.js';

export function buildScaleUpSchema() {
  const { fraction, int } = primitives();

  const forecastSchema = z.strictObject({
    enabled: z._default(z.boolean(), true),
    /** How much history the trend uses. */
    window: dur('30m', { positive: true }),
    /**
     * The trend projects only the part of its slope this many standard errors above zero: noise in the window fits
     * a slope too, and the projection multiplies it by the lookahead (0: the slope as fitted). Chosen on the suite at
     * boot delays of 2 and 10 minutes and four held-out seeds (docs/HISTORY.md, session 20).
     */
    trendConfidence: z._default(z.number().check(z.gte(0)), 2),
    /** How far ahead to look; unset = the boot delay of a new node. */
    lookahead: z.optional(duration()),
    dailySeasonality: z._default(z.boolean(), true),
    /** Assumed time from a scale-up decision to a node taking gears, until one has been observed. */
    bootDelay: dur('3m', { positive: true }),
  });

  const scaleUpSchema = z.strictObject({
    // Gear slots are a hard, known capacity (max_active_gears), so pools run full: the forecast and
    // headroomGears, not a wide margin, keep room for what comes during a boot (tuned on the Azure 2019 replay).
    threshold: z._default(fraction, 0.98),
    target: z._default(fraction, 0.96),
    sustain: dur('2m'),
    headroomGears: z._default(int(0), 30),
    /** Headroom sized from the pool's history (lib/domain/headroom.ts) instead of headroomGears, once it covers minHistory. */
    observedHeadroom: z.prefault(
      z.strictObject({
        enabled: z._default(z.boolean(), true),
        /** Quantile of the rises above the previous hour's highest demand within one boot delay. */
        quantile: z._default(fraction, 0.95),
        /** History needed (measured rises, one per 5 minutes) before it replaces headroomGears. */
        minHistory: dur('6h', { positive: true }),
        /**
         * What a scale-up buys on top of demand now counts only the rises measured from a standing at least as high,
         * against demand's median over this window, if less ('0m': every rise counts). What the pool keeps is the full
         * headroom either way. Chosen on the suite and both held-out families (docs/HISTORY.md, session 24).
         */
        elevationWindow: dur('4h'),
      }),
      {},
    ),
    maxNodeProvisionTime: dur('15m', { positive: true }),
    /**
     * A pool full again after a full-pool scale-up doubles (lib/domain/scale-up.ts); false: it adds what it sees, round
     * after round. Off by default: on the whole suite it cut waiting on 5x bursts but cost node-hours and moves on the
     * daily cycles (README, "The trace suite"); a pool whose gears arrive in bursts may turn it on.
     */
    doubleWhenFull: z._default(z.boolean(), false),
    /**
     * While gears wait and keep arriving, a scale-up also buys the gears their pace brings for as long again as they
     * have waited, at most one boot delay (lib/domain/waiting.ts `waitingRise`): a crowd that outran one boot keeps
     * arriving during the next. Off by default (docs/HISTORY.md, session 30).
     */
    waitingRise: z._default(z.boolean(), false),
    /** Most nodes one decision adds: a count, or a share of the pool ("10%", rounded up); unset: 10. */
    maxNodesPerDecision: z.optional(countOrPercent()),
    forecast: z.prefault(forecastSchema, {}),
    /** How long the provisioner skips an offering (instance type in a subnet) that had no capacity. */
    offeringUnavailableFor: dur('3m', { positive: true }),
    /** First backoff once every offering of a pool failed; doubles on each consecutive exhaustion. */
    exhaustedBackoff: dur('5m', { positive: true }),
    /** Longest exhaustion backoff. */
    exhaustedBackoffMax: dur('30m', { positive: true }),
  });

  return scaleUpSchema;
}
