/**
 * What the evaluator's intakes of the broker-side reporter's messages
 * (`gears-refused`, `district-capacity`) share: only a configured reporter
 * may send them, and a report never overwrites a newer one on its pool.
 */
import type { Config } from '../config/index.js';
import type { PoolId, PoolRecord } from '../domain/model.js';
import { classifySender } from '../domain/stats-sender.js';
import { ConflictError, ValidationError } from '../errors.js';
import type { Log } from '../ports/log.js';
import type { Metrics } from '../ports/metrics.js';
import type { PoolPatch, StateStore } from '../ports/state-store.js';

const WRITE_ATTEMPTS = 3;

/**
 * Throws ValidationError (naming SenderId) unless `senderId` is a configured reporter (statsAuth.reporterIds), after a
 * security log line and a StatsRejected metric. No sender (the local stage's queue, which has no SenderId) passes.
 */
export function requireReporter(
  ports: { log: Log; metrics: Metrics },
  config: Pick<Config, 'statsAuth'>,
  report: { type: string; where: string; what: string; details: Record<string, unknown> },
  senderId: string | undefined,
): void {
  if (senderId === undefined) return;
  const sender = classifySender(senderId, config.statsAuth);
  if (sender.kind === 'reporter') return;
  const why = sender.kind === 'unknown' ? sender.why : `a node host may report only its own stats; ${report.what} come from the broker host (statsAuth.reporterIds)`;
  ports.log.error(`security: ${report.type} rejected: the sender is not the broker-side reporter`, { senderId, pool: report.where, ...report.details, reason: why });
  ports.metrics.record('StatsRejected', 1, 'Count', { reason: 'sender' });
  throw new ValidationError({ path: 'SenderId', message: why, value: senderId }, `${report.type} for ${report.where} rejected`);
}

/**
 * Writes `patch` on the pool unless it already holds a report at least as new as `at` (`heldAt` reads the stored
 * one's time); true when written. A concurrent write (an evaluation, another report) is read again and retried.
 */
export async function writeUnlessNewer(
  store: Pick<StateStore, 'getPool' | 'ensurePool' | 'updatePool'>,
  poolId: PoolId,
  at: string,
  heldAt: (pool: PoolRecord) => string | undefined,
  patch: PoolPatch,
): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    const pool = (await store.getPool(poolId)) ?? (await store.ensurePool(poolId));
    const held = heldAt(pool);
    if (held !== undefined && Date.parse(held) >= Date.parse(at)) return false;
    try {
      await store.updatePool(poolId, pool.version, patch);
      return true;
    } catch (error) {
      if (!(error instanceof ConflictError) || attempt >= WRITE_ATTEMPTS) throw error;
    }
  }
}
