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

import { peakDemand } from './trace.js';

export { peakDemand };

/** Nodes that hold `demand` gears, within the pool's bounds: where a replay starts. */
export function nodesFor(pool: Pick<SimPool, 'gearsPerNode' | 'min' | 'max'>, demand: number): number {
  return Math.min(pool.max, Math.max(pool.min, Math.ceil(demand / pool.gearsPerNode)));
}

/** A trace's demand as one pool of the default shape (tests and the suite). */
export function singlePool(trace: Trace, gearsPerNode: number, options: { min?: number; max?: number; instanceType?: string; pricePerHour?: number } = {}): SimPool {
  const peak = peakDemand(trace);
  return {
    id: 'sim/small',
    district: 'sim',
    profile: 'small',
    gearsPerNode,
    min: options.min ?? 1,
    max: options.max ?? Math.ceil((peak / gearsPerNode) * 2) + 2,
    instanceType: options.instanceType ?? 'm5.xlarge',
    pricePerHour: options.pricePerHour ?? 0,
    trace,
  };
}
