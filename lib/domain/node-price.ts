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
 * rarely; when they do, change them here only. On AWS the evaluator reads
 * what the markets say instead (market-prices.ts): a spot pool's spot prices,
 * and every pool's on-demand price in the stage's own region, for types this
 * table does not know too. The rules here decide which price a node gets.
 */
import type { MarketPrices } from './market-prices.js';

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

/**
 * The price of one node-hour of `pool`, for a node of `instanceType` (the
 * type it was launched as) in `zone`, when known. What an operator wrote comes first,
 * the pool's own price before the global one: only they know a reserved or
 * discounted price. Then, for a spot pool, the spot price EC2 quoted for
 * the node's type in its zone (else the type's median over zones, else the
 * pool's first type's). Then the node's type's on-demand price, as read for
 * the stage's region, else as this table lists it (us-east-1); then the pool's
 * first type's, read or listed; else the default. A type's own price comes
 * before another type's in a better-known region: sizes differ by 2 to 8
 * times, regions by a tenth to a half.
 */
export function nodeHourPrice(payoff: { nodeHourPrice?: number | undefined }, pool: PricedPool | undefined, node: PricedNode = {}, market: MarketPrices = {}): number {
  return nodeHourPriceOf(payoff, pool, node, market).dollars;
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
  { spot, onDemand }: MarketPrices = {},
): { dollars: number; source: string } {
  if (pool?.nodeHourPrice !== undefined) return { dollars: pool.nodeHourPrice, source: "the pool's nodeHourPrice" };
  if (payoff.nodeHourPrice !== undefined) return { dollars: payoff.nodeHourPrice, source: 'scaleDown.payoff.nodeHourPrice' };
  const first = pool?.template?.instanceTypes[0]?.name;
  const types = [...new Set([instanceType, first])].filter((type) => type !== undefined);
  if (pool?.template?.spot && spot) {
    const zonal = instanceType === undefined || zone === undefined ? undefined : spot.byZone?.[instanceType]?.[zone];
    if (zonal !== undefined) return { dollars: zonal, source: `${instanceType} spot in ${zone}, read ${spot.readAt.slice(0, 16)}Z` };
    for (const type of types) {
      const dollars = spot.byType[type];
      if (dollars === undefined) continue;
      const zones = spot.zones?.[type];
      const where = zones === undefined ? '' : zones === 1 ? ' in 1 zone' : `, the median of ${zones} zones`;
      return { dollars, source: `${type} spot${where}, read ${spot.readAt.slice(0, 16)}Z` };
    }
  }
  for (const type of types) {
    const read = onDemand?.byType[type];
    if (onDemand && read !== undefined) return { dollars: read, source: `${type} on demand, ${onDemand.region}, read ${onDemand.readAt.slice(0, 16)}Z` };
    const listed = instancePrice(type);
    const builtIn = onDemand && onDemand.region !== PRICE_REGION ? ' (built-in list)' : '';
    if (listed !== undefined) return { dollars: listed, source: `${type} on demand, ${PRICE_REGION}${builtIn}` };
  }
  return { dollars: DEFAULT_NODE_HOUR_PRICE, source: 'the default: an m5.xlarge on demand' };
}
