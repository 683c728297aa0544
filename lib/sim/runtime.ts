import type { Context, SQSBatchResponse, SQSEvent, ScheduledEvent } from 'aws-lambda';
import type { LocalSqs } from '../adapters/local/local-sqs.js';
import type { VirtualClock } from '../adapters/local/virtual-clock.js';
import { parseConfig, type Config, type ConfigInput } from '../config/index.js';
import type { Log, LogAttributes } from '../ports/log.js';
import { simDecommissioner, simGearMover, simNodeProvisioner, simThresholdEvaluator, type SimPorts } from '../wiring/sim.js';

export const FUNCTIONS = ['thresholdEvaluator', 'nodeProvisioner', 'gearMover', 'decommissioner'] as const;
export type FunctionName = (typeof FUNCTIONS)[number];
type Handler = (event: SQSEvent | ScheduledEvent, context: Context) => Promise<unknown>;

const FACTORIES: Record<FunctionName, (ports: SimPorts, config: Config) => Handler> = {
  thresholdEvaluator: simThresholdEvaluator,
  nodeProvisioner: simNodeProvisioner,
  gearMover: simGearMover,
  decommissioner: simDecommissioner,
};

/** Which function consumes which queue, as serverless.yml wires them. */
export const CONSUMERS: Record<string, FunctionName> = {
  stats: 'thresholdEvaluator',
  scale: 'nodeProvisioner',
  drain: 'gearMover',
  events: 'gearMover',
  decommission: 'decommissioner',
};

export const LOCAL_QUEUES = {
  stats: { fifo: false, visibilityTimeoutMs: 360_000, maxReceiveCount: 3, batchSize: 10 },
  scale: { fifo: true, visibilityTimeoutMs: 360_000, maxReceiveCount: 3, batchSize: 10 },
  drain: { fifo: true, visibilityTimeoutMs: 360_000, maxReceiveCount: 3, batchSize: 10 },
  events: { fifo: false, visibilityTimeoutMs: 360_000, maxReceiveCount: 3, batchSize: 10 },
  decommission: { fifo: false, visibilityTimeoutMs: 360_000, maxReceiveCount: 3, batchSize: 10 },
} as const;

/**
 * Runs the four functions' real handlers (the code Lambda runs) in this
 * process, built by their factories over the simulation's ports
 * (lib/wiring/sim.ts): SQS
 * batches are delivered with partial batch responses honoured, and the
 * one-minute schedules fire on the virtual clock.
 */
export class LocalRuntime {
  private readonly handlers = new Map<FunctionName, Handler>();
  private wiring: { ports: SimPorts; config: Config } | undefined;
  /** The last error logged for a message, so a dead letter says why. */
  readonly lastErrors = new Map<string, string>();
  invocations = 0;
  /** Milliseconds spent per function and trigger, for the replay's own performance figures. */
  readonly timings = new Map<string, number>();
  /** Told which function runs before each invocation (the bill meter's `service` dimension, as the EMF writer adds it). */
  onInvoke?: (name: FunctionName) => void;

  constructor(
    private readonly clock: VirtualClock,
    private readonly sqs: LocalSqs,
  ) {}

  /** Builds fresh instances of the handlers with these ports and this configuration (a cold start). */
  async load(config: ConfigInput, ports: SimPorts): Promise<void> {
    this.wiring = { ports: { ...ports, log: this.capturingLog(ports.log) }, config: parseConfig(config, 'simulation configuration') };
    for (const name of FUNCTIONS) await this.reload(name);
  }

  /**
   * A fresh instance of one function, with the ports and configuration of the
   * last `load`: what Lambda starts after an instance died, with nothing of
   * the old one's state.
   */
  async reload(name: FunctionName): Promise<void> {
    if (!this.wiring) throw new Error(`handler ${name} cannot start before load()`);
    this.handlers.set(name, FACTORIES[name](this.wiring.ports, this.wiring.config));
  }

  /** The one-minute schedule of every function, at the clock's current time. */
  async tick(): Promise<void> {
    const event = this.tickEvent();
    for (const name of FUNCTIONS) await this.invoke(name, event);
  }

  /** The schedule's event at the clock's current time. */
  tickEvent(): ScheduledEvent {
    return {
      version: '0',
      id: `tick-${this.clock.nowMs()}`,
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      account: '000000000000',
      time: this.clock.now().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      region: 'local',
      resources: ['arn:aws:events:local:000000000000:rule/nodescaler-local-tick'],
      detail: {},
    };
  }

  /** Delivers every visible message to its consumer until the queues are quiet (bounded, like Lambda pollers). */
  async deliver(maxRounds = 50): Promise<void> {
    for (let round = 0; round < maxRounds; round++) {
      let delivered = false;
      for (const queue of Object.keys(CONSUMERS)) {
        const records = this.sqs.receive(queue);
        if (records.length === 0) continue;
        delivered = true;
        let failed: Set<string>;
        try {
          const response = (await this.invoke(CONSUMERS[queue]!, { Records: records })) as SQSBatchResponse | undefined;
          failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
        } catch (error) {
          failed = new Set(records.map((r) => r.messageId));
          for (const record of records) this.lastErrors.set(record.messageId, `invocation failed: ${String(error)}`);
        }
        this.sqs.complete(
          queue,
          records.filter((r) => !failed.has(r.messageId)).map((r) => r.messageId),
        );
        for (const id of failed) this.sqs.fail(queue, id, this.lastErrors.get(id) ?? 'reported as failed by its handler');
      }
      if (!delivered) return;
    }
  }

  /** The function's handler on one event, as Lambda would call it. */
  async invoke(name: FunctionName, event: SQSEvent | ScheduledEvent): Promise<unknown> {
    const handler = this.handlers.get(name);
    if (!handler) throw new Error(`handler ${name} is not loaded`);
    this.invocations += 1;
    this.onInvoke?.(name);
    const started = performance.now();
    try {
      return await handler(event, localContext(name));
    } finally {
      const kind = 'Records' in event ? 'batch' : 'tick';
      const key = `${name} ${kind}`;
      this.timings.set(key, (this.timings.get(key) ?? 0) + performance.now() - started);
    }
  }

  private capturingLog(inner: Log | undefined): Log {
    const remember = (attributes?: LogAttributes) => {
      const id = attributes?.messageId;
      if (typeof id === 'string') this.lastErrors.set(id, String(attributes?.error ?? attributes?.errorMessage ?? attributes?.message ?? 'error'));
    };
    return {
      debug: (message, attributes) => inner?.debug(message, attributes),
      info: (message, attributes) => inner?.info(message, attributes),
      warn: (message, attributes) => {
        remember(attributes);
        inner?.warn(message, attributes);
      },
      error: (message, attributes) => {
        remember({ message, ...attributes });
        inner?.error(message, attributes);
      },
    };
  }
}

/** A Lambda context with a generous, fixed budget: virtual time does not pass during an invocation. */
function localContext(functionName: FunctionName): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: `nodescaler-local-${functionName}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:nodescaler-local-${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: `local-${Math.random().toString(16).slice(2)}`,
    logGroupName: `/aws/lambda/nodescaler-local-${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 60_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
