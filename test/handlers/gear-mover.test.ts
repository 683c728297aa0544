import { readFileSync } from 'node:fs';
import { SendMessageBatchCommand, SQSClient, type SendMessageBatchCommandInput } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, ScheduledEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { DynamoDbStateStore } from '../../lib/adapters/dynamodb/state-store.js';
import { startLocalDynamo, type LocalDynamo } from '../../lib/adapters/local/dynalite.js';
import { SimulatedPlatform } from '../../lib/adapters/local/simulated-platform.js';
import { drainIdFor } from '../../lib/domain/drain.js';
import type { GearInfo } from '../../lib/domain/model.js';
import { loadSettings } from '../../lib/config/index.js';
import { gearMoverHandler } from '../../lib/handlers/gear-mover.js';
import { awsGearMover } from '../../lib/wiring/aws/gear-mover.js';
import { TestClock } from '../support/gear-mover-world.js';
import { lambdaContext, quietRuntime, scheduledEvent } from '../support/sqs-events.js';

const DRAIN_QUEUE = 'https://sqs.us-east-1.amazonaws.com/123456789012/nodescaler-dev-drain.fifo';
const DECOMMISSION_QUEUE = 'https://sqs.us-east-1.amazonaws.com/123456789012/nodescaler-dev-decommission';
const SCALE_QUEUE = 'https://sqs.us-east-1.amazonaws.com/123456789012/nodescaler-dev-scale.fifo';
const event = <T>(name: string): T => JSON.parse(readFileSync(new URL(`../../events/${name}`, import.meta.url), 'utf8')) as T;

type Handler = (event: SQSEvent | ScheduledEvent, context: Context) => Promise<SQSBatchResponse | { pending: number; completed: number }>;

/**
 * The real handler over the AWS wiring, against dynalite, with SQS mocked at
 * the SDK; the platform (the simulated one) and the clock replace the AWS
 * ones, and without `wait` each invocation makes one pass, as in the local
 * runtime, and the ticks carry the drain on.
 */
describe('gearMover handler (dynalite, SQS mocked at the SDK, simulated platform injected)', () => {
  let local: LocalDynamo;
  let store: DynamoDbStateStore;
  let handler: Handler;
  const sqs = mockClient(SQSClient);
  const clock = new TestClock('2026-03-01T13:10:01.000Z');
  const sim = new SimulatedPlatform(clock, { moveDurationMs: 30_000, moveFailureRate: 0 });
  const gear = (uuid: string, app: string): GearInfo => ({ uuid, app, size: 'small' });

  async function node(nodeId: string, gears: GearInfo[], instanceId?: string): Promise<void> {
    sim.registerNode('d1', 'small', nodeId, 100);
    for (const g of gears) sim.putGear(nodeId, g);
    await store.createNode(
      { nodeId, pool: 'd1/small', district: 'd1', profile: 'small', state: 'active', createdAt: clock.now().toISOString(), origin: 'provisioned', protected: false, ...(instanceId ? { instanceId } : {}) },
      clock.now(),
    );
    await report();
  }

  async function report(): Promise<void> {
    for (const nodeId of sim.nodeIds()) {
      const facts = sim.nodeFacts(nodeId);
      await store.putNodeStats(nodeId, { activeGears: facts.activeGears, maxActiveGears: facts.maxActiveGears, reportedAt: clock.now().toISOString() });
    }
  }

  function sent(): SendMessageBatchCommandInput[] {
    return sqs.commandCalls(SendMessageBatchCommand).map((call) => call.args[0].input);
  }

  beforeAll(async () => {
    local = await startLocalDynamo({ tableName: 'gear-mover-handler-state' });
    store = new DynamoDbStateStore(DynamoDbStateStore.documentClient(local.client), local.tableName);
    // Read by the SDK, not by our settings.
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'local');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'local');
    // The configuration is the example file (pools d1/small and d1/medium, the defaults).
    const settings = loadSettings({
      NODESCALER_DYNAMODB_ENDPOINT: local.endpoint,
      NODESCALER_TABLE: local.tableName,
      NODESCALER_DRAIN_QUEUE_URL: DRAIN_QUEUE,
      NODESCALER_DECOMMISSION_QUEUE_URL: DECOMMISSION_QUEUE,
      NODESCALER_SCALE_QUEUE_URL: SCALE_QUEUE,
      NODESCALER_LOG_LEVEL: 'SILENT',
      AWS_REGION: 'us-east-1',
    });
    const aws = awsGearMover(settings, quietRuntime('gearMover', settings));
    const { wait: _realTimer, ...ports } = aws.ports;
    handler = gearMoverHandler({ ...aws, ports: { ...ports, platform: sim, clock } }) as unknown as Handler;

    await node('node-3.example.com', [gear('5f3c9a1e2b7d4c0e8a6f1d2c3b4a5968', 'shop-frontend'), gear('8a1b2c3d4e5f60718293a4b5c6d7e8f9', 'shop-api'), gear('0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f', 'blog')]);
    await node('node-4.example.com', [gear('aa01', 'wiki'), gear('aa02', 'crm')], 'i-1234567890abcdef0');
    await node('node-5.example.com', [gear('bb01', 'wiki')], 'i-0abcd1234ef567890');
    await node('node-6.example.com', []);
    await node('node-7.example.com', []);
  });

  afterAll(async () => {
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

  it('takes events/scale-down.json: one drain, node draining and closed, the first moves started', async () => {
    const message = event<SQSEvent>('scale-down.json');
    const decisionId = JSON.parse(message.Records[0]!.body).decisionId as string;
    await store.acquireLease('d1/small', { holder: decisionId, kind: 'scale-down', ttlMs: 900_000 }, clock.now());

    const result = (await handler(message, lambdaContext())) as SQSBatchResponse;
    expect(result).toEqual({ batchItemFailures: [] });

    const drainId = drainIdFor(decisionId);
    expect(drainId).toBe('drain:down:d1_small:2026-03-01T13:10:00.000Z');
    const drain = await store.getDrain(drainId);
    expect(drain).toMatchObject({ state: 'active', nodeId: 'node-3.example.com', pool: 'd1/small', kind: 'scale-down' });
    expect(drain?.moves.map((m) => m.state)).toEqual(['moving', 'moving', 'moving']);
    // Packed on the fullest node with room (drain-plan.ts), so the empty nodes, the next candidates, stay empty.
    expect(new Set(drain?.moves.map((m) => m.target))).toEqual(new Set(['node-4.example.com']));
    expect(await store.getNode('node-3.example.com')).toMatchObject({ state: 'draining', drainId });
    expect(sim.nodeFacts('node-3.example.com').active).toBe(false);
    expect((await store.getPool('d1/small'))?.lease).toBeUndefined();

    // The same message again (SQS delivers at least once) starts nothing new.
    expect(await handler(message, lambdaContext())).toEqual({ batchItemFailures: [] });
    expect((await store.listDrains('d1/small')).map((d) => d.drainId)).toEqual([drainId]);
    expect(sim.moveHistory()).toHaveLength(3);
  });

  it('finishes the drain on the one-minute tick and sends drain-complete to the decommission queue (exact request)', async () => {
    clock.advance(60_000);
    await report();
    const summary = await handler(scheduledEvent(clock.now()), lambdaContext());
    expect(summary).toMatchObject({ completed: 1, pending: 0 });
    const drainId = 'drain:down:d1_small:2026-03-01T13:10:00.000Z';
    const drain = await store.getDrain(drainId);
    expect(drain?.state).toBe('completed');
    expect(await store.getNode('node-3.example.com')).toMatchObject({ state: 'drained' });
    expect(sent()).toStrictEqual([
      {
        QueueUrl: DECOMMISSION_QUEUE,
        Entries: [
          {
            Id: '0',
            MessageBody: JSON.stringify({ type: 'drain-complete', v: 1, drainId, nodeId: 'node-3.example.com', pool: 'd1/small', completedAt: drain!.completedAt }),
          },
        ],
      },
    ]);
  });

  it('takes events/ec2-spot-interruption.json: the interrupted node drains at once', async () => {
    const result = (await handler(event<SQSEvent>('ec2-spot-interruption.json'), lambdaContext())) as SQSBatchResponse;
    expect(result).toEqual({ batchItemFailures: [] });
    const node = await store.getNode('node-4.example.com');
    expect(node).toMatchObject({ state: 'draining', drainId: 'drain:event:12345678-1234-1234-1234-123456789012' });
    expect(await store.getDrain(node!.drainId!)).toMatchObject({ kind: 'interruption', urgentCause: 'spot interruption warning (terminate)', state: 'active' });
    expect(sim.nodeFacts('node-4.example.com').active).toBe(false);
    // Its 5 gears (2 of its own, 3 it received above) move maxConcurrentMoves (3) at a time: two ticks.
    for (let tick = 0; tick < 2; tick++) {
      clock.advance(60_000);
      await report();
      await handler(scheduledEvent(clock.now()), lambdaContext());
    }
    expect(await store.getNode('node-4.example.com')).toMatchObject({ state: 'drained' });
  });

  it('takes events/ec2-state-change.json: a node terminated outside nodescaler is marked lost with its gears reported', async () => {
    const result = (await handler(event<SQSEvent>('ec2-state-change.json'), lambdaContext())) as SQSBatchResponse;
    expect(result).toEqual({ batchItemFailures: [] });
    const node = await store.getNode('node-5.example.com');
    expect(node?.state).toBe('lost');
    expect(node?.reason).toMatch(/^lost: instance i-0abcd1234ef567890 terminated outside nodescaler; \d gear\(s\) on it/);
    const [logged] = await store.listDecisions('d1/small', 1);
    expect(logged).toMatchObject({ kind: 'failure' });
    expect(logged?.reason).toMatch(/^node node-5\.example\.com lost/);
  });

  it('fails a malformed record alone and dead-letters nothing else', async () => {
    const good = event<SQSEvent>('ec2-spot-interruption.json').Records[0]!;
    const bad = { ...good, messageId: 'bad-1', body: '{"type":"scale-down","v":1}' };
    const result = (await handler({ Records: [bad, good] }, lambdaContext())) as SQSBatchResponse;
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'bad-1' }] });
  });
});
