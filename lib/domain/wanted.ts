/**
 * The capacity a pool's demand wants, one rule for both directions. A
 * scale-up fires when demand reaches `threshold` of the slots or leaves fewer
 * than `headroomGears` free, and it buys slots until demand is at `target`
 * with the headroom free. A drain may leave the pool holding only what such a
 * scale-up would have left it holding (`target`, not `threshold`): the band
 * between the two is the hysteresis, so a pool drained to just below the
 * threshold does not buy the node back on the next wiggle. Pure functions.
 */
import type { Config } from '../config/index.js';

export type WantedConfig = Pick<Config['scaleUp'], 'threshold' | 'target' | 'headroomGears'>;

/** The most gears `slots` hold before a scale-up rule fires (at the threshold, or the headroom used up). */
export function scaleUpLevel(slots: number, scaleUp: WantedConfig): number {
  return Math.min(slots * scaleUp.threshold, slots - scaleUp.headroomGears);
}

/** The most gears a drain may leave `slots` holding: the level a scale-up sizes a pool to (target, headroom free). */
export function drainLevel(slots: number, scaleUp: WantedConfig): number {
  return Math.min(slots * Math.min(scaleUp.target, scaleUp.threshold), slots - scaleUp.headroomGears);
}

/** Slots `demand` wants: the fewest whose drain level holds it (what a scale-up for that demand buys up to). */
export function slotsWanted(demand: number, scaleUp: WantedConfig): number {
  return Math.max(demand / Math.max(Math.min(scaleUp.target, scaleUp.threshold), 0.01), demand + scaleUp.headroomGears);
}
