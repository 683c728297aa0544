import { readFileSync } from 'node:fs';
import { SendMessageBatchCommand, SQSClient, type SendMessageBatchCommandInput } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, ScheduledEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { DynamoDbStateStore } from '../../lib/adapters/dynamodb/state-store.js';
import { startLocalDynamo, type LocalDynamo } from '../../lib/adapters/local/dynalite.js';
import { loadSettings } from '../../lib/config/index.js';
import { thresholdEvaluatorHandler } from '../../lib/handlers/threshold-evaluator.js';
import { awsThresholdEvaluator } from '../../lib/wiring/aws/threshold-evaluator.js';
import { lambdaContext, quietRuntime, sqsEvent, sqsRecord } from '../support/sqs-events.js';

const SCALE_QUEUE = 'https://sqs.us-east-1.amazonaws.com/123456789012/nodescaler-dev-scale.fifo';
const DRAIN_QUEUE = 'https://sqs.us-east-1.amazonaws.com/123456789012/nodescaler-dev-drain.fifo';
const event = <T>(name: string): T => JSON.parse(readFileSync(new URL(`../../events/${name}`, import.meta.url), 'utf8')) as T;

type Handler = (event: SQSEvent | ScheduledEvent, context: Context) => Promise<SQSBatchResponse | { pools: number }>;

describe('thresholdEvaluator handler (dynalite, SQS mocked at the SDK)', () => {
  let local: LocalDynamo;
  let store: DynamoDbStateStore;
  let handler: Handler;
  const sqs = mockClient(SQSClient);
  const at = (iso: string) => vi.setSystemTime(new Date(iso));

  beforeAll(async () => {
    local = await startLocalDynamo({ tableName: 'evaluator-handler-state' });
    store = new DynamoDbStateStore(DynamoDbStateStore.documentClient(local.client), local.tableName);
    // Read by the SDK, not by our settings.
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'local');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'local');
    vi.useFakeTimers({ toFake: ['Date'] });
    at('2026-11-21T10:00:30Z');
    const settings = loadSettings({
      NODESCALER_DYNAMODB_ENDPOINT: local.endpoint,
      NODESCALER_TABLE: local.tableName,
      NODESCALER_SCALE_QUEUE_URL: SCALE_QUEUE,
      NODESCALER_DRAIN_QUEUE_URL: DRAIN_QUEUE,
      NODESCALER_LOG_LEVEL: 'SILENT',
      AWS_REGION: 'us-east-1',
    });
    handler = thresholdEvaluatorHandler(awsThresholdEvaluator(settings, quietRuntime('thresholdEvaluator', settings))) as unknown as Handler;
  });

  afterAll(async () => {
    vi.useRealTimers();
    vi.unstubAllEnvs();
    sqs.restore();
    await local.close();
  });

  beforeEach(() => {
    sqs.reset();
    sqs.on(SendMessageBatchCommand).callsFake((input: SendMessageBatchCommandInput) => ({
      Successful: (input.Entries ?? []).map((entry) => ({ Id: entry.Id, MessageId: `sqs-${entry.Id}`, MD5OfMessageBody: 'x' })),
      Failed: [],
    }));
  });

  it('ingests events/node-stats.json: adopts every node with its stats and, with fewer free slots than headroomGears, scales up at once', async () => {
    const result = (await handler(event<SQSEvent>('node-stats.json'), lambdaContext())) as SQSBatchResponse;
    expect(result.batchItemFailures).toEqual([]);

    const small = await store.listNodes('d1/small');
    expect(small.map((n) => [n.nodeId, n.state, n.origin, n.stats?.activeGears])).toEqual([
      ['d1-small-1.example.com', 'active', 'adopted', 94],
      ['d1-small-2.example.com', 'active', 'adopted', 95],
      ['d1-small-3.example.com', 'active', 'adopted', 96],
      ['d1-small-4.example.com', 'active', 'adopted', 95],
    ]);
    // The agent's gear list: counted in the pool's listing, read with the node alone.
    expect(small[0]?.stats?.listed?.gears).toBe(94);
    expect(small[0]?.stats?.gears).toBeUndefined();
    expect((await store.getNode('d1-small-1.example.com'))?.stats?.gears).toHaveLength(94);
    expect((await store.listNodes('d1/medium')).map((n) => n.nodeId)).toEqual(['d1-medium-1.example.com']);

    // 380 of 400 slots used: 20 free < headroomGears 30 in infra/nodescaler.example.yml.
    const calls = sqs.commandCalls(SendMessageBatchCommand);
    expect(calls).toHaveLength(1);
    const input = calls[0]!.args[0].input;
    const decisionId = `up:d1_small:${Date.parse('2026-11-21T10:00:30Z')}`;
    expect(input.QueueUrl).toBe(SCALE_QUEUE);
    expect(input.Entries).toHaveLength(1);
    expect(input.Entries![0]).toMatchObject({ Id: '0', MessageGroupId: 'd1/small', MessageDeduplicationId: decisionId });
    const body = JSON.parse(input.Entries![0]!.MessageBody!);
    expect(body).toMatchObject({ type: 'scale-up', v: 1, decisionId, pool: 'd1/small', count: 1, decidedAt: '2026-11-21T10:00:30.000Z' });
    expect(body.reason).toMatch(/^pool d1\/small at 0\.95.*20 free slots < headroomGears 30; \+1 node to 0\.76/);

    const pool = await store.getPool('d1/small');
    expect(pool?.lease).toMatchObject({ holder: decisionId, kind: 'scale-up', sentAt: '2026-11-21T10:00:30.000Z' });
    expect(pool?.lastScaleUpAt).toBe('2026-11-21T10:00:30.000Z');
    const [logged] = await store.listDecisions('d1/small', 1);
    expect(logged).toMatchObject({ kind: 'scale-up', decisionId, reason: body.reason, details: { demand: 380, capacity: 400, freeSlots: 20 } });
    const [medium] = await store.listDecisions('d1/medium', 1);
    expect(medium?.kind).toBe('no-action');
  });

  it('does not decide twice while the decision is in flight: events/tick.json finds the lease', async () => {
    at('2026-11-21T10:02:45Z');
    const result = await handler(event<ScheduledEvent>('tick.json'), lambdaContext());
    expect(result).toEqual({ pools: 2 });
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
    const [logged] = await store.listDecisions('d1/small', 1);
    expect(logged?.kind).toBe('no-action');
    expect(logged?.reason).toMatch(/action in flight/);
  });

  it('fails exactly the malformed records of events/bad-batch.json and stores the good ones', async () => {
    at('2026-11-21T10:04:00Z');
    const batch = event<SQSEvent>('bad-batch.json');
    const result = (await handler(batch, lambdaContext())) as SQSBatchResponse;
    const bodies = batch.Records.map((r) => r.body);
    const malformed = batch.Records.filter((_, i) => i !== 0 && i !== bodies.length - 1).map((r) => r.messageId);
    expect(result.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(malformed);

    expect((await store.getNode('d1-small-1.example.com'))?.stats).toMatchObject({ activeGears: 70, reportedAt: '2026-11-21T10:00:20.000Z' });
    expect((await store.getNode('d1-small-2.example.com'))?.stats).toMatchObject({ activeGears: 65, reportedAt: '2026-11-21T10:00:26.000Z' });
    // The malformed records changed nothing: node 3 and 4 keep the stats of events/node-stats.json.
    expect((await store.getNode('d1-small-3.example.com'))?.stats).toMatchObject({ activeGears: 96, reportedAt: '2026-11-21T10:00:08.000Z' });
    expect((await store.getNode('d1-small-4.example.com'))?.stats).toMatchObject({ activeGears: 95 });
    expect(await store.getNode('d1-small-5.example.com')).toBeUndefined();
  });

  it('never lets the older stats of events/node-stats.json, redelivered, overwrite newer ones', async () => {
    at('2026-11-21T10:04:30Z');
    const result = (await handler(event<SQSEvent>('node-stats.json'), lambdaContext())) as SQSBatchResponse;
    expect(result.batchItemFailures).toEqual([]);
    expect((await store.getNode('d1-small-1.example.com'))?.stats?.activeGears).toBe(70);
    expect((await store.getNode('d1-small-2.example.com'))?.stats?.activeGears).toBe(65);
  });

  it('takes gears-refused from the broker host only: a node host\'s and a malformed one fail (dead-letter path) and change nothing', async () => {
    at('2026-11-21T10:05:00Z');
    const body = (over: Record<string, unknown> = {}) =>
      JSON.stringify({ type: 'gears-refused', v: 1, district: 'd1', profile: 'small', refused: 40, windowStart: '2026-11-21T10:04:00Z', windowEnd: '2026-11-21T10:05:00Z', ...over });
    const broker = sqsRecord(body(), { messageId: 'broker-1', attributes: { SenderId: 'AROAEXAMPLE123456789:i-0b0b0b0b0b0b0b0b0' } });
    const node = sqsRecord(body({ refused: 6000 }), { messageId: 'node-1', attributes: { SenderId: 'AROAEXAMPLENODEROLE01:i-0a1b2c3d4e5f60718' } });
    const malformed = sqsRecord(body({ refused: -1 }), { messageId: 'bad-1', attributes: { SenderId: 'AROAEXAMPLE123456789:i-0b0b0b0b0b0b0b0b0' } });
    const result = (await handler(sqsEvent([node, broker, malformed]), lambdaContext())) as SQSBatchResponse;
    expect(result.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(['node-1', 'bad-1']);
    expect((await store.getPool('d1/small'))?.refused).toEqual({ gears: 40, windowStart: '2026-11-21T10:04:00.000Z', windowEnd: '2026-11-21T10:05:00.000Z' });
  });
});
