/**
 * The level a drain may leave a pool at, matched to the scale-up's sizing
 * (evaluate.ts `nodesFor`, waiting.ts `nodesForWaiting`, which still size it
 * with their own copies of the same target/headroom formula). A
 * scale-up fires when demand reaches `threshold` of the slots or leaves fewer
 * than `headroomGears` free, and it buys slots until demand is at `target`
 * with the headroom free (evaluate.ts). A drain may leave the pool holding
 * only what such a scale-up would have left it holding (`target`, not
 * `threshold`): the band between the two is the hysteresis, so a pool drained
 * to just below the threshold does not buy the node back on the next wiggle.
 * Pure functions.
 */
import type { Config } from '../config/index.js';

export type WantedConfig = Pick<Config['scaleUp'], 'threshold' | 'target' | 'headroomGears'>;

/** The most gears a drain may leave `slots` holding: the level a scale-up sizes a pool to (target, headroom free). */
export function drainLevel(slots: number, scaleUp: WantedConfig): number {
  return drainLevelOf(slots, scaleUp).level;
}

/** `drainLevel`, with the setting that sets it in words, for the sentence that refuses a drain. */
export function drainLevelOf(slots: number, scaleUp: WantedConfig): { level: number; setBy: string } {
  const share = Math.min(scaleUp.target, scaleUp.threshold);
  const byShare = slots * share;
  const byHeadroom = slots - scaleUp.headroomGears;
  if (byShare <= byHeadroom) return { level: byShare, setBy: `set by the ${scaleUp.target <= scaleUp.threshold ? 'target' : 'threshold'}: ${share} x ${slots} slots` };
  return { level: byHeadroom, setBy: `set by the headroom: ${slots} slots - ${scaleUp.headroomGears} headroomGears` };
}
