/**
 * What the cloud's markets say a node costs, read by the evaluator
 * (lib/app/market-prices.ts) and stored on the pool record: a spot pool's
 * spot prices, hour by hour and zone by zone, and every pool's on-demand
 * price in the stage's own region. The rules here decide when each is read
 * and how long a read may price drains; node-price.ts decides which price a
 * node gets.
 */
import type { OnDemandPriceRecord, SpotPriceRecord } from './model.js';
import type { PricedPool } from './node-price.js';

/** How often a spot pool's prices are read from EC2: they move a few times a day, and each read is one API call per pool. */
export const SPOT_PRICE_REFRESH_MS = 60 * 60_000;
/** After a failed read, the next try: soon enough that an hour's outage costs little, not every minute's evaluation. */
export const SPOT_PRICE_RETRY_MS = 10 * 60_000;
/** Spot prices older than this are not used: the list price is a safer guess than yesterday's spot market. */
export const SPOT_PRICE_MAX_AGE_MS = 24 * 60 * 60_000;

/** How often a pool's on-demand prices are read from the AWS Price List: they change a few times a year (Karpenter reads them every 12 hours too). */
export const ON_DEMAND_PRICE_REFRESH_MS = 12 * 60 * 60_000;
/** After a failed read, the next try; as for spot prices. */
export const ON_DEMAND_PRICE_RETRY_MS = SPOT_PRICE_RETRY_MS;
/** The region's list read within this beats the built-in table, which is another region's (us-east-1) and may be older still. */
export const ON_DEMAND_PRICE_MAX_AGE_MS = 30 * 24 * 60 * 60_000;

/** A spot read's prices still fit to price drains with. */
export interface UsableSpotPrices {
  byType: Readonly<Record<string, number>>;
  zones?: Readonly<Record<string, number>>;
  byZone?: Readonly<Record<string, Readonly<Record<string, number>>>>;
  readAt: string;
}

/** An on-demand read's prices still fit to price drains with, and the region they are for. */
export interface UsableOnDemandPrices {
  byType: Readonly<Record<string, number>>;
  region: string;
  readAt: string;
}

/** The market prices a pool's drains are priced with (node-price.ts nodeHourPriceOf). */
export interface MarketPrices {
  spot?: UsableSpotPrices;
  onDemand?: UsableOnDemandPrices;
}

const ageOf = (at: string, now: Date) => now.getTime() - Date.parse(at);

/** The record's prices when they are recent enough to use; undefined otherwise (the pool is priced as if none were read). */
export function usableSpotPrices(record: SpotPriceRecord | undefined, now: Date): UsableSpotPrices | undefined {
  if (!record?.readAt || !(ageOf(record.readAt, now) <= SPOT_PRICE_MAX_AGE_MS)) return undefined;
  return { byType: record.byType, readAt: record.readAt, ...(record.zones ? { zones: record.zones } : {}), ...(record.byZone ? { byZone: record.byZone } : {}) };
}

/** The record's prices when they are recent enough to use; undefined otherwise (the built-in list prices the pool). */
export function usableOnDemandPrices(record: OnDemandPriceRecord | undefined, now: Date): UsableOnDemandPrices | undefined {
  if (!record?.readAt || record.region === undefined || !(ageOf(record.readAt, now) <= ON_DEMAND_PRICE_MAX_AGE_MS)) return undefined;
  return { byType: record.byType, region: record.region, readAt: record.readAt };
}

/** Every price a pool record holds that may price its drains now. */
export function usableMarketPrices(pool: { spotPrices?: SpotPriceRecord; onDemandPrices?: OnDemandPriceRecord }, now: Date): MarketPrices {
  const spot = usableSpotPrices(pool.spotPrices, now);
  const onDemand = usableOnDemandPrices(pool.onDemandPrices, now);
  return { ...(spot ? { spot } : {}), ...(onDemand ? { onDemand } : {}) };
}

type PayoffSettings = { enabled: boolean; payoff: { enabled: boolean; nodeHourPrice?: number | undefined } };

/** The pool's instance types when its drains are priced by a market: the pays-off check runs, and no operator price covers the pool. */
function marketPriced(scaleDown: PayoffSettings, pool: PricedPool): string[] {
  if (pool.nodeHourPrice !== undefined || !scaleDown.enabled || !scaleDown.payoff.enabled || scaleDown.payoff.nodeHourPrice !== undefined) return [];
  return [...new Set((pool.template?.instanceTypes ?? []).map((type) => type.name))];
}

/**
 * `types` when a read of them is due: at once when the last read covers
 * other types (the pool's list changed) or is not `current`, else once
 * `refreshMs` after it; after a failure, `retryMs` after it.
 */
function readDue(
  types: string[],
  record: { types: string[]; readAt?: string | undefined; failedAt?: string | undefined } | undefined,
  now: Date,
  { refreshMs, retryMs, current = true }: { refreshMs: number; retryMs: number; current?: boolean },
): string[] {
  if (types.length === 0) return [];
  const since = (at: string | undefined) => (at === undefined ? Infinity : ageOf(at, now));
  const covers = current && record !== undefined && types.every((type) => record.types.includes(type));
  if (covers && since(record?.readAt) < refreshMs) return [];
  if (since(record?.failedAt) < retryMs && since(record?.failedAt) < since(record?.readAt)) return [];
  return types;
}

/**
 * The instance types whose spot prices the evaluator should read now for
 * this pool, or none. Only a spot pool whose drains no operator price covers
 * is read (what an operator wrote comes first), only while the pays-off check
 * prices drains, and at most once per SPOT_PRICE_REFRESH_MS (SPOT_PRICE_RETRY_MS
 * after a failure).
 */
export function spotPricesDue(scaleDown: PayoffSettings, pool: PricedPool, record: SpotPriceRecord | undefined, now: Date): string[] {
  if (!pool.template?.spot) return [];
  return readDue(marketPriced(scaleDown, pool), record, now, { refreshMs: SPOT_PRICE_REFRESH_MS, retryMs: SPOT_PRICE_RETRY_MS });
}

/**
 * The instance types whose on-demand prices in `region` the evaluator should
 * read now for this pool, or none: any pool whose drains no operator price
 * covers (a spot pool too: its on-demand price is what a type the spot market
 * does not quote costs), at most once per ON_DEMAND_PRICE_REFRESH_MS, and at
 * once when the last read was for another region.
 */
export function onDemandPricesDue(scaleDown: PayoffSettings, pool: PricedPool, record: OnDemandPriceRecord | undefined, region: string, now: Date): string[] {
  const current = record?.region === undefined || record.region === region;
  return readDue(marketPriced(scaleDown, pool), record, now, { refreshMs: ON_DEMAND_PRICE_REFRESH_MS, retryMs: ON_DEMAND_PRICE_RETRY_MS, current });
}

/** One zone's current spot price of one instance type, as EC2 quotes it. */
export interface SpotQuote {
  instanceType: string;
  zone: string;
  dollars: number;
}

/** One instance type's on-demand price (Linux, shared tenancy) in the region read, as the AWS Price List gives it. */
export interface OnDemandQuote {
  instanceType: string;
  dollars: number;
}

const isPrice = (dollars: number) => Number.isFinite(dollars) && dollars > 0;

/**
 * Each type's price in each zone, and its median over the zones: a node whose
 * zone is known is priced at its zone's; one whose zone is not (adopted, or
 * launched before zones were recorded), at the median, so one zone's spike or
 * slump does not price it.
 */
export function spotPricesByType(quotes: readonly SpotQuote[]): {
  byType: Record<string, number>;
  zones: Record<string, number>;
  byZone: Record<string, Record<string, number>>;
} {
  const byZone = new Map<string, Map<string, number>>();
  for (const quote of quotes) {
    if (!isPrice(quote.dollars)) continue;
    let zones = byZone.get(quote.instanceType);
    if (!zones) byZone.set(quote.instanceType, (zones = new Map()));
    zones.set(quote.zone, quote.dollars);
  }
  const byType: Record<string, number> = {};
  const zones: Record<string, number> = {};
  const zonal: Record<string, Record<string, number>> = {};
  for (const [type, prices] of [...byZone].sort(([a], [b]) => a.localeCompare(b))) {
    const sorted = [...prices.values()].sort((a, b) => a - b);
    const middle = sorted.length >> 1;
    byType[type] = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
    zones[type] = sorted.length;
    zonal[type] = Object.fromEntries([...prices].sort(([a], [b]) => a.localeCompare(b)));
  }
  return { byType, zones, byZone: zonal };
}

/**
 * Each type's on-demand price. Of several quotes for one type (the Price List
 * has a product per usage type and term), the lowest counts: a drain priced
 * too low is refused, one priced too high restarts tenants for money it does
 * not save.
 */
export function onDemandPricesByType(quotes: readonly OnDemandQuote[]): Record<string, number> {
  const byType: Record<string, number> = {};
  for (const { instanceType, dollars } of [...quotes].sort((a, b) => a.instanceType.localeCompare(b.instanceType))) {
    if (!isPrice(dollars)) continue;
    const held = byType[instanceType];
    if (held === undefined || dollars < held) byType[instanceType] = dollars;
  }
  return byType;
}
