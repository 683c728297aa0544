/**
 * App churn (`Trace.churnPerHour`): gears deleted and as many created, beyond
 * the demand's net change, as tenants replace applications. A replay and the
 * baselines count the same gears replaced each tick; fractions carry over, so
 * a small pool at a low rate still churns.
 */
export class Churn {
  private carry = 0;

  constructor(private readonly perHour: number = 0) {}

  /** Gears to replace in a tick of `seconds` at `demand` gears. */
  next(demand: number, seconds: number): number {
    if (this.perHour <= 0 || demand <= 0) return 0;
    this.carry += (demand * this.perHour * seconds) / 3600;
    const count = Math.floor(this.carry);
    this.carry -= count;
    return count;
  }
}

/** What one tick of demand changes in a pool's gears: the placed ones (removed by position) and the waiting queue. */
export interface DemandState {
  placedCount(): number;
  /** Removes the placed gear at `position` (0 .. placedCount() - 1). */
  removeAt(position: number): void;
  waiting: number[];
}

/**
 * One tick of demand, as the baselines replay it: churn replaces placed gears (drawn at random) with new waiting
 * ones, then the pool gives up waiting gears first and placed ones at random down to `demand`, or queues new gears up
 * to it. `newGear` draws the next gear's id. The baselines and the active-demand pass (active-demand.ts) share it, so
 * their draws stay the same.
 */
export function applyDemandStep(state: DemandState, demand: number, tickSeconds: number, churn: Churn, random: () => number, newGear: () => number): void {
  for (let replaced = churn.next(demand, tickSeconds); replaced > 0 && state.placedCount() > 0; replaced--) {
    state.removeAt(Math.floor(random() * state.placedCount()));
    state.waiting.push(newGear());
  }
  let excess = state.placedCount() + state.waiting.length - demand;
  while (excess > 0 && state.waiting.length > 0) {
    state.waiting.pop();
    excess -= 1;
  }
  while (excess > 0 && state.placedCount() > 0) {
    state.removeAt(Math.floor(random() * state.placedCount()));
    excess -= 1;
  }
  for (; excess < 0; excess++) state.waiting.push(newGear());
}
