import { createHash, randomUUID } from 'node:crypto';
import type { SQSRecord } from 'aws-lambda';
import type { Clock } from '../../ports/clock.js';
import type { OutgoingMessage, QueueName, SendResult } from '../../ports/queue.js';
import type { Queue } from '../../ports/queue.js';
import { prepareEntries } from '../queue-entries.js';
import { LOCAL_SENDER } from '../../domain/stats-sender.js';

export interface LocalQueueSpec {
  fifo: boolean;
  visibilityTimeoutMs: number;
  /** Receives before a failing message moves to the dead-letter list (the redrive policy). */
  maxReceiveCount: number;
  /** Most records handed to one invocation (SQS: 10). */
  batchSize: number;
}

export interface DeadLetter {
  queue: string;
  messageId: string;
  body: string;
  receiveCount: number;
  reason: string;
  at: string;
}

interface StoredMessage {
  messageId: string;
  body: string;
  groupId?: string;
  sentAt: number;
  visibleAt: number;
  receiveCount: number;
  lastError?: string;
  /** Who sent it (SQS's SenderId); in-process senders are LOCAL_SENDER. */
  senderId?: string;
}

/**
 * Delivery faults of a real queue, for reliability tests. Standard queues
 * deliver at least once and in no particular order; FIFO queues keep their
 * order and deduplication, so only standard queues get these.
 */
export interface QueueChaos {
  random: () => number;
  /** Share of messages delivered twice (as two messages: both may be in flight at once). */
  duplicateRate: number;
  /** A batch is drawn at random from the first `reorderWindow` visible messages (1: in order). */
  reorderWindow: number;
  /** Share of messages that become visible only after a random delay of up to `maxDelayMs`. */
  delayRate: number;
  maxDelayMs: number;
}

/** What became of every message sent while a ledger was kept: none may be unaccounted for. */
export interface QueueLedger {
  sent: number;
  completed: number;
  deadLettered: number;
  /** Still in a queue (visible or in flight). */
  waiting: number;
  /** Sent, not completed, not dead-lettered and not in a queue: lost. */
  lost: string[];
}

/** SQS FIFO queues drop a repeated deduplication id within 5 minutes. */
const DEDUP_WINDOW_MS = 5 * 60_000;

/**
 * In-process queues with the SQS semantics the functions rely on: batches of
 * up to `batchSize`, a visibility timeout, redelivery of failed records,
 * a dead-letter list after `maxReceiveCount` receives, and, for FIFO queues,
 * deduplication ids and one in-flight batch per message group (order kept
 * within a group). Time is the injected clock's.
 */
export class LocalSqs implements Queue {
  /**
   * Per queue, its messages by id in the order sent (a Map keeps insertion
   * order): completing a batch deletes its ids in O(batch), where filtering a
   * list cost the whole queue per batch, i.e. nodes squared a minute for stats.
   */
  private readonly messages = new Map<string, Map<string, StoredMessage>>();
  private readonly dedup = new Map<string, Map<string, number>>();
  private readonly dead: DeadLetter[] = [];
  private sequence = 0;
  private chaos: QueueChaos | undefined;
  private ledger: { sent: Set<string>; completed: Set<string> } | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly specs: Readonly<Record<string, LocalQueueSpec>>,
  ) {
    for (const name of Object.keys(specs)) this.messages.set(name, new Map());
  }

  /** Turns delivery faults on (or off, with undefined) from now on. */
  setChaos(chaos: QueueChaos | undefined): void {
    this.chaos = chaos;
  }

  /** Starts remembering every message id sent, for `accounting()` (off by default: a 30-day replay sends millions). */
  keepLedger(): void {
    this.ledger ??= { sent: new Set(), completed: new Set() };
  }

  /** Every message sent since `keepLedger()`: completed, dead-lettered, waiting, or lost. */
  accounting(): QueueLedger {
    const ledger = this.ledger;
    if (!ledger) throw new Error('accounting() needs keepLedger() first');
    const dead = new Set(this.dead.map((letter) => letter.messageId));
    const waiting = new Set([...this.messages.values()].flatMap((list) => [...list.keys()]));
    const lost = [...ledger.sent].filter((id) => !ledger.completed.has(id) && !dead.has(id) && !waiting.has(id));
    return { sent: ledger.sent.size, completed: ledger.completed.size, deadLettered: dead.size, waiting: waiting.size, lost };
  }

  async send(queue: QueueName, outgoing: readonly OutgoingMessage[]): Promise<SendResult> {
    const spec = this.spec(queue);
    for (const entry of prepareEntries(queue, outgoing, spec.fifo)) this.enqueue(queue, entry.body, entry.groupId, entry.deduplicationId);
    return { failed: [] };
  }

  /**
   * Puts a raw body on a queue, as a producer outside the system would (node agents, EventBridge, fault injection);
   * `senderId` is the SenderId SQS would stamp (a node agent: `<role id>:<instance id>`).
   */
  sendRaw(queue: string, body: string, groupId?: string, deduplicationId?: string, senderId?: string): void {
    this.spec(queue);
    this.enqueue(queue, body, groupId, deduplicationId, senderId);
  }

  /** The next batch of visible messages, now in flight for the visibility timeout. */
  receive(queue: string): SQSRecord[] {
    const spec = this.spec(queue);
    const now = this.clock.now().getTime();
    const list = this.messages.get(queue)!;
    const blockedGroups = new Set<string>();
    const batch: StoredMessage[] = [];
    const chaos = spec.fifo ? undefined : this.chaos;
    if (chaos && chaos.reorderWindow > 1) {
      const visible = [...list.values()].filter((message) => message.visibleAt <= now).slice(0, chaos.reorderWindow);
      while (visible.length > 0 && batch.length < spec.batchSize) batch.push(visible.splice(Math.floor(chaos.random() * visible.length), 1)[0]!);
    }
    for (const message of chaos && chaos.reorderWindow > 1 ? [] : list.values()) {
      if (batch.length >= spec.batchSize) break;
      const group = message.groupId;
      if (spec.fifo && group !== undefined && blockedGroups.has(group)) continue;
      if (message.visibleAt > now) {
        // FIFO: a group with a message in flight delivers nothing behind it.
        if (spec.fifo && group !== undefined) blockedGroups.add(group);
        continue;
      }
      batch.push(message);
    }
    return batch.map((message) => {
      message.receiveCount += 1;
      message.visibleAt = now + spec.visibilityTimeoutMs;
      return this.record(queue, message);
    });
  }

  /** Deletes processed messages. */
  complete(queue: string, messageIds: readonly string[]): void {
    const list = this.messages.get(queue)!;
    for (const id of messageIds) list.delete(id);
    if (this.ledger) for (const id of messageIds) this.ledger.completed.add(id);
  }

  /**
   * A record the consumer reported failed: visible again after the visibility
   * timeout, or dead-lettered with `reason` once it was received
   * `maxReceiveCount` times.
   */
  fail(queue: string, messageId: string, reason: string): void {
    const spec = this.spec(queue);
    const list = this.messages.get(queue)!;
    const message = list.get(messageId);
    if (!message) return;
    message.lastError = reason;
    if (message.receiveCount >= spec.maxReceiveCount) {
      list.delete(messageId);
      this.dead.push({ queue, messageId, body: message.body, receiveCount: message.receiveCount, reason, at: this.clock.now().toISOString() });
    }
  }

  /** Messages waiting (visible or in flight). */
  depth(queue: string): number {
    return this.messages.get(queue)?.size ?? 0;
  }

  /** Whether `receive` would return something now. */
  hasVisible(queue: string): boolean {
    const now = this.clock.now().getTime();
    for (const message of this.messages.get(queue)?.values() ?? []) if (message.visibleAt <= now) return true;
    return false;
  }

  deadLetters(queue?: string): DeadLetter[] {
    return queue === undefined ? [...this.dead] : this.dead.filter((letter) => letter.queue === queue);
  }

  private enqueue(queue: string, body: string, groupId?: string, deduplicationId?: string, senderId?: string): void {
    const now = this.clock.now().getTime();
    if (deduplicationId !== undefined && this.spec(queue).fifo) {
      const seen = this.dedup.get(queue) ?? new Map<string, number>();
      this.dedup.set(queue, seen);
      for (const [id, at] of seen) if (now - at >= DEDUP_WINDOW_MS) seen.delete(id);
      if (seen.has(deduplicationId)) return;
      seen.set(deduplicationId, now);
    }
    const chaos = this.spec(queue).fifo ? undefined : this.chaos;
    const copies = chaos && chaos.random() < chaos.duplicateRate ? 2 : 1;
    for (let copy = 0; copy < copies; copy++) {
      this.sequence += 1;
      const visibleAt = chaos && chaos.random() < chaos.delayRate ? now + Math.floor(chaos.random() * chaos.maxDelayMs) : now;
      const message: StoredMessage = { messageId: `${randomUUID()}`, body, sentAt: now, visibleAt, receiveCount: 0 };
      if (groupId !== undefined) message.groupId = groupId;
      if (senderId !== undefined) message.senderId = senderId;
      this.messages.get(queue)!.set(message.messageId, message);
      this.ledger?.sent.add(message.messageId);
    }
  }

  private record(queue: string, message: StoredMessage): SQSRecord {
    const attributes: SQSRecord['attributes'] = {
      ApproximateReceiveCount: String(message.receiveCount),
      SentTimestamp: String(message.sentAt),
      SenderId: message.senderId ?? LOCAL_SENDER,
      ApproximateFirstReceiveTimestamp: String(message.sentAt),
    };
    if (message.groupId !== undefined) {
      attributes.MessageGroupId = message.groupId;
      attributes.SequenceNumber = String(this.sequence);
    }
    let md5: string | undefined;
    return {
      messageId: message.messageId,
      receiptHandle: `${message.messageId}#${message.receiveCount}`,
      body: message.body,
      attributes,
      messageAttributes: {},
      // As SQS sends it, worked out when read: no handler reads it, and hashing every delivery was a thirtieth of a big replay.
      get md5OfBody() {
        return (md5 ??= createHash('md5').update(message.body).digest('hex'));
      },
      eventSource: 'aws:sqs',
      eventSourceARN: `arn:aws:sqs:local:000000000000:nodescaler-local-${queue}${this.spec(queue).fifo ? '.fifo' : ''}`,
      awsRegion: 'local',
    };
  }

  private spec(queue: string): LocalQueueSpec {
    const spec = this.specs[queue];
    if (!spec) throw new Error(`no local queue named ${queue}`);
    return spec;
  }
}
