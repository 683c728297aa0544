/**
 * How many gears a pool of `slots` holds, and how many nodes it needs for a
 * demand: the one sizing rule that scale-up (evaluate.ts, waiting.ts) and
 * scale-down (payoff.ts, through the candidates' check) both read, so a drain
 * never leaves a pool at a size the next scale-up would buy back.
 *
 * A scale-up fires when demand reaches `threshold` of the slots or leaves
 * fewer than `headroomGears` free, and buys slots until demand sits at
 * `target` with the headroom free. A drain may leave the pool holding only
 * that much (`target`, not `threshold`): the band between the two is the
 * hysteresis, so a pool drained to just below the threshold does not buy the
 * node back on the next wiggle.
 *
 * Which slots count (`sizingSlots`): those of active nodes (a stale node only
 * what it holds, utilization.ts), plus `gearsPerNode` for each node still
 * provisioning, and nothing of a draining node.
 * - A provisioning node counts: it takes gears within a boot delay, and a
 *   decision that did not count it would buy the same node twice for one
 *   demand (the reports that keep coming while it boots ask again).
 * - A node closed for attrition counts: it is a reserve, not a loss. Its
 *   free slots take no new gear, but attrition.ts reopens it in the same
 *   evaluation whenever the pool without them would scale up or cannot hold
 *   its confident demand; buying a node instead would pay for a host while
 *   the closed one still runs.
 * - A draining node does not count: its slots are leaving, and its gears are
 *   already in the demand the other nodes must hold.
 * Pure functions.
 */
import type { Config } from '../config/index.js';
import type { PoolUtilization } from './decision.js';

export type WantedConfig = Pick<Config['scaleUp'], 'threshold' | 'target' | 'headroomGears'>;

const EPSILON = 1e-9;

/** The slots the sizing rule counts (see above): active nodes' and provisioning nodes' expected ones. */
export function sizingSlots(u: Pick<PoolUtilization, 'capacity' | 'provisioningCapacity'>): number {
  return u.capacity + u.provisioningCapacity;
}

/**
 * The most gears `slots` hold as a scale-up leaves a pool: demand at `target`
 * (never above `threshold`) with `headroomGears` free. Also what a drain may
 * leave the pool holding.
 */
export function heldLevel(slots: number, scaleUp: WantedConfig): number {
  return heldLevelOf(slots, scaleUp).level;
}

/** `heldLevel`, with the setting that sets it in words, for the sentence that refuses a drain. */
export function heldLevelOf(slots: number, scaleUp: WantedConfig): { level: number; setBy: string } {
  const share = fraction(scaleUp);
  const byShare = slots * share;
  const byHeadroom = slots - scaleUp.headroomGears;
  if (byShare <= byHeadroom) return { level: byShare, setBy: `set by the ${scaleUp.target <= scaleUp.threshold ? 'target' : 'threshold'}: ${share} x ${slots} slots` };
  return { level: byHeadroom, setBy: `set by the headroom: ${slots} slots - ${scaleUp.headroomGears} headroomGears` };
}

/**
 * The gears at which a pool of `slots` scales up again (evaluate.ts: utilization at `threshold`, or fewer than
 * `headroomGears` free): where a drained node is bought back. Above `heldLevel` by the hysteresis band.
 */
export function rebuyLevel(slots: number, scaleUp: Pick<WantedConfig, 'threshold' | 'headroomGears'>): number {
  return Math.min(slots * scaleUp.threshold, slots - scaleUp.headroomGears);
}

/**
 * Nodes of `gearsPerNode` slots to add to `slots` so that `demand` sits at
 * the held level: the fewest n with `demand <= heldLevel(slots + n x gearsPerNode)`;
 * 0 when `slots` already hold it.
 */
export function nodesToHold(demand: number, slots: number, gearsPerNode: number, scaleUp: WantedConfig): number {
  const perNode = Math.max(1, gearsPerNode);
  const forTarget = demand / fraction(scaleUp) - slots;
  const forHeadroom = demand + scaleUp.headroomGears - slots;
  return Math.max(0, ceil(Math.max(forTarget, forHeadroom) / perNode));
}

function fraction(scaleUp: WantedConfig): number {
  return Math.max(Math.min(scaleUp.target, scaleUp.threshold), 0.01);
}

function ceil(value: number): number {
  return Number.isFinite(value) ? Math.ceil(value - EPSILON) : value > 0 ? Number.MAX_SAFE_INTEGER : 0;
}
