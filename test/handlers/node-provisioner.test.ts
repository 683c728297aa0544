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
import type { ProvisionerTickReport } from '../../lib/app/provision.js';
import { loadSettings } from '../../lib/config/index.js';
import { nodeProvisionerHandler } from '../../lib/handlers/node-provisioner.js';
import { awsNodeProvisioner } from '../../lib/wiring/aws/node-provisioner.js';
import { lambdaContext, quietRuntime, scheduledEvent } from '../support/sqs-events.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';

const event = <T>(name: string): T => JSON.parse(readFileSync(new URL(`../../events/${name}`, import.meta.url), 'utf8')) as T;
type Handler = (event: SQSEvent | ScheduledEvent, context: Context) => Promise<SQSBatchResponse | ProvisionerTickReport>;

/**
 * events/scale-up.json through the real handler, with the example
 * configuration (handler log) and the state table in dynalite: the names are
 * allocated, the nodes recorded `provisioning`, and no cloud is called.
 */
describe('nodeProvisioner handler with handler log (dynalite; every cloud SDK mocked to catch any call)', () => {
  let local: LocalDynamo;
  let store: DynamoDbStateStore;
  let handler: Handler;
  const log = new MemoryLog();
  const clouds = [mockClient(EC2Client), mockClient(Route53Client), mockClient(S3Client), mockClient(SNSClient)];
  const cloudCalls = () => clouds.reduce((total, mock) => total + mock.calls().length, 0);
  const at = (iso: string) => vi.setSystemTime(new Date(iso));

  beforeAll(async () => {
    local = await startLocalDynamo({ tableName: 'provisioner-handler-state' });
    store = new DynamoDbStateStore(DynamoDbStateStore.documentClient(local.client), local.tableName);
    // Read by the SDK, not by our settings.
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'local');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'local');
    vi.useFakeTimers({ toFake: ['Date'] });
    at('2026-03-01T12:00:31Z');
    const settings = loadSettings({ NODESCALER_DYNAMODB_ENDPOINT: local.endpoint, NODESCALER_TABLE: local.tableName, NODESCALER_LOG_LEVEL: 'SILENT', AWS_REGION: 'us-east-1' });
    // The Lambda runtime, its log kept in memory.
    handler = nodeProvisionerHandler(awsNodeProvisioner(settings, { ...quietRuntime('nodeProvisioner', settings), log })) as unknown as Handler;
  });

  afterAll(async () => {
    vi.useRealTimers();
    vi.unstubAllEnvs();
    for (const mock of clouds) mock.restore();
    await local.close();
  });

  it('allocates the names, records both nodes provisioning, logs the full specification and calls no cloud', async () => {
    const result = (await handler(event<SQSEvent>('scale-up.json'), lambdaContext())) as SQSBatchResponse;
    expect(result).toEqual({ batchItemFailures: [] });

    const decisionId = 'up:d1_small:2026-03-01T12:00:30.000Z';
    const nodes = await store.listNodes('d1/small');
    expect(nodes.map((n) => [n.nodeId, n.cloudName, n.state, n.decisionId, n.origin, n.instanceId])).toEqual([
      ['d1-small-1.example.com', 'd1-small_1', 'provisioning', decisionId, 'provisioned', undefined],
      ['d1-small-2.example.com', 'd1-small_2', 'provisioning', decisionId, 'provisioned', undefined],
    ]);
    expect(nodes[0]!.steps?.hostRequested).toBe('2026-03-01T12:00:31.000Z');
    expect(nodes[0]!.reason).toBe('host requested through handler log; waiting for the node to report');
    expect(await store.getScaleUp(decisionId)).toMatchObject({ requested: 2, slots: [{ cloudName: 'd1-small_1' }, { cloudName: 'd1-small_2' }] });

    const wouldCreate = log.lines.filter((line) => line.message.startsWith('handler log: would create node'));
    expect(wouldCreate.map((line) => line.message)).toEqual([
      'handler log: would create node d1-small-1.example.com (d1-small_1) in pool d1/small; nothing was created',
      'handler log: would create node d1-small-2.example.com (d1-small_2) in pool d1/small; nothing was created',
    ]);
    expect(wouldCreate[0]!.attributes).toMatchObject({
      kind: 'add-node',
      pool: 'd1/small',
      district: 'd1',
      profile: 'small',
      hostName: 'd1-small-1.example.com',
      cloudName: 'd1-small_1',
      decisionId,
      requestId: `${decisionId}#0`,
      instanceType: 'm5.xlarge',
      subnetId: 'subnet-0123456789abcdef0',
      template: { imageId: 'ami-0123456789abcdef0', volume: { sizeGiB: 50, type: 'gp3', device: '/dev/xvdc' } },
    });
    expect(wouldCreate[0]!.attributes.userData).toContain("NODESCALER_HOST_NAME='d1-small-1.example.com'");
    expect(cloudCalls()).toBe(0);
  });

  it('does nothing more for the same event delivered again', async () => {
    const before = log.lines.length;
    const result = (await handler(event<SQSEvent>('scale-up.json'), lambdaContext())) as SQSBatchResponse;
    expect(result).toEqual({ batchItemFailures: [] });
    expect((await store.listNodes('d1/small')).map((n) => n.nodeId)).toEqual(['d1-small-1.example.com', 'd1-small-2.example.com']);
    expect(log.lines.slice(before).filter((line) => line.message.startsWith('handler log: would create'))).toEqual([]);
    expect(await store.allocateNameNumber('d1-small')).toBe(3);
    expect(cloudCalls()).toBe(0);
  });

  it('fails the nodes nobody created on the tick after maxNodeProvisionTime, and only updates the state table', async () => {
    at('2026-03-01T12:16:00Z');
    const report = (await handler(scheduledEvent(new Date()), lambdaContext())) as ProvisionerTickReport;
    expect(report.timedOut).toEqual(['d1-small-1.example.com', 'd1-small-2.example.com']);
    expect(report.released).toEqual(['d1-small-1.example.com', 'd1-small-2.example.com']);
    for (const nodeId of ['d1-small-1.example.com', 'd1-small-2.example.com']) expect((await store.getNode(nodeId))?.state).toBe('terminated');
    expect(log.lines.filter((line) => line.message.startsWith('handler log: would release'))).toHaveLength(2);
    expect(cloudCalls()).toBe(0);
  });

  it('fails a malformed record alone', async () => {
    const good = event<SQSEvent>('scale-up.json').Records[0]!;
    const bad = { ...good, messageId: 'bad-1', body: '{"type":"scale-up","v":1,"count":0}' };
    const result = (await handler({ Records: [bad] }, lambdaContext())) as SQSBatchResponse;
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'bad-1' }] });
    expect(cloudCalls()).toBe(0);
  });
});
