/**
 * Checks both `Queue` adapters apply before anything is sent, so the local
 * queue rejects exactly what SQS would: every body serialized (validated, at
 * most 256 KiB) and, for a FIFO queue, a group id and a deduplication id on
 * every message.
 */
import { ValidationError, type ValidationIssue } from '../errors.js';
import { serializeMessage } from '../messages/index.js';
import type { OutgoingMessage, QueueName } from '../ports/queue.js';

export interface PreparedEntry {
  /** Index into the caller's input. */
  index: number;
  body: string;
  /** UTF-8 size of `body`, the unit of the SQS payload limits. */
  bytes: number;
  /** Present only for FIFO queues. */
  groupId?: string;
  deduplicationId?: string;
}

/** SQS: 1 to 128 characters, letters, digits and ASCII punctuation (no spaces). */
const FIFO_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * The serialized entries for `messages`, or one `ValidationError` listing every
 * problem by path (`messages.<i>.groupId`, `messages.<i>.body.<field>`): a bad
 * input is rejected whole, before anything is sent.
 */
export function prepareEntries(queue: QueueName, messages: readonly OutgoingMessage[], fifo: boolean): PreparedEntry[] {
  const issues: ValidationIssue[] = [];
  const entries: PreparedEntry[] = [];
  messages.forEach((message, index) => {
    let body: string | undefined;
    try {
      body = serializeMessage(message.body);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      issues.push(...error.issues.map((issue) => ({ ...issue, path: joinPath(`messages.${index}.body`, issue.path) })));
    }
    if (fifo) {
      checkFifoId(issues, `messages.${index}.groupId`, message.groupId, 'the message group (the pool)');
      checkFifoId(issues, `messages.${index}.deduplicationId`, message.deduplicationId, 'the decisionId or drainId');
    }
    if (body === undefined) return;
    const entry: PreparedEntry = { index, body, bytes: Buffer.byteLength(body, 'utf8') };
    if (fifo) {
      entry.groupId = message.groupId as string;
      entry.deduplicationId = message.deduplicationId as string;
    }
    entries.push(entry);
  });
  if (issues.length > 0) throw new ValidationError(issues, `cannot send to queue ${queue}`);
  return entries;
}

function checkFifoId(issues: ValidationIssue[], path: string, value: string | undefined, what: string): void {
  if (value === undefined) {
    issues.push({ path, message: `required on a FIFO queue (${what}; content-based deduplication is off)` });
  } else if (!FIFO_ID.test(value)) {
    issues.push({ path, message: 'must be 1 to 128 characters: letters, digits or ASCII punctuation, no spaces', value });
  }
}

function joinPath(prefix: string, path: string): string {
  return path === '' ? prefix : `${prefix}.${path}`;
}
