import { GetProductsCommand, PricingClient, PricingServiceException } from '@aws-sdk/client-pricing';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { AwsOnDemandPrices, awsOnDemandPricesFor, priceListRegionFor } from '../../lib/adapters/pricing/on-demand-prices.js';
import { loadSettings } from '../../lib/config/index.js';
import { TransientError, ValidationError } from '../../lib/errors.js';
import { priceListProduct as product, priceListRequest } from '../support/markets.js';

const pricingError = (name: string, status: number, message = `${name} (simulated)`) =>
  new PricingServiceException({ name, $fault: status >= 500 ? 'server' : 'client', message, $metadata: { httpStatusCode: status, requestId: 'req-test' } });

describe("AwsOnDemandPrices (a pool's on-demand prices in its region, for its drains)", () => {
  const pricing = mockClient(PricingClient);
  const prices = new AwsOnDemandPrices(new PricingClient({ region: 'eu-central-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' }, maxAttempts: 1 }), 'eu-west-1');
  beforeEach(() => pricing.reset());
  afterAll(() => pricing.restore());

  const asked = (instanceType: string, nextToken?: string) => priceListRequest('eu-west-1', instanceType, nextToken);

  it("asks for each type's Linux on-demand product in the stage's region, page by page, and reads its hourly USD price", async () => {
    pricing
      .on(GetProductsCommand)
      .resolvesOnce({ PriceList: [product('m5.xlarge', '0.2140000000')], NextToken: 'page-2' })
      .resolvesOnce({ PriceList: [], NextToken: '' })
      .resolvesOnce({ PriceList: [product('m6g.2xlarge', '0.3440000000')] });

    const quotes = await prices.onDemandPrices(['m5.xlarge', 'm6g.2xlarge', 'm5.xlarge']);

    expect(pricing.commandCalls(GetProductsCommand).map((call) => call.args[0].input)).toEqual([asked('m5.xlarge'), asked('m5.xlarge', 'page-2'), asked('m6g.2xlarge')]);
    expect(quotes).toEqual([
      { instanceType: 'm5.xlarge', dollars: 0.214 },
      { instanceType: 'm6g.2xlarge', dollars: 0.344 },
    ]);
    expect(prices.region).toBe('eu-west-1');
  });

  it('leaves out a document that is not JSON, another type\'s product, a unit other than hours and what is not a positive price', async () => {
    pricing.on(GetProductsCommand).resolves({
      PriceList: [
        '{"product": ',
        product('m5.2xlarge', '0.428'),
        product('m5.xlarge', '0.214', { unit: 'Quantity' }),
        product('m5.xlarge', '0.0000000000'),
        product('m5.xlarge', 'NaN'),
        JSON.stringify({ product: { attributes: { instanceType: 'm5.xlarge' } } }),
        product('m5.xlarge', '0.2140000000'),
      ],
    });
    expect(await prices.onDemandPrices(['m5.xlarge'])).toEqual([{ instanceType: 'm5.xlarge', dollars: 0.214 }]);
    expect(await prices.onDemandPrices([])).toEqual([]);
    expect(pricing.commandCalls(GetProductsCommand)).toHaveLength(1);
  });

  it('stops at 5 pages of one type: a token that never ends is a loop, not a price list', async () => {
    pricing.on(GetProductsCommand).resolves({ PriceList: [], NextToken: 'again' });
    expect(await prices.onDemandPrices(['m5.xlarge'])).toEqual([]);
    expect(pricing.commandCalls(GetProductsCommand)).toHaveLength(5);
  });

  it('translates throttling and server faults to a TransientError, access denied to a ValidationError naming the call', async () => {
    pricing
      .on(GetProductsCommand)
      .rejectsOnce(pricingError('ThrottlingException', 400))
      .rejectsOnce(pricingError('InternalErrorException', 500))
      .rejectsOnce(pricingError('AccessDeniedException', 403, 'User is not authorized to perform: pricing:GetProducts'));
    await expect(prices.onDemandPrices(['m5.xlarge'])).rejects.toBeInstanceOf(TransientError);
    await expect(prices.onDemandPrices(['m5.xlarge'])).rejects.toBeInstanceOf(TransientError);
    const denied = await prices.onDemandPrices(['m5.xlarge']).catch((error: unknown) => error);
    expect(denied).toBeInstanceOf(ValidationError);
    expect((denied as ValidationError).retryable).toBe(false);
    expect((denied as Error).message).toContain('GetProducts');
    expect((denied as Error).message).toContain('AccessDeniedException');
  });
});

describe('the Price List endpoint a stage reads', () => {
  it("is the nearest of the three the Price List answers in, as Karpenter picks it; none in GovCloud or China", () => {
    expect(priceListRegionFor('us-east-1')).toBe('us-east-1');
    expect(priceListRegionFor('sa-east-1')).toBe('us-east-1');
    expect(priceListRegionFor('eu-west-1')).toBe('eu-central-1');
    expect(priceListRegionFor('ap-northeast-1')).toBe('ap-south-1');
    expect(priceListRegionFor('us-gov-west-1')).toBeUndefined();
    expect(priceListRegionFor('cn-north-1')).toBeUndefined();
  });

  it("builds the reader for the stage's region, its client at the endpoint's; none where no price list is read", async () => {
    const settingsIn = (region: string) => loadSettings({ AWS_REGION: region, NODESCALER_CONFIG: JSON.stringify({ handler: 'log', pools: [{ district: 'd1', profile: 'small', max: 3, naming: { base: 'n' } }] }) });
    const reader = awsOnDemandPricesFor(settingsIn('ap-southeast-2'));
    expect(reader?.region).toBe('ap-southeast-2');
    expect(await (reader as unknown as { client: PricingClient }).client.config.region()).toBe('ap-south-1');
    expect(awsOnDemandPricesFor(settingsIn('us-gov-east-1'))).toBeUndefined();
  });
});
