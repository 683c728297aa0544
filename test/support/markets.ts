/**
 * The markets behind the `SpotPrices` and `OnDemandPrices` ports (and EC2's launch template versions), for
 * use-case tests: quotes that a test sets, failures it scripts, and every
 * request recorded. The adapters themselves are tested against the SDK mock
 * (test/unit/ec2-spot-prices.test.ts, test/unit/pricing-on-demand-prices.test.ts).
 */
import type { OnDemandQuote, SpotQuote } from '../../lib/domain/market-prices.js';
import type { NodescalerError } from '../../lib/errors.js';
import type { LaunchTemplateRef, LaunchTemplateVersions } from '../../lib/ports/cloud.js';
import type { OnDemandPrices, SpotPrices } from '../../lib/ports/market-prices.js';

export class ScriptedSpotMarket implements SpotPrices {
  /** $ per hour by type, then zone. */
  readonly prices = new Map<string, Record<string, number>>();
  /** The types of each request, in order. */
  readonly requests: string[][] = [];
  private readonly failures: NodescalerError[] = [];

  quote(instanceType: string, byZone: Record<string, number>): this {
    this.prices.set(instanceType, byZone);
    return this;
  }

  /** The next request fails with `error`. */
  failNext(error: NodescalerError): this {
    this.failures.push(error);
    return this;
  }

  async currentSpotPrices(instanceTypes: readonly string[]): Promise<SpotQuote[]> {
    this.requests.push([...instanceTypes]);
    const failure = this.failures.shift();
    if (failure) throw failure;
    return instanceTypes.flatMap((instanceType) => Object.entries(this.prices.get(instanceType) ?? {}).map(([zone, dollars]) => ({ instanceType, zone, dollars })));
  }
}

export class ScriptedPriceList implements OnDemandPrices {
  /** $ per hour by type. */
  readonly prices = new Map<string, number>();
  /** The types of each request, in order. */
  readonly requests: string[][] = [];
  private readonly failures: NodescalerError[] = [];

  constructor(readonly region = 'eu-west-1') {}

  quote(instanceType: string, dollars: number): this {
    this.prices.set(instanceType, dollars);
    return this;
  }

  /** The next request fails with `error`. */
  failNext(error: NodescalerError): this {
    this.failures.push(error);
    return this;
  }

  async onDemandPrices(instanceTypes: readonly string[]): Promise<OnDemandQuote[]> {
    this.requests.push([...instanceTypes]);
    const failure = this.failures.shift();
    if (failure) throw failure;
    return instanceTypes.flatMap((instanceType) => {
      const dollars = this.prices.get(instanceType);
      return dollars === undefined ? [] : [{ instanceType, dollars }];
    });
  }
}

/** One product of the Price List as GetProducts returns it (a JSON document per product), trimmed to what it always carries. */
export function priceListProduct(instanceType: string, usd: string, { unit = 'Hrs', region = 'eu-west-1' } = {}): string {
  return JSON.stringify({
    product: {
      productFamily: 'Compute Instance',
      attributes: { instanceType, regionCode: region, operatingSystem: 'Linux', tenancy: 'Shared', preInstalledSw: 'NA', capacitystatus: 'Used', vcpu: '4' },
      sku: 'JF5ZVPW2ZXQKB8WF',
    },
    serviceCode: 'AmazonEC2',
    terms: {
      OnDemand: {
        'JF5ZVPW2ZXQKB8WF.JRTCKXETXF': {
          offerTermCode: 'JRTCKXETXF',
          effectiveDate: '2026-11-01T00:00:00Z',
          priceDimensions: {
            'JF5ZVPW2ZXQKB8WF.JRTCKXETXF.6YS6EN2CT7': { unit, beginRange: '0', endRange: 'Inf', description: `$${usd} per On Demand Linux ${instanceType} Instance Hour`, pricePerUnit: { USD: usd } },
          },
        },
      },
    },
    version: '20261101000000',
  });
}

/** The GetProducts request the Price List adapter sends for one instance type in `region` (lib/adapters/pricing/on-demand-prices.ts). */
export function priceListRequest(region: string, instanceType: string, nextToken?: string) {
  return {
    ServiceCode: 'AmazonEC2',
    FormatVersion: 'aws_v1',
    Filters: [
      { Type: 'TERM_MATCH', Field: 'regionCode', Value: region },
      { Type: 'TERM_MATCH', Field: 'instanceType', Value: instanceType },
      { Type: 'TERM_MATCH', Field: 'operatingSystem', Value: 'Linux' },
      { Type: 'TERM_MATCH', Field: 'preInstalledSw', Value: 'NA' },
      { Type: 'TERM_MATCH', Field: 'tenancy', Value: 'Shared' },
      { Type: 'TERM_MATCH', Field: 'capacitystatus', Value: 'Used' },
      { Type: 'TERM_MATCH', Field: 'marketoption', Value: 'OnDemand' },
      { Type: 'TERM_MATCH', Field: 'productFamily', Value: 'Compute Instance' },
    ],
    MaxResults: 100,
    ...(nextToken ? { NextToken: nextToken } : {}),
  };
}

/** The `LaunchTemplateVersions` port for use-case tests: versions a test sets, failures it scripts, every request recorded (the adapter: test/unit/ec2-launch-template-versions.test.ts). */
export class ScriptedLaunchTemplates implements LaunchTemplateVersions {
  readonly versions = new Map<string, { latest: string; default: string }>();
  /** The template (id or name) of each request, in order. */
  readonly requests: string[] = [];
  private readonly failures: NodescalerError[] = [];

  set(template: string, latest: number, defaultVersion = latest): this {
    this.versions.set(template, { latest: String(latest), default: String(defaultVersion) });
    return this;
  }

  /** The next request fails with `error`. */
  failNext(error: NodescalerError): this {
    this.failures.push(error);
    return this;
  }

  async versionsOf(template: LaunchTemplateRef): Promise<{ latest: string; default: string }> {
    const key = template.id ?? template.name ?? '';
    this.requests.push(key);
    const failure = this.failures.shift();
    if (failure) throw failure;
    const found = this.versions.get(key);
    if (!found) throw new Error(`no versions set for ${key}`);
    return found;
  }
}
