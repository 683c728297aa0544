/**
 * The deployed evaluator's price readers: a stage whose handler ec2 launches
 * a spot pool builds the EC2 spot price reader, every handler ec2 stage the
 * Price List reader, and the one-minute tick reads the pools' types (EC2 and
 * the Price List mocked at the SDK, the exact requests checked) and stores
 * their prices on the pool records (dynalite).
 */
import { DescribeSpotPriceHistoryCommand, EC2Client } from '@aws-sdk/client-ec2';
import { GetProductsCommand, PricingClient } from '@aws-sdk/client-pricing';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DynamoDbStateStore } from '../../lib/adapters/dynamodb/state-store.js';
import { startLocalDynamo, type LocalDynamo } from '../../lib/adapters/local/dynalite.js';
import { loadSettings } from '../../lib/config/index.js';
import { thresholdEvaluatorHandler } from '../../lib/handlers/threshold-evaluator.js';
import { awsThresholdEvaluator } from '../../lib/wiring/aws/threshold-evaluator.js';
import { priceListProduct, priceListRequest } from '../support/markets.js';
import { lambdaContext, quietRuntime } from '../support/sqs-events.js';

type Handler = (event: ScheduledEvent, context: Context) => Promise<{ pools: number }>;

const template = (spot: boolean) => ({ imageId: 'ami-0123456789abcdef0', instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }], subnets: ['subnet-0123456789abcdef0'], spot });
const tick = { id: 'tick-1', 'detail-type': 'Scheduled Event', source: 'aws.events', account: '123456789012', time: '2026-11-29T12:00:00Z', region: 'us-east-1', resources: [], detail: {}, version: '0' } as ScheduledEvent;

describe('thresholdEvaluator handler reading prices (dynalite, EC2 and the Price List mocked at the SDK)', () => {
  let local: LocalDynamo;
  let store: DynamoDbStateStore;
  const ec2 = mockClient(EC2Client);
  const sqs = mockClient(SQSClient);
  const pricing = mockClient(PricingClient);

  beforeAll(async () => {
    local = await startLocalDynamo({ tableName: 'evaluator-spot-state' });
    store = new DynamoDbStateStore(DynamoDbStateStore.documentClient(local.client), local.tableName);
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'local');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'local');
    // No price listed unless a test lists one: the pools are priced by the built-in list.
    pricing.on(GetProductsCommand).resolves({ PriceList: [] });
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-29T12:00:00Z'));
  });

  afterAll(async () => {
    vi.useRealTimers();
    vi.unstubAllEnvs();
    ec2.restore();
    sqs.restore();
    pricing.restore();
    await local.close();
  });

  const handlerFor = (pools: object[]) => {
    const settings = loadSettings({
      NODESCALER_DYNAMODB_ENDPOINT: local.endpoint,
      NODESCALER_TABLE: local.tableName,
      NODESCALER_SCALE_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/nodescaler-dev-scale.fifo',
      NODESCALER_DRAIN_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/nodescaler-dev-drain.fifo',
      NODESCALER_LOG_LEVEL: 'SILENT',
      AWS_REGION: 'us-east-1',
      NODESCALER_CONFIG: JSON.stringify({ handler: 'ec2', platform: { kind: 'openshift-broker', brokerInstanceId: 'i-0b0b0b0b0b0b0b0b0' }, pools }),
    });
    return thresholdEvaluatorHandler(awsThresholdEvaluator(settings, quietRuntime('thresholdEvaluator', settings))) as unknown as Handler;
  };

  it('reads the spot pool\'s type once on the tick and stores its median price; an on-demand pool is not read', async () => {
    ec2.on(DescribeSpotPriceHistoryCommand).resolves({
      SpotPriceHistory: [
        { InstanceType: 'm5.xlarge', AvailabilityZone: 'us-east-1a', SpotPrice: '0.070100', ProductDescription: 'Linux/UNIX', Timestamp: new Date('2026-11-29T10:00:00Z') },
        { InstanceType: 'm5.xlarge', AvailabilityZone: 'us-east-1b', SpotPrice: '0.074300', ProductDescription: 'Linux/UNIX', Timestamp: new Date('2026-11-29T11:00:00Z') },
        { InstanceType: 'm5.xlarge', AvailabilityZone: 'us-east-1c', SpotPrice: '0.081000', ProductDescription: 'Linux/UNIX', Timestamp: new Date('2026-11-29T09:00:00Z') },
      ],
    });
    const handler = handlerFor([
      { district: 'd1', profile: 'spot', max: 5, naming: { base: 'spot' }, template: template(true) },
      { district: 'd1', profile: 'steady', max: 5, naming: { base: 'steady' }, template: template(false) },
    ]);

    expect(await handler(tick, lambdaContext())).toEqual({ pools: 2 });

    expect(ec2.commandCalls(DescribeSpotPriceHistoryCommand).map((call) => call.args[0].input)).toEqual([
      { InstanceTypes: ['m5.xlarge'], ProductDescriptions: ['Linux/UNIX', 'Linux/UNIX (Amazon VPC)'], StartTime: new Date('2026-11-29T12:00:00Z'), MaxResults: 1000 },
    ]);
    expect((await store.getPool('d1/spot'))?.spotPrices).toEqual({
      types: ['m5.xlarge'],
      byType: { 'm5.xlarge': 0.0743 },
      zones: { 'm5.xlarge': 3 },
      byZone: { 'm5.xlarge': { 'us-east-1a': 0.0701, 'us-east-1b': 0.0743, 'us-east-1c': 0.081 } },
      readAt: '2026-11-29T12:00:00.000Z',
    });
    expect((await store.getPool('d1/steady'))?.spotPrices).toBeUndefined();
  });

  it("reads the region's on-demand price of the types every pool names, once for the pools that share them, and stores it on each", async () => {
    pricing.reset();
    pricing.on(GetProductsCommand).resolves({ PriceList: [priceListProduct('m5.xlarge', '0.1920000000', { region: 'us-east-1' })] });
    const handler = handlerFor([
      { district: 'd4', profile: 'steady', max: 5, naming: { base: 'd4-steady' }, template: template(false) },
      { district: 'd5', profile: 'steady', max: 5, naming: { base: 'd5-steady' }, template: template(false) },
    ]);

    expect(await handler(tick, lambdaContext())).toEqual({ pools: 2 });

    expect(pricing.commandCalls(GetProductsCommand).map((call) => call.args[0].input)).toEqual([priceListRequest('us-east-1', 'm5.xlarge')]);
    for (const pool of ['d4/steady', 'd5/steady']) {
      expect((await store.getPool(pool))?.onDemandPrices, pool).toEqual({ types: ['m5.xlarge'], byType: { 'm5.xlarge': 0.192 }, region: 'us-east-1', readAt: '2026-11-29T12:00:00.000Z' });
    }
  });

  it('reads the types two spot pools share once for both in one tick', async () => {
    ec2.reset();
    ec2.on(DescribeSpotPriceHistoryCommand).resolves({
      SpotPriceHistory: [{ InstanceType: 'm5.xlarge', AvailabilityZone: 'us-east-1a', SpotPrice: '0.072000', ProductDescription: 'Linux/UNIX', Timestamp: new Date('2026-11-29T11:00:00Z') }],
    });
    const handler = handlerFor([
      { district: 'd2', profile: 'spot', max: 5, naming: { base: 'd2-spot' }, template: template(true) },
      { district: 'd3', profile: 'spot', max: 5, naming: { base: 'd3-spot' }, template: template(true) },
    ]);

    expect(await handler(tick, lambdaContext())).toEqual({ pools: 2 });

    expect(ec2.commandCalls(DescribeSpotPriceHistoryCommand)).toHaveLength(1);
    for (const pool of ['d2/spot', 'd3/spot']) expect((await store.getPool(pool))?.spotPrices?.byType, pool).toEqual({ 'm5.xlarge': 0.072 });
  });
});
