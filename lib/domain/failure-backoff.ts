/**
 * The pool's failure backoff (scaleDown.delayAfterFailure). A host that
 * failed to launch or join holds both scale-up and scale-down; a failed
 * drain (a gear that would not move, a drain timeout) holds only
 * scale-down, as cluster-autoscaler's scale-down-delay-after-failure: the
 * pool's demand does not wait for a drain's fault, and a scale-up needs no
 * drain.
 */
import type { PoolRecord } from './model.js';

export type BackoffAction = 'scale-up' | 'scale-down';

export interface FailureBackoff {
  /** The failure the backoff counts from (ISO). */
  since: string;
  /** When the backoff ends, ms since the epoch. */
  untilMs: number;
}

/** The failure that holds `action` back, and until when; undefined when no failure of the kind is recorded. */
export function failureBackoff(pool: Pick<PoolRecord, 'lastFailureAt' | 'lastDrainFailureAt'>, delayMs: number, action: BackoffAction): FailureBackoff | undefined {
  const since = action === 'scale-up' ? pool.lastFailureAt : latest(pool.lastFailureAt, pool.lastDrainFailureAt);
  return since === undefined ? undefined : { since, untilMs: Date.parse(since) + delayMs };
}

function latest(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Date.parse(a) >= Date.parse(b) ? a : b;
}
