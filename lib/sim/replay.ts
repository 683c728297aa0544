import { DynamoDbStateStore } from '../adapters/dynamodb/state-store.js';
import { startLocalDynamo, type LocalDynamo } from '../adapters/local/dynalite.js';
import { LocalSqs, type DeadLetter } from '../adapters/local/local-sqs.js';
import { SimulatedCloud } from '../adapters/local/simulated-cloud.js';
import type { PlacementRule } from '../adapters/local/sim-placement.js';
import { SimulatedPlatform } from '../adapters/local/simulated-platform.js';
import { VirtualClock } from '../adapters/local/virtual-clock.js';
import { InMemoryStateStore } from '../adapters/memory/state-store.js';
import { parseConfig, poolNaming, type Config, type ConfigInput, type PoolConfig } from '../config/index.js';
import type { OutgoingMessage, Queue, QueueName } from '../ports/queue.js';
import type { StateStore } from '../ports/state-store.js';
import { addTallies, tallyAborts, type AbortTally } from './aborts.js';
import { AlarmWatch } from './alarms.js';
import { singlePool } from './pools.js';
import { BillMeter, type Bill } from './bill.js';
import { firstStepSlots } from './active-demand.js';
import { Churn } from './churn.js';
import { MoveLedger } from './disruption.js';
import { addMoveCauses, moveCauses, type CauseDrain, type CausedMove, type NodeToggle } from './move-causes.js';
import { nodesFor, type SimPool } from './pools.js';
import { instancePrice } from './prices.js';
import { seededRandom } from './random.js';
import { combinePools, HOURS_PER_MONTH, ResultRecorder, sampleInterval, SeriesSampler, type PolicyResult, type PoolResult, type ScaleEvent } from './results.js';
import { LOCAL_QUEUES, LocalRuntime } from './runtime.js';
import { demandAt, peakDemand, type Trace } from './trace.js';
import { SimWorld } from './world.js';

export interface ReplayOptions {
  gearsPerNode: number;
  bootDelaySeconds: number;
  /** `auto`: dynalite for short runs (up to 3 hours: it answers in milliseconds, not microseconds), the contract-tested memory store beyond. */
  store: 'auto' | 'dynalite' | 'memory';
  seed: number;
  /** A configuration to replay with instead of the simulation defaults: every pool of it, each with its own demand (lib/sim/config-pools.ts). */
  config?: { input: ConfigInput; pools: SimPool[] };
  /** Overrides merged into the simulation configuration. */
  configOverrides?: Partial<ConfigInput>;
  moveSeconds?: number;
  moveFailureRate?: number;
  /** Most hosts the simulated cloud will run (shows capacity exhaustion). */
  capacityCap?: number;
  /** The broker reporter sends gears-refused from the waiting gears (default true); false: a site without it. */
  brokerReporter?: boolean;
  /** Each pool's district holds this many UIDs, one per gear (lib/sim/world.ts); the reporter reads them. Default: no limit. */
  districtUids?: number;
  /** With districtUids: the reporter reads them (default true); false: an older reporter that only counts refusals. */
  districtReads?: boolean;
  /**
   * Availability zones the pool's subnets spread its nodes over (the provisioner rotates its subnets), so drains meet
   * nodes of several zones. Default: none (one subnet, no zone).
   */
  zones?: number;
  /**
   * Where the broker puts a new gear: the least-loaded node (default, the simulator's rule until session 45) or
   * origin-server's own rule (`broker`: lib/adapters/local/broker-placement.ts); the baselines place alike.
   */
  placement?: PlacementRule;
  /**
   * Count slots as origin-server does (`max_active_gears` counts only active gears): an idled application's gears
   * hold none, and agents report as the shipped one (lib/sim/world.ts). Default false: every gear holds a slot, the
   * simulator's accounting until session 46; the baselines count alike.
   */
  idleTakesNoSlot?: boolean;
  /**
   * The configuration deployed again `atSeconds` into the trace, as `config` returns it from the first (a new image in
   * the pool's template: the nodes launched before it drift). The state table and the world carry on.
   */
  redeploy?: { atSeconds: number; config: (input: ConfigInput) => ConfigInput };
  /** Seconds between the series' points (default: about 2,000 points over the trace); 60 shows each minute. */
  sampleEverySeconds?: number;
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
  bill: Bill;
  /** What the bill was metered from, by state-store method and metric series (`npm run bench -- bill`). */
  meter: BillMeter;
}

const TICK_SECONDS = 60;
export const REPLAY_START_MS = Date.parse('2026-01-05T00:00:00.000Z');
const START = REPLAY_START_MS;
const DISTRICT = 'sim';
const PROFILE = 'small';
const LAMBDA_MEMORY_MB = 512;

/**
 * The default pool's node, whatever `gearsPerNode` is: its price is both the bill's and what each drain is credited per
 * node-hour (lib/domain/node-price.ts). A node of more slots at this price restarts more tenants per dollar it saves, so
 * its drains pay later; a `pools` override names another instance type.
 */
export const SIM_INSTANCE = { name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 } as const;

/** `m5.xlarge ($0.192/h)`: the default pool's node as settings tables name it. */
export function simInstanceText(): string {
  return `${SIM_INSTANCE.name} ($${instancePrice(SIM_INSTANCE.name)}/h)`;
}

/** The simulation's configuration: one pool, the ec2 handler against the simulated cloud, the product's own defaults otherwise. */
export function simulationConfig(trace: Trace, options: Pick<ReplayOptions, 'gearsPerNode' | 'bootDelaySeconds' | 'configOverrides' | 'zones'>): ConfigInput {
  const max = Math.ceil((peakDemand(trace) / options.gearsPerNode) * 2) + 2;
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
        template: { imageId: 'ami-sim', instanceTypes: [{ ...SIM_INSTANCE }], subnets: simSubnets(options.zones) },
      },
    ],
    ...options.configOverrides,
  } as ConfigInput;
}

const ZONE_SUBNET = 'subnet-sim-';

/** One subnet with no zone, or one per simulated zone (`subnet-sim-sim-1a`, ...). */
function simSubnets(zones: number | undefined): string[] {
  if (zones === undefined || zones <= 1) return ['subnet-sim'];
  return Array.from({ length: zones }, (_, i) => `${ZONE_SUBNET}sim-1${String.fromCharCode(97 + i)}`);
}

function simZoneOf(subnetId: string): string | undefined {
  return subnetId.startsWith(ZONE_SUBNET) ? subnetId.slice(ZONE_SUBNET.length) : undefined;
}

/** The pools a replay runs: the configuration file's, or the one default pool fed the whole trace. */
export function replayPools(trace: Trace, options: ReplayOptions): { input: ConfigInput; pools: SimPool[] } {
  if (options.config) return options.config;
  const input = simulationConfig(trace, options);
  const pool = input.pools[0]!;
  return { input, pools: [{ ...singlePool(trace, options.gearsPerNode, { min: pool.min ?? 1, max: pool.max, instanceType: SIM_INSTANCE.name, pricePerHour: instancePrice(SIM_INSTANCE.name) ?? 0 }) }] };
}

/** Replays every pool through the four real handlers; the figures, dead letters and invariant violations of the run. */
export async function runNodescaler(trace: Trace, options: ReplayOptions): Promise<ReplayOutcome> {
  const bootDelayMs = options.bootDelaySeconds * 1000;
  const clock = new VirtualClock(START - Math.max(bootDelayMs, 1000));
  const storeKind = options.store === 'auto' ? (trace.durationSeconds <= 3 * 3600 ? 'dynalite' : 'memory') : options.store;
  let dynamo: LocalDynamo | undefined;
  let rawStore: StateStore;
  if (storeKind === 'dynalite') {
    dynamo = await startLocalDynamo({ tableName: 'nodescaler-replay' });
    rawStore = new DynamoDbStateStore(DynamoDbStateStore.documentClient(dynamo.client), dynamo.tableName);
  } else {
    rawStore = new InMemoryStateStore();
  }

  const { input: configInput, pools } = replayPools(trace, options);
  const config = parseConfig(configInput, 'simulation configuration');
  const meter = new BillMeter(new Set(Object.entries(LOCAL_QUEUES).filter(([, q]) => q.fifo).map(([name]) => name)));
  const store = meter.store(rawStore);
  const sqs = meter.sqs(new LocalSqs(clock, LOCAL_QUEUES));
  const platform = new SimulatedPlatform(clock, { moveDurationMs: (options.moveSeconds ?? 30) * 1000, moveFailureRate: options.moveFailureRate ?? 0, random: seededRandom(options.seed + 1), ...(options.placement ? { placement: options.placement, placementRandom: seededRandom(options.seed + 13) } : {}), ...(options.idleTakesNoSlot ? { idleTakesNoSlot: true } : {}) });
  const cloud = new SimulatedCloud(clock, { bootDelayMs, zoneOfSubnet: simZoneOf, ...(options.capacityCap !== undefined ? { maxHosts: options.capacityCap } : {}) });
  const sampleEvery = options.sampleEverySeconds ?? sampleInterval(trace.durationSeconds);
  const events: Array<ScaleEvent & { pool: string }> = [];
  meter.platform(platform);
  const queue = countingQueue(meter.queue(sqs), events, clock, platform);
  const toggles = recordToggles(platform, clock);

  const runtime = new LocalRuntime(clock, sqs);
  runtime.onInvoke = (name) => (meter.service = name);
  const alarms = new AlarmWatch(clock);
  const ports = { store, queue, clock, cloud, platform, log: meter.log(), metrics: alarms.watch(meter.metrics(clock)) };
  await runtime.load(configInput, ports);
  const worlds = pools.map((pool, i) => {
    const poolConfig = config.pools.find((p) => `${p.district}/${p.profile}` === pool.id)!;
    const world = new SimWorld(clock, platform, cloud, sqs, {
      district: pool.district,
      profile: pool.profile,
      gearsPerNode: pool.gearsPerNode,
      heartbeatSeconds: 240,
      random: seededRandom(options.seed + 1000 * i),
      gearPrefix: pools.length === 1 ? 'g' : `g${i}-`,
      ...(pool.trace.apps ? { apps: pool.trace.apps } : {}),
      ...(options.districtUids !== undefined ? { districtUids: options.districtUids, districtReads: options.districtReads !== false } : {}),
      ...(options.idleTakesNoSlot ? { idleTakesNoSlot: true } : {}),
    });
    const recorder = new ResultRecorder('nodescaler', pool.gearsPerNode, sampleEvery, new MoveLedger(), pool.pricePerHour);
    return { pool, poolConfig, world, recorder, hint: 0, churn: new Churn(pool.trace.churnPerHour) };
  });

  // The cluster as it is when nodescaler is switched on: enough nodes for the first step's demand (its gears that hold
  // slots, as the baselines start), within each pool's bounds.
  for (const [i, { pool, poolConfig }] of worlds.entries()) {
    const count = nodesFor(pool, firstStepSlots(pool, options.seed + 1000 * i, options.idleTakesNoSlot));
    await seedInitialNodes({ cloud, store: rawStore, config, pool: poolConfig, count, now: clock.now() });
  }
  clock.set(START);

  const total = new SeriesSampler(sampleEvery);
  const violations: string[] = [];
  const aborts: AbortTally[] = [];
  const stepsPerCheck = Math.max(1, Math.round(trace.stepSeconds / TICK_SECONDS));
  let tick = 0;
  let moves = 0;
  // By pool: a pool's drains set its node level (move-causes.ts, bought back).
  const causeDrains = worlds.map((): CauseDrain[] => []);
  try {
    for (let at = 0; at < trace.durationSeconds; at += TICK_SECONDS, tick++) {
      if (options.redeploy && at === Math.floor(options.redeploy.atSeconds / TICK_SECONDS) * TICK_SECONDS) await runtime.load(options.redeploy.config(configInput), ports);
      const demands = worlds.map((w) => {
        const step = demandAt(w.pool.trace, at, w.hint);
        w.hint = step.index;
        w.world.joinBootedHosts();
        w.world.applyDemand(step.demand, w.churn.next(step.demand, TICK_SECONDS));
        if (options.brokerReporter !== false) w.world.reportRefused();
        w.world.reportStats();
        return step.demand;
      });
      await runtime.deliver();
      await runtime.tick();
      await runtime.deliver();
      const succeeded = platform.succeededMoves();
      const movedNow = succeeded - moves;
      moves = succeeded;
      let point = { at, demand: 0, capacity: 0, nodes: 0, unplaced: 0, moves: movedNow };
      worlds.forEach((w, i) => {
        // Each step's changes at every step, and every gear once a simulated hour (and at the end).
        if (tick % stepsPerCheck === 0) w.world.checkGears(tick % (stepsPerCheck * 12) === 0 ? 'all' : 'changed');
        const sample = w.world.sample(demands[i]!);
        if (sample.nodes > w.pool.max) w.world.violations.push(`${clock.now().toISOString()}: ${sample.nodes} nodes > pool ${w.pool.id} max ${w.pool.max}`);
        w.recorder.step({ at, demand: sample.demand, capacity: sample.capacity, nodes: sample.nodes, unplaced: sample.unplaced, moves: worlds.length === 1 ? movedNow : 0 }, TICK_SECONDS);
        w.recorder.closedSlots(sample.unplaced, sample.closedFree, TICK_SECONDS);
        point = { ...point, demand: point.demand + sample.demand, capacity: point.capacity + sample.capacity, nodes: point.nodes + sample.nodes, unplaced: point.unplaced + sample.unplaced };
      });
      if (point.nodes > config.limits.maxNodesTotal) violations.push(`${clock.now().toISOString()}: ${point.nodes} nodes > limits.maxNodesTotal ${config.limits.maxNodesTotal}`);
      total.add(point);
      clock.advance(TICK_SECONDS * 1000);
      options.onProgress?.(Math.min(1, (at + TICK_SECONDS) / trace.durationSeconds));
    }
    for (const w of worlds) w.world.checkGears();
    for (const [i, w] of worlds.entries()) {
      for (const state of ['active', 'completed', 'aborted'] as const) {
        const drains = await rawStore.listDrains(w.pool.id, state);
        w.recorder.ledger.drainsStarted += drains.length;
        if (state === 'aborted') {
          w.recorder.ledger.drainsAborted += drains.length;
          aborts.push(tallyAborts(drains));
        }
        for (const d of drains) {
          // An aborted drain re-opened its node with its last write: the pool had the node again (move-causes.ts, bought back).
          const reopened = state === 'aborted' ? { reopenedAt: (Date.parse(d.updatedAt) - START) / 1000 } : {};
          causeDrains[i]!.push({ nodeId: d.nodeId, startedAt: (Date.parse(d.startedAt) - START) / 1000, kind: d.kind ?? 'scale-down', reason: d.reason, ...reopened });
        }
      }
    }
  } finally {
    await dynamo?.close();
  }

  // Moves by the pool they left, with the gear's disruptiveness from its world's application model.
  const causedMoves = worlds.map((): CausedMove[] => []);
  for (const record of platform.moveHistory()) {
    if (record.outcome !== 'succeeded') continue;
    const index = worlds.findIndex((w) => w.world.everJoined.has(record.from));
    const owner = worlds[index];
    if (!owner) continue;
    const startedAt = (Date.parse(record.startedAt) - START) / 1000;
    owner.recorder.ledger.record(owner.world.gearNumber(record.uuid), startedAt + (options.moveSeconds ?? 30), owner.world.disruptive(record.uuid));
    causedMoves[index]!.push({ gear: owner.world.gearNumber(record.uuid), from: record.from, at: startedAt });
  }
  const causes = addMoveCauses(
    worlds.map((w, i) => moveCauses(causedMoves[i]!, causeDrains[i]!, events.filter((e) => e.pool === w.pool.id && e.kind === 'up').map((e) => ({ at: e.at, count: e.count ?? 1 })), toggles)),
  );
  for (const w of worlds) {
    for (const { pool: _pool, at, kind, ...details } of events.filter((e) => e.pool === w.pool.id)) w.recorder.event(at, kind, details);
    violations.push(...w.world.violations);
  }

  meter.invoked(runtime.invocations, tick * 4);
  const bill = meter.bill(trace.durationSeconds, LAMBDA_MEMORY_MB, Object.keys(LOCAL_QUEUES).length);
  const poolResults: PoolResult[] = worlds.map(({ pool, recorder, world }) => ({
    pool: pool.id,
    instanceType: pool.instanceType,
    gearsPerNode: pool.gearsPerNode,
    min: pool.min,
    max: pool.max,
    ...recorder.figures(world.apps.created),
  }));
  const chartEvents = events.map(({ pool: _pool, ...event }) => event);
  const combined: PolicyResult =
    worlds.length === 1
      ? { policy: 'nodescaler', ...poolResults[0]!, deadLetters: 0, invariantViolations: 0, pools: poolResults, series: worlds[0]!.recorder.series, events: chartEvents }
      : combinePools('nodescaler', poolResults, { days: trace.durationSeconds / 86400, maxNodes: total.maxNodes, series: total.points, events: chartEvents });
  const deadLetters = sqs.deadLetters();
  const nodeMonths = (combined.nodeHours * HOURS_PER_MONTH * 3600) / trace.durationSeconds / HOURS_PER_MONTH;
  const result: PolicyResult = {
    ...combined,
    deadLetters: deadLetters.length,
    invariantViolations: violations.length,
    autoscalerCostPerMonth: bill.total,
    autoscalerCostPerNodeMonth: nodeMonths > 0 ? bill.total / nodeMonths : 0,
    autoscalerBill: bill.lines,
    aborts: addTallies(aborts),
    pages: alarms.pages(),
    moveCauses: causes,
    nodeToggles: { closes: toggles.filter((t) => t.closed).length, reopens: toggles.filter((t) => !t.closed).length },
  };
  return { result, storeKind, invocations: runtime.invocations, timings: runtime.timings, deadLetters, violations, store: rawStore, bill, meter };
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
      idempotencyToken: `initial-${pool.district}-${pool.profile}-${i}`,
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

/** Records when the platform closes or reopens a node to new gears (attrition, and drains closing their node). */
function recordToggles(platform: SimulatedPlatform, clock: VirtualClock): NodeToggle[] {
  const toggles: NodeToggle[] = [];
  const deactivate = platform.deactivateNode.bind(platform);
  const activate = platform.activateNode.bind(platform);
  platform.deactivateNode = async (district, nodeId) => {
    await deactivate(district, nodeId);
    toggles.push({ nodeId, at: (clock.nowMs() - START) / 1000, closed: true });
  };
  platform.activateNode = async (district, nodeId) => {
    await activate(district, nodeId);
    toggles.push({ nodeId, at: (clock.nowMs() - START) / 1000, closed: false });
  };
  return toggles;
}

/** Counts the decisions as they are sent, for the summary and the chart's event marks. */
function countingQueue(inner: Queue, events: Array<ScaleEvent & { pool: string }>, clock: VirtualClock, platform: SimulatedPlatform): Queue {
  return {
    async send(queue: QueueName, messages: readonly OutgoingMessage[]) {
      const result = await inner.send(queue, messages);
      const failed = new Set(result.failed.map((f) => f.index));
      messages.forEach((message, i) => {
        if (failed.has(i)) return;
        const at = (clock.nowMs() - START) / 1000;
        const body = message.body;
        if (body.type === 'scale-up') events.push({ at, kind: 'up', pool: body.pool, decisionId: body.decisionId, count: body.count, reason: body.reason });
        if (body.type === 'scale-down') {
          const gears = platform.hasNode(body.nodeId) ? platform.nodeLoad(body.nodeId).activeGears : undefined;
          events.push({ at, kind: 'down', pool: body.pool, decisionId: body.decisionId, node: body.nodeId, reason: body.reason, ...(gears !== undefined ? { gearsMoved: gears } : {}) });
        }
      });
      return result;
    },
  };
}

