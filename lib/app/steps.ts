/**
 * What the multi-step use cases (provision, release) share: recording a step
 * on a node by conditional write, patching a pool with re-read-and-retry,
 * and retrying a throttled call with jittered backoff on an injected sleep.
 */
import type { Config } from '../config/index.js';
import { backoffDelay } from '../domain/provisioning.js';
import { poolIdOf, type NodeRecord, type PoolId, type PoolRecord } from '../domain/model.js';
import { ConflictError, NotFoundError, TransientError } from '../errors.js';
import type { Log } from '../ports/log.js';
import type { NodePatch, PoolPatch, StateStore } from '../ports/state-store.js';

export interface RetryPolicy {
  attempts: number;
  baseDelay: number;
  maxDelay: number;
}

/** How a use case waits: the real timer in Lambda, the virtual clock in tests and the simulator. */
export type Sleep = (ms: number) => Promise<void>;

export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `call`; a `TransientError` (throttling, 5xx, network) is retried up
 * to `policy.attempts` in all, after a full-jitter exponential backoff. Any
 * other error, and the last transient one, is thrown.
 */
export async function retryTransient<T>(
  call: () => Promise<T>,
  policy: RetryPolicy,
  wait: { sleep: Sleep; random: () => number; onRetry?: (error: TransientError, attempt: number, delayMs: number) => void },
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof TransientError) || attempt >= policy.attempts) throw error;
      const delay = backoffDelay(attempt - 1, policy.baseDelay, policy.maxDelay, wait.random);
      wait.onRetry?.(error, attempt, delay);
      await wait.sleep(delay);
    }
  }
}

/**
 * `retryTransient` with `policy` on a use case's ports: their sleep (the
 * virtual clock's in tests and the simulator) and jitter, each retry logged.
 * The SDK clients under it make one attempt per call (RETRIED_BY_CALLER).
 */
export function retryOn(ports: { sleep?: Sleep; random?: () => number; log: Log }, policy: RetryPolicy): <T>(call: () => Promise<T>) => Promise<T> {
  return (call) =>
    retryTransient(call, policy, {
      sleep: ports.sleep ?? realSleep,
      random: ports.random ?? Math.random,
      onRetry: (error, attempt, delayMs) => ports.log.warn('transient error; retrying', { attempt, delayMs, error: error.message }),
    });
}

/** How many lost races a re-read-and-retry write takes before it gives up (its `ConflictError` is retryable: the message is redelivered). */
export const MAX_WRITE_RACES = 5;

/**
 * Records steps (name -> value, usually the ISO time) on a node together with
 * `patch`, by conditional write on its version. A lost race is re-read and
 * retried; when every step is already recorded by the winner, the winner's
 * node is returned and nothing is written. `NotFoundError` when the node is gone.
 */
export async function recordSteps(
  store: StateStore,
  node: NodeRecord,
  steps: Record<string, string>,
  patch: NodePatch = {},
): Promise<NodeRecord> {
  let current = node;
  for (let race = 0; ; race++) {
    try {
      return await store.updateNode(current.nodeId, current.version, { ...patch, steps: { ...current.steps, ...steps } });
    } catch (error) {
      if (!(error instanceof ConflictError) || race >= MAX_WRITE_RACES) throw error;
      const latest = (error.current as NodeRecord | undefined) ?? (await store.getNode(current.nodeId));
      if (!latest) throw error;
      if (Object.keys(steps).every((step) => latest.steps?.[step] !== undefined)) return latest;
      current = latest;
    }
  }
}

/**
 * Applies `compute(pool)` to the pool by conditional write, re-reading and
 * recomputing on a lost race. `compute` returns undefined to write nothing.
 */
export async function patchPool(
  store: StateStore,
  poolId: PoolId,
  compute: (pool: PoolRecord) => PoolPatch | undefined,
): Promise<PoolRecord> {
  let pool = (await store.getPool(poolId)) ?? (await store.ensurePool(poolId));
  for (let race = 0; ; race++) {
    const patch = compute(pool);
    if (patch === undefined) return pool;
    try {
      return await store.updatePool(poolId, pool.version, patch);
    } catch (error) {
      if (!(error instanceof ConflictError) || race >= MAX_WRITE_RACES) throw error;
      pool = (error.current as PoolRecord | undefined) ?? (await store.getPool(poolId)) ?? pool;
    }
  }
}

export { describeError } from '../errors.js';

/** Every pool: the configured ones and any the table knows (a pool removed from the configuration still has nodes). */
export async function poolIds(store: StateStore, config: Config): Promise<PoolId[]> {
  const ids = new Set<PoolId>(config.pools.map((pool) => poolIdOf(pool.district, pool.profile)));
  for (const pool of await store.listPools()) ids.add(pool.pool);
  return [...ids].sort();
}

/** Releases `holder`'s lease on `pool`; a lease already gone (expired and taken, or released before) is fine. */
export async function releaseLease(store: StateStore, pool: PoolId, holder: string): Promise<void> {
  try {
    await store.releaseLease(pool, holder);
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
  }
}
