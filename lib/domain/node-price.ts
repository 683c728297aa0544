/**
 * What one node-hour costs, for the pays-off check (payoff.ts): a drain's
 * saving is the hours its node stays unneeded x this price, held against the
 * cost of its moves. A pool of m5.4xlarge nodes saves four times what a pool of
 * m5.xlarge nodes saves per node-hour, so one price for every pool drained big
 * nodes four times too rarely, or small ones too often.
 *
 * The on-demand list prices below are also what the replay bills with
 * (lib/sim/prices.ts): AWS, us-east-1 (N. Virginia), Linux, read on
 * PRICES_AS_OF from https://aws.amazon.com/ec2/pricing/on-demand/. They move
 * rarely; when they do, change them here only. A spot pool's nodes cost what
 * the spot market says, hour by hour and zone by zone: the evaluator reads it
 * (lib/app/spot-prices.ts) and stores it on the pool record, and the rules
 * here decide when to read and which price a node gets.
 */
import type { SpotPriceRecord } from './model.js';

export const PRICES_AS_OF = '2026-11-01';
export const PRICE_REGION = 'us-east-1';

/** $ per instance-hour, on-demand, Linux. */
export const INSTANCE_PRICES: Readonly<Record<string, number>> = {
  't3.large': 0.0832,
  't3.xlarge': 0.1664,
  'm5.large': 0.096,
  'm5.xlarge': 0.192,
  'm5.2xlarge': 0.384,
  'm5.4xlarge': 0.768,
  'm6i.large': 0.096,
  'm6i.xlarge': 0.192,
  'm6i.2xlarge': 0.384,
  'm6i.4xlarge': 0.768,
  'm7i.xlarge': 0.2016,
  'm7i.2xlarge': 0.4032,
  'c5.xlarge': 0.17,
  'c5.2xlarge': 0.34,
  'c6i.xlarge': 0.17,
  'c6i.2xlarge': 0.34,
  'r5.xlarge': 0.252,
  'r5.2xlarge': 0.504,
  'r6i.xlarge': 0.252,
  'r6i.2xlarge': 0.504,
};

/** The price of a node nothing else prices: an m5.xlarge on-demand, the node the defaults were chosen with. */
export const DEFAULT_NODE_HOUR_PRICE = 0.192;

/** $ per hour of one instance of `instanceType` on demand; undefined when the table does not know it. */
export function instancePrice(instanceType: string | undefined): number | undefined {
  return instanceType === undefined ? undefined : INSTANCE_PRICES[instanceType];
}

export interface PricedPool {
  /** What the operator pays for one of this pool's nodes (spot, reserved, another region). */
  nodeHourPrice?: number;
  template?: { instanceTypes: ReadonlyArray<{ name: string }>; spot?: boolean };
}

/** How often a spot pool's prices are read from EC2: they move a few times a day, and each read is one API call per pool. */
export const SPOT_PRICE_REFRESH_MS = 60 * 60_000;
/** After a failed read, the next try: soon enough that an hour's outage costs little, not every minute's evaluation. */
export const SPOT_PRICE_RETRY_MS = 10 * 60_000;
/** Spot prices older than this are not used: the list price is a safer guess than yesterday's spot market. */
export const SPOT_PRICE_MAX_AGE_MS = 24 * 60 * 60_000;

/** A spot read's prices still fit to price drains with. */
export interface UsableSpotPrices {
  byType: Readonly<Record<string, number>>;
  zones?: Readonly<Record<string, number>>;
  byZone?: Readonly<Record<string, Readonly<Record<string, number>>>>;
  readAt: string;
}

/** The record's prices when they are recent enough to use; undefined otherwise (the pool is priced as if none were read). */
export function usableSpotPrices(record: SpotPriceRecord | undefined, now: Date): UsableSpotPrices | undefined {
  if (!record?.readAt) return undefined;
  const age = now.getTime() - Date.parse(record.readAt);
  if (!(age <= SPOT_PRICE_MAX_AGE_MS)) return undefined;
  return { byType: record.byType, readAt: record.readAt, ...(record.zones ? { zones: record.zones } : {}), ...(record.byZone ? { byZone: record.byZone } : {}) };
}

/**
 * The instance types whose spot prices the evaluator should read now for
 * this pool, or none. Only a spot pool whose drains no operator price covers
 * is read (what an operator wrote comes first), only while the pays-off check
 * prices drains, and at most once per SPOT_PRICE_REFRESH_MS (SPOT_PRICE_RETRY_MS
 * after a failure).
 */
export function spotPricesDue(
  scaleDown: { enabled: boolean; payoff: { enabled: boolean; nodeHourPrice?: number | undefined } },
  pool: PricedPool,
  record: SpotPriceRecord | undefined,
  now: Date,
): string[] {
  if (!pool.template?.spot || pool.nodeHourPrice !== undefined) return [];
  if (!scaleDown.enabled || !scaleDown.payoff.enabled || scaleDown.payoff.nodeHourPrice !== undefined) return [];
  const types = [...new Set(pool.template.instanceTypes.map((type) => type.name))];
  if (types.length === 0) return [];
  const since = (at: string | undefined) => (at === undefined ? Infinity : now.getTime() - Date.parse(at));
  // A record read for other types (the pool's list changed) is read again at once.
  const covers = record !== undefined && types.every((type) => record.types.includes(type));
  if (covers && since(record?.readAt) < SPOT_PRICE_REFRESH_MS) return [];
  if (since(record?.failedAt) < SPOT_PRICE_RETRY_MS && since(record?.failedAt) < since(record?.readAt)) return [];
  return types;
}

/** One zone's current spot price of one instance type, as EC2 quotes it. */
export interface SpotQuote {
  instanceType: string;
  zone: string;
  dollars: number;
}

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
    if (!(Number.isFinite(quote.dollars) && quote.dollars > 0)) continue;
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
 * The price of one node-hour of `pool`, for a node of `instanceType` (the
 * type it was launched as) in `zone`, when known. What an operator wrote comes first,
 * the pool's own price before the global one: only they know a reserved or
 * other region's price. Then, for a spot pool, the spot price EC2 quoted for
 * the node's type in its zone (else the type's median over zones, else the
 * pool's first type's); then the on-demand list price
 * of the node's type, else of the pool's first instance type, else the default.
 */
export function nodeHourPrice(payoff: { nodeHourPrice?: number | undefined }, pool: PricedPool | undefined, node: PricedNode = {}, spot?: UsableSpotPrices): number {
  return nodeHourPriceOf(payoff, pool, node, spot).dollars;
}

/** What of a node its price depends on: the type it was launched as and the zone it runs in, when known. */
export interface PricedNode {
  instanceType?: string | undefined;
  zone?: string | undefined;
}

/** `nodeHourPrice` with where it came from, as `nodescaler status` shows it. */
export function nodeHourPriceOf(
  payoff: { nodeHourPrice?: number | undefined },
  pool: PricedPool | undefined,
  { instanceType, zone }: PricedNode = {},
  spot?: UsableSpotPrices,
): { dollars: number; source: string } {
  if (pool?.nodeHourPrice !== undefined) return { dollars: pool.nodeHourPrice, source: "the pool's nodeHourPrice" };
  if (payoff.nodeHourPrice !== undefined) return { dollars: payoff.nodeHourPrice, source: 'scaleDown.payoff.nodeHourPrice' };
  const first = pool?.template?.instanceTypes[0]?.name;
  if (pool?.template?.spot && spot) {
    const zonal = instanceType === undefined || zone === undefined ? undefined : spot.byZone?.[instanceType]?.[zone];
    if (zonal !== undefined) return { dollars: zonal, source: `${instanceType} spot in ${zone}, read ${spot.readAt.slice(0, 16)}Z` };
    for (const type of [instanceType, first]) {
      const dollars = type === undefined ? undefined : spot.byType[type];
      if (dollars === undefined) continue;
      const zones = spot.zones?.[type!];
      const where = zones === undefined ? '' : zones === 1 ? ' in 1 zone' : `, the median of ${zones} zones`;
      return { dollars, source: `${type} spot${where}, read ${spot.readAt.slice(0, 16)}Z` };
    }
  }
  const own = instancePrice(instanceType);
  if (own !== undefined) return { dollars: own, source: `${instanceType} on demand, ${PRICE_REGION}` };
  const listed = instancePrice(first);
  if (listed !== undefined) return { dollars: listed, source: `${first} on demand, ${PRICE_REGION}` };
  return { dollars: DEFAULT_NODE_HOUR_PRICE, source: 'the default: an m5.xlarge on demand' };
}
