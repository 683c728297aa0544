/**
 * The deployed evaluator's wiring for a spot pool: a stage whose handler ec2
 * launches a spot pool builds the EC2 spot price reader, and the one-minute
 * tick reads the pool's types (EC2 mocked at the SDK, the exact request
 * checked) and stores their prices on the pool record (dynalite).
 */
import { DescribeSpotPriceHistoryCommand, EC2Client } from '@aws-sdk/client-ec2';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DynamoDbStateStore } from '../../lib/adapters/dynamodb/state-store.js';
import { startLocalDynamo, type LocalDynamo } from '../../lib/adapters/local/dynalite.js';
import { loadSettings } from '../../lib/config/index.js';
import { thresholdEvaluatorHandler } from '../../lib/handlers/threshold-evaluator.js';
import { awsThresholdEvaluator } from '../../lib/wiring/aws/threshold-evaluator.js';
import { lambdaContext } from '../support/sqs-events.js';

type Handler = (event: ScheduledEvent, context: Context) => Promise<{ pools: number }>;

const template = (spot: boolean) => ({ imageId: 'ami-0123456789abcdef0', instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }], subnets: ['subnet-0123456789abcdef0'], spot });
const tick = { id: 'tick-1', 'detail-type': 'Scheduled Event', source: 'aws.events', account: '123456789012', time: '2026-11-29T12:00:00Z', region: 'us-east-1', resources: [], detail: {}, version: '0' } as ScheduledEvent;

describe('thresholdEvaluator handler with a spot pool (dynalite, EC2 mocked at the SDK)', () => {
  let local: LocalDynamo;
  let store: DynamoDbStateStore;
  const ec2 = mockClient(EC2Client);
  const sqs = mockClient(SQSClient);

  beforeAll(async () => {
    local = await startLocalDynamo({ tableName: 'evaluator-spot-state' });
    store = new DynamoDbStateStore(DynamoDbStateStore.documentClient(local.client), local.tableName);
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'true');
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'local');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'local');
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-29T12:00:00Z'));
  });

  afterAll(async () => {
    vi.useRealTimers();
    vi.unstubAllEnvs();
    ec2.restore();
    sqs.restore();
    await local.close();
  });

  const handlerFor = (pools: object[]) =>
    thresholdEvaluatorHandler(
      awsThresholdEvaluator(
        loadSettings({
          NODESCALER_DYNAMODB_ENDPOINT: local.endpoint,
          NODESCALER_TABLE: local.tableName,
          NODESCALER_SCALE_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/nodescaler-dev-scale.fifo',
          NODESCALER_DRAIN_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/nodescaler-dev-drain.fifo',
          NODESCALER_LOG_LEVEL: 'SILENT',
          AWS_REGION: 'us-east-1',
          NODESCALER_CONFIG: JSON.stringify({ handler: 'ec2', platform: { kind: 'openshift-broker', brokerInstanceId: 'i-0b0b0b0b0b0b0b0b0' }, pools }),
        }),
      ),
    ) as unknown as Handler;

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
