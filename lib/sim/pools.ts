import type { Trace } from './trace.js';

/** One pool as a replay sees it: its bounds, node size, price and the demand it gets. */
export interface SimPool {
  /** `district/profile`. */
  id: string;
  district: string;
  profile: string;
  gearsPerNode: number;
  min: number;
  max: number;
  instanceType: string;
  /** $ per node-hour (lib/sim/prices.ts). */
  pricePerHour: number;
  /** This pool's demand, in gears. */
  trace: Trace;
}

export { peakDemand } from './trace.js';

/** Nodes that hold `demand` gears, within the pool's bounds: where a replay starts. */
export function nodesFor(pool: Pick<SimPool, 'gearsPerNode' | 'min' | 'max'>, demand: number): number {
  return Math.min(pool.max, Math.max(pool.min, Math.ceil(demand / pool.gearsPerNode)));
}
