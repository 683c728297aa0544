import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { processSqsBatch } from '../../lib/adapters/lambda/sqs-batch.js';
import { FileQueue, LOCAL_MAX_RECEIVE_COUNT, queueOfArn } from '../../lib/adapters/local/file-queue.js';
import { clockFrom } from '../../lib/adapters/local/invoke.js';
import { PersistedPlatform } from '../../lib/adapters/local/persisted-platform.js';
import { parseConfig } from '../../lib/config/index.js';
import type { GearInfo, NodeRecord } from '../../lib/domain/model.js';
import { gearListSummary } from '../../lib/domain/node-stats.js';
import { NotFoundError } from '../../lib/errors.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { node, pool } from '../support/builders.js';
import { TransientError, ValidationError } from '../../lib/errors.js';
import type { Message } from '../../lib/messages/index.js';
import { sqsEvent, sqsRecord } from '../support/sqs-events.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';

const NOW = new Date('2026-11-21T10:02:45.000Z');
const clock = { now: () => NOW };
const scaleUp = (n: number): Message => ({
  type: 'scale-up',
  v: 1,
  decisionId: `up:d1_small:${n}`,
  pool: 'd1/small',
  count: 1,
  reason: 'test',
  decidedAt: NOW.toISOString(),
});

const dirs: string[] = [];
function queueDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'nodescaler-file-queue-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('FileQueue (the queues of npm run invoke)', () => {
  it('writes each queue as an SQS event a handler can take, with FIFO ids, and keeps it across instances', async () => {
    const dir = queueDir();
    await new FileQueue(dir, clock).send('scale', [{ body: scaleUp(1), groupId: 'd1/small', deduplicationId: 'up:d1_small:1' }]);
    await new FileQueue(dir, clock).send('scale', [{ body: scaleUp(2), groupId: 'd1/small', deduplicationId: 'up:d1_small:2' }]);

    const event = JSON.parse(readFileSync(join(dir, 'scale.json'), 'utf8')) as SQSEvent;
    expect(event.Records).toHaveLength(2);
    expect(event.Records[0]).toMatchObject({
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:local:000000000000:nodescaler-local-scale.fifo',
      attributes: { ApproximateReceiveCount: '1', MessageGroupId: 'd1/small', MessageDeduplicationId: 'up:d1_small:1', SentTimestamp: String(NOW.getTime()) },
    });
    expect(JSON.parse(event.Records[1]!.body)).toMatchObject({ type: 'scale-up', decisionId: 'up:d1_small:2' });
    expect(queueOfArn(event.Records[0]!.eventSourceARN)).toBe('scale');
  });

  it('drops a FIFO deduplication id seen in the last 5 minutes, and checks messages as SqsQueue does', async () => {
    const queue = new FileQueue(queueDir(), clock);
    const message = { body: scaleUp(1), groupId: 'd1/small', deduplicationId: 'up:d1_small:1' };
    await queue.send('scale', [message]);
    expect(await queue.send('scale', [message])).toEqual({ failed: [] });
    expect(queue.pending('scale')).toHaveLength(1);
    await expect(queue.send('scale', [{ body: scaleUp(3) }])).rejects.toThrow(ValidationError);
    expect(queue.pending('scale')).toHaveLength(1);
  });

  it('settles an invocation as SQS would: handled records leave, failed ones come back, after 3 receives they are dead letters', async () => {
    const queue = new FileQueue(queueDir(), clock);
    await queue.send('scale', [1, 2, 3].map((n) => ({ body: scaleUp(n), groupId: 'd1/small', deduplicationId: `up:d1_small:${n}` })));
    const [first, second, third] = queue.pending('scale');

    expect(queue.settle({ Records: [first, second] }, { batchItemFailures: [{ itemIdentifier: second!.messageId }] })).toEqual({
      queue: 'scale',
      acknowledged: 1,
      redelivered: 1,
      deadLettered: 0,
    });
    expect(queue.pending('scale').map((r) => [r.messageId, r.attributes.ApproximateReceiveCount])).toEqual([
      [second!.messageId, '2'],
      [third!.messageId, '1'],
    ]);

    // An invocation that throws fails every record it was given.
    for (let receive = 2; receive <= LOCAL_MAX_RECEIVE_COUNT; receive++) queue.settle({ Records: [queue.pending('scale')[0]] }, undefined);
    expect(queue.pending('scale').map((r) => r.messageId)).toEqual([third!.messageId]);
    expect(queue.deadLetters('scale').map((r) => r.messageId)).toEqual([second!.messageId]);
  });

  it('leaves alone events that did not come from a local queue file (sample events, schedules)', () => {
    const queue = new FileQueue(queueDir(), clock);
    expect(queue.settle(sqsEvent([sqsRecord('{}')]), { batchItemFailures: [] })).toBeUndefined();
    expect(queue.settle({ source: 'aws.events', 'detail-type': 'Scheduled Event' }, { pools: 2 } as never)).toBeUndefined();
  });
});

describe('clockFrom (the local clock of npm run invoke --at)', () => {
  it('starts at the given instant and runs at real speed; without one it is the system clock', () => {
    vi.useFakeTimers({ now: new Date('2026-11-24T08:00:00.000Z'), toFake: ['Date'] });
    try {
      const start = new Date('2026-11-21T10:00:30.000Z');
      const local = clockFrom(start);
      expect(local.now().toISOString()).toBe('2026-11-21T10:00:30.000Z');
      vi.advanceTimersByTime(20_000);
      expect(local.now().toISOString()).toBe('2026-11-21T10:00:50.000Z');
      expect(clockFrom(undefined).now().toISOString()).toBe('2026-11-24T08:00:20.000Z');
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('processSqsBatch: correlation ids on failure lines', () => {
  it('names the decisionId / drainId / nodeId / pool of a failed message, and of every message when the batch throws', async () => {
    const log = new MemoryLog();
    const up = sqsRecord(scaleUp(7));
    const drain = sqsRecord({ type: 'drain-complete', v: 1, drainId: 'drain-9', nodeId: 'd1-small-3.example.com', pool: 'd1/small' });
    const parse = (body: string) => ({ ok: true as const, value: JSON.parse(body) as Record<string, unknown> });

    await processSqsBatch(sqsEvent([up, drain]), {
      parse,
      logger: log,
      handle: async () => [{ messageId: drain.messageId, error: new TransientError('broker unreachable') }],
    });
    expect(log.lines.find((line) => line.message === 'message failed')?.attributes).toMatchObject({
      messageId: drain.messageId,
      drainId: 'drain-9',
      nodeId: 'd1-small-3.example.com',
      pool: 'd1/small',
      type: 'drain-complete',
      retryable: true,
    });

    await processSqsBatch(sqsEvent([up, drain]), {
      parse,
      logger: log,
      handle: async () => {
        throw new TransientError('DynamoDB throttled');
      },
    });
    expect(log.lines.at(-1)?.attributes).toMatchObject({
      decisionIds: ['up:d1_small:7'],
      drainIds: ['drain-9'],
      pools: ['d1/small'],
      nodeIds: ['d1-small-3.example.com'],
    });
  });
});

describe('PersistedPlatform (the simulated platform of npm run invoke)', () => {
  const config = parseConfig({ pools: [{ district: 'd1', profile: 'small', max: 10, gearsPerNode: 100 }] });
  const gear = (uuid: string) => ({ uuid, app: `app-${uuid}`, size: 'small' });
  /** Only what the platform reads: the nodes of every pool, and the gear lists their stats count (read apart, in one batch). */
  const storeOf = (records: NodeRecord[], lists: Record<string, GearInfo[]> = {}) =>
    ({
      listPools: async () => [pool()],
      listNodes: async () => records,
      getGearLists: async (nodeIds: readonly string[]) => new Map(nodeIds.filter((id) => lists[id]).map((id) => [id, { digest: gearListSummary(lists[id]!).digest, gears: lists[id]! }])),
    }) as unknown as StateStore;

  it('starts from the nodes of the state table, keeps gears, districts and finished moves across invocations', async () => {
    const file = join(queueDir(), 'platform.json');
    const listed = node('n1', { gears: 2, max: 10 });
    const n1Gears = [gear('g1'), gear('g2')];
    listed.stats!.listed = gearListSummary(n1Gears);
    const store = storeOf([listed, node('n2', { gears: 3, max: 10 }), node('gone', { state: 'terminated' })], { n1: n1Gears });

    const first = await PersistedPlatform.open(file, store, config, clock);
    expect((await first.listGears('n1')).map((g) => g.uuid)).toEqual(['g1', 'g2']);
    expect(await first.listGears('n2')).toHaveLength(3); // placeholders for a node that reported counts only
    expect(first.simulation.hasNode('gone')).toBe(false);
    await first.deactivateNode('d1', 'n1');
    const handle = await first.startMove(gear('g1'), 'n1', 'n2', { idempotencyKey: 'drain-1/g1/1' });
    expect(await first.moveStatus(handle)).toEqual({ state: 'succeeded' });
    await first.save(file);

    const second = await PersistedPlatform.open(file, store, config, clock);
    expect((await second.listGears('n1')).map((g) => g.uuid)).toEqual(['g2']);
    expect(await second.listGears('n2')).toHaveLength(4);
    expect(second.simulation.nodeFacts('n1').active).toBe(false);
    expect(await second.moveStatus(handle)).toEqual({ state: 'succeeded' });
    expect(await second.startMove(gear('g1'), 'n1', 'n2', { idempotencyKey: 'drain-1/g1/1' })).toEqual(handle);
    await expect(second.moveStatus({ commandId: 'never-started' })).rejects.toThrow(NotFoundError);
  });
});
