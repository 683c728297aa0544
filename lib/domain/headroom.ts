/**
 * Headroom sized from the pool's own history. A fixed headroomGears kept the
 * same free slots above a flat pool as above a spiky one: a node over
 * cluster-autoscaler on flat loads, and too little where demand jumps. What a
 * boot delay must absorb is demand rising above anything the pool already
 * had to hold: so the headroom is a high quantile of how far demand rose,
 * within one boot delay, above its highest level of the hour before (buckets
 * of BUCKET_MINUTES over the demand history, the highest sample of each). A flat pool
 * keeps a few slots, a spiky one what its spikes took. Until the history
 * covers `minHistory`, the configured headroomGears stands.
 * Pure functions of data.
 */
import type { Config } from '../config/index.js';
import { BUCKET_MINUTES } from './forecast.js';
import type { DemandSample } from './model.js';

/** What "the level the pool already had to hold" looks back over. */
export const LEVEL_MINUTES = 60;

export interface ObservedHeadroom {
  /** Gears of headroom to keep. */
  gears: number;
  /** `observed` when sized from the history, `configured` (headroomGears) while the history is too short. */
  source: 'observed' | 'configured';
  /** Rises measured (buckets with an hour before them). */
  samples: number;
}

/**
 * The headroom for a pool whose demand history is `history` (before this evaluation's sample): the `quantile` of the
 * rises above the previous hour's highest bucket over the next ceil(boot / BUCKET_MINUTES) buckets; `fallback` while fewer than
 * `minSamples` rises were measured.
 */
export function observedHeadroom(
  history: readonly DemandSample[] | undefined,
  options: { bootMs: number; quantile: number; minSamples: number; fallback: number },
): ObservedHeadroom {
  const buckets = new Map<number, number>();
  for (const [minute, gears] of history ?? []) {
    if (!Number.isFinite(minute) || !Number.isFinite(gears)) continue;
    const bucket = Math.floor(minute / BUCKET_MINUTES);
    buckets.set(bucket, Math.max(buckets.get(bucket) ?? 0, gears));
  }
  const keys = [...buckets.keys()].sort((a, b) => a - b);
  const span = Math.max(1, Math.ceil(options.bootMs / (BUCKET_MINUTES * 60_000)));
  const back = LEVEL_MINUTES / BUCKET_MINUTES;
  const rises: number[] = [];
  for (const key of keys) {
    let level = -Infinity;
    let seen = 0;
    for (let b = key - back; b < key; b++) {
      const value = buckets.get(b);
      if (value === undefined) continue;
      seen++;
      if (value > level) level = value;
    }
    // An hour with half its buckets missing (the first hour, a gap) says too little about the level.
    if (seen < back / 2) continue;
    let reached = buckets.get(key)!;
    for (let b = key + 1; b < key + span; b++) reached = Math.max(reached, buckets.get(b) ?? reached);
    rises.push(Math.max(0, reached - level));
  }
  if (rises.length < options.minSamples) return { gears: options.fallback, source: 'configured', samples: rises.length };
  rises.sort((a, b) => a - b);
  const at = Math.min(rises.length - 1, Math.max(0, Math.ceil(options.quantile * rises.length) - 1));
  return { gears: Math.ceil(rises[at]!), source: 'observed', samples: rises.length };
}

/** The pool's headroom by its configuration: observed when `scaleUp.observedHeadroom` is on and the history is long enough. */
export function poolHeadroom(config: Pick<Config, 'scaleUp'>, history: readonly DemandSample[] | undefined, bootMs: number): ObservedHeadroom {
  const { headroomGears, observedHeadroom: observed } = config.scaleUp;
  if (!observed.enabled) return { gears: headroomGears, source: 'configured', samples: 0 };
  return observedHeadroom(history, {
    bootMs,
    quantile: observed.quantile,
    minSamples: Math.ceil(observed.minHistory / (BUCKET_MINUTES * 60_000)),
    fallback: headroomGears,
  });
}
