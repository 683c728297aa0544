/**
 * A pool's drains are priced by what its nodes cost (lib/domain/node-price.ts):
 * a spot pool's by the spot market, not the on-demand list (credited several
 * times their saving, scale-down restarted tenants for money it did not
 * save), and every pool's by its own region's on-demand price (the built-in
 * list is us-east-1's, a tenth to a half below most regions', and knows 20
 * types). The evaluator reads them (spot hourly, on-demand twice a day) and
 * stores them on the pool record, so every evaluator instance and the CLI
 * price the pool's drains alike. A failed read never fails the evaluation:
 * the pool keeps its last prices while they are usable, then falls back.
 */
import type { Config, PoolConfig } from '../config/index.js';
import type { OnDemandPriceRecord, PoolRecord, SpotPriceRecord } from '../domain/model.js';
import { onDemandPricesByType, onDemandPricesDue, spotPricesByType, spotPricesDue } from '../domain/market-prices.js';
import { describeError, NodescalerError } from '../errors.js';
import type { Log } from '../ports/log.js';
import type { OnDemandPrices, SpotPrices } from '../ports/market-prices.js';
import type { Metrics } from '../ports/metrics.js';

export interface MarketPricePorts {
  /** Absent where no spot market is reachable (locally, the replay): spot pools are priced by the on-demand price. */
  spotPrices?: SpotPrices;
  /** Absent where no price list is reachable (locally, the replay, GovCloud and China): pools are priced by the built-in list. */
  onDemandPrices?: OnDemandPrices;
  log: Log;
  metrics: Metrics;
}

/** The pool's new price records, each only when its read was due (read, or failed): nothing else to store. */
export async function readDueMarketPrices(
  ports: MarketPricePorts,
  config: Pick<Config, 'scaleDown'>,
  poolConfig: PoolConfig,
  pool: Pick<PoolRecord, 'pool' | 'spotPrices' | 'onDemandPrices'>,
  now: Date,
): Promise<{ spotPrices?: SpotPriceRecord; onDemandPrices?: OnDemandPriceRecord }> {
  const [spotPrices, onDemandPrices] = await Promise.all([
    readDueSpotPrices(ports, config, poolConfig, pool, now),
    readDueOnDemandPrices(ports, config, poolConfig, pool, now),
  ]);
  return { ...(spotPrices ? { spotPrices } : {}), ...(onDemandPrices ? { onDemandPrices } : {}) };
}

/** The pool's new spot price record when a read was due (read, or failed), else undefined. */
export async function readDueSpotPrices(
  ports: MarketPricePorts,
  config: Pick<Config, 'scaleDown'>,
  poolConfig: PoolConfig,
  pool: Pick<PoolRecord, 'pool' | 'spotPrices'>,
  now: Date,
): Promise<SpotPriceRecord | undefined> {
  const market = ports.spotPrices;
  const types = market ? spotPricesDue(config.scaleDown, poolConfig, pool.spotPrices, now) : [];
  if (!market || types.length === 0) return undefined;
  const failed = { metric: 'SpotPriceReadFailures', message: 'spot prices not read: drains keep the last prices read (a day at most), then the on-demand price' };
  return readOrKeep(ports, pool.pool, pool.spotPrices ?? { types: [], byType: {} }, failed, now, async () => {
    const { byType, zones, byZone } = spotPricesByType(await market.currentSpotPrices(types));
    warnUnquoted(ports.log, pool.pool, types, byType, 'EC2 quotes no spot price for these instance types: their drains are priced by the on-demand price');
    ports.log.info('spot prices read', { pool: pool.pool, byType, zones });
    return { types, byType, zones, byZone, readAt: now.toISOString() };
  });
}

/** The pool's new on-demand price record when a read was due (read, or failed), else undefined. */
export async function readDueOnDemandPrices(
  ports: MarketPricePorts,
  config: Pick<Config, 'scaleDown'>,
  poolConfig: PoolConfig,
  pool: Pick<PoolRecord, 'pool' | 'onDemandPrices'>,
  now: Date,
): Promise<OnDemandPriceRecord | undefined> {
  const list = ports.onDemandPrices;
  const types = list ? onDemandPricesDue(config.scaleDown, poolConfig, pool.onDemandPrices, list.region, now) : [];
  if (!list || types.length === 0) return undefined;
  const failed = { metric: 'OnDemandPriceReadFailures', message: 'on-demand prices not read: drains keep the last prices read (30 days at most), then the built-in list' };
  return readOrKeep(ports, pool.pool, pool.onDemandPrices ?? { types: [], byType: {} }, failed, now, async () => {
    const byType = onDemandPricesByType(await list.onDemandPrices(types));
    warnUnquoted(ports.log, pool.pool, types, byType, `the AWS Price List has no on-demand price for these instance types in ${list.region}: their drains are priced by the built-in list`);
    ports.log.info('on-demand prices read', { pool: pool.pool, region: list.region, byType });
    return { types, byType, region: list.region, readAt: now.toISOString() };
  });
}

function warnUnquoted(log: Log, pool: string, types: readonly string[], byType: Record<string, number>, message: string): void {
  const unquoted = types.filter((type) => byType[type] === undefined);
  if (unquoted.length > 0) log.warn(message, { pool, unquoted });
}

/** The read's record, or on failure the last record (`kept`) with the failure noted: logged and counted, never thrown. */
async function readOrKeep<R extends { readAt?: string; failedAt?: string; failure?: string }>(
  ports: Pick<MarketPricePorts, 'log' | 'metrics'>,
  pool: string,
  kept: R,
  failed: { metric: string; message: string },
  now: Date,
  read: () => Promise<R>,
): Promise<R> {
  try {
    return await read();
  } catch (error) {
    const failure = describeError(error).slice(0, 512);
    ports.log.warn(failed.message, { pool, error: failure, retryable: error instanceof NodescalerError ? error.retryable : true, lastReadAt: kept.readAt });
    ports.metrics.record(failed.metric, 1, 'Count', { pool });
    return { ...kept, failedAt: now.toISOString(), failure };
  }
}

/**
 * The markets read at most once for each set of instance types while this
 * wrapper lives (one evaluator batch): pools that share their types, and come
 * due together on their first evaluation, make one request, not one each.
 * Once a market's read fails, its other reads of the batch fail at once with
 * the same error: an endpoint that timed out for one pool would make every
 * pool wait its seconds again.
 */
export function onceABatch({ spotPrices, onDemandPrices }: Pick<MarketPricePorts, 'spotPrices' | 'onDemandPrices'>): Pick<MarketPricePorts, 'spotPrices' | 'onDemandPrices'> {
  return {
    ...(spotPrices ? { spotPrices: { currentSpotPrices: memoByTypes((types) => spotPrices.currentSpotPrices(types)) } } : {}),
    ...(onDemandPrices ? { onDemandPrices: { region: onDemandPrices.region, onDemandPrices: memoByTypes((types) => onDemandPrices.onDemandPrices(types)) } } : {}),
  };
}

function memoByTypes<T>(read: (instanceTypes: readonly string[]) => Promise<T>): (instanceTypes: readonly string[]) => Promise<T> {
  const reads = new Map<string, Promise<T>>();
  let failed: { error: unknown } | undefined;
  return (instanceTypes) => {
    const key = [...instanceTypes].sort().join(',');
    let done = reads.get(key);
    if (!done) {
      done = failed ? Promise.reject(failed.error) : read(instanceTypes);
      done.catch((error: unknown) => (failed ??= { error }));
      reads.set(key, done);
    }
    return done;
  };
}
