import type { SQSRecord } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../lib/adapters/lambda/logger.js';
import { isScheduledEvent, isSqsEvent } from '../../lib/adapters/lambda/scheduled.js';
import { processSqsBatch, type BatchItem, type ParseOutcome } from '../../lib/adapters/lambda/sqs-batch.js';
import { ConflictError, TransientError } from '../../lib/errors.js';
import { parseMessage, type NodeStatsMessage, type ParsedMessage } from '../../lib/messages/index.js';
import { lambdaContext, scheduledEvent, sqsEvent, sqsRecord } from '../support/sqs-events.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';

type Line = Record<string, unknown>;

/** Everything written to stdout and stderr until `restore`, as parsed JSON lines. */
function captureOutput() {
  const chunks: string[] = [];
  const grab = ((chunk: string | Uint8Array) => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  }) as typeof process.stdout.write;
  const spies = [vi.spyOn(process.stdout, 'write').mockImplementation(grab), vi.spyOn(process.stderr, 'write').mockImplementation(grab)];
  return {
    lines(): Line[] {
      return chunks
        .join('')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Line);
    },
    restore(): void {
      for (const spy of spies) spy.mockRestore();
    },
  };
}

let capture: ReturnType<typeof captureOutput> | undefined;
afterEach(() => {
  capture?.restore();
  capture = undefined;
});

const stats = (n: number): NodeStatsMessage => ({
  type: 'node-stats',
  v: 1,
  nodeId: `node-${n}.example.com`,
  district: 'd1',
  profile: 'small',
  activeGears: n,
  maxActiveGears: 100,
  reportedAt: '2026-03-01T12:00:00.000Z',
});

function parse(body: string): ParseOutcome<ParsedMessage> {
  const result = parseMessage(body);
  return result.ok ? { ok: true, value: result.message } : { ok: false, error: result.error };
}

const ids = (records: readonly SQSRecord[]) => records.map((record) => ({ itemIdentifier: record.messageId }));

describe('processSqsBatch', () => {
  it('fails exactly the malformed records and the ones handle reports; logs each with field, value and messageId', async () => {
    const good1 = sqsRecord(stats(1));
    const notJson = sqsRecord('{"type":"node-stats",');
    const badField = sqsRecord({ ...stats(2), maxActiveGears: 0 });
    const conflicted = sqsRecord(stats(3));
    const good2 = sqsRecord(stats(4));
    const logger = createLogger('threshold-evaluator', 'INFO');
    const handled: Array<Array<BatchItem<ParsedMessage>>> = [];
    capture = captureOutput();

    const response = await processSqsBatch(sqsEvent([good1, notJson, badField, conflicted, good2]), {
      parse,
      logger,
      handle: async (items) => {
        handled.push(items);
        return [{ messageId: conflicted.messageId, error: new ConflictError('pool lease held', undefined) }];
      },
    });
    const lines = capture.lines();
    capture.restore();

    expect(response).toStrictEqual({ batchItemFailures: ids([notJson, badField, conflicted]) });
    expect(handled).toHaveLength(1);
    expect(handled[0]?.map((item) => item.record.messageId)).toEqual([good1.messageId, conflicted.messageId, good2.messageId]);
    expect(handled[0]?.[0]?.value).toStrictEqual(stats(1));

    const rejected = lines.filter((line) => line.message === 'message rejected: invalid body');
    expect(rejected).toHaveLength(2);
    expect(rejected[0]).toMatchObject({
      level: 'ERROR',
      service: 'threshold-evaluator',
      messageId: notJson.messageId,
      receiveCount: 1,
      field: 'body',
      errorName: 'ValidationError',
      retryable: false,
    });
    expect(rejected[1]).toMatchObject({
      level: 'ERROR',
      messageId: badField.messageId,
      field: 'maxActiveGears',
      value: '0',
      errorName: 'ValidationError',
      retryable: false,
    });
    expect(String(rejected[1]?.error)).toContain('maxActiveGears');
    expect(lines.find((line) => line.messageId === conflicted.messageId)).toMatchObject({
      level: 'WARN',
      message: 'message failed',
      errorName: 'ConflictError',
      retryable: true,
    });
  });

  it('fails every parsed record when handle throws, and logs the error as retryable', async () => {
    const good1 = sqsRecord(stats(1));
    const bad = sqsRecord({ type: 'node-stats' });
    const good2 = sqsRecord(stats(2));
    capture = captureOutput();

    const response = await processSqsBatch(sqsEvent([good1, bad, good2]), {
      parse,
      logger: createLogger('threshold-evaluator'),
      handle: async () => {
        throw new TransientError('DynamoDB ThrottlingException');
      },
    });
    const lines = capture.lines();
    capture.restore();

    expect(response).toStrictEqual({ batchItemFailures: ids([good1, bad, good2]) });
    const thrown = lines.find((line) => String(line.message).startsWith('batch handler threw'));
    expect(thrown).toMatchObject({ level: 'ERROR', errorName: 'TransientError', retryable: true, messageIds: [good1.messageId, good2.messageId] });
    expect(thrown?.error).toMatchObject({ name: 'TransientError', message: 'DynamoDB ThrottlingException' });
  });

  it('does not call handle when nothing parsed, and ignores ids handle was not given', async () => {
    const bad = sqsRecord('not json');
    const handle = vi.fn(async () => []);
    const logger = { error: vi.fn(), warn: vi.fn() };
    expect(await processSqsBatch(sqsEvent([bad]), { parse, logger, handle })).toStrictEqual({ batchItemFailures: ids([bad]) });
    expect(handle).not.toHaveBeenCalled();

    const good = sqsRecord(stats(1));
    const response = await processSqsBatch(sqsEvent([good]), {
      parse,
      logger,
      handle: async () => [{ messageId: 'not-in-this-batch', error: new Error('x') }],
    });
    expect(response).toStrictEqual({ batchItemFailures: [] });
    expect(logger.warn).toHaveBeenCalledWith(expect.stringContaining('not given'), expect.objectContaining({ messageId: 'not-in-this-batch' }));
  });

  it('logs through a Log port as well', async () => {
    const log = new MemoryLog();
    const bad = sqsRecord({ ...stats(1), nodeId: 'Not A Host' });
    expect(await processSqsBatch(sqsEvent([bad]), { parse, logger: log, handle: async () => [] })).toStrictEqual({ batchItemFailures: ids([bad]) });
    expect(log.lines).toMatchObject([
      { level: 'error', attributes: { messageId: bad.messageId, field: 'nodeId', value: '"Not A Host"', errorName: 'ValidationError', retryable: false } },
    ]);
  });

  it('counts a parse that throws as that record failing', async () => {
    const record = sqsRecord(stats(1));
    const logger = { error: vi.fn(), warn: vi.fn() };
    const response = await processSqsBatch(sqsEvent([record]), {
      logger,
      parse: () => {
        throw new TypeError('boom');
      },
      handle: async () => [],
    });
    expect(response).toStrictEqual({ batchItemFailures: ids([record]) });
    expect(logger.error).toHaveBeenCalledWith(expect.any(String), expect.objectContaining({ errorName: 'TypeError', retryable: true }));
  });

  it('on a FIFO queue, stops a message group at its first failure', async () => {
    const arn = 'arn:aws:sqs:us-east-1:123456789012:nodescaler-dev-scale.fifo';
    const inGroup = (body: unknown, group: string) => sqsRecord(body, { eventSourceARN: arn, attributes: { MessageGroupId: group } });
    const a1 = inGroup(stats(1), 'd1/small');
    const a2 = inGroup('garbage', 'd1/small');
    const a3 = inGroup(stats(3), 'd1/small');
    const b1 = inGroup(stats(4), 'd2/large');
    const b2 = inGroup(stats(5), 'd2/large');
    const b3 = inGroup(stats(6), 'd2/large');
    const given: string[] = [];

    const response = await processSqsBatch(sqsEvent([a1, a2, a3, b1, b2, b3]), {
      parse,
      logger: { error: vi.fn(), warn: vi.fn() },
      handle: async (items) => {
        given.push(...items.map((item) => item.record.messageId));
        return [{ messageId: b2.messageId, error: new TransientError('throttled') }];
      },
    });

    expect(given).toEqual([a1.messageId, b1.messageId, b2.messageId, b3.messageId]);
    expect(response).toStrictEqual({ batchItemFailures: ids([a2, a3, b2, b3]) });
  });
});

describe('event guards', () => {
  it('recognizes an EventBridge schedule tick and an SQS batch', () => {
    const tick = scheduledEvent(new Date('2026-03-01T12:01:00.123Z'));
    expect(tick.time).toBe('2026-03-01T12:01:00Z');
    expect(isScheduledEvent(tick)).toBe(true);
    expect(isSqsEvent(tick)).toBe(false);

    const batch = sqsEvent([sqsRecord(stats(1))]);
    expect(isSqsEvent(batch)).toBe(true);
    expect(isScheduledEvent(batch)).toBe(false);

    expect(isScheduledEvent({ ...tick, source: 'aws.ec2' })).toBe(false);
    expect(isScheduledEvent({ ...tick, 'detail-type': 'EC2 Instance State-change Notification' })).toBe(false);
    expect(isSqsEvent({ Records: [] })).toBe(false);
    expect(isSqsEvent({ Records: [{ eventSource: 'aws:dynamodb' }] })).toBe(false);
    expect(isSqsEvent(null)).toBe(false);
    expect(isScheduledEvent('tick')).toBe(false);
  });
});

describe('test support', () => {
  it('builds records with a matching md5 and a context whose deadline follows the clock', () => {
    const record = sqsRecord('{"a":1}', { attributes: { ApproximateReceiveCount: '3' } });
    expect(record.md5OfBody).toBe('bb6cb5c68df4652941caf652a366f2d8');
    expect(record.attributes.ApproximateReceiveCount).toBe('3');
    expect(record.attributes.SentTimestamp).toMatch(/^\d+$/);
    expect(record.eventSource).toBe('aws:sqs');

    vi.useFakeTimers();
    try {
      const context = lambdaContext({ remainingMs: 5_000 });
      expect(context.getRemainingTimeInMillis()).toBe(5_000);
      vi.advanceTimersByTime(4_000);
      expect(context.getRemainingTimeInMillis()).toBe(1_000);
      vi.advanceTimersByTime(2_000);
      expect(context.getRemainingTimeInMillis()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
