/**
 * A spot pool's drains are priced by what its nodes cost on the spot market
 * (lib/domain/node-price.ts), not by the on-demand list: credited several
 * times their saving, scale-down restarted tenants for money it did not save. The evaluator reads the pool's types from EC2 at most hourly and
 * stores the prices on the pool record, so every evaluator instance and the
 * CLI price the pool's drains alike. A failed read never fails the
 * evaluation: the pool keeps its last prices (for a day), then the list price.
 */
import type { Config, PoolConfig } from '../config/index.js';
import type { PoolRecord, SpotPriceRecord } from '../domain/model.js';
import { spotPricesByType, spotPricesDue, type SpotQuote } from '../domain/node-price.js';
import { describeError, NodescalerError } from '../errors.js';
import type { Log } from '../ports/log.js';
import type { Metrics } from '../ports/metrics.js';
import type { SpotPrices } from '../ports/spot-prices.js';

export interface SpotPricePorts {
  /** Absent where no spot market is reachable (locally, the replay): spot pools are priced by the list. */
  spotPrices?: SpotPrices;
  log: Log;
  metrics: Metrics;
}

/** The pool's new spot price record when a read was due (read, or failed), else undefined: nothing to store. */
export async function readDueSpotPrices(
  ports: SpotPricePorts,
  config: Pick<Config, 'scaleDown'>,
  poolConfig: PoolConfig,
  pool: Pick<PoolRecord, 'pool' | 'spotPrices'>,
  now: Date,
): Promise<SpotPriceRecord | undefined> {
  if (!ports.spotPrices) return undefined;
  const types = spotPricesDue(config.scaleDown, poolConfig, pool.spotPrices, now);
  if (types.length === 0) return undefined;
  try {
    const { byType, zones, byZone } = spotPricesByType(await ports.spotPrices.currentSpotPrices(types));
    const unquoted = types.filter((type) => byType[type] === undefined);
    if (unquoted.length > 0) {
      ports.log.warn('EC2 quotes no spot price for these instance types: their drains are priced by the on-demand list', { pool: pool.pool, unquoted });
    }
    ports.log.info('spot prices read', { pool: pool.pool, byType, zones });
    return { types, byType, zones, byZone, readAt: now.toISOString() };
  } catch (error) {
    const failure = describeError(error).slice(0, 512);
    ports.log.warn('spot prices not read: drains keep the last prices read (a day at most), then the on-demand list', {
      pool: pool.pool,
      error: failure,
      retryable: error instanceof NodescalerError ? error.retryable : true,
      lastReadAt: pool.spotPrices?.readAt,
    });
    ports.metrics.record('SpotPriceReadFailures', 1, 'Count', { pool: pool.pool });
    const kept = pool.spotPrices ?? { types: [], byType: {} };
    return { ...kept, failedAt: now.toISOString(), failure };
  }
}

/**
 * The market read at most once for each set of instance types while this
 * wrapper lives (one evaluator batch): pools that share their types, and come
 * due together on their first evaluation, make one request, not one each.
 */
export function onceABatch(market: SpotPrices): SpotPrices {
  const reads = new Map<string, Promise<SpotQuote[]>>();
  return {
    currentSpotPrices(instanceTypes) {
      const key = [...instanceTypes].sort().join(',');
      let read = reads.get(key);
      if (!read) reads.set(key, (read = market.currentSpotPrices(instanceTypes)));
      return read;
    },
  };
}
