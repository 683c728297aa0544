import type { Message } from '../../lib/messages/index.js';
import { parseMessage } from '../../lib/messages/index.js';
import type { OutgoingMessage, Queue, QueueName, SendResult } from '../../lib/ports/queue.js';
import { prepareEntries } from '../../lib/adapters/queue-entries.js';

export interface RecordedMessage {
  /** The body as a consumer would parse it (serialized, then parsed back). */
  message: Message;
  groupId?: string;
  deduplicationId?: string;
}

/**
 * A test double of `Queue` that keeps what is sent, per queue and in order.
 * Checks input exactly as `SqsQueue` does (bodies serialized
 * with `serializeMessage`; for the queues listed in `fifo`, group and
 * deduplication ids required), throwing `ValidationError` with nothing kept.
 *
 * `failNext(n, retryable)` makes the next `n` messages, across calls, come
 * back in `SendResult.failed` without being kept, as SQS partial failures do.
 */
export class RecordingQueue implements Queue {
  private readonly queues = new Map<QueueName, RecordedMessage[]>();
  private readonly fifo: ReadonlySet<QueueName>;
  private failures: { remaining: number; retryable: boolean } = { remaining: 0, retryable: true };

  constructor(options: { fifo?: readonly QueueName[] } = {}) {
    this.fifo = new Set(options.fifo ?? []);
  }

  async send(queue: QueueName, messages: readonly OutgoingMessage[]): Promise<SendResult> {
    const entries = prepareEntries(queue, messages, this.fifo.has(queue));
    const failed: SendResult['failed'] = [];
    const kept = this.queues.get(queue) ?? [];
    for (const entry of entries) {
      if (this.failures.remaining > 0) {
        this.failures.remaining--;
        failed.push({ index: entry.index, error: 'InjectedFailure: failNext', retryable: this.failures.retryable });
        continue;
      }
      const parsed = parseMessage(entry.body);
      if (!parsed.ok) throw parsed.error; // unreachable: serializeMessage validated the body
      const recorded: RecordedMessage = { message: parsed.message as Message };
      if (entry.groupId !== undefined) recorded.groupId = entry.groupId;
      if (entry.deduplicationId !== undefined) recorded.deduplicationId = entry.deduplicationId;
      kept.push(recorded);
    }
    this.queues.set(queue, kept);
    return { failed };
  }

  /** The parsed bodies sent to `queue`, oldest first. */
  sent(queue: QueueName): Message[] {
    return this.recorded(queue).map((entry) => entry.message);
  }

  /** The bodies with their FIFO ids, oldest first. */
  recorded(queue: QueueName): RecordedMessage[] {
    return [...(this.queues.get(queue) ?? [])];
  }

  /** The next `n` messages sent (to any queue) are reported failed and not kept. */
  failNext(n: number, retryable = true): void {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`failNext: n must be a non-negative integer, got ${n}`);
    this.failures = { remaining: n, retryable };
  }

  /** Forgets every message kept and any pending failure. */
  clear(): void {
    this.queues.clear();
    this.failures = { remaining: 0, retryable: true };
  }
}
