import { GetProductsCommand, PricingClient, type Filter } from '@aws-sdk/client-pricing';
import type { Settings } from '../../config/index.js';
import type { OnDemandQuote } from '../../domain/market-prices.js';
import { TransientError, ValidationError } from '../../errors.js';
import type { OnDemandPrices } from '../../ports/market-prices.js';
import { priceReadClientConfig } from '../aws-clients.js';
import { awsErrorInfo } from '../aws-errors.js';

/** One type's products in a region: a handful with these filters; more pages than this is a loop, not a price list. */
const MOST_PAGES = 5;

/**
 * The Price List API answers in three regions; a stage's nearest one, as
 * Karpenter's pricing provider picks it. GovCloud has no price list, and
 * China's is another partition priced in yuan: neither is read (undefined),
 * and the built-in list prices their pools.
 */
export function priceListRegionFor(region: string): string | undefined {
  if (region.startsWith('us-gov-') || region.startsWith('cn-')) return undefined;
  if (region.startsWith('ap-')) return 'ap-south-1';
  if (region.startsWith('eu-')) return 'eu-central-1';
  return 'us-east-1';
}

/**
 * The on-demand prices of a pool's instance types in the stage's region, for
 * the pays-off check (lib/app/market-prices.ts): `GetProducts` per type, with
 * the filters Karpenter's pricing provider reads on-demand prices with (Linux,
 * no preinstalled software, shared tenancy, capacity in use, on demand).
 *
 * Contract: see `OnDemandPrices`. A product that does not name the asked type,
 * or whose hourly USD price is not a positive number, is left out.
 */
export class AwsOnDemandPrices implements OnDemandPrices {
  constructor(
    private readonly client: PricingClient,
    readonly region: string,
  ) {}

  async onDemandPrices(instanceTypes: readonly string[]): Promise<OnDemandQuote[]> {
    const quotes: OnDemandQuote[] = [];
    for (const instanceType of new Set(instanceTypes)) {
      let nextToken: string | undefined;
      for (let page = 0; page < MOST_PAGES; page++) {
        const input = { ServiceCode: 'AmazonEC2', FormatVersion: 'aws_v1', Filters: this.filters(instanceType), MaxResults: 100, ...(nextToken ? { NextToken: nextToken } : {}) };
        let output;
        try {
          output = await this.client.send(new GetProductsCommand(input));
        } catch (error) {
          const info = awsErrorInfo(error);
          if (!info.transient && info.clientFault) throw new ValidationError({ path: '', message: `the AWS Price List rejected the request (${info.detail})` }, 'GetProducts');
          throw new TransientError(`GetProducts failed: ${info.detail}`, { cause: error });
        }
        const products: unknown = output.PriceList;
        for (const product of Array.isArray(products) ? products : []) quotes.push(...quotesOf(product, instanceType));
        nextToken = output.NextToken || undefined;
        if (!nextToken) break;
      }
    }
    return quotes;
  }

  private filters(instanceType: string): Filter[] {
    const match = (Field: string, Value: string): Filter => ({ Type: 'TERM_MATCH', Field, Value });
    return [
      match('regionCode', this.region),
      match('instanceType', instanceType),
      match('operatingSystem', 'Linux'),
      match('preInstalledSw', 'NA'),
      match('tenancy', 'Shared'),
      match('capacitystatus', 'Used'),
      match('marketoption', 'OnDemand'),
      match('productFamily', 'Compute Instance'),
    ];
  }
}

interface PriceListProduct {
  product?: { attributes?: { instanceType?: unknown } };
  terms?: { OnDemand?: Record<string, { priceDimensions?: Record<string, { unit?: unknown; pricePerUnit?: { USD?: unknown } }> }> };
}

/** The hourly USD prices of one Price List product (a JSON document), when it is `instanceType`'s. */
function quotesOf(document: unknown, instanceType: string): OnDemandQuote[] {
  let product: PriceListProduct;
  try {
    product = (typeof document === 'string' ? JSON.parse(document) : JSON.parse(String(document))) as PriceListProduct;
  } catch {
    return [];
  }
  if (product?.product?.attributes?.instanceType !== instanceType) return [];
  const quotes: OnDemandQuote[] = [];
  for (const term of Object.values(product.terms?.OnDemand ?? {})) {
    for (const dimension of Object.values(term?.priceDimensions ?? {})) {
      const usd = dimension?.pricePerUnit?.USD;
      const dollars = typeof usd === 'string' ? Number(usd) : NaN;
      if (dimension?.unit === 'Hrs' && Number.isFinite(dollars) && dollars > 0) quotes.push({ instanceType, dollars });
    }
  }
  return quotes;
}

/** The evaluator's on-demand price reader for a stage (handler ec2: lib/config/adapters.ts); none where no price list is read. */
export function awsOnDemandPricesFor(settings: Settings): AwsOnDemandPrices | undefined {
  const { region } = settings.deployment;
  const endpoint = priceListRegionFor(region);
  return endpoint === undefined ? undefined : new AwsOnDemandPrices(new PricingClient(priceReadClientConfig(endpoint)), region);
}
