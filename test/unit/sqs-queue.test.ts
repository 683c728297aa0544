import {
  KmsThrottled,
  QueueDoesNotExist,
  RequestThrottled,
  SQSClient,
  SendMessageBatchCommand,
  type SendMessageBatchCommandInput,
  type SendMessageBatchCommandOutput,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_BATCH_BYTES, SqsQueue, batchEntries } from '../../lib/adapters/sqs/queue.js';
import { TransientError, ValidationError } from '../../lib/errors.js';
import { serializeMessage, type NodeStatsMessage, type ScaleUpMessage } from '../../lib/messages/index.js';
import type { OutgoingMessage } from '../../lib/ports/queue.js';

const STATS_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/nodescaler-dev-stats';
const SCALE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/nodescaler-dev-scale.fifo';

const sqs = mockClient(SQSClient);
afterAll(() => sqs.restore());

function newQueue(): SqsQueue {
  return new SqsQueue(new SQSClient({ region: 'us-east-1' }), { stats: STATS_URL, scale: SCALE_URL });
}

function stats(n: number, extra: Partial<NodeStatsMessage> = {}): NodeStatsMessage {
  return {
    type: 'node-stats',
    v: 1,
    nodeId: `node-${n}.example.com`,
    district: 'd1',
    profile: 'small',
    activeGears: n % 50,
    maxActiveGears: 100,
    reportedAt: '2026-03-01T12:00:00.000Z',
    ...extra,
  };
}

function scaleUp(n: number): ScaleUpMessage {
  return {
    type: 'scale-up',
    v: 1,
    decisionId: `up:d1_small:2026-03-01T12:0${n}:30.000Z`,
    pool: 'd1/small',
    count: n + 1,
    reason: 'utilization 91% >= scale-up threshold 90% for 5m',
    decidedAt: `2026-03-01T12:0${n}:30.000Z`,
  };
}

function statsMessages(count: number): OutgoingMessage[] {
  return Array.from({ length: count }, (_, n) => ({ body: stats(n) }));
}

/** SQS accepting every entry of every batch. */
function acceptAll(): void {
  sqs.on(SendMessageBatchCommand).callsFake((input: SendMessageBatchCommandInput) => accept(input));
}

function accept(input: SendMessageBatchCommandInput, except: readonly string[] = []): Partial<SendMessageBatchCommandOutput> {
  return {
    Successful: (input.Entries ?? [])
      .filter((entry) => !except.includes(entry.Id!))
      .map((entry) => ({ Id: entry.Id!, MessageId: `msg-${entry.Id}`, MD5OfMessageBody: 'md5' })),
    Failed: [],
  };
}

function sentInputs(): SendMessageBatchCommandInput[] {
  return sqs.commandCalls(SendMessageBatchCommand).map((call) => call.args[0].input);
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

beforeEach(() => {
  sqs.reset();
});

describe('SqsQueue.send: requests', () => {
  it('sends a standard queue one SendMessageBatch with serialized bodies and no FIFO ids', async () => {
    acceptAll();
    const first = stats(1, { reportedAt: '2026-03-01T12:00:00Z' });
    const result = await newQueue().send('stats', [
      { body: first, groupId: 'd1/small', deduplicationId: 'ignored-on-standard' },
      { body: stats(2) },
    ]);

    expect(result).toStrictEqual({ failed: [] });
    expect(sentInputs()).toStrictEqual([
      {
        QueueUrl: STATS_URL,
        Entries: [
          {
            Id: '0',
            MessageBody:
              '{"type":"node-stats","v":1,"nodeId":"node-1.example.com","district":"d1","profile":"small",' +
              '"activeGears":1,"maxActiveGears":100,"reportedAt":"2026-03-01T12:00:00.000Z"}',
          },
          { Id: '1', MessageBody: serializeMessage(stats(2)) },
        ],
      },
    ]);
  });

  it('sets MessageGroupId and MessageDeduplicationId on a FIFO queue', async () => {
    acceptAll();
    const result = await newQueue().send('scale', [
      { body: scaleUp(0), groupId: 'd1/small', deduplicationId: scaleUp(0).decisionId },
      { body: scaleUp(1), groupId: 'd1/small', deduplicationId: scaleUp(1).decisionId },
    ]);

    expect(result).toStrictEqual({ failed: [] });
    expect(sentInputs()).toStrictEqual([
      {
        QueueUrl: SCALE_URL,
        Entries: [
          {
            Id: '0',
            MessageBody: serializeMessage(scaleUp(0)),
            MessageGroupId: 'd1/small',
            MessageDeduplicationId: 'up:d1_small:2026-03-01T12:00:30.000Z',
          },
          {
            Id: '1',
            MessageBody: serializeMessage(scaleUp(1)),
            MessageGroupId: 'd1/small',
            MessageDeduplicationId: 'up:d1_small:2026-03-01T12:01:30.000Z',
          },
        ],
      },
    ]);
  });

  it('splits 23 messages into batches of 10, 10 and 3 whose Ids are the input indexes', async () => {
    acceptAll();
    const messages = statsMessages(23);
    const result = await newQueue().send('stats', messages);

    expect(result.failed).toEqual([]);
    const inputs = sentInputs();
    expect(inputs.map((input) => input.Entries?.map((entry) => entry.Id))).toStrictEqual([
      ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'],
      ['10', '11', '12', '13', '14', '15', '16', '17', '18', '19'],
      ['20', '21', '22'],
    ]);
    expect(inputs.every((input) => input.QueueUrl === STATS_URL)).toBe(true);
    const bodies = inputs.flatMap((input) => input.Entries!.map((entry) => entry.MessageBody));
    expect(bodies).toStrictEqual(messages.map((message) => serializeMessage(message.body)));
  });

  it('sends nothing for no messages', async () => {
    expect(await newQueue().send('stats', [])).toStrictEqual({ failed: [] });
    expect(sentInputs()).toHaveLength(0);
  });
});

describe('SqsQueue.send: 256 KiB batch payload', () => {
  /** A node-stats body of about `kib` KiB, made of gears. */
  function bigStats(n: number, kib: number): NodeStatsMessage {
    const gear = (g: number) => ({ uuid: `${n}-${g}`.padEnd(32, '0'), app: `app-${g}`.padEnd(100, 'x'), size: 'small' });
    const perGear = JSON.stringify(gear(0)).length + 1;
    return stats(n, { gears: Array.from({ length: Math.ceil((kib * 1024) / perGear) }, (_, g) => gear(g)) });
  }

  it('starts a new batch before the bodies of one would pass 262,144 bytes', async () => {
    acceptAll();
    const messages = [0, 1, 2, 3, 4].map((n) => ({ body: bigStats(n, 70) }));
    const sizes = messages.map((message) => Buffer.byteLength(serializeMessage(message.body)));
    expect(sizes.slice(0, 3).reduce((a, b) => a + b)).toBeLessThanOrEqual(MAX_BATCH_BYTES);
    expect(sizes.slice(0, 4).reduce((a, b) => a + b)).toBeGreaterThan(MAX_BATCH_BYTES);

    const result = await newQueue().send('stats', messages);

    expect(result.failed).toEqual([]);
    expect(sentInputs().map((input) => input.Entries?.map((entry) => entry.Id))).toStrictEqual([
      ['0', '1', '2'],
      ['3', '4'],
    ]);
  });

  it('fills a batch up to exactly the limit, counting UTF-8 bytes', () => {
    const sized = (bytes: number) => ({ bytes });
    expect(batchEntries([sized(100_000), sized(100_000), sized(62_144)]).map((b) => b.length)).toEqual([3]);
    expect(batchEntries([sized(100_000), sized(100_000), sized(62_145)]).map((b) => b.length)).toEqual([2, 1]);
    expect(batchEntries([sized(262_144), sized(1)]).map((b) => b.length)).toEqual([1, 1]);
  });
});

describe('SqsQueue.send: failures', () => {
  it('returns entries SQS rejected by their input index, retryable unless a sender fault', async () => {
    sqs.on(SendMessageBatchCommand).callsFake((input: SendMessageBatchCommandInput) => {
      const ids = (input.Entries ?? []).map((entry) => entry.Id!);
      const failed = [
        { Id: '1', SenderFault: true, Code: 'InvalidParameterValue', Message: 'Message contains invalid characters' },
        { Id: '12', SenderFault: false, Code: 'InternalError', Message: 'We encountered an internal error' },
      ].filter((entry) => ids.includes(entry.Id));
      return { ...accept(input, failed.map((entry) => entry.Id)), Failed: failed };
    });

    const result = await newQueue().send('stats', statsMessages(13));

    expect(result).toStrictEqual({
      failed: [
        { index: 1, error: 'InvalidParameterValue: Message contains invalid characters', retryable: false },
        { index: 12, error: 'InternalError: We encountered an internal error', retryable: true },
      ],
    });
    expect(sentInputs()).toHaveLength(2);
  });

  it('rejects a FIFO message without a group id with a ValidationError, and sends nothing', async () => {
    acceptAll();
    const error = await rejection(
      newQueue().send('scale', [
        { body: scaleUp(0), groupId: 'd1/small', deduplicationId: scaleUp(0).decisionId },
        { body: scaleUp(1), deduplicationId: scaleUp(1).decisionId },
      ]),
    );

    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe('messages.1.groupId');
    expect((error as ValidationError).retryable).toBe(false);
    expect(sentInputs()).toHaveLength(0);
  });

  it('requires a deduplication id on a FIFO queue too', async () => {
    const error = await rejection(newQueue().send('scale', [{ body: scaleUp(0), groupId: 'd1/small' }]));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues.map((issue) => issue.path)).toEqual(['messages.0.deduplicationId']);
    expect(sentInputs()).toHaveLength(0);
  });

  it('rejects an invalid message before sending anything', async () => {
    const error = await rejection(newQueue().send('stats', [{ body: stats(1) }, { body: stats(2, { maxActiveGears: 0 }) }]));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe('messages.1.body.maxActiveGears');
    expect(sentInputs()).toHaveLength(0);
  });

  it('rejects a queue with no URL configured with a ValidationError naming queues.<name>', async () => {
    const error = await rejection(newQueue().send('drain', [{ body: stats(1) }]));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe('queues.drain');
    expect((error as ValidationError).message).toContain('queues.drain');
    expect(sentInputs()).toHaveLength(0);
  });

  const metadata = { httpStatusCode: 400, requestId: 'req-1', attempts: 3, totalRetryDelay: 900 };
  const named = (name: string, extra: Record<string, unknown> = {}) => Object.assign(new Error(`${name} happened`), { name, ...extra });

  it.each([
    ['RequestThrottled', new RequestThrottled({ message: 'Request is throttled.', $metadata: metadata })],
    ['KmsThrottled', new KmsThrottled({ message: 'KMS throttled', $metadata: metadata })],
    ['ThrottlingException', named('ThrottlingException', { $fault: 'client', $metadata: metadata })],
    ['ServiceUnavailable', named('ServiceUnavailable', { $fault: 'server', $metadata: { httpStatusCode: 503 } })],
    ['InternalError', named('InternalError', { $fault: 'server', $metadata: { httpStatusCode: 500 } })],
    ['an unknown 502', named('BadGateway', { $fault: 'client', $metadata: { httpStatusCode: 502 } })],
    ['a connection reset', named('Error', { code: 'ECONNRESET' })],
    ['a timeout', named('TimeoutError')],
  ])('turns %s into a TransientError when nothing was sent', async (_, thrown) => {
    sqs.on(SendMessageBatchCommand).rejects(thrown);
    const error = await rejection(newQueue().send('stats', statsMessages(3)));
    expect(error).toBeInstanceOf(TransientError);
    expect((error as TransientError).retryable).toBe(true);
    expect((error as TransientError).cause).toBe(thrown);
  });

  it('turns a client fault into a ValidationError; a missing queue names queues.<name>', async () => {
    sqs.on(SendMessageBatchCommand).rejects(new QueueDoesNotExist({ message: 'The specified queue does not exist.', $metadata: metadata }));
    const error = await rejection(newQueue().send('stats', statsMessages(1)));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe('queues.stats');
    expect((error as ValidationError).message).toContain('QueueDoesNotExist');

    sqs.reset();
    sqs.on(SendMessageBatchCommand).rejects(named('AccessDenied', { $fault: 'client', $metadata: { httpStatusCode: 403 } }));
    const denied = await rejection(newQueue().send('stats', statsMessages(1)));
    expect(denied).toBeInstanceOf(ValidationError);
    expect((denied as ValidationError).message).toContain('AccessDenied');
  });

  it('after a batch was accepted, reports a later failing batch and the rest as failed instead of throwing', async () => {
    sqs
      .on(SendMessageBatchCommand)
      .callsFakeOnce((input: SendMessageBatchCommandInput) => accept(input))
      .rejectsOnce(named('ServiceUnavailable', { $fault: 'server', $metadata: { httpStatusCode: 503 } }));

    const result = await newQueue().send('stats', statsMessages(25));

    expect(sentInputs().map((input) => input.Entries?.length)).toEqual([10, 10]);
    expect(result.failed.map((failure) => failure.index)).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24]);
    expect(result.failed.every((failure) => failure.retryable)).toBe(true);
    expect(result.failed[0]?.error).toContain('ServiceUnavailable');
    expect(result.failed[14]?.error).toContain('an earlier batch failed');
  });

  it('reports an entry SQS gave no result for as retryable', async () => {
    sqs.on(SendMessageBatchCommand).callsFake((input: SendMessageBatchCommandInput) => accept(input, ['1']));
    const result = await newQueue().send('stats', statsMessages(2));
    expect(result.failed).toStrictEqual([{ index: 1, error: 'SQS returned no result for this entry', retryable: true }]);
  });
});
