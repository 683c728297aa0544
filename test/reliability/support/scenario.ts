/**
 * One reliability scenario: a small cluster driven by a generated workload
 * through the four real handlers, with faults injected into every port, the
 * queues and the clock, and the DESIGN.md invariants checked after every
 * step. A fault-free settling phase follows, after which the system must have
 * finished what it started and accounted for every message.
 */
import type { SQSBatchResponse, SQSEvent, ScheduledEvent } from 'aws-lambda';
import { DynamoDbStateStore } from '../../../lib/adapters/dynamodb/state-store.js';
import { startLocalDynamo, type LocalDynamo } from '../../../lib/adapters/local/dynalite.js';
import { LocalSqs } from '../../../lib/adapters/local/local-sqs.js';
import { SimulatedCloud } from '../../../lib/adapters/local/simulated-cloud.js';
import { SimulatedPlatform } from '../../../lib/adapters/local/simulated-platform.js';
import { VirtualClock } from '../../../lib/adapters/local/virtual-clock.js';
import { InMemoryStateStore } from '../../../lib/adapters/memory/state-store.js';
import { parseConfig } from '../../../lib/config/index.js';
import { alsoDrainIdFor, drainIdFor } from '../../../lib/domain/drain.js';
import type { Platform } from '../../../lib/ports/platform.js';
import type { OutgoingMessage, Queue, QueueName } from '../../../lib/ports/queue.js';
import type { StateStore } from '../../../lib/ports/state-store.js';
import { seededRandom } from '../../../lib/sim/random.js';
import { seedInitialNodes } from '../../../lib/sim/replay.js';
import { CONSUMERS, FUNCTIONS, LOCAL_QUEUES, LocalRuntime, type FunctionName } from '../../../lib/sim/runtime.js';
import { SimWorld, type WorldPlatform } from '../../../lib/sim/world.js';
import { budgetViolations } from './budgets.js';
import { EmulatedWorld } from './emulated-platform.js';
import { HostileHosts } from './hostile.js';
import {
  DISTRICT, GEARS_PER_NODE, POISON_AFTER_MS, POOL, POOL_MAX, POOL_MIN, PROFILE, SETTLE_MINUTES, SIM_NODE_ROLE, VCPUS,
  callerInApp, noMetrics, quietLog, scenarioConfig, type Mutants, type Scenario, type ScenarioOutcome,
} from './scenario-config.js';
import { CLOUD_READS, FaultInjector, NO_FAULTS, PLATFORM_READS, QUEUE_READS, STORE_READS } from './faults.js';

export type { Mutants, Scenario, ScenarioOutcome } from './scenario-config.js';

const START = Date.parse('2026-03-02T00:00:00.000Z');

export async function runScenario(scenario: Scenario, mutants: Mutants = {}): Promise<ScenarioOutcome> {
  const clock = new VirtualClock(START);
  const random = seededRandom(scenario.seed);
  const injector = new FaultInjector(seededRandom(scenario.seed + 1));
  let dynamo: LocalDynamo | undefined;
  let store: StateStore;
  if (scenario.store === 'dynalite') {
    dynamo = await startLocalDynamo({ tableName: 'nodescaler-reliability' });
    store = new DynamoDbStateStore(DynamoDbStateStore.documentClient(dynamo.client), dynamo.tableName);
  } else {
    store = new InMemoryStateStore();
  }
  try {
    return await new ScenarioRun(scenario, clock, random, injector, store, mutants).run();
  } finally {
    await dynamo?.close();
  }
}

class ScenarioRun {
  private readonly violations: string[] = [];
  private readonly sqs: LocalSqs;
  /** The simulated platform (the handlers' too), or undefined on the broker emulator. */
  private readonly platform: SimulatedPlatform | undefined;
  private readonly emulated: EmulatedWorld | undefined;
  /** Where the world's gears live, whichever platform. */
  private readonly worldPlatform: WorldPlatform & { succeededMoves(): number };
  private readonly cloud: SimulatedCloud;
  private readonly hostile: HostileHosts;
  private readonly world: SimWorld;
  /** Two instances of every function: Lambda runs a second one when messages or schedules overlap. */
  private readonly instances: [LocalRuntime, LocalRuntime];
  private readonly statsSeen = new Map<string, string>();
  /** Hosts each scale-up decision asked for. */
  private readonly requested = new Map<string, number>();
  private concurrency = 0;
  private faultsOn = false;
  private faultsOffAt = Infinity;
  private fewestServing = Infinity;
  private readonly hostStates = new Map<string, string>();
  private eventSequence = 0;
  private minutes = 0;

  constructor(
    private readonly scenario: Scenario,
    private readonly clock: VirtualClock,
    private readonly random: () => number,
    private readonly injector: FaultInjector,
    private readonly store: StateStore,
    private readonly mutants: Mutants,
  ) {
    this.sqs = new LocalSqs(clock, LOCAL_QUEUES);
    this.sqs.keepLedger();
    if (scenario.platform === 'broker') {
      this.emulated = new EmulatedWorld(clock, [{ name: DISTRICT, profile: PROFILE }], scenario.moveFailureRate, seededRandom(scenario.seed + 2));
      this.worldPlatform = this.emulated;
    } else {
      this.platform = new SimulatedPlatform(clock, { moveDurationMs: 30_000, moveFailureRate: scenario.moveFailureRate, random: seededRandom(scenario.seed + 2) });
      this.worldPlatform = this.platform;
    }
    this.cloud = new SimulatedCloud(clock, { bootDelayMs: 120_000, ...(scenario.capacityCap === undefined ? {} : { maxHosts: scenario.capacityCap }) });
    this.world = new SimWorld(clock, this.worldPlatform, this.cloud, this.sqs, {
      district: DISTRICT,
      profile: PROFILE,
      gearsPerNode: GEARS_PER_NODE,
      heartbeatSeconds: 240,
      nodeRoleId: SIM_NODE_ROLE,
      random,
    });
    this.hostile = new HostileHosts(this.sqs, seededRandom(scenario.seed + 3), { district: DISTRICT, profile: PROFILE });
    this.instances = [new LocalRuntime(clock, this.sqs), new LocalRuntime(clock, this.sqs)];
  }

  async run(): Promise<ScenarioOutcome> {
    const config = this.mutants.config?.(scenarioConfig(this.scenario)) ?? scenarioConfig(this.scenario);
    const parsed = parseConfig(config, 'reliability scenario');
    // The nodes there before nodescaler started: booted by the first minute.
    const startAt = this.clock.nowMs();
    this.clock.set(startAt);
    await seedInitialNodes({ cloud: this.cloud, store: this.store, config: parsed, pool: parsed.pools[0]!, count: 2, now: this.clock.now() });
    // On the broker, an operator had added them to their district (the simulated platform joins every booted host).
    for (const host of this.cloud.hosts()) this.emulated?.preJoin(host.hostName);
    this.clock.advance(120_000);
    const platform: Platform = this.platform ? (this.mutants.platform?.(this.platform) ?? this.platform) : this.emulated!.adapter();
    const ports = {
      store: this.injector.wrap(this.mutants.store?.(this.store) ?? this.store, 'store', STORE_READS),
      queue: this.injector.wrap(this.observedQueue(), 'queue', QUEUE_READS),
      cloud: this.injector.wrap(this.mutants.cloud?.(this.observedCloud()) ?? this.observedCloud(), 'cloud', CLOUD_READS),
      platform: this.injector.wrap(platform, 'platform', PLATFORM_READS),
      clock: this.injector.skewedClock(this.clock),
      log: quietLog,
      metrics: noMetrics,
      // Backoff inside an invocation takes no virtual time.
      sleep: async () => undefined,
    };
    for (const instance of this.instances) await instance.load(config, ports);

    this.setFaults(true);
    const plan = this.scenario.demand.flatMap((segment) => Array<number>(segment.minutes).fill(segment.gears));
    for (const demand of plan) await this.minute(demand);
    this.setFaults(false);
    this.faultsOffAt = this.clock.nowMs();
    const last = plan.at(-1) ?? 0;
    for (let i = 0; i < SETTLE_MINUTES; i++) await this.minute(last);
    await this.checkSettled(last);

    const drains = await this.allDrains();
    return {
      violations: this.violations,
      deadLetters: this.sqs.deadLetters(),
      ledger: this.sqs.accounting(),
      faults: { ...this.injector.counts },
      minutes: this.minutes,
      invocations: this.instances[0].invocations + this.instances[1].invocations,
      scaleUps: this.requested.size,
      drains: drains.length,
      gearMoves: this.worldPlatform.succeededMoves(),
      fewestServing: this.fewestServing,
      hostileMessages: this.hostile.total(),
    };
  }

  private setFaults(on: boolean): void {
    const { scenario } = this;
    this.injector.setRates(on ? scenario.faults : NO_FAULTS);
    this.sqs.setChaos(on ? { random: this.random, ...scenario.queue, maxDelayMs: 180_000 } : undefined);
    this.concurrency = on ? scenario.concurrency : 0;
    this.faultsOn = on;
  }

  private async minute(demand: number): Promise<void> {
    this.minutes += 1;
    this.world.joinBootedHosts();
    this.world.applyDemand(demand);
    this.world.reportStats();
    this.world.reportRefused();
    if (this.faultsOn && this.random() < (this.scenario.hostileRate ?? 0)) this.sendHostile();
    this.emitEc2Events();
    await this.deliver();
    await this.tick();
    await this.deliver();
    await this.checkStep();
    this.clock.advance(60_000);
    if (this.faultsOn && this.random() < this.scenario.clockJumps) this.clock.advance(120_000 + Math.floor(this.random() * 780_000));
  }

  /** A compromised node host, chosen at random among the joined ones, sends one hostile message as itself. */
  private sendHostile(): void {
    const joined = this.world.joinedNodes().sort();
    const attackers = joined.filter((nodeId) => this.world.senderOf(nodeId) !== undefined);
    if (attackers.length === 0) return;
    const nodeId = attackers[Math.floor(this.random() * attackers.length)]!;
    this.hostile.send(this.clock.now(), { nodeId, senderId: this.world.senderOf(nodeId)! }, joined.filter((id) => id !== nodeId));
  }

  /** What EventBridge forwards to the events queue: every host state change, and now and then a rebalance recommendation. */
  private emitEc2Events(): void {
    const hosts = this.cloud.hosts();
    for (const host of hosts) {
      if (this.hostStates.get(host.instanceId) === host.state) continue;
      this.hostStates.set(host.instanceId, host.state);
      this.sendEc2Event('EC2 Instance State-change Notification', { 'instance-id': host.instanceId, state: host.state });
    }
    if (this.faultsOn && this.random() < (this.scenario.rebalanceRate ?? 0)) {
      const running = hosts.filter((host) => host.state === 'running');
      const host = running[Math.floor(this.random() * running.length)];
      if (host) this.sendEc2Event('EC2 Instance Rebalance Recommendation', { 'instance-id': host.instanceId });
    }
  }

  private sendEc2Event(detailType: string, detail: Record<string, string>): void {
    this.eventSequence += 1;
    const event = {
      version: '0',
      id: `sim-event-${this.eventSequence}`,
      'detail-type': detailType,
      source: 'aws.ec2',
      account: '000000000000',
      time: this.clock.now().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      region: 'us-east-1',
      resources: [`arn:aws:ec2:us-east-1:000000000000:instance/${detail['instance-id']}`],
      detail,
    };
    this.sqs.sendRaw('events', JSON.stringify(event));
  }

  private async tick(): Promise<void> {
    for (const name of FUNCTIONS) {
      const event = this.instances[0].tickEvent();
      // EventBridge delivers at least once: now and then the schedule runs twice at once.
      const twice = this.random() < this.concurrency;
      await Promise.all([this.invoke(0, name, event), ...(twice ? [this.invoke(1, name, event)] : [])]);
    }
  }

  private async deliver(): Promise<void> {
    for (let round = 0; round < 30; round++) {
      let delivered = false;
      for (const queue of Object.keys(CONSUMERS)) {
        const records = this.sqs.receive(queue);
        if (records.length === 0) continue;
        delivered = true;
        const name = CONSUMERS[queue]!;
        // A visibility timeout that ran out under a slow invocation: a second instance gets some of the same messages.
        const overlap = this.random() < this.concurrency ? records.filter(() => this.random() < 0.6) : [];
        const batches = overlap.length > 0 ? [records, overlap] : [records];
        const outcomes = await Promise.all(batches.map((batch, i) => this.invoke(i as 0 | 1, name, { Records: batch })));
        const succeeded = new Set<string>();
        outcomes.forEach((outcome, i) => {
          if (outcome.failedAll) return;
          for (const record of batches[i]!) if (!outcome.failed.has(record.messageId)) succeeded.add(record.messageId);
        });
        this.sqs.complete(queue, [...succeeded]);
        for (const record of records) {
          if (succeeded.has(record.messageId)) continue;
          const reason = outcomes.map((o) => o.reason).find((r) => r !== undefined) ?? this.instances[0].lastErrors.get(record.messageId) ?? this.instances[1].lastErrors.get(record.messageId) ?? 'reported as failed by its handler';
          this.sqs.fail(queue, record.messageId, reason);
        }
      }
      if (!delivered) return;
    }
  }

  /** One invocation in its own fault context; a crashed instance is replaced by a fresh one (a cold start). */
  private async invoke(which: 0 | 1, name: FunctionName, event: SQSEvent | ScheduledEvent): Promise<{ failedAll: boolean; failed: Set<string>; reason?: string }> {
    const instance = this.instances[which];
    const outcome = await this.injector.invocation(() => instance.invoke(name, event));
    if (outcome.crashed) {
      await instance.reload(name);
      return { failedAll: true, failed: new Set(), reason: `invocation crashed (${outcome.crashedAt ?? 'injected'})` };
    }
    if (outcome.error !== undefined) return { failedAll: true, failed: new Set(), reason: `invocation failed: ${String(outcome.error)}` };
    const response = outcome.result as SQSBatchResponse | undefined;
    return { failedAll: false, failed: new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier)) };
  }

  /** The queue the handlers send to, remembering what each scale-up decision asked for. */
  private observedQueue(): Queue {
    const run = this;
    return {
      async send(queue: QueueName, messages: readonly OutgoingMessage[]) {
        // SQS SendMessageBatch fails entries one by one: some go, some come back failed.
        const rate = run.faultsOn ? run.scenario.queue.partialSendFailure ?? 0 : 0;
        const failedIndexes = new Set(messages.map((_, i) => i).filter(() => run.random() < rate));
        const accepted = messages.filter((_, i) => !failedIndexes.has(i));
        for (const message of accepted) {
          const body = message.body as { type?: string; decisionId?: string; count?: number };
          if (body.type === 'scale-up' && body.decisionId && typeof body.count === 'number') run.requested.set(body.decisionId, Math.max(run.requested.get(body.decisionId) ?? 0, body.count));
        }
        const result = await run.sqs.send(queue, accepted);
        const original = messages.map((_, i) => i).filter((i) => !failedIndexes.has(i));
        return {
          failed: [
            ...result.failed.map((failure) => ({ ...failure, index: original[failure.index]! })),
            ...[...failedIndexes].map((index) => ({ index, error: 'InternalError: injected partial send failure', retryable: true })),
          ],
        };
      },
    };
  }

  /** The cloud the handlers call, checking at the moment of termination that the node holds no gears. */
  private observedCloud(): SimulatedCloud {
    const { cloud, worldPlatform: platform, violations, clock } = this;
    return new Proxy(cloud, {
      get(target, property, receiver) {
        if (property === 'terminateHost') {
          return async (instanceId: string) => {
            const host = target.hosts({ live: true }).find((h) => h.instanceId === instanceId);
            if (host && platform.hasNode(host.hostName)) {
              const held = platform.nodeLoad(host.hostName).activeGears;
              if (held > 0) violations.push(`${clock.now().toISOString()}: terminateHost(${instanceId}) of ${host.hostName} holding ${held} gears, called from ${callerInApp()}`);
            }
            return target.terminateHost(instanceId);
          };
        }
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  private async checkStep(): Promise<void> {
    const at = this.clock.now().toISOString();
    const before = this.world.violations.length;
    this.world.joinBootedHosts();
    this.world.checkGears();
    for (const violation of this.world.violations.splice(before)) this.violations.push(violation);

    // A decision is carried out at most once: one host per node name, no more hosts than a decision asked for.
    const hosts = this.cloud.hosts();
    const byName = new Map<string, number>();
    const byDecision = new Map<string, number>();
    for (const host of hosts) {
      byName.set(host.hostName, (byName.get(host.hostName) ?? 0) + 1);
      const decision = host.tags?.['nodescaler:decision'];
      if (decision && decision !== 'initial') byDecision.set(decision, (byDecision.get(decision) ?? 0) + 1);
    }
    for (const [name, count] of byName) if (count > 1) this.violations.push(`${at}: ${count} hosts launched for node name ${name}`);
    for (const [decision, count] of byDecision) {
      const asked = this.requested.get(decision) ?? 0;
      if (count > asked) this.violations.push(`${at}: decision ${decision} launched ${count} hosts, asked for ${asked}`);
    }

    // Pool and global bounds.
    const live = hosts.filter((host) => host.state === 'pending' || host.state === 'running').length;
    if (live > POOL_MAX) this.violations.push(`${at}: ${live} live hosts > pool max ${POOL_MAX}`);
    if (live > this.scenario.maxNodesTotal) this.violations.push(`${at}: ${live} live hosts > maxNodesTotal ${this.scenario.maxNodesTotal}`);
    // The seeded nodes count too: a limit below them only stops growth.
    const coreLimit = this.scenario.maxCores === undefined ? Infinity : Math.max(this.scenario.maxCores, 2 * VCPUS);
    if (live * VCPUS > coreLimit) this.violations.push(`${at}: ${live * VCPUS} cores of live hosts > maxCores ${this.scenario.maxCores}`);

    // Older stats never overwrite newer ones.
    const nodes = await this.store.listNodes(POOL);
    // Nothing a hostile host sent took effect: no node invented, no figure it claimed stored.
    const real = new Set(this.cloud.hosts().map((host) => host.hostName));
    const elsewhere = await this.store.listNodes('elsewhere/xlarge');
    for (const effect of this.hostile.effects([...nodes, ...elsewhere], real)) this.violations.push(`${at}: ${effect}`);
    for (const node of nodes) {
      const reportedAt = node.stats?.reportedAt;
      if (reportedAt === undefined) continue;
      const seen = this.statsSeen.get(node.nodeId);
      if (seen !== undefined && Date.parse(reportedAt) < Date.parse(seen)) this.violations.push(`${at}: stats of ${node.nodeId} went back from ${seen} to ${reportedAt}`);
      else this.statsSeen.set(node.nodeId, reportedAt);
    }

    const serving = nodes.filter((node) => node.state === 'active' || node.state === 'provisioning').length;
    this.fewestServing = Math.min(this.fewestServing, serving);
    const drains = await this.allDrains();

    // One drain per node a decision names (its first node, and the further ones a big pool's decision drains at once,
    // each under an id derived from the decision and the node). A redrain (a node handed back, drained again) finishes
    // its decision's drain of the same node under the same decision id: not a second action, but it must stay on that node.
    const drainsByDecision = new Map<string, typeof drains>();
    for (const drain of drains) drainsByDecision.set(drain.decisionId, [...(drainsByDecision.get(drain.decisionId) ?? []), drain]);
    this.violations.push(...budgetViolations(at, this.scenario.budget, POOL_MAX, drains, nodes));
    for (const [decision, list] of drainsByDecision) {
      const started = list.filter((drain) => drain.kind !== 'redrain');
      const startedNodes = new Set(started.map((drain) => drain.nodeId));
      // Only the evaluator's scale-down names further nodes; an event's or an operator's drain is one drain.
      const wrongId = started.filter(
        (drain) => started.length > 1 && ((drain.kind ?? 'scale-down') !== 'scale-down' || (drain.drainId !== drainIdFor(decision) && drain.drainId !== alsoDrainIdFor(decision, drain.nodeId))),
      );
      const firsts = started.filter((drain) => drain.drainId === drainIdFor(decision)).length;
      const strayRedrain = started.length > 0 && list.some((drain) => drain.kind === 'redrain' && !startedNodes.has(drain.nodeId));
      const redrainNodes = new Set(list.filter((drain) => drain.kind === 'redrain').map((drain) => drain.nodeId));
      if (startedNodes.size < started.length || wrongId.length > 0 || firsts > 1 || strayRedrain || (started.length === 0 && redrainNodes.size > 1)) {
        this.violations.push(`${at}: decision ${decision} started ${started.length} drains on ${new Set(list.map((drain) => drain.nodeId)).size} nodes (${list.map((drain) => drain.drainId).join(', ')})`);
      }
    }
  }

  private async allDrains() {
    const lists = await Promise.all((['active', 'completed', 'aborted'] as const).map((state) => this.store.listDrains(POOL, state)));
    return lists.flat();
  }

  /** After the fault-free settling time: nothing half-done is left behind, and every message is accounted for. */
  private async checkSettled(demand: number): Promise<void> {
    const at = this.clock.now().toISOString();
    const ledger = this.sqs.accounting();
    if (ledger.lost.length > 0) this.violations.push(`${at}: ${ledger.lost.length} messages lost (${ledger.lost.slice(0, 3).join(', ')})`);
    for (const letter of this.sqs.deadLetters()) {
      if (!letter.reason.trim()) this.violations.push(`${at}: dead letter ${letter.messageId} has no reason`);
      // A message still failing well after the faults stopped cannot be processed at all: a poison message.
      // Hostile messages end there, refused (their sender may not report for that node, or their date), whenever that is.
      if (this.hostile.bodies.has(letter.body)) continue;
      if (Date.parse(letter.at) > this.faultsOffAt + POISON_AFTER_MS) this.violations.push(`${letter.at}: ${letter.queue} message dead-lettered with no fault injected: ${letter.reason} (${letter.body.slice(0, 300)})`);
    }

    const active = await this.store.listDrains(POOL, 'active');
    for (const drain of active) this.violations.push(`${at}: drain ${drain.drainId} of ${drain.nodeId} still active after settling (started ${drain.startedAt}, phase ${drain.phase ?? '?'}, closed ${drain.closedAt ?? 'no'}, ${drain.moves?.length ?? 0} moves: ${JSON.stringify(drain.moves?.slice(0, 3) ?? [])})`);
    const nodes = await this.store.listNodes(POOL);
    for (const node of nodes) {
      if (['draining', 'drained', 'terminating'].includes(node.state)) this.violations.push(`${at}: node ${node.nodeId} still ${node.state} after settling (since ${node.stateChangedAt})`);
    }
    const pool = await this.store.getPool(POOL);
    if (pool?.lease && Date.parse(pool.lease.expiresAt) > this.clock.nowMs()) this.violations.push(`${at}: pool lease still held by ${pool.lease.holder} after settling`);

    // Back within min: an EC2 interruption under faults may dip a pool below it for a while (docs/RELIABILITY.md).
    const serving = nodes.filter((node) => node.state === 'active' || node.state === 'provisioning').length;
    if (serving < POOL_MIN) this.violations.push(`${at}: ${serving} nodes active or provisioning after settling < pool min ${POOL_MIN}`);

    const reachable = Math.min(POOL_MAX, this.scenario.maxNodesTotal, this.scenario.capacityCap ?? Infinity, Math.floor((this.scenario.maxCores ?? Infinity) / VCPUS)) * GEARS_PER_NODE * 0.8;
    const sample = this.world.sample(demand);
    if (demand <= reachable && sample.unplaced > 0) this.violations.push(`${at}: ${sample.unplaced} of ${demand} gears still unplaced after settling (capacity ${sample.capacity})`);
  }
}

