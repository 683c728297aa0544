import type { LocalSqs } from '../adapters/local/local-sqs.js';
import type { Log, LogAttributes } from '../ports/log.js';
import type { Metrics } from '../ports/metrics.js';
import type { Queue } from '../ports/queue.js';
import type { StateStore } from '../ports/state-store.js';
import { SERVICE_PRICES } from './prices.js';
import { HOURS_PER_MONTH } from './results.js';

/**
 * nodescaler's own AWS bill, metered from what a replay actually did: the
 * meter wraps the state store, the queues, metrics and logs the handlers are
 * given, and counts invocations. Assumptions (each one line of the bill):
 * - DynamoDB item size = its JSON plus 100 bytes of key attributes; a write
 *   costs ceil(size / 1 KB) WRU, doubled for items the byPool index (ALL
 *   projection) holds (anything with a `pool`); gets are strongly consistent
 *   (ceil(size / 4 KB) RRU), index queries eventually consistent (half);
 *   a failed conditional write still costs its WRU.
 * - Lambda billed time per invocation = 3 ms + 8 ms per DynamoDB call + 15 ms
 *   per SQS send call, at the configured memory (serverless.yml: 512 MB).
 * - SQS: the agents' SendMessage per report; each function send is one batch
 *   request per 10 messages; each delivered batch one ReceiveMessage and one
 *   DeleteMessageBatch; and the event source mappings' idle long polling,
 *   5 pollers per queue with 20 s waits, all month.
 * - Schedules: the four one-minute ticks, at EventBridge Scheduler's price
 *   (scheduled rules may well be free: this errs high).
 * - CloudWatch: each metric name and dimension set seen is billed a whole
 *   month; EMF and log lines at their JSON size plus 150 bytes of envelope,
 *   INFO and above, plus Lambda's START/END/REPORT lines (350 bytes).
 */
export class BillMeter {
  readonly counts = {
    invocations: 0,
    dynamoCalls: 0,
    rru: 0,
    wru: 0,
    sqsStandard: 0,
    sqsFifo: 0,
    sqsSendCalls: 0,
    logBytes: 0,
    scheduleTicks: 0,
  };
  private readonly metricNames = new Set<string>();
  /** Request units by state-store method, to see what the bill is made of. */
  readonly dynamoByMethod = new Map<string, { calls: number; units: number }>();

  constructor(private readonly fifoQueues: ReadonlySet<string>) {}

  store(inner: StateStore): StateStore {
    const meter = this;
    return new Proxy(inner, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function' || typeof property !== 'string') return value;
        return async (...args: unknown[]) => {
          meter.counts.dynamoCalls += 1;
          try {
            const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            meter.chargeDynamo(property, result ?? args[0]);
            return result;
          } catch (error) {
            meter.chargeDynamo(property, (error as { current?: unknown }).current ?? args[0]);
            throw error;
          }
        };
      },
    });
  }

  queue(inner: Queue): Queue {
    return {
      send: async (queue, messages) => {
        this.counts.sqsSendCalls += 1;
        this.chargeSqs(queue, Math.ceil(messages.length / 10));
        return inner.send(queue, messages);
      },
    };
  }

  /** Counts the agents' reports (sendRaw) and the event source mappings' batches (receive). */
  sqs(inner: LocalSqs): LocalSqs {
    const meter = this;
    return new Proxy(inner, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (property === 'sendRaw') {
          return (queue: string, ...rest: unknown[]) => {
            meter.chargeSqs(queue, 1);
            return (value as (...a: unknown[]) => unknown).apply(target, [queue, ...rest]);
          };
        }
        if (property === 'receive') {
          return (queue: string) => {
            const records = (value as (q: string) => unknown[]).apply(target, [queue]);
            if (records.length > 0) meter.chargeSqs(queue, 2);
            return records;
          };
        }
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  metrics(): Metrics {
    return {
      record: (name, value, unit, dimensions = {}) => {
        this.metricNames.add(`${name} ${JSON.stringify(dimensions)}`);
        this.counts.logBytes += JSON.stringify({ name, value, unit, dimensions }).length + 150;
      },
    };
  }

  log(): Log {
    const line = (message: string, attributes?: LogAttributes) => {
      this.counts.logBytes += message.length + (attributes ? JSON.stringify(attributes).length : 0) + 150;
    };
    return { debug: () => undefined, info: line, warn: line, error: line };
  }

  /** Every metric series seen (name and dimensions), sorted. */
  metricSeries(): string[] {
    return [...this.metricNames].sort();
  }

  invoked(count: number, ticks: number): void {
    this.counts.invocations = count;
    this.counts.scheduleTicks = ticks;
  }

  /** The bill scaled to a 730-hour month from a run of `durationSeconds`, line by line. */
  bill(durationSeconds: number, memoryMb: number, queues: number): Bill {
    const c = this.counts;
    const p = SERVICE_PRICES;
    const month = (HOURS_PER_MONTH * 3600) / durationSeconds;
    const billedMs = c.invocations * 3 + c.dynamoCalls * 8 + c.sqsSendCalls * 15;
    const idlePolls = queues * 5 * 3 * 60 * HOURS_PER_MONTH;
    const logBytes = c.logBytes + c.invocations * 350;
    const lines: BillLine[] = [
      { item: 'Lambda requests', quantity: c.invocations * month, unit: 'requests', cost: c.invocations * month * p.lambdaPerRequest },
      { item: 'Lambda duration', quantity: (billedMs / 1000) * (memoryMb / 1024) * month, unit: 'GB-s', cost: (billedMs / 1000) * (memoryMb / 1024) * month * p.lambdaPerGbSecond },
      { item: 'DynamoDB writes', quantity: c.wru * month, unit: 'WRU', cost: c.wru * month * p.dynamoPerWru },
      { item: 'DynamoDB reads', quantity: c.rru * month, unit: 'RRU', cost: c.rru * month * p.dynamoPerRru },
      { item: 'SQS requests', quantity: (c.sqsStandard + c.sqsFifo) * month, unit: 'requests', cost: (c.sqsStandard * p.sqsStandardPerRequest + c.sqsFifo * p.sqsFifoPerRequest) * month },
      { item: 'SQS idle polling', quantity: idlePolls, unit: 'requests', cost: idlePolls * p.sqsStandardPerRequest },
      { item: 'Schedules', quantity: c.scheduleTicks * month, unit: 'invocations', cost: c.scheduleTicks * month * p.schedulePerInvocation },
      { item: 'CloudWatch metrics', quantity: this.metricNames.size, unit: 'metrics', cost: this.metricNames.size * p.metricPerMonth },
      { item: 'CloudWatch logs', quantity: (logBytes * month) / 1e9, unit: 'GB', cost: ((logBytes * month) / 1e9) * p.logIngestPerGb },
    ];
    return { lines, total: lines.reduce((sum, line) => sum + line.cost, 0) };
  }

  private chargeDynamo(method: string, item: unknown): void {
    const size = itemBytes(item);
    let units: number;
    if (/^(get)/.test(method)) this.counts.rru += (units = Math.max(1, Math.ceil(size / 4096)));
    else if (/^list/.test(method)) this.counts.rru += (units = 0.5 * Math.max(1, Math.ceil(size / 4096)));
    else this.counts.wru += (units = (hasPool(item) ? 2 : 1) * Math.max(1, Math.ceil(size / 1024)));
    const entry = this.dynamoByMethod.get(method) ?? { calls: 0, units: 0 };
    entry.calls += 1;
    entry.units += units;
    this.dynamoByMethod.set(method, entry);
  }

  private chargeSqs(queue: string, requests: number): void {
    if (this.fifoQueues.has(queue)) this.counts.sqsFifo += requests;
    else this.counts.sqsStandard += requests;
  }
}

export interface BillLine {
  item: string;
  quantity: number;
  unit: string;
  /** $ per 730-hour month. */
  cost: number;
}

export interface Bill {
  lines: BillLine[];
  total: number;
}

/** Bytes of an item (or of the items of a query) as DynamoDB sizes them, near enough: JSON plus key attributes. */
export function itemBytes(item: unknown): number {
  if (item === undefined || item === null) return 0;
  if (Array.isArray(item)) return item.reduce((sum: number, one) => sum + itemBytes(one), 0);
  const record = item as { node?: unknown; record?: unknown };
  // putNodeStats and claimScaleUp answer with a wrapper around the item.
  if (typeof item === 'object' && record.node !== undefined && Object.keys(item).length <= 2) return itemBytes(record.node);
  if (typeof item === 'object' && record.record !== undefined && Object.keys(item).length <= 2) return itemBytes(record.record);
  return Buffer.byteLength(JSON.stringify(item)) + 100;
}

function hasPool(item: unknown): boolean {
  if (!item || typeof item !== 'object') return false;
  const record = item as { pool?: unknown; node?: { pool?: unknown }; record?: { pool?: unknown } };
  return record.pool !== undefined || record.node?.pool !== undefined || record.record?.pool !== undefined;
}
