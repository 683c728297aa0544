import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { DynamoDbStateStore } from '../adapters/dynamodb/state-store.js';
import { startLocalDynamo, type LocalDynamo } from '../adapters/local/dynalite.js';
import { LocalSqs, type DeadLetter } from '../adapters/local/local-sqs.js';
import { SimulatedCloud } from '../adapters/local/simulated-cloud.js';
import { SimulatedPlatform } from '../adapters/local/simulated-platform.js';
import { VirtualClock } from '../adapters/local/virtual-clock.js';
import { InMemoryStateStore } from '../adapters/memory/state-store.js';
import { parseConfig, poolNaming, readConfigFile, type Config, type ConfigInput, type PoolConfig } from '../config/index.js';
import type { Log } from '../ports/log.js';
import type { Metrics } from '../ports/metrics.js';
import type { OutgoingMessage, Queue, QueueName } from '../ports/queue.js';
import type { StateStore } from '../ports/state-store.js';
import { ResultRecorder, sampleInterval, type PolicyResult } from './results.js';
import { seededRandom } from './random.js';
import { LOCAL_QUEUES, LocalRuntime } from './runtime.js';
import { demandAt, type Trace } from './trace.js';
import { SimWorld } from './world.js';

export interface ReplayOptions {
  gearsPerNode: number;
  bootDelaySeconds: number;
  /** `auto`: dynalite for short runs (up to 3 hours: it answers in milliseconds, not microseconds), the contract-tested memory store beyond. */
  store: 'auto' | 'dynalite' | 'memory';
  seed: number;
  /** A configuration file to replay with instead of the simulation defaults (its first pool is the one simulated). */
  configFile?: string;
  /** Overrides merged into the simulation configuration. */
  configOverrides?: Partial<ConfigInput>;
  moveSeconds?: number;
  moveFailureRate?: number;
  /** Most hosts the simulated cloud will run (shows capacity exhaustion). */
  capacityCap?: number;
  onProgress?: (fraction: number) => void;
}

export interface ReplayOutcome {
  result: PolicyResult;
  storeKind: 'dynalite' | 'memory';
  invocations: number;
  /** Milliseconds spent in each function, by trigger. */
  timings: ReadonlyMap<string, number>;
  deadLetters: DeadLetter[];
  violations: string[];
  store: StateStore;
}

const TICK_SECONDS = 60;
const START = Date.parse('2026-01-05T00:00:00.000Z');
const DISTRICT = 'sim';
const PROFILE = 'small';

/** The simulation's configuration: one pool, the ec2 handler against the simulated cloud, the product's own defaults otherwise. */
export function simulationConfig(trace: Trace, options: ReplayOptions): ConfigInput {
  const peak = Math.max(...trace.steps.map((s) => s.demand));
  const max = Math.ceil((peak / options.gearsPerNode) * 2) + 2;
  return {
    handler: 'ec2',
    limits: { maxNodesTotal: max + 10 },
    scaleUp: { forecast: { bootDelay: `${Math.max(1, options.bootDelaySeconds)}s` } },
    naming: { base: 'node', domain: 'sim.local' },
    pools: [
      {
        district: DISTRICT,
        profile: PROFILE,
        min: 1,
        max,
        gearsPerNode: options.gearsPerNode,
        template: { imageId: 'ami-sim', instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }], subnets: ['subnet-sim'] },
      },
    ],
    ...options.configOverrides,
  } as ConfigInput;
}

/** Replays `trace` through the four real handlers; the figures, dead letters and invariant violations of the run. */
export async function runNodescaler(trace: Trace, options: ReplayOptions): Promise<ReplayOutcome> {
  const bootDelayMs = options.bootDelaySeconds * 1000;
  const clock = new VirtualClock(START - Math.max(bootDelayMs, 1000));
  const random = seededRandom(options.seed);
  const storeKind = options.store === 'auto' ? (trace.durationSeconds <= 3 * 3600 ? 'dynalite' : 'memory') : options.store;
  let dynamo: LocalDynamo | undefined;
  let store: StateStore;
  if (storeKind === 'dynalite') {
    dynamo = await startLocalDynamo({ tableName: 'nodescaler-replay' });
    store = new DynamoDbStateStore(DynamoDbStateStore.documentClient(dynamo.client), dynamo.tableName);
  } else {
    store = new InMemoryStateStore();
  }

  const configInput = options.configFile ? fileConfig(options.configFile) : simulationConfig(trace, options);
  const config = parseConfig(configInput, 'simulation configuration');
  const pool = config.pools[0]!;
  const sqs = new LocalSqs(clock, LOCAL_QUEUES);
  const platform = new SimulatedPlatform(clock, { moveDurationMs: (options.moveSeconds ?? 30) * 1000, moveFailureRate: options.moveFailureRate ?? 0, random: seededRandom(options.seed + 1) });
  const cloud = new SimulatedCloud(clock, { bootDelayMs, ...(options.capacityCap !== undefined ? { maxHosts: options.capacityCap } : {}) });
  const recorder = new ResultRecorder('nodescaler', options.gearsPerNode, sampleInterval(trace.durationSeconds));
  const queue = countingQueue(sqs, recorder, clock, platform);

  const runtime = new LocalRuntime(clock, sqs);
  await runtime.load(configInput, { store, queue, clock, cloud, platform, log: quietLog, metrics: noMetrics });
  const world = new SimWorld(clock, platform, cloud, sqs, { district: pool.district, profile: pool.profile, gearsPerNode: options.gearsPerNode, apps: 150, heartbeatSeconds: 240, random });

  // The cluster as it is when nodescaler is switched on: enough nodes for the first demand at 70 %, within the pool's bounds.
  const initial = Math.min(pool.max, Math.max(pool.min, Math.ceil(trace.steps[0]!.demand / (options.gearsPerNode * 0.7))));
  await seedInitialNodes({ cloud, store, config, pool, count: initial, now: clock.now() });
  clock.set(START);

  let hint = 0;
  const stepsPerCheck = Math.max(1, Math.round(trace.stepSeconds / TICK_SECONDS));
  let tick = 0;
  try {
    for (let at = 0; at < trace.durationSeconds; at += TICK_SECONDS, tick++) {
      const step = demandAt(trace, at, hint);
      hint = step.index;
      world.joinBootedHosts();
      world.applyDemand(step.demand);
      world.reportStats();
      await runtime.deliver();
      await runtime.tick();
      await runtime.deliver();
      if (tick % stepsPerCheck === 0) world.checkGears();
      const sample = world.sample(step.demand);
      if (sample.nodes > pool.max) world.violations.push(`${clock.now().toISOString()}: ${sample.nodes} nodes > pool max ${pool.max}`);
      recorder.step({ at, demand: step.demand, capacity: sample.capacity, nodes: sample.nodes, unplaced: sample.unplaced, moved: platform.succeededMoves() }, TICK_SECONDS);
      clock.advance(TICK_SECONDS * 1000);
      options.onProgress?.(Math.min(1, (at + TICK_SECONDS) / trace.durationSeconds));
    }
    world.checkGears();
  } finally {
    await dynamo?.close();
  }

  recorder.gearMoves = platform.succeededMoves();
  const deadLetters = sqs.deadLetters();
  recorder.deadLetters = deadLetters.length;
  recorder.invariantViolations = world.violations.length;
  return { result: recorder.result(), storeKind, invocations: runtime.invocations, timings: runtime.timings, deadLetters, violations: world.violations, store };
}

/**
 * The cluster as it is when nodescaler is switched on: `count` running hosts
 * of the pool, known to the state table as active nodes, named as the
 * provisioner would have named them.
 */
export async function seedInitialNodes(options: { cloud: SimulatedCloud; store: StateStore; config: Config; pool: PoolConfig; count: number; now: Date }): Promise<void> {
  const { cloud, store, config, pool, count, now } = options;
  const naming = poolNaming(config, pool);
  for (let i = 1; i <= count; i++) {
    const hostName = `${naming.base}-${i}.${naming.domain}`;
    const host = await cloud.createHost({
      pool: `${pool.district}/${pool.profile}`,
      district: pool.district,
      profile: pool.profile,
      cloudName: `${naming.base}_${i}`,
      hostName,
      decisionId: 'initial',
      idempotencyToken: `initial-${i}`,
    });
    await store.createNode(
      {
        nodeId: hostName,
        pool: `${pool.district}/${pool.profile}`,
        district: pool.district,
        profile: pool.profile,
        state: 'active',
        createdAt: now.toISOString(),
        origin: 'provisioned',
        protected: false,
        cloudName: `${naming.base}_${i}`,
        ...(host.instanceId ? { instanceId: host.instanceId } : {}),
      },
      now,
    );
    await store.allocateNameNumber(naming.base);
  }
}

/** The file as data: the handlers parse the configuration themselves (NODESCALER_CONFIG); readConfigFile fails early, listing every problem. */
function fileConfig(path: string): ConfigInput {
  readConfigFile(path);
  const raw = parseYaml(readFileSync(path, 'utf8')) as ConfigInput & { pools: unknown[] };
  // The world simulates one pool: the others would scale hosts the world puts nowhere.
  return { ...raw, pools: raw.pools.slice(0, 1) } as ConfigInput;
}

/** Counts the decisions as they are sent, for the summary and the chart's event marks. */
function countingQueue(inner: Queue, recorder: ResultRecorder, clock: VirtualClock, platform: SimulatedPlatform): Queue {
  return {
    async send(queue: QueueName, messages: readonly OutgoingMessage[]) {
      const result = await inner.send(queue, messages);
      const failed = new Set(result.failed.map((f) => f.index));
      messages.forEach((message, i) => {
        if (failed.has(i)) return;
        const at = (clock.nowMs() - START) / 1000;
        const body = message.body;
        if (body.type === 'scale-up') recorder.event(at, 'up', { decisionId: body.decisionId, count: body.count, reason: body.reason });
        if (body.type === 'scale-down') {
          const gears = platform.hasNode(body.nodeId) ? platform.nodeLoad(body.nodeId).activeGears : undefined;
          recorder.event(at, 'down', { decisionId: body.decisionId, node: body.nodeId, reason: body.reason, ...(gears !== undefined ? { gearsMoved: gears } : {}) });
        }
      });
      return result;
    },
  };
}

const quietLog: Log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const noMetrics: Metrics = { record: () => undefined };
