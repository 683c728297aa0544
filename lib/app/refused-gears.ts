/**
 * The evaluator's intake of `gears-refused` (lib/domain/waiting.ts): the
 * broker's count of gear creations it refused for lack of capacity. Only the
 * broker host may send one: a node host could otherwise make every pool buy
 * nodes, so the sender must be a configured reporter (statsAuth.reporterIds,
 * the broker host's role, as for `report-stats`); anyone else's is refused as
 * node-stats from the wrong sender are (security log line, StatsRejected
 * metric, ValidationError naming SenderId: the record dead-letters, nothing
 * changes). A report for no configured pool dead-letters too, naming the
 * field: a broker and a configuration that disagree are an operator's to fix.
 * A report too old to matter is dropped; one older than the pool's latest
 * never overwrites it.
 */
import type { Config } from '../config/index.js';
import { poolIdOf, type PoolId } from '../domain/model.js';
import { classifySender } from '../domain/stats-sender.js';
import { ConflictError, ValidationError } from '../errors.js';
import type { GearsRefusedMessage } from '../messages/index.js';
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import type { Metrics } from '../ports/metrics.js';
import type { StateStore } from '../ports/state-store.js';

export interface RefusedGearsPorts {
  store: Pick<StateStore, 'getPool' | 'ensurePool' | 'updatePool'>;
  clock: Clock;
  log: Log;
  metrics: Metrics;
}

const WRITE_ATTEMPTS = 3;

/**
 * The pools a report is for: its district's, or (no district: a new
 * application, refused because every district of the profile was full) every
 * configured pool of its profile, each with an even share, rounded up.
 */
export function refusedShares(message: GearsRefusedMessage, pools: readonly { district: string; profile: string }[]): Array<{ pool: PoolId; gears: number }> {
  const matching = pools.filter((p) => p.profile === message.profile && (message.district === undefined || p.district === message.district));
  if (matching.length === 0) return [];
  const share = Math.ceil(message.refused / matching.length);
  return matching.map((p) => ({ pool: poolIdOf(p.district, p.profile), gears: share }));
}

/**
 * Records the report on its pools and returns them (to be evaluated now), or
 * [] when dropped as stale. Throws ValidationError for a sender that may not
 * send it or a pool the configuration lacks; store errors pass through (retried).
 */
export async function recordRefusedGears(ports: RefusedGearsPorts, config: Pick<Config, 'statsAuth' | 'statsMaxAge' | 'pools'>, message: GearsRefusedMessage, senderId: string | undefined): Promise<PoolId[]> {
  const { store, clock, log, metrics } = ports;
  const now = clock.now();
  const where = message.district === undefined ? `profile ${message.profile}` : `pool ${poolIdOf(message.district, message.profile)}`;
  if (senderId !== undefined) {
    const sender = classifySender(senderId, config.statsAuth);
    if (sender.kind !== 'reporter') {
      const why = sender.kind === 'unknown' ? sender.why : 'a node host may report only its own stats; refused gears come from the broker host (statsAuth.reporterIds)';
      log.error('security: gears-refused rejected: the sender is not the broker-side reporter', { senderId, pool: where, refused: message.refused, reason: why });
      metrics.record('StatsRejected', 1, 'Count', { reason: 'sender' });
      throw new ValidationError({ path: 'SenderId', message: why, value: senderId }, `gears-refused for ${where} rejected`);
    }
  }
  const ageMs = now.getTime() - Date.parse(message.windowEnd);
  if (ageMs > config.statsMaxAge) {
    log.warn('gears-refused dropped: too old to count', { pool: where, field: 'windowEnd', value: message.windowEnd, ageMs });
    metrics.record('StatsDropped', 1, 'Count', { reason: 'stale' });
    return [];
  }
  const shares = refusedShares(message, config.pools);
  if (shares.length === 0) {
    const field = message.district === undefined ? 'profile' : 'district';
    const value = message.district ?? message.profile;
    throw new ValidationError({ path: field, message: `no configured pool for ${where}`, value }, 'gears-refused for an unknown pool');
  }
  const touched: PoolId[] = [];
  for (const { pool, gears } of shares) {
    if (await writeReport(store, pool, { gears, windowStart: message.windowStart, windowEnd: message.windowEnd })) touched.push(pool);
  }
  if (message.refused > 0) {
    log.info('gear creations refused by the broker', { pool: where, refused: message.refused, windowStart: message.windowStart, windowEnd: message.windowEnd });
    metrics.record('GearsRefused', message.refused, 'Count', { pool: where });
  }
  return touched;
}

/** Stores the report unless the pool holds a newer one; true when stored. */
async function writeReport(store: RefusedGearsPorts['store'], poolId: PoolId, report: { gears: number; windowStart: string; windowEnd: string }): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    const pool = (await store.getPool(poolId)) ?? (await store.ensurePool(poolId));
    const held = pool.refused?.windowEnd;
    if (held !== undefined && Date.parse(held) >= Date.parse(report.windowEnd)) return false;
    try {
      await store.updatePool(poolId, pool.version, { refused: report });
      return true;
    } catch (error) {
      // Evaluated or reported concurrently: read again and retry.
      if (!(error instanceof ConflictError) || attempt >= WRITE_ATTEMPTS) throw error;
    }
  }
}
