import { readFileSync } from 'node:fs';
import { EC2Client } from '@aws-sdk/client-ec2';
import { Route53Client } from '@aws-sdk/client-route-53';
import { S3Client } from '@aws-sdk/client-s3';
import { SNSClient } from '@aws-sdk/client-sns';
import type { Context, SQSBatchResponse, SQSEvent, ScheduledEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DynamoDbStateStore } from '../../lib/adapters/dynamodb/state-store.js';
import { startLocalDynamo, type LocalDynamo } from '../../lib/adapters/local/dynalite.js';
import type { DecommissionerTickReport } from '../../lib/app/decommission.js';
import { loadSettings } from '../../lib/config/index.js';
import { decommissionerHandler } from '../../lib/handlers/decommissioner.js';
import { awsDecommissioner } from '../../lib/wiring/aws/decommissioner.js';
import { FakePlatform } from '../support/fake-platform.js';
import { lambdaContext, quietRuntime, scheduledEvent } from '../support/sqs-events.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';

const event = <T>(name: string): T => JSON.parse(readFileSync(new URL(`../../events/${name}`, import.meta.url), 'utf8')) as T;
type Handler = (event: SQSEvent | ScheduledEvent, context: Context) => Promise<SQSBatchResponse | DecommissionerTickReport>;
const NODE = 'node-3.example.com';

/**
 * events/drain-complete.json through the real handler, with the example
 * configuration (handler log), the state table in dynalite and an injected
 * platform that knows the node: the node is released in the state table and
 * no cloud is called.
 */
describe('decommissioner handler with handler log (dynalite; every cloud SDK mocked to catch any call)', () => {
  let local: LocalDynamo;
  let store: DynamoDbStateStore;
  let handler: Handler;
  const log = new MemoryLog();
  const platform = new FakePlatform().node(NODE, 'd1');
  const clouds = [mockClient(EC2Client), mockClient(Route53Client), mockClient(S3Client), mockClient(SNSClient)];
  const cloudCalls = () => clouds.reduce((total, mock) => total + mock.calls().length, 0);

  beforeAll(async () => {
    local = await startLocalDynamo({ tableName: 'decommissioner-handler-state' });
    store = new DynamoDbStateStore(DynamoDbStateStore.documentClient(local.client), local.tableName);
    // Read by the SDK, not by our settings.
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'local');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'local');
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-03-01T13:14:30Z'));
    await store.createNode(
      {
        nodeId: NODE,
        pool: 'd1/small',
        district: 'd1',
        profile: 'small',
        state: 'drained',
        createdAt: '2026-03-01T09:14:30.000Z',
        joinedAt: '2026-03-01T09:17:00.000Z',
        origin: 'provisioned',
        protected: false,
        cloudName: 'd1-small_3',
        steps: { hostRequested: '2026-03-01T09:14:30.000Z' },
      },
      new Date('2026-03-01T13:14:27Z'),
    );
    const settings = loadSettings({ NODESCALER_DYNAMODB_ENDPOINT: local.endpoint, NODESCALER_TABLE: local.tableName, NODESCALER_LOG_LEVEL: 'SILENT', AWS_REGION: 'us-east-1' });
    // The Lambda runtime with its log kept in memory; the test's platform knows the node.
    const aws = awsDecommissioner(settings, { ...quietRuntime('decommissioner', settings), log });
    handler = decommissionerHandler({ ...aws, ports: { ...aws.ports, platform } }) as unknown as Handler;
  });

  afterAll(async () => {
    vi.useRealTimers();
    vi.unstubAllEnvs();
    for (const mock of clouds) mock.restore();
    await local.close();
  });

  it('checks the gears, removes the node from its district, logs the host it would release, and records the node terminated', async () => {
    const result = (await handler(event<SQSEvent>('drain-complete.json'), lambdaContext())) as SQSBatchResponse;
    expect(result).toEqual({ batchItemFailures: [] });
    expect(platform.calls).toEqual([
      { op: 'listGears', nodeId: NODE },
      { op: 'removeNode', nodeId: NODE, district: 'd1' },
    ]);
    expect(await store.getNode(NODE)).toMatchObject({
      state: 'terminated',
      reason: `decommissioned: removed from district d1, host ${NODE} reported for release (no instance id)`,
    });
    expect((await store.getPool('d1/small'))?.lastScaleDownAt).toBe('2026-03-01T13:14:30.000Z');
    expect(log.lines.filter((line) => line.message.startsWith('handler log: would release')).map((line) => line.message)).toEqual([
      `handler log: would release the host of node ${NODE} in pool d1/small; nothing was terminated`,
    ]);
    expect(cloudCalls()).toBe(0);
  });

  it('does nothing for the same event delivered again, nor on the tick', async () => {
    const result = (await handler(event<SQSEvent>('drain-complete.json'), lambdaContext())) as SQSBatchResponse;
    expect(result).toEqual({ batchItemFailures: [] });
    const report = (await handler(scheduledEvent(new Date()), lambdaContext())) as DecommissionerTickReport;
    expect(report).toEqual({ terminated: [], waiting: [], refused: [], errors: [] });
    expect(platform.ops('removeNode')).toHaveLength(1);
    expect(cloudCalls()).toBe(0);
  });

  it('fails a malformed record alone, and a misrouted message too', async () => {
    const good = event<SQSEvent>('drain-complete.json').Records[0]!;
    const bad = { ...good, messageId: 'bad-1', body: '{"type":"drain-complete","v":1,"nodeId":"Node 3"}' };
    const misrouted = { ...good, messageId: 'bad-2', body: readFileSync(new URL('../../events/messages/scale-up.json', import.meta.url), 'utf8') };
    const result = (await handler({ Records: [bad, misrouted] }, lambdaContext())) as SQSBatchResponse;
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'bad-1' }, { itemIdentifier: 'bad-2' }] });
    expect(cloudCalls()).toBe(0);
  });
});
