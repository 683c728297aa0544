/**
 * One reliability scenario: a small cluster driven by a generated workload
 * through the four real handlers, with faults injected into every port, the
 * queues and the clock, and the DESIGN.md invariants (invariants.ts) checked
 * after every step. A fault-free settling phase follows, after which the
 * system must have finished what it started and accounted for every message.
 */
import type { SQSBatchResponse, SQSEvent, ScheduledEvent } from 'aws-lambda';
import { DynamoDbStateStore } from '../../../lib/adapters/dynamodb/state-store.js';
import { startLocalDynamo, type LocalDynamo } from '../../../lib/adapters/local/dynalite.js';
import { LocalSqs } from '../../../lib/adapters/local/local-sqs.js';
import { SimulatedCloud } from '../../../lib/adapters/local/simulated-cloud.js';
import { SimulatedPlatform } from '../../../lib/adapters/local/simulated-platform.js';
import { VirtualClock } from '../../../lib/adapters/local/virtual-clock.js';
import { InMemoryStateStore } from '../../../lib/adapters/memory/state-store.js';
import { RENEWAL_BY } from '../../../lib/app/replace-drain.js';
import { parseConfig } from '../../../lib/config/index.js';
import { launchedFromTemplate } from '../../../lib/domain/drift.js';
import type { DrainRecord } from '../../../lib/domain/model.js';
import type { Platform } from '../../../lib/ports/platform.js';
import type { OutgoingMessage, Queue, QueueName } from '../../../lib/ports/queue.js';
import type { StateStore } from '../../../lib/ports/state-store.js';
import { seededRandom } from '../../../lib/sim/random.js';
import { seedInitialNodes } from '../../../lib/sim/replay.js';
import { CONSUMERS, FUNCTIONS, LOCAL_QUEUES, LocalRuntime, type FunctionName } from '../../../lib/sim/runtime.js';
import { heldGears, SimWorld, type WorldPlatform } from '../../../lib/sim/world.js';
import { EmulatedWorld } from './emulated-platform.js';
import { GEAR_MOVE_WINDOW_MS } from '../../../lib/domain/budget.js';
import { gearsMovedPastCap } from './budgets.js';
import { HostileHosts } from './hostile.js';
import { ScenarioOperator } from './operator.js';
import { ScenarioInvariants } from './invariants.js';
import {
  DISTRICT, EXPIRED_AGE_MS, GEARS_PER_NODE, LATE_DRAIN_GRACE_MINUTES, OLD_IMAGE, POOL, PROFILE, REGION, SETTLE_MINUTES, SIM_NODE_ROLE,
  callerInApp, noMetrics, priorGearMoves, quietLog, scenarioConfig, type Mutants, type Scenario, type ScenarioOutcome,
} from './scenario-config.js';
import { CLOUD_READS, FaultInjector, MARKET_READS, NO_FAULTS, PLATFORM_READS, QUEUE_READS, STORE_READS } from './faults.js';
import { ScriptedPriceList, ScriptedSpotMarket } from '../../support/markets.js';

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
  /** The simulated platform counts only active gears in its slots (SimulatedPlatformOptions.idleTakesNoSlot). */
  private readonly idleTakesNoSlot: boolean = false;
  /** Where the world's gears live, whichever platform. */
  private readonly worldPlatform: WorldPlatform & { succeededMoves(): number };
  private readonly cloud: SimulatedCloud;
  private readonly hostile: HostileHosts;
  private readonly world: SimWorld;
  private readonly invariants: ScenarioInvariants;
  /** Two instances of every function: Lambda runs a second one when messages or schedules overlap. */
  private readonly instances: [LocalRuntime, LocalRuntime];
  /** Hosts each scale-up decision asked for. */
  private readonly requested = new Map<string, number>();
  private readonly renewals = new Set<string>();
  private readonly expiryRenewals = new Set<string>();
  private readonly renewalDrains = new Set<string>();
  private concurrency = 0;
  private faultsOn = false;
  private faultsOffAt = Infinity;
  private readonly hostStates = new Map<string, string>();
  private eventSequence = 0;
  private minutes = 0;
  /** The operator's commands at the CLI, if the scenario has any. */
  private operator: ScenarioOperator | undefined;
  /** The markets `scenario.market` prices drains by: every zone and the list quote its price. */
  private readonly markets: { spot: ScriptedSpotMarket; list: ScriptedPriceList } | undefined;

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
      this.emulated = new EmulatedWorld(clock, [{ name: DISTRICT, profile: PROFILE }], scenario.moveFailureRate, seededRandom(scenario.seed + 2), seededRandom(scenario.seed + 13), scenario.zones ? REGION : undefined);
      this.worldPlatform = this.emulated;
    } else {
      // Half the scenarios (by their seed, so the drawn scenarios stay what they were) place new gears as the broker does.
      const placement = scenario.seed % 2 === 0 ? { placement: 'broker' as const, placementRandom: seededRandom(scenario.seed + 13) } : {};
      // And half of each (seed mod 4 of 2 or 3) count slots as origin-server does: idle gears hold none, and drains move them anyway.
      this.idleTakesNoSlot = scenario.seed % 4 >= 2;
      this.platform = new SimulatedPlatform(clock, { moveDurationMs: 30_000, moveFailureRate: scenario.moveFailureRate, random: seededRandom(scenario.seed + 2), ...placement, idleTakesNoSlot: this.idleTakesNoSlot });
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
      ...(scenario.districtUids === undefined ? {} : { districtUids: scenario.districtUids }),
      ...(this.idleTakesNoSlot ? { idleTakesNoSlot: true } : {}),
    });
    this.hostile = new HostileHosts(this.sqs, seededRandom(scenario.seed + 3), { district: DISTRICT, profile: PROFILE });
    this.instances = [new LocalRuntime(clock, this.sqs), new LocalRuntime(clock, this.sqs)];
    const dollars = scenario.market?.dollars;
    this.markets =
      dollars === undefined
        ? undefined
        : { spot: new ScriptedSpotMarket().quote('m5.xlarge', { 'us-east-1a': dollars, 'us-east-1b': dollars * 1.3 }), list: new ScriptedPriceList('us-east-1').quote('m5.xlarge', dollars) };
    const { sqs, cloud, world, hostile, requested } = this;
    this.invariants = new ScenarioInvariants({ scenario, clock, store, sqs, cloud, world, hostile, requested }, this.violations);
  }

  async run(): Promise<ScenarioOutcome> {
    const config = this.mutants.config?.(scenarioConfig(this.scenario)) ?? scenarioConfig(this.scenario);
    const parsed = parseConfig(config, 'reliability scenario');
    // The nodes there before nodescaler started: booted by the first minute.
    const startAt = this.clock.nowMs();
    this.clock.set(startAt);
    // In `expired` scenarios they were launched 40 days before.
    const launchedAt = new Date(startAt - (this.scenario.renewal === 'expired' ? EXPIRED_AGE_MS : 0));
    await seedInitialNodes({ cloud: this.cloud, store: this.store, config: parsed, pool: parsed.pools[0]!, count: 2, now: launchedAt });
    const prior = [...priorGearMoves(this.scenario)].flatMap(([uuid, moves]) =>
      Array.from({ length: moves }, (_, i) => ({ uuid, at: new Date(startAt - 86_400_000 + i * 60_000).toISOString(), key: `before#${i}` })),
    );
    if (prior.length > 0) await this.store.recordGearMoves(prior, GEAR_MOVE_WINDOW_MS);
    if (this.scenario.renewal === 'drifted') {
      const launchedFrom = { ...launchedFromTemplate(parsed.pools[0]!.template), image: OLD_IMAGE };
      for (const node of await this.store.listNodes(POOL)) await this.store.updateNode(node.nodeId, node.version, { launchedFrom });
    }

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
      ...(this.markets
        ? { spotPrices: this.injector.wrap(this.markets.spot, 'market', MARKET_READS), onDemandPrices: this.injector.wrap(this.markets.list, 'market', MARKET_READS) }
        : {}),
    };
    for (const instance of this.instances) await instance.load(config, ports);
    if (this.scenario.operator) this.operator = new ScenarioOperator(this.scenario.operator, ports, parsed, ports.clock, this.injector, this.store, POOL, this.violations);

    this.setFaults(true);
    const plan = this.scenario.demand.flatMap((segment) => Array<number>(segment.minutes).fill(segment.gears));
    for (const demand of plan) await this.minute(demand);
    this.setFaults(false);
    this.faultsOffAt = this.clock.nowMs();
    const last = plan.at(-1) ?? 0;
    for (let i = 0; i < SETTLE_MINUTES; i++) await this.minute(last);
    for (let i = 0; i < LATE_DRAIN_GRACE_MINUTES && (await this.drainBegunWhileSettling()); i++) await this.minute(last);
    await this.invariants.settled(last, this.faultsOffAt);
    await this.operator?.settled();

    const drains = await this.invariants.allDrains();
    this.checkMovesRecorded(drains);
    const pool = await this.store.getPool(POOL);
    return {
      violations: this.violations,
      deadLetters: this.sqs.deadLetters(),
      ledger: this.sqs.accounting(),
      faults: { ...this.injector.counts },
      minutes: this.minutes,
      invocations: this.instances[0].invocations + this.instances[1].invocations,
      scaleUps: this.requested.size,
      drains: drains.length,
      calledOff: drains.filter((drain) => drain.calledOffAt !== undefined).length,
      gearMoves: this.worldPlatform.succeededMoves(),
      fewestServing: this.invariants.fewestServing,
      hostileMessages: this.hostile.total(),
      waitingSighted: pool?.waitingSeen !== undefined,
      marketReads: (this.markets?.spot.requests.length ?? 0) + (this.markets?.list.requests.length ?? 0),
      districtReads: this.world.districtReadsSent,
      joinedInZone: this.emulated?.joinedInZone(REGION.zones[1]) ?? 0,
      movesLockedOut: this.emulated?.movesLockedOut() ?? 0,
      renewals: this.renewals.size,
      expiryRenewals: this.expiryRenewals.size,
      renewalDrains: this.renewalDrains.size,
      gearsMovedPastCap: gearsMovedPastCap(this.scenario.budget, drains, priorGearMoves(this.scenario)),
      idleGearMoves: this.idleTakesNoSlot ? this.idleGearMoves() : 0,
      operator: this.operator?.tally ?? { done: 0, refused: 0, faulted: 0, cancelledBeforeBegun: 0, createdThenRefused: 0 },
    };
  }

  /**
   * Every gear the platform moved is a `moved` move of some drain: a move is a tenant's restart, and the drains'
   * records are what the budget counts against (maxMovesPerGear) and what `nodescaler disruption` tells an operator.
   */
  private checkMovesRecorded(drains: readonly DrainRecord[]): void {
    const recorded = drains.reduce((sum, drain) => sum + drain.moves.filter((move) => move.state === 'moved').length, 0);
    const made = this.worldPlatform.succeededMoves();
    // Both platforms keep each move: the gears whose moves the drains do not account for.
    const byGear = new Map<string, number>();
    const moved = this.platform
      ? this.platform.moveHistory().flatMap((move) => (move.outcome === 'succeeded' ? [{ uuid: move.uuid, exitedFailed: false }] : []))
      : (this.emulated?.movedGears() ?? []);
    for (const { uuid } of moved) byGear.set(uuid, (byGear.get(uuid) ?? 0) + 1);
    for (const drain of drains) for (const move of drain.moves) if (move.state === 'moved') byGear.set(move.gear.uuid, (byGear.get(move.gear.uuid) ?? 0) - 1);
    // A move whose command exited 1 although the gear reached its target, of a gear its tenant deleted before the
    // drain asked where it was, cannot be told from one that failed: the broker says it failed and knows no such gear
    // (Platform.moveStatus `gone`), and the drain drops it. Such moves, of gears gone now, are not owed a record.
    for (const { uuid, exitedFailed } of moved) {
      const unrecorded = byGear.get(uuid) ?? 0;
      if (exitedFailed && unrecorded > 0 && !this.worldPlatform.hasGear(uuid)) byGear.set(uuid, unrecorded - 1);
    }
    const gears = [...byGear].filter(([, count]) => count !== 0).map(([uuid, count]) => {
      const records = drains.flatMap((drain) => drain.moves.filter((move) => move.gear.uuid === uuid).map((move) => `${drain.drainId} ${drain.state} ${move.state}${move.commandId ? '' : ' without a handle'}${move.lastError ? ` (${move.lastError})` : ''}`));
      return `${uuid} ${count > 0 ? `${count} unrecorded` : `${-count} recorded but not made`} [${records.join('; ')}]`;
    });
    if (gears.length === 0) return;
    this.violations.push(`${this.clock.now().toISOString()}: the platform moved ${made} gears, the drains record ${recorded} as moved: ${gears.slice(0, 3).join(', ')}`);
  }

  /** Moves of gears the world placed idle that landed. */
  private idleGearMoves(): number {
    return (this.platform?.moveHistory() ?? []).filter((move) => move.outcome === 'succeeded' && this.world.apps.idle(this.world.gearNumber(move.uuid))).length;
  }

  /** An active drain that began after the faults stopped. */
  private async drainBegunWhileSettling(): Promise<boolean> {
    const active = await this.store.listDrains(POOL, 'active');
    return active.some((drain) => Date.parse(drain.startedAt) > this.faultsOffAt);
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
    if (this.faultsOn) await this.operator?.act(this.minutes);
    this.emitEc2Events();
    await this.deliver(this.faultsOn ? this.operator : undefined);
    await this.tick();
    await this.deliver();
    await this.invariants.step();
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

  /** `operator`: its racing cancels run beside the gear mover's first batch of drain messages (or after, if none). */
  private async deliver(operator?: ScenarioOperator): Promise<void> {
    let racing = operator ? () => operator.racingCancels(this.minutes) : undefined;
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
        const beside = queue === 'drain' ? racing : undefined;
        if (beside) racing = undefined;
        const [outcomes] = await Promise.all([Promise.all(batches.map((batch, i) => this.invoke(i as 0 | 1, name, { Records: batch }))), beside?.()]);
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
      if (!delivered) break;
    }
    await racing?.();
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
          const reason = (body as { reason?: unknown }).reason;
          if (body.type === 'scale-up' && body.decisionId && typeof reason === 'string' && reason.startsWith('renew ')) {
            run.renewals.add(body.decisionId);
            if (reason.includes('expired: launched')) run.expiryRenewals.add(body.decisionId);
          }
          if (body.type === 'scale-down' && body.decisionId && typeof reason === 'string' && reason.includes(RENEWAL_BY)) run.renewalDrains.add(body.decisionId);
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
              const held = heldGears(platform, host.hostName);
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
}
