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
import { findPoolConfig, type Config } from '../config/index.js';
import { poolIdOf, type PoolId } from '../domain/model.js';
import { ValidationError } from '../errors.js';
import type { GearsRefusedMessage } from '../messages/index.js';
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import type { Metrics } from '../ports/metrics.js';
import type { StateStore } from '../ports/state-store.js';
import { requireReporter, writeUnlessNewer } from './broker-reports.js';

export interface RefusedGearsPorts {
  store: Pick<StateStore, 'getPool' | 'ensurePool' | 'updatePool'>;
  clock: Clock;
  log: Log;
  metrics: Metrics;
}

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
  requireReporter(ports, config, { type: 'gears-refused', where, what: 'refused gears', details: { refused: message.refused } }, senderId);
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
    const report = { gears, windowStart: message.windowStart, windowEnd: message.windowEnd, ...(message.zonesRequired ? { zonesRequired: true } : {}) };
    if (await writeUnlessNewer(store, pool, message.windowEnd, (held) => held.refused?.windowEnd, { refused: report })) touched.push(pool);
  }
  if (message.refused > 0) {
    log.info('gear creations refused by the broker', { pool: where, refused: message.refused, windowStart: message.windowStart, windowEnd: message.windowEnd });
    metrics.record('GearsRefused', message.refused, 'Count', { pool: where });
  }
  if (message.zonesRequired) warnOfUnzonedPools(ports, config.pools, shares);
  return touched;
}

/**
 * The broker requires zones for new gears, and a pool names no region to place
 * its nodes in: every node it adds would take none of them, so the evaluator
 * buys none for them (lib/domain/waiting.ts). Said loudly, since the gears wait
 * until an operator names the region (ZonesUnnamedAlarm).
 */
function warnOfUnzonedPools(ports: Pick<RefusedGearsPorts, 'log' | 'metrics'>, pools: Pick<Config, 'pools'>['pools'], shares: ReadonlyArray<{ pool: PoolId; gears: number }>): void {
  for (const { pool, gears } of shares) {
    if (gears <= 0 || findPoolConfig({ pools }, pool)?.openshiftRegion !== undefined) continue;
    ports.log.warn('the broker requires zones for new gears and the pool names no openshiftRegion: its nodes join in no zone, and none is bought for these', { pool, refused: gears, field: 'openshiftRegion' });
    ports.metrics.record('RefusedForZones', gears, 'Count', { pool });
  }
}
