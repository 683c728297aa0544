/**
 * The evaluator's intake of `district-capacity` (lib/domain/district-capacity.ts):
 * a district's UIDs as the broker-side reporter read them. Only a configured
 * reporter may send one (statsAuth.reporterIds, as for `gears-refused`): a
 * node host that claimed its district full could stop every scale-up the
 * broker's refusals ask for. Anyone else's is refused as node-stats from the
 * wrong sender are (security log line, StatsRejected metric, ValidationError
 * naming SenderId: the record dead-letters, nothing changes).
 *
 * The broker lists every district, and nodescaler may scale only some of
 * them: a district no configured pool names is dropped (StatsDropped,
 * reason `unmanaged`), not dead-lettered. So is a read too old to decide on.
 * A read older than the pool's latest never overwrites it.
 */
import type { Config } from '../config/index.js';
import { DISTRICT_CAPACITY_FRESH_MS, districtCureText, districtRunningOut } from '../domain/district-capacity.js';
import { poolIdOf, type PoolId } from '../domain/model.js';
import type { DistrictCapacityMessage } from '../messages/index.js';
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import type { Metrics } from '../ports/metrics.js';
import type { StateStore } from '../ports/state-store.js';
import { requireReporter, writeUnlessNewer } from './broker-reports.js';

export interface DistrictCapacityPorts {
  store: Pick<StateStore, 'getPool' | 'ensurePool' | 'updatePool'>;
  clock: Clock;
  log: Log;
  metrics: Metrics;
}

/**
 * Records the read on its pool and returns the pool, or undefined when dropped (stale, unmanaged, or older than the
 * one held). Throws ValidationError for a sender that may not send it; store errors pass through (retried).
 */
export async function recordDistrictCapacity(
  ports: DistrictCapacityPorts,
  config: Pick<Config, 'statsAuth' | 'pools'>,
  message: DistrictCapacityMessage,
  senderId: string | undefined,
): Promise<PoolId | undefined> {
  const { store, clock, log, metrics } = ports;
  const pool = poolIdOf(message.district, message.profile);
  requireReporter(ports, config, { type: 'district-capacity', where: pool, what: 'district capacities', details: { availableCapacity: message.availableCapacity } }, senderId);
  if (!config.pools.some((p) => p.district === message.district && p.profile === message.profile)) {
    log.info('district-capacity dropped: no configured pool scales this district', { pool });
    metrics.record('StatsDropped', 1, 'Count', { reason: 'unmanaged' });
    return undefined;
  }
  const ageMs = clock.now().getTime() - Date.parse(message.readAt);
  if (ageMs > DISTRICT_CAPACITY_FRESH_MS) {
    log.warn('district-capacity dropped: too old to decide on', { pool, field: 'readAt', value: message.readAt, ageMs });
    metrics.record('StatsDropped', 1, 'Count', { reason: 'stale' });
    return undefined;
  }
  const capacity = { maxCapacity: message.maxCapacity, availableCapacity: message.availableCapacity, readAt: message.readAt };
  if (!(await writeUnlessNewer(store, pool, message.readAt, (held) => held.districtCapacity?.readAt, { districtCapacity: capacity }))) return undefined;
  metrics.record('DistrictUidsLeft', message.availableCapacity, 'Count', { pool });
  if (districtRunningOut(capacity)) {
    metrics.record('DistrictUidsLow', 1, 'Count', { pool });
    const refusing = message.availableCapacity === 0 ? 'the broker refuses every new gear there, and no node added cures it' : 'the broker refuses new gears there once they are gone, and no node added cures it';
    log.warn(`district ${message.district} has ${message.availableCapacity} of ${message.maxCapacity} UIDs left: ${refusing}; ${districtCureText(message.district)}`, { pool, ...capacity });
  }
  return pool;
}
