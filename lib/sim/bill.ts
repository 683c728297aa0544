import type { LocalSqs } from '../adapters/local/local-sqs.js';
import type { Log, LogAttributes } from '../ports/log.js';
import type { Metrics } from '../ports/metrics.js';
import type { Queue } from '../ports/queue.js';
import type { StateStore } from '../ports/state-store.js';
import { GearListSizes, NodeSizes, drainBytes, hasPool, itemBytes, readUnits, statsItemBytes, writeUnits, type StatsLike } from './item-sizes.js';
import { SERVICE_PRICES } from './prices.js';
import { HOURS_PER_MONTH } from './results.js';

/**
 * nodescaler's own AWS bill, metered from what a replay actually did: the
 * meter wraps the state store, the queues, metrics and logs the handlers are
 * given, and counts invocations. Assumptions (each one line of the bill):
 * - DynamoDB item size = its JSON plus 100 bytes of key attributes; a write
 *   costs ceil(size / 1 KB) WRU, doubled for items the byPool index (ALL
 *   projection) holds: nodes, pools and drain headers, not a node's stats or
 *   a drain's moves, which are items of their own (chargeDynamo has the
 *   layout); gets are strongly consistent (ceil(size / 4 KB) RRU), list
 *   queries eventually consistent (half); a failed conditional write still
 *   costs its WRU.
 * - Lambda billed time per invocation = 3 ms + 8 ms per DynamoDB call + 15 ms
 *   per SQS send call, at the configured memory (serverless.yml: 512 MB).
 * - SQS: the agents' SendMessage per report; each function send is one batch
 *   request per 10 messages; each delivered batch one ReceiveMessage and one
 *   DeleteMessageBatch; and the event source mappings' idle long polling,
 *   5 pollers per queue with 20 s waits, all month.
 * - Schedules: the four one-minute ticks, at EventBridge Scheduler's price
 *   (scheduled rules may well be free: this errs high).
 * - CloudWatch: each metric name and dimension set (the function's `service`
 *   included, as the EMF writer adds it) is billed for the hours it had a point
 *   in (CloudWatch prorates custom metrics by the hour); EMF and log lines at their JSON size plus 150 bytes of envelope,
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
  /** Metric series (name and dimensions) by the hours they had a data point in: CloudWatch prorates a custom metric by the hour. */
  private readonly metricHours = new Map<string, Set<number>>();
  /** The function running now: the EMF writer adds it to every metric as the `service` dimension. */
  service = '';
  /** Request units by state-store method, to see what the bill is made of. */
  readonly dynamoByMethod = new Map<string, { calls: number; units: number }>();
  /**
   * Gear listings asked of the platform, by function: free in the bill (SSM Run Command costs nothing on EC2), but on
   * the broker each is a command run and awaited, a second or more of the function's time.
   */
  readonly gearListings = new Map<string, number>();
  private readonly listSizes = new GearListSizes();
  private readonly nodeSizes = new NodeSizes(this.listSizes);
  /** Each node's gear list digest as last written: a report whose list is unchanged writes none. */
  private readonly listDigests = new Map<string, string>();
  /** Move items of each drain, which its end stamps to expire (a write each). */
  private readonly drainMoveItems = new Map<string, number>();

  /** `platform` with its gear listings counted by the function asking. */
  platform<P extends { listGears(nodeId: string): Promise<unknown> }>(platform: P): P {
    const list = platform.listGears.bind(platform);
    platform.listGears = (nodeId: string) => {
      this.gearListings.set(this.service, (this.gearListings.get(this.service) ?? 0) + 1);
      return list(nodeId);
    };
    return platform;
  }

  constructor(private readonly fifoQueues: ReadonlySet<string>) {}

  store(inner: StateStore): StateStore {
    const meter = this;
    // One metered twin per method, made at its first call, not a new closure at every call.
    const metered = new Map<string, (...args: unknown[]) => Promise<unknown>>();
    return new Proxy(inner, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function' || typeof property !== 'string') return value;
        const known = metered.get(property);
        if (known) return known;
        const twin = async (...args: unknown[]) => {
          meter.counts.dynamoCalls += 1;
          try {
            const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            meter.chargeDynamo(property, args, result);
            return result;
          } catch (error) {
            meter.chargeDynamo(property, args, (error as { current?: unknown }).current);
            throw error;
          }
        };
        metered.set(property, twin);
        return twin;
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

  /** Metrics as the functions publish them (EMF), each series billed for the hours it had points in, by `clock`. */
  metrics(clock: { now(): Date } = { now: () => new Date(0) }): Metrics {
    return {
      record: (name, value, unit, dimensions = {}) => {
        const series = `${name} ${JSON.stringify({ ...dimensions, ...(this.service ? { service: this.service } : {}) })}`;
        const hours = this.metricHours.get(series) ?? new Set<number>();
        hours.add(Math.floor(clock.now().getTime() / 3_600_000));
        this.metricHours.set(series, hours);
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

  /** Every metric series seen (name and dimensions) with the hours it had points in, sorted. */
  metricSeries(): string[] {
    return [...this.metricHours.entries()].map(([series, hours]) => `${series} ${hours.size} h`).sort();
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
    // A series with points in every hour of the run costs a whole month; one with points in a tenth of them, a tenth.
    const runHours = Math.max(1, durationSeconds / 3600);
    let metricMonths = 0;
    for (const hours of this.metricHours.values()) metricMonths += Math.min(1, hours.size / runHours);
    const lines: BillLine[] = [
      { item: 'Lambda requests', quantity: c.invocations * month, unit: 'requests', cost: c.invocations * month * p.lambdaPerRequest },
      { item: 'Lambda duration', quantity: (billedMs / 1000) * (memoryMb / 1024) * month, unit: 'GB-s', cost: (billedMs / 1000) * (memoryMb / 1024) * month * p.lambdaPerGbSecond },
      { item: 'DynamoDB writes', quantity: c.wru * month, unit: 'WRU', cost: c.wru * month * p.dynamoPerWru },
      { item: 'DynamoDB reads', quantity: c.rru * month, unit: 'RRU', cost: c.rru * month * p.dynamoPerRru },
      { item: 'SQS requests', quantity: (c.sqsStandard + c.sqsFifo) * month, unit: 'requests', cost: (c.sqsStandard * p.sqsStandardPerRequest + c.sqsFifo * p.sqsFifoPerRequest) * month },
      { item: 'SQS idle polling', quantity: idlePolls, unit: 'requests', cost: idlePolls * p.sqsStandardPerRequest },
      { item: 'Schedules', quantity: c.scheduleTicks * month, unit: 'invocations', cost: c.scheduleTicks * month * p.schedulePerInvocation },
      { item: 'CloudWatch metrics', quantity: metricMonths, unit: 'metric-mo', cost: metricMonths * p.metricPerMonth },
      { item: 'CloudWatch logs', quantity: (logBytes * month) / 1e9, unit: 'GB', cost: ((logBytes * month) / 1e9) * p.logIngestPerGb },
    ];
    return { lines, total: lines.reduce((sum, line) => sum + line.cost, 0) };
  }

  /**
   * Request units of one state-store call, as the DynamoDB adapter lays the
   * items out (lib/adapters/dynamodb): node, pool and drain-header items are in
   * the byPool index (ALL projection: a write costs twice); a node's stats, its
   * agent's gear list and a drain's moves are items of their own, in no index.
   */
  private chargeDynamo(method: string, args: readonly unknown[], result: unknown): void {
    const subject = result ?? args[0];
    let rru = 0;
    let wru = 0;
    switch (method) {
      case 'getNode': {
        // The node, its stats item, and its gear list's item when the stats count one.
        const sizes = this.nodeSizes.of(subject);
        rru = readUnits(sizes.node) + (sizes.node > 0 ? readUnits(sizes.stats) : 0) + (sizes.list > 0 ? readUnits(sizes.list) : 0);
        break;
      }
      case 'listNodes': {
        const nodes = (Array.isArray(result) ? result : []) as unknown[];
        let nodeBytes = 0;
        let statsBytes = 0;
        for (const node of nodes) {
          const sizes = this.nodeSizes.of(node);
          nodeBytes += sizes.node;
          statsBytes += sizes.stats;
        }
        rru = 0.5 * (readUnits(nodeBytes) + readUnits(statsBytes));
        break;
      }
      case 'putNodeStats': {
        // Reads the node (strongly consistent), then writes the stats item conditionally (a failed condition costs too).
        // A report with a gear list reads the stats item first: an older report than the one held writes nothing,
        // a newer one writes the list's item too when its digest changed.
        const stats = args[1] as StatsLike;
        const applied = (result as { applied?: boolean } | undefined)?.applied === true;
        rru = stats.gears ? 2 : 1;
        wru = stats.gears ? (applied ? this.statsWrite(String(args[0]), stats) : 0) : writeUnits(statsItemBytes(stats));
        break;
      }
      case 'createNode': {
        const sizes = this.nodeSizes.of(subject);
        const created = args[0] as { nodeId?: string; stats?: StatsLike } | undefined;
        wru = 2 * writeUnits(sizes.node) + (created?.stats ? this.statsWrite(created.nodeId ?? '', created.stats) : 0);
        break;
      }
      case 'getDrain':
        rru = readUnits(subject === args[0] ? 0 : drainBytes(subject));
        break;
      case 'listDrains': {
        const drains = (Array.isArray(result) ? result : []) as Array<{ moves?: unknown[] }>;
        rru = 0.5 * readUnits(itemBytes(drains.map(({ moves: _m, ...header }) => header)));
        for (const drain of drains) rru += 0.5 * readUnits(itemBytes(drain.moves ?? []));
        break;
      }
      case 'createDrain': {
        const { moves, ...header } = (subject ?? {}) as { moves?: unknown[] };
        wru = 2 * writeUnits(itemBytes(header)) + (moves ?? []).reduce<number>((sum, move) => sum + writeUnits(itemBytes(move)), 0);
        if (result !== undefined) this.drainMoveItems.set(String((args[0] as { drainId?: unknown }).drainId), moves?.length ?? 0);
        break;
      }
      case 'updateDrain': {
        wru = 2 * writeUnits(itemBytes(subject));
        // An end with keepEndedFor reads its move items' keys (strongly consistent) and stamps each to expire.
        const state = (args[2] as { state?: string } | undefined)?.state;
        if (result !== undefined && state !== undefined && state !== 'active' && args[4] !== undefined) {
          const items = this.drainMoveItems.get(String(args[0])) ?? 0;
          rru = readUnits(items * 100);
          wru += items;
          this.drainMoveItems.delete(String(args[0]));
        }
        break;
      }
      case 'writeMoves': {
        let items = this.drainMoveItems.get(String(args[0])) ?? 0;
        for (const write of (args[1] ?? []) as Array<{ kind: string; move?: unknown }>) {
          wru += write.kind === 'delete' ? 1 : writeUnits(itemBytes(write.move));
          if (write.kind === 'create') items += 1;
          else if (write.kind === 'delete') items -= 1;
        }
        this.drainMoveItems.set(String(args[0]), Math.max(0, items));
        break;
      }
      case 'splitDrainMoves': {
        const { moves, ...header } = (subject ?? {}) as { moves?: unknown[] };
        rru = 1;
        wru = 2 * writeUnits(itemBytes(header)) + (moves ?? []).reduce<number>((sum, move) => sum + writeUnits(itemBytes(move)), 0);
        break;
      }
      case 'getGearMoves':
        // One BatchGetItem key per gear (lib/adapters/dynamodb/gear-moves.ts), eventually consistent: each key is a
        // read of an item under 4 KB, found or not (its result is a Map, which the default below would price as one unit).
        rru = 0.5 * new Set((args[0] ?? []) as readonly string[]).size;
        break;
      case 'getGearLists': {
        // One BatchGetItem key per node, strongly consistent: a list's gzipped item, or a unit for a key not found.
        const found = result instanceof Map ? (result as Map<string, { digest: string; gears: unknown[] }>) : new Map<string, { digest: string; gears: unknown[] }>();
        for (const nodeId of new Set((args[0] ?? []) as readonly string[])) {
          const list = found.get(nodeId);
          rru += list ? readUnits(this.listSizes.of({ gears: list.gears, listed: { digest: list.digest } })) : 1;
        }
        break;
      }
      case 'recordGearMoves':
        // One UpdateItem per move, an item of its own under 1 KB, in no index.
        wru = ((args[0] ?? []) as readonly unknown[]).length;
        break;
      default:
        if (/^get/.test(method)) rru = readUnits(itemBytes(subject));
        else if (/^list/.test(method)) rru = 0.5 * readUnits(itemBytes(subject));
        else wru = (hasPool(subject) ? 2 : 1) * writeUnits(itemBytes(subject));
    }
    this.counts.rru += rru;
    this.counts.wru += wru;
    const entry = this.dynamoByMethod.get(method) ?? { calls: 0, units: 0 };
    entry.calls += 1;
    entry.units += rru + wru;
    this.dynamoByMethod.set(method, entry);
  }

  /** Write units of a stats report applied: the stats item, and the gear list's when its digest is not the one last written. */
  private statsWrite(nodeId: string, stats: StatsLike): number {
    let wru = writeUnits(statsItemBytes(stats.gears ? { ...stats, gears: undefined } : stats));
    const digest = stats.listed?.digest;
    if (stats.gears && digest !== undefined && this.listDigests.get(nodeId) !== digest) {
      this.listDigests.set(nodeId, digest);
      wru += writeUnits(this.listSizes.of(stats));
    }
    return wru;
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
