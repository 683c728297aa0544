import { DescribeSpotPriceHistoryCommand, EC2Client } from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { Ec2SpotPrices } from '../../lib/adapters/ec2/spot-prices.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { TransientError, ValidationError } from '../../lib/errors.js';
import { ec2Error } from '../support/fake-ec2.js';

describe('Ec2SpotPrices (a spot pool\'s prices, for its drains)', () => {
  const ec2 = mockClient(EC2Client);
  const clock = new VirtualClock('2026-11-29T12:00:00Z');
  const prices = new Ec2SpotPrices(new EC2Client({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' }, maxAttempts: 1 }), clock);
  const record = (type: string, zone: string, price: string, at: string, product = 'Linux/UNIX') => ({
    InstanceType: type as never,
    AvailabilityZone: zone,
    SpotPrice: price,
    ProductDescription: product as never,
    Timestamp: new Date(at),
  });
  beforeEach(() => ec2.reset());
  afterAll(() => ec2.restore());

  it('asks for the Linux price in effect now of exactly the pool\'s types, page by page, and keeps the latest quote per type and zone', async () => {
    ec2
      .on(DescribeSpotPriceHistoryCommand)
      .resolvesOnce({
        SpotPriceHistory: [
          record('m5.xlarge', 'us-east-1a', '0.071200', '2026-11-29T09:10:00Z'),
          // The same zone under EC2's other Linux name, changed later: the later price counts.
          record('m5.xlarge', 'us-east-1a', '0.074000', '2026-11-29T11:40:00Z', 'Linux/UNIX (Amazon VPC)'),
          record('m5.xlarge', 'us-east-1b', '0.069900', '2026-11-29T08:00:00Z'),
        ],
        NextToken: 'page-2',
      })
      .resolvesOnce({ SpotPriceHistory: [record('m5.2xlarge', 'us-east-1a', '0.150100', '2026-11-29T10:00:00Z')], NextToken: '' });

    const quotes = await prices.currentSpotPrices(['m5.xlarge', 'm5.2xlarge']);

    const start = new Date('2026-11-29T12:00:00Z');
    const asked = { InstanceTypes: ['m5.xlarge', 'm5.2xlarge'], ProductDescriptions: ['Linux/UNIX', 'Linux/UNIX (Amazon VPC)'], StartTime: start, MaxResults: 1000 };
    expect(ec2.commandCalls(DescribeSpotPriceHistoryCommand).map((call) => call.args[0].input)).toEqual([asked, { ...asked, NextToken: 'page-2' }]);
    expect(quotes).toEqual([
      { instanceType: 'm5.xlarge', zone: 'us-east-1a', dollars: 0.074 },
      { instanceType: 'm5.xlarge', zone: 'us-east-1b', dollars: 0.0699 },
      { instanceType: 'm5.2xlarge', zone: 'us-east-1a', dollars: 0.1501 },
    ]);
  });

  it('leaves out what is not a positive price for a named type and zone, and asks nothing for no types', async () => {
    ec2.on(DescribeSpotPriceHistoryCommand).resolves({
      SpotPriceHistory: [
        record('m5.xlarge', 'us-east-1a', 'NaN', '2026-11-29T09:00:00Z'),
        record('m5.xlarge', 'us-east-1b', '-0.1', '2026-11-29T09:00:00Z'),
        record('m5.xlarge', 'us-east-1c', '0', '2026-11-29T09:00:00Z'),
        record('m5.xlarge', '', '0.07', '2026-11-29T09:00:00Z'),
        { SpotPrice: '0.07', AvailabilityZone: 'us-east-1d' },
        record('m5.xlarge', 'us-east-1f', '0.0705', '2026-11-29T09:00:00Z'),
      ],
    });
    expect(await prices.currentSpotPrices(['m5.xlarge'])).toEqual([{ instanceType: 'm5.xlarge', zone: 'us-east-1f', dollars: 0.0705 }]);
    expect(await prices.currentSpotPrices([])).toEqual([]);
    expect(ec2.commandCalls(DescribeSpotPriceHistoryCommand)).toHaveLength(1);
  });

  it('stops at 20 pages: a token that never ends is a loop, not a price list', async () => {
    ec2.on(DescribeSpotPriceHistoryCommand).resolves({ SpotPriceHistory: [record('m5.xlarge', 'us-east-1a', '0.07', '2026-11-29T09:00:00Z')], NextToken: 'again' });
    expect(await prices.currentSpotPrices(['m5.xlarge'])).toEqual([{ instanceType: 'm5.xlarge', zone: 'us-east-1a', dollars: 0.07 }]);
    expect(ec2.commandCalls(DescribeSpotPriceHistoryCommand)).toHaveLength(20);
  });

  it('translates throttling to a TransientError and access denied to a ValidationError naming the call', async () => {
    ec2
      .on(DescribeSpotPriceHistoryCommand)
      .rejectsOnce(ec2Error('RequestLimitExceeded', 503))
      .rejectsOnce(ec2Error('UnauthorizedOperation', 403, 'You are not authorized to perform this operation.'));
    await expect(prices.currentSpotPrices(['m5.xlarge'])).rejects.toBeInstanceOf(TransientError);
    const denied = await prices.currentSpotPrices(['m5.xlarge']).catch((error: unknown) => error);
    expect(denied).toBeInstanceOf(ValidationError);
    expect((denied as ValidationError).retryable).toBe(false);
    expect((denied as Error).message).toContain('DescribeSpotPriceHistory');
    expect((denied as Error).message).toContain('UnauthorizedOperation');
  });
});
