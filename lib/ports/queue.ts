import type { Message } from '../messages/index.js';

export type QueueName = 'stats' | 'scale' | 'drain' | 'decommission';

export interface OutgoingMessage {
  body: Message;
  /** FIFO queues: ordering group (the pool). */
  groupId?: string;
  /** FIFO queues: deduplication id (the decisionId or drainId). */
  deduplicationId?: string;
}

export interface SendResult {
  /** Indexes (into the input) of messages the queue did not accept; safe to send again. */
  failed: Array<{ index: number; error: string; retryable: boolean }>;
}

/**
 * Sends messages to one of the system's queues. Batches as the queue allows;
 * a partial failure is reported per message, not thrown. Throws
 * `TransientError` only when nothing could be sent at all.
 */
export interface Queue {
  send(queue: QueueName, messages: readonly OutgoingMessage[]): Promise<SendResult>;
}
