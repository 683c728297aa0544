import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { Clock } from '../../ports/clock.js';
import type { OutgoingMessage, Queue, QueueName, SendResult } from '../../ports/queue.js';
import { prepareEntries } from '../queue-entries.js';
import { LOCAL_SENDER } from '../../domain/stats-sender.js';

/** The queues as deployed (infra/queues.yml): which are FIFO. */
export const LOCAL_QUEUES: Readonly<Record<QueueName, { fifo: boolean }>> = {
  stats: { fifo: false },
  scale: { fifo: true },
  drain: { fifo: true },
  decommission: { fifo: false },
};

/** As the deployed redrive policies: a message failed this many times moves to the dead-letter file. */
export const LOCAL_MAX_RECEIVE_COUNT = 3;

/** SQS FIFO queues drop a repeated deduplication id within 5 minutes. */
const DEDUP_WINDOW_MS = 5 * 60_000;

const ARN_PREFIX = 'arn:aws:sqs:local:000000000000:nodescaler-local-';

export interface SettleSummary {
  queue: QueueName;
  acknowledged: number;
  redelivered: number;
  deadLettered: number;
}

/**
 * `Queue` for `npm run invoke`: each queue is a file `<dir>/<queue>.json`
 * holding its pending messages as an SQS event, ready to be the event of the
 * next invocation (`npm run invoke -- nodeProvisioner .nodescaler/queues/scale.json`).
 *
 * Sends are checked exactly as `SqsQueue` checks them (`prepareEntries`);
 * FIFO queues drop a deduplication id seen in the last 5 minutes. After an
 * invocation, `settle` applies its partial batch response to the file the
 * records came from: handled records leave it, failed ones stay with their
 * receive count raised, and after `LOCAL_MAX_RECEIVE_COUNT` receives move to
 * `<queue>-dlq.json`, as the redrive policy does. Not safe for concurrent
 * processes (the local state is used by one invocation at a time).
 */
export class FileQueue implements Queue {
  constructor(
    private readonly dir: string,
    private readonly clock: Clock,
  ) {
    mkdirSync(dir, { recursive: true });
  }

  /** The file of a queue's pending messages. */
  fileOf(queue: QueueName): string {
    return join(this.dir, `${queue}.json`);
  }

  /** The file of a queue's dead letters. */
  deadLetterFileOf(queue: QueueName): string {
    return join(this.dir, `${queue}-dlq.json`);
  }

  async send(queue: QueueName, messages: readonly OutgoingMessage[]): Promise<SendResult> {
    const { fifo } = LOCAL_QUEUES[queue];
    const entries = prepareEntries(queue, messages, fifo);
    const nowMs = this.clock.now().getTime();
    const records = this.pending(queue);
    const dedup = this.readDedup(nowMs);
    for (const entry of entries) {
      if (entry.deduplicationId !== undefined) {
        const key = `${queue}/${entry.groupId}/${entry.deduplicationId}`;
        if (dedup[key] !== undefined) continue; // accepted, not delivered again (SQS FIFO semantics)
        dedup[key] = nowMs;
      }
      records.push(this.record(queue, entry.body, nowMs, entry.groupId, entry.deduplicationId));
    }
    this.write(this.fileOf(queue), { Records: records });
    this.write(join(this.dir, '.deduplication.json'), dedup);
    return { failed: [] };
  }

  /** The pending records of a queue, oldest first. */
  pending(queue: QueueName): SQSRecord[] {
    return readRecords(this.fileOf(queue));
  }

  /** The records moved to a queue's dead-letter file. */
  deadLetters(queue: QueueName): SQSRecord[] {
    return readRecords(this.deadLetterFileOf(queue));
  }

  /**
   * Applies an invocation's outcome to the queue its records came from: a
   * `SQSBatchResponse`, or `undefined` when the invocation threw (every
   * record failed). Events that did not come from a local queue file are left alone.
   */
  settle(event: unknown, response: SQSBatchResponse | undefined): SettleSummary | undefined {
    const records = (event as Partial<SQSEvent> | null)?.Records;
    if (!Array.isArray(records) || records.length === 0) return undefined;
    const queue = queueOfArn(records[0]?.eventSourceARN);
    if (queue === undefined) return undefined;
    const delivered = new Set(records.map((record) => record.messageId));
    const failed = new Set(response ? response.batchItemFailures.map((failure) => failure.itemIdentifier) : delivered);
    const summary: SettleSummary = { queue, acknowledged: 0, redelivered: 0, deadLettered: 0 };
    const keep: SQSRecord[] = [];
    const dead = this.deadLetters(queue);
    for (const record of this.pending(queue)) {
      if (!delivered.has(record.messageId)) {
        keep.push(record);
      } else if (!failed.has(record.messageId)) {
        summary.acknowledged++;
      } else {
        const received = Number(record.attributes.ApproximateReceiveCount);
        if (received >= LOCAL_MAX_RECEIVE_COUNT) {
          dead.push(record);
          summary.deadLettered++;
        } else {
          keep.push({ ...record, attributes: { ...record.attributes, ApproximateReceiveCount: String(received + 1) } });
          summary.redelivered++;
        }
      }
    }
    this.write(this.fileOf(queue), { Records: keep });
    if (summary.deadLettered > 0) this.write(this.deadLetterFileOf(queue), { Records: dead });
    return summary;
  }

  private record(queue: QueueName, body: string, nowMs: number, groupId?: string, deduplicationId?: string): SQSRecord {
    const { fifo } = LOCAL_QUEUES[queue];
    const messageId = randomUUID();
    const attributes: SQSRecord['attributes'] = {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(nowMs),
      SenderId: LOCAL_SENDER,
      ApproximateFirstReceiveTimestamp: String(nowMs),
    };
    if (groupId !== undefined) attributes.MessageGroupId = groupId;
    if (deduplicationId !== undefined) attributes.MessageDeduplicationId = deduplicationId;
    return {
      messageId,
      receiptHandle: `local-${messageId}`,
      body,
      attributes,
      messageAttributes: {},
      md5OfBody: createHash('md5').update(body).digest('hex'),
      eventSource: 'aws:sqs',
      eventSourceARN: `${ARN_PREFIX}${queue}${fifo ? '.fifo' : ''}`,
      awsRegion: 'local',
    };
  }

  private readDedup(nowMs: number): Record<string, number> {
    const all = readJson<Record<string, number>>(join(this.dir, '.deduplication.json')) ?? {};
    return Object.fromEntries(Object.entries(all).filter(([, at]) => nowMs - at < DEDUP_WINDOW_MS));
  }

  private write(file: string, value: unknown): void {
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(value, null, 2)}\n`);
    renameSync(temporary, file);
  }
}

/** The local queue an event source ARN names, if it is one of ours. */
export function queueOfArn(arn: string | undefined): QueueName | undefined {
  if (arn === undefined || !arn.startsWith(ARN_PREFIX)) return undefined;
  const name = arn.slice(ARN_PREFIX.length).replace(/\.fifo$/, '');
  return Object.hasOwn(LOCAL_QUEUES, name) ? (name as QueueName) : undefined;
}

function readRecords(file: string): SQSRecord[] {
  return readJson<{ Records?: SQSRecord[] }>(file)?.Records ?? [];
}

function readJson<T>(file: string): T | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return JSON.parse(text) as T;
}
