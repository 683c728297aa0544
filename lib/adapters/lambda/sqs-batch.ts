import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { ValidationError, formatValue, isRetryable } from '../../errors.js';

export type ParseOutcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

export interface BatchItem<T> {
  record: SQSRecord;
  value: T;
}

export interface ItemFailure {
  messageId: string;
  error: unknown;
}

/** What the batch logs through: a Powertools `Logger` (see `createLogger`) or any `Log` port. */
export interface BatchLogger {
  error(message: string, attributes: Record<string, unknown>): void;
  warn(message: string, attributes: Record<string, unknown>): void;
}

export interface SqsBatchOptions<T> {
  /** Decodes one body; a failure fails that record alone. Should not throw (a throw counts as a failure). */
  parse(body: string, record: SQSRecord): ParseOutcome<T>;
  /** Acts on the records that parsed; returns the ones that failed. Throwing fails them all. */
  handle(items: Array<BatchItem<T>>): Promise<ItemFailure[]>;
  logger: BatchLogger;
}

/**
 * One SQS batch with partial batch response (`ReportBatchItemFailures`):
 * parses every record, hands the good ones to `handle` in one call, and
 * returns the ids of the records to redeliver, in batch order: the ones that
 * did not parse, the ones `handle` reported, or every parsed one when
 * `handle` throws. Each failure is logged with `messageId`, `errorName` and
 * `retryable`; a parse failure also with the offending `field` and `value`.
 *
 * FIFO queues (source ARN ending in `.fifo`): a message group stops at its
 * first failure. Later records of that group are not handed to `handle`, and
 * any record after a failed one in its group is reported failed too, so SQS
 * redelivers the group in order. `handle` should itself stop a group at its
 * first failure (consumers are idempotent, so a record failed after it was
 * handled is only handled again).
 *
 * Failures are redelivered until the queue's `maxReceiveCount`, then go to its
 * dead-letter queue: the response cannot tell SQS "never retry".
 */
export async function processSqsBatch<T>(event: SQSEvent, options: SqsBatchOptions<T>): Promise<SQSBatchResponse> {
  const { parse, handle, logger } = options;
  const records = event.Records;
  const fifo = records.some((record) => record.eventSourceARN?.endsWith('.fifo'));
  const failed = new Set<string>();
  const stoppedGroups = new Set<string>();
  const items: Array<BatchItem<T>> = [];

  for (const record of records) {
    if (fifo && stoppedGroups.has(groupOf(record))) {
      failed.add(record.messageId);
      continue;
    }
    const outcome = parseSafely(parse, record);
    if (outcome.ok) {
      items.push({ record, value: outcome.value });
      continue;
    }
    logger.error('message rejected: invalid body', { ...recordAttributes(record), ...fieldAttributes(outcome.error), ...errorAttributes(outcome.error) });
    failed.add(record.messageId);
    if (fifo) stoppedGroups.add(groupOf(record));
  }

  if (items.length > 0) {
    const given = new Map(items.map((item) => [item.record.messageId, item]));
    try {
      for (const { messageId, error } of await handle(items)) {
        const record = given.get(messageId)?.record;
        if (record === undefined) {
          logger.warn('handler reported a failure for a message it was not given; ignored', { messageId, ...errorAttributes(error) });
          continue;
        }
        const log = isRetryable(error) ? logger.warn.bind(logger) : logger.error.bind(logger);
        log('message failed', { ...recordAttributes(record), ...correlationAttributes(given.get(messageId)?.value), ...errorAttributes(error) });
        failed.add(messageId);
      }
    } catch (error) {
      logger.error('batch handler threw: every parsed message of the batch fails', {
        messageIds: [...given.keys()],
        ...correlationsOf(items),
        ...errorAttributes(error),
      });
      for (const messageId of given.keys()) failed.add(messageId);
    }
  }

  if (fifo) stopGroupsAtFirstFailure(records, failed);
  return { batchItemFailures: records.filter((record) => failed.has(record.messageId)).map((record) => ({ itemIdentifier: record.messageId })) };
}

function parseSafely<T>(parse: SqsBatchOptions<T>['parse'], record: SQSRecord): ParseOutcome<T> {
  try {
    return parse(record.body, record);
  } catch (error) {
    return { ok: false, error };
  }
}

function groupOf(record: SQSRecord): string {
  return record.attributes?.MessageGroupId ?? '';
}

function stopGroupsAtFirstFailure(records: readonly SQSRecord[], failed: Set<string>): void {
  const stopped = new Set<string>();
  for (const record of records) {
    const group = groupOf(record);
    if (stopped.has(group)) failed.add(record.messageId);
    else if (failed.has(record.messageId)) stopped.add(group);
  }
}

function recordAttributes(record: SQSRecord): Record<string, unknown> {
  return { messageId: record.messageId, receiveCount: Number(record.attributes?.ApproximateReceiveCount ?? 0) };
}

/** What operators search by, taken from the parsed message: the ids that tie its log lines to a decision, a drain, a node. */
export const CORRELATION_KEYS = ['decisionId', 'drainId', 'eventId', 'nodeId', 'pool', 'type'] as const;

/** The correlation ids of a whole batch, as lists (`decisionIds`, `drainIds`, ...), for a line about all of it. */
function correlationsOf(items: ReadonlyArray<BatchItem<unknown>>): Record<string, string[]> {
  const lists: Record<string, Set<string>> = {};
  for (const { value } of items) {
    for (const [key, id] of Object.entries(correlationAttributes(value))) {
      if (key === 'type') continue;
      (lists[`${key}s`] ??= new Set()).add(String(id));
    }
  }
  return Object.fromEntries(Object.entries(lists).map(([key, ids]) => [key, [...ids]]));
}

function correlationAttributes(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return {};
  const attributes: Record<string, unknown> = {};
  for (const key of CORRELATION_KEYS) {
    const id = (value as Record<string, unknown>)[key];
    if (typeof id === 'string') attributes[key] = id;
  }
  return attributes;
}

/** The first offending field and its value, as `ValidationError` names them. */
function fieldAttributes(error: unknown): Record<string, unknown> {
  if (!(error instanceof ValidationError)) return {};
  const issue = error.issues[0];
  return issue !== undefined && 'value' in issue ? { field: error.field, value: formatValue(issue.value) } : { field: error.field };
}

function errorAttributes(error: unknown): Record<string, unknown> {
  const errorName = error instanceof Error ? error.name : typeof error;
  // A validation message says everything; other errors keep their stack (Powertools formats an Error).
  const detail = error instanceof ValidationError ? error.message : error instanceof Error ? error : formatValue(error);
  return { errorName, retryable: isRetryable(error), error: detail };
}
