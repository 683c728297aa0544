/**
 * Issue 18, item 2i: no broker wait may outlast the function's remaining time.
 * The evaluator awaited add-node for up to 120 s (the adapter's own timeout)
 * inside a 60 s function. The handler now sets the invocation's deadline
 * from the Lambda context and the broker adapter gives up before it. A slow
 * broker (the emulator, 90 s per command) behind the real adapter.
 */
import type { Context, SQSEvent, ScheduledEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { parseConfig } from '../../lib/config/index.js';
import { DEADLINE_MARGIN_MS } from '../../lib/handlers/deps.js';
import { thresholdEvaluatorHandler } from '../../lib/handlers/threshold-evaluator.js';
import { InvocationDeadline } from '../../lib/ports/deadline.js';
import { brokerOnEmulator } from '../support/broker-platform.js';
import { RecordingQueue } from '../support/recording-queue.js';
import { lambdaContext, sqsEvent, sqsRecord } from '../support/sqs-events.js';

type Handler = (event: SQSEvent | ScheduledEvent, context: Context) => Promise<unknown>;
const NODE = 'small-7.example.com';

describe('broker waits end with the invocation (broker emulator, 90 s per command)', () => {
  it('a 60 s evaluator gives add-node up before its end; the node stays provisioning for the next report', async () => {
    const clock = new VirtualClock(new Date('2026-11-24T01:00:00Z'));
    const deadline = new InvocationDeadline(clock);
    const { broker, platform } = brokerOnEmulator(clock, { commandLatencyMs: 90_000, deadline });
    broker.createDistrict('d1', 'small');
    broker.addNodeHost(NODE, 'small', 100);
    const store = new InMemoryStateStore();
    await store.createNode(
      { nodeId: NODE, pool: 'd1/small', district: 'd1', profile: 'small', state: 'provisioning', createdAt: clock.now().toISOString(), origin: 'provisioned', protected: false, decisionId: 'up:d1_small:1' },
      clock.now(),
    );
    const log = new MemoryLog();
    const config = parseConfig({ pools: [{ district: 'd1', profile: 'small', max: 10, gearsPerNode: 100 }], scaleUp: { forecast: { enabled: false } } });
    const handler = thresholdEvaluatorHandler({ config, deadline, ports: { store, queue: new RecordingQueue(), clock, metrics: new InMemoryMetrics(), log, platform } }) as unknown as Handler;
    const event = sqsEvent([sqsRecord({ type: 'node-stats', v: 1, nodeId: NODE, district: 'd1', profile: 'small', activeGears: 0, maxActiveGears: 100, reportedAt: clock.now().toISOString() })]);

    const started = clock.nowMs();
    await handler(event, lambdaContext({ remainingMs: 60_000 }));
    const spent = clock.nowMs() - started;

    // Simulated time: the wait ended before the function's end, less the margin kept for what follows.
    expect(spent).toBeLessThanOrEqual(60_000 - DEADLINE_MARGIN_MS + 1_000);
    expect(await store.getNode(NODE)).toMatchObject({ state: 'provisioning' });
    expect(log.lines.find((line) => line.level === 'error')?.attributes?.error).toMatch(/did not finish before the invocation's end/);
    expect(broker.sent.filter((input) => input.Parameters?.action?.[0] === 'add-node')).toHaveLength(1);
  });

  it('sends nothing when too little of the invocation is left to await an answer', async () => {
    const clock = new VirtualClock(new Date('2026-11-24T01:00:00Z'));
    const deadline = new InvocationDeadline(clock);
    const { broker, platform } = brokerOnEmulator(clock, { deadline });
    broker.createDistrict('d1', 'small');
    deadline.start(1_000);
    await expect(platform.addNode('d1', NODE)).rejects.toThrow(/not sent: the invocation has 1000 ms left; tried again next time/);
    expect(broker.sent).toEqual([]);
  });
});

describe('a long gear listing is paged and resumed (broker emulator)', () => {
  it('1,000 gears, 7 pages, a few pages per invocation: each page is listed once, and a later call returns them all', async () => {
    const clock = new VirtualClock(new Date('2026-11-24T01:00:00Z'));
    const deadline = new InvocationDeadline(clock);
    const { broker, platform } = brokerOnEmulator(clock, { deadline });
    broker.createDistrict('d1', 'small');
    broker.addNodeHost(NODE, 'small', 1_000);
    broker.joinDistrict('d1', NODE);
    for (let g = 0; g < 1_000; g++) broker.placeGear(NODE, { uuid: `g${String(g).padStart(4, '0')}`, app: `app-${g % 40}`, size: 'small' });

    let listed: unknown[] | undefined;
    let calls = 0;
    while (listed === undefined && calls < 10) {
      calls++;
      deadline.start(15_000);
      try {
        listed = await platform.listGears(NODE);
      } catch (error) {
        expect(String(error)).toMatch(/the invocation has \d+ ms left|before the invocation's end/);
      }
      clock.advance(60_000);
    }
    expect(listed).toHaveLength(1_000);
    expect(new Set((listed as Array<{ uuid: string }>).map((gear) => gear.uuid)).size).toBe(1_000);
    expect(calls).toBeGreaterThan(1);
    const pages = broker.sent.filter((input) => input.Parameters?.action?.[0] === 'list-gears').map((input) => input.Parameters?.offset?.[0] ?? '0');
    expect(pages).toEqual(['0', '150', '300', '450', '600', '750', '900']);
  });
});
