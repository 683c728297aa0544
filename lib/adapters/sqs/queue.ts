import { SendMessageBatchCommand, type SQSClient, type SendMessageBatchRequestEntry, type SendMessageBatchResult } from '@aws-sdk/client-sqs';
import { NodescalerError, TransientError, ValidationError } from '../../errors.js';
import type { OutgoingMessage, Queue, QueueName, SendResult } from '../../ports/queue.js';
import { awsErrorInfo } from '../aws-errors.js';
import { prepareEntries, type PreparedEntry } from '../queue-entries.js';

/** SQS: at most 10 entries per SendMessageBatch. */
export const MAX_BATCH_ENTRIES = 10;
/** SQS: at most 256 KiB for the sum of the bodies of one SendMessageBatch. */
export const MAX_BATCH_BYTES = 262_144;

/**
 * `Queue` on Amazon SQS, with SendMessageBatch.
 *
 * Contract:
 * - Bodies are `serializeMessage(message.body)`; entries go in batches of at
 *   most 10 and at most 256 KiB of bodies, in input order, with entry `Id` =
 *   the message's index in the input.
 * - A queue whose URL ends in `.fifo` gets `MessageGroupId` (`groupId`) and
 *   `MessageDeduplicationId` (`deduplicationId`) on every entry; both are
 *   required (content-based deduplication is off). A standard queue gets neither.
 * - Entries SQS rejects are returned in `failed` (index, `Code: Message`,
 *   retryable = not a sender fault), never thrown.
 * - When a batch call fails after an earlier batch was accepted, that batch
 *   and every later one are returned in `failed` instead (not sent; retryable
 *   unless SQS called the request itself bad), so a caller re-sends only what
 *   SQS did not take.
 *
 * Errors (thrown only when nothing was accepted):
 * - `ValidationError`: no URL configured for the queue (`queues.<name>`), an
 *   invalid message, a FIFO message without a group or deduplication id (all
 *   checked before anything is sent), or a request SQS refused as a client
 *   fault (queue does not exist, access denied, ...).
 * - `TransientError`: throttling, SQS 5xx, network errors and anything else.
 */
export class SqsQueue implements Queue {
  constructor(
    private readonly client: SQSClient,
    private readonly urls: Partial<Record<QueueName, string>>,
  ) {}

  async send(queue: QueueName, messages: readonly OutgoingMessage[]): Promise<SendResult> {
    const url = this.urls[queue];
    if (url === undefined || url === '') {
      throw new ValidationError(
        { path: `queues.${queue}`, message: 'no queue URL configured for this queue' },
        `cannot send to queue ${queue}`,
      );
    }
    const fifo = url.endsWith('.fifo');
    const entries = prepareEntries(queue, messages, fifo);
    const failed: SendResult['failed'] = [];
    const batches = batchEntries(entries);
    let accepted = 0;

    for (const [position, batch] of batches.entries()) {
      let result: SendMessageBatchResult;
      try {
        result = await this.client.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: batch.map(toRequestEntry) }));
      } catch (error) {
        const translated = translateSqsError(error, queue, url);
        if (accepted === 0) throw translated;
        for (const entry of batch) {
          failed.push({ index: entry.index, error: `not sent: ${translated.message}`, retryable: translated.retryable });
        }
        for (const later of batches.slice(position + 1)) {
          for (const entry of later) {
            failed.push({ index: entry.index, error: `not sent: an earlier batch failed (${translated.message})`, retryable: true });
          }
        }
        break;
      }
      accepted += collectResult(batch, result, failed);
    }

    failed.sort((a, b) => a.index - b.index);
    return { failed };
  }
}

/** Greedy, in input order: a new batch at 10 entries or when the next body would pass 256 KiB. */
export function batchEntries<E extends { bytes: number }>(entries: readonly E[], maxEntries = MAX_BATCH_ENTRIES, maxBytes = MAX_BATCH_BYTES): E[][] {
  const batches: E[][] = [];
  let current: E[] = [];
  let bytes = 0;
  for (const entry of entries) {
    if (current.length > 0 && (current.length >= maxEntries || bytes + entry.bytes > maxBytes)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += entry.bytes;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

function toRequestEntry(entry: PreparedEntry): SendMessageBatchRequestEntry {
  const request: SendMessageBatchRequestEntry = { Id: String(entry.index), MessageBody: entry.body };
  if (entry.groupId !== undefined) request.MessageGroupId = entry.groupId;
  if (entry.deduplicationId !== undefined) request.MessageDeduplicationId = entry.deduplicationId;
  return request;
}

/** Adds the batch's rejected entries to `failed`; returns how many SQS accepted. */
function collectResult(batch: readonly PreparedEntry[], result: SendMessageBatchResult, failed: SendResult['failed']): number {
  const succeeded = new Set((result.Successful ?? []).map((entry) => entry.Id));
  const rejected = new Map((result.Failed ?? []).map((entry) => [entry.Id, entry]));
  let accepted = 0;
  for (const entry of batch) {
    const id = String(entry.index);
    const failure = rejected.get(id);
    if (failure !== undefined) {
      const code = failure.Code ?? 'UnknownError';
      failed.push({
        index: entry.index,
        error: failure.Message ? `${code}: ${failure.Message}` : code,
        retryable: failure.SenderFault !== true,
      });
    } else if (succeeded.has(id)) {
      accepted++;
    } else {
      failed.push({ index: entry.index, error: 'SQS returned no result for this entry', retryable: true });
    }
  }
  return accepted;
}

const MISSING_QUEUE = new Set(['QueueDoesNotExist', 'AWS.SimpleQueueService.NonExistentQueue', 'InvalidAddress']);

/** An SDK error as a `TransientError` or `ValidationError`; the project's own errors pass through. */
export function translateSqsError(error: unknown, queue: QueueName, url: string): NodescalerError {
  if (error instanceof NodescalerError) return error;
  const { name, detail, transient, clientFault } = awsErrorInfo(error);
  if (!transient && clientFault) {
    const issue = MISSING_QUEUE.has(name)
      ? { path: `queues.${queue}`, message: `SQS rejected the queue URL (${detail})`, value: url }
      : { path: '', message: `SQS rejected the request (${detail})` };
    return new ValidationError(issue, `SendMessageBatch to queue ${queue}`);
  }
  return new TransientError(`SendMessageBatch to queue ${queue} failed: ${detail}`, { cause: error });
}
