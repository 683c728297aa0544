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
