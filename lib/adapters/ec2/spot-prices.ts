import { DescribeSpotPriceHistoryCommand, EC2Client, type SpotPrice, type _InstanceType } from '@aws-sdk/client-ec2';
import type { Settings } from '../../config/index.js';
import type { SpotQuote } from '../../domain/market-prices.js';
import { TransientError, ValidationError } from '../../errors.js';
import type { Clock } from '../../ports/clock.js';
import type { SpotPrices } from '../../ports/market-prices.js';
import { priceReadClientConfig } from '../aws-clients.js';
import { awsErrorInfo } from '../aws-errors.js';

/** Both names EC2 has sold Linux spot capacity under; an account sees one or the other. */
const LINUX = ['Linux/UNIX', 'Linux/UNIX (Amazon VPC)'];
const PAGE = 1000;
/** A pool names a handful of types in a few zones: more pages than this is a loop, not a price list. */
const MOST_PAGES = 20;

/**
 * The spot prices of a spot pool's instance types, for the pays-off check
 * (lib/app/spot-prices.ts): `DescribeSpotPriceHistory` from now, which EC2
 * answers with the price in effect now in each zone (the last change before
 * the start time), as Karpenter's pricing provider reads it.
 *
 * Contract: see `SpotPrices`. Of several quotes for one type and zone (both
 * product names, or a change since the start), the latest counts.
 */
export class Ec2SpotPrices implements SpotPrices {
  constructor(
    private readonly client: EC2Client,
    private readonly clock: Clock,
  ) {}

  async currentSpotPrices(instanceTypes: readonly string[]): Promise<SpotQuote[]> {
    if (instanceTypes.length === 0) return [];
    const latest = new Map<string, { quote: SpotQuote; at: number }>();
    const startTime = this.clock.now();
    let nextToken: string | undefined;
    for (let page = 0; page < MOST_PAGES; page++) {
      const input = {
        // Any name EC2 knows, not only the SDK's list at build time: a newer type is quoted too.
        InstanceTypes: [...instanceTypes] as _InstanceType[],
        ProductDescriptions: LINUX,
        StartTime: startTime,
        MaxResults: PAGE,
        ...(nextToken ? { NextToken: nextToken } : {}),
      };
      let output;
      try {
        output = await this.client.send(new DescribeSpotPriceHistoryCommand(input));
      } catch (error) {
        const info = awsErrorInfo(error);
        if (!info.transient && info.clientFault) throw new ValidationError({ path: '', message: `EC2 rejected the request (${info.detail})` }, 'DescribeSpotPriceHistory');
        throw new TransientError(`DescribeSpotPriceHistory failed: ${info.detail}`, { cause: error });
      }
      for (const record of output.SpotPriceHistory ?? []) {
        const quote = quoteOf(record);
        if (!quote) continue;
        const key = `${quote.instanceType}@${quote.zone}`;
        const at = record.Timestamp ? record.Timestamp.getTime() : 0;
        const held = latest.get(key);
        if (!held || at >= held.at) latest.set(key, { quote, at });
      }
      nextToken = output.NextToken || undefined;
      if (!nextToken) break;
    }
    return [...latest.values()].map((held) => held.quote);
  }
}

/** A record EC2 returned, when it names a type and a zone and a price that is a positive number. */
function quoteOf(record: SpotPrice): SpotQuote | undefined {
  const dollars = Number(record.SpotPrice);
  if (!record.InstanceType || !record.AvailabilityZone || typeof record.SpotPrice !== 'string' || !(Number.isFinite(dollars) && dollars > 0)) return undefined;
  return { instanceType: record.InstanceType, zone: record.AvailabilityZone, dollars };
}

/** The evaluator's spot price reader for a stage (only built for a stage with spot pools: lib/config/adapters.ts). */
export function ec2SpotPricesFor(settings: Settings, clock: Clock): Ec2SpotPrices {
  return new Ec2SpotPrices(new EC2Client(priceReadClientConfig(settings.deployment.region)), clock);
}
