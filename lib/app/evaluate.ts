import type { Config, PoolConfig } from '../config/index.js';
import { effectiveConfig, gateDecision, nodesAsDecided, pauseFor, shadowKey, shadowSentence, type Controls, type ShadowDetails } from '../domain/controls.js';
import type { PoolEvaluation } from '../domain/decision.js';
import { decisionMessage } from '../domain/decision-message.js';
import { templateSeenPatch } from '../domain/drift.js';
import { decidePool } from '../domain/evaluate.js';
import { LaunchTemplateResolver, launchTemplateReadPatch } from './launch-templates.js';
import { advancePendingDrains, recordRenewalDrains } from './replace-drain.js';
import { poolIdOf, type NodeRecord, type PoolId, type PoolRecord } from '../domain/model.js';
import { isProtected, observedBootMs, statsToStore } from '../domain/node-stats.js';
import { nodesDueForRenewal } from '../domain/renewal.js';
import type { AdoptedHost } from '../domain/stats-sender.js';
import { ConflictError, NotFoundError, describeError } from '../errors.js';
import type { DistrictCapacityMessage, GearsRefusedMessage, NodeStatsMessage } from '../messages/index.js';
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import type { Metrics } from '../ports/metrics.js';
import type { Platform } from '../ports/platform.js';
import type { Queue } from '../ports/queue.js';
import type { PoolPatch, StateStore } from '../ports/state-store.js';
import { applyAttrition } from './attrition.js';
import { joinDistrict } from './join.js';
import { applyCallOffs } from './call-off.js';
import { recordRefusedGears } from './refused-gears.js';
import { recordDistrictCapacity } from './district-capacity.js';
import { decideWithMoveHistory } from './move-history.js';
import { GearLists } from './gear-lists.js';
import { BlockedGears } from './blocked-gears.js';
import { leaseAndSend, resendStalledDecision, resendUnsentDecision } from './outbox.js';
import { StatsGate } from './stats-sender.js';
import type { Cloud, LaunchTemplateVersions } from '../ports/cloud.js';
import type { InvocationDeadline } from '../ports/deadline.js';
import { POOLS_AT_ONCE, checksDeadline, inOrderAtMost } from './pool-batch.js';
import type { OnDemandPrices, SpotPrices } from '../ports/market-prices.js';
import { type MarketPricePorts, onceABatch, readDueMarketPrices } from './market-prices.js';

export interface EvaluatorPorts {
  store: StateStore;
  queue: Queue;
  clock: Clock;
  metrics: Metrics;
  log: Log;
  /** Adds a joining node to its district (the seed configured new hosts into their district). */
  platform?: Platform;
  /** Looks up a node-stats sender's instance on first sight (lib/app/stats-sender.ts). */
  hosts?: Pick<Cloud, 'describeHosts'>;
  /** The invocation's end (the handler sets it): scale-down candidate checks stop before it (lib/app/pool-batch.ts). */
  deadline?: Pick<InvocationDeadline, 'remaining'>;
  /** The spot market's prices, for spot pools' drains (lib/app/market-prices.ts); without it they are priced on demand. */
  spotPrices?: SpotPrices;
  /** The region's on-demand prices, for every pool's drains (lib/app/market-prices.ts); without it the built-in list. */
  onDemandPrices?: OnDemandPrices;
  /** What `$Latest` and `$Default` launch templates stand for now, for drift (lib/app/launch-templates.ts). */
  launchTemplateVersions?: LaunchTemplateVersions;
}

export interface StatsItem {
  /** The SQS messageId, so a failure maps back to its record. */
  id: string;
  /** A node's stats, the broker's count of refused gear creations (lib/app/refused-gears.ts), or a district's UIDs (lib/app/district-capacity.ts). */
  message: NodeStatsMessage | GearsRefusedMessage | DistrictCapacityMessage;
  /** Who sent it, as SQS stamped it (the record's `attributes.SenderId`). */
  senderId?: string;
}

export interface PoolOutcome {
  pool: PoolId;
  /** `shadow`: a decision of a pool in shadow mode, logged and not carried out. */
  kind: PoolEvaluation['decision']['kind'] | 'skipped' | 'shadow';
  reason: string;
  decisionId?: string;
  /** False when the decision message could not be sent; it stays with the lease and is sent again next time. */
  sent?: boolean;
}

/**
 * The threshold evaluator: ingests node stats into the state table and turns
 * each pool's utilization into a decision (scale up, drain one node, or
 * nothing, always with its reason). One action per pool at a time: the lease
 * is taken, with the decision message stored in it, before the message is sent.
 */
export class ThresholdEvaluator {
  private readonly pools: ReadonlyMap<PoolId, PoolConfig>;
  private readonly gate: StatsGate;
  private readonly templates: LaunchTemplateResolver;
  private readonly blockedGears = new BlockedGears();
  private readonly gearLists = new GearLists();

  constructor(
    private readonly ports: EvaluatorPorts,
    private readonly config: Config,
  ) {
    this.pools = new Map(config.pools.map((pool) => [poolIdOf(pool.district, pool.profile), pool]));
    this.gate = new StatsGate(ports, config);
    this.templates = new LaunchTemplateResolver(ports.launchTemplateVersions, ports);
  }

  /** A batch of stats: ingest each (failures reported per record), then evaluate the pools they touched. */
  async handleBatch(items: readonly StatsItem[]): Promise<{ failures: Array<{ id: string; error: unknown }>; outcomes: PoolOutcome[] }> {
    const failures: Array<{ id: string; error: unknown }> = [];
    const touched = new Set<PoolId>();
    // Pools with gears refused just now are evaluated even if they were within evaluationInterval: gears wait.
    const urgent = new Set<PoolId>();
    for (const item of items) {
      try {
        if (item.message.type === 'gears-refused') {
          for (const pool of await recordRefusedGears(this.ports, this.config, item.message, item.senderId)) {
            touched.add(pool);
            if (item.message.refused > 0) urgent.add(pool);
          }
          continue;
        }
        if (item.message.type === 'district-capacity') {
          const pool = await recordDistrictCapacity(this.ports, this.config, item.message, item.senderId);
          if (pool) touched.add(pool);
          continue;
        }
        const admission = await this.gate.admit(item.message, item.senderId);
        if (!admission.admit) continue;
        const { admit, ...host } = admission;
        const pool = await this.ingest(item.message, host);
        if (pool) touched.add(pool);
      } catch (error) {
        failures.push({ id: item.id, error });
      }
    }
    const outcomes = await this.evaluate([...touched], 'stats', urgent);
    return { failures, outcomes };
  }

  /** The scheduled tick: every configured pool not evaluated within evaluationInterval is, whether stats arrive or not. */
  async tick(): Promise<PoolOutcome[]> {
    return this.evaluate([...this.pools.keys()], 'tick');
  }

  /** Stores one node's stats (never over newer ones), adopting unknown nodes (with their `host`) and activating joining ones. */
  async ingest(message: NodeStatsMessage, host: AdoptedHost = {}): Promise<PoolId | undefined> {
    const { store, clock, log } = this.ports;
    const now = clock.now();
    const stats = statsToStore(message);
    const pool = poolIdOf(message.district, message.profile);
    let write;
    try {
      write = await store.putNodeStats(message.nodeId, stats);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      const adopted = await this.adopt(message, now, host);
      if (adopted) return this.pools.has(pool) ? pool : undefined;
      write = await store.putNodeStats(message.nodeId, stats);
    }
    const node = write.node;
    if (!write.applied) {
      log.debug('older stats ignored', { nodeId: node.nodeId, reportedAt: stats.reportedAt, held: node.stats?.reportedAt });
      return undefined;
    }
    if (node.pool !== pool) {
      log.warn('node reports a pool other than the one it was recorded in; keeping the recorded pool', {
        nodeId: node.nodeId,
        recorded: node.pool,
        reported: pool,
      });
    }
    if (node.state === 'provisioning') await joinDistrict(this.ports, this.config, node, now);
    return this.pools.has(node.pool) ? node.pool : undefined;
  }

  private async adopt(message: NodeStatsMessage, now: Date, { instanceId, instanceType, zone }: AdoptedHost): Promise<boolean> {
    const pool = poolIdOf(message.district, message.profile);
    const poolConfig = this.pools.get(pool);
    try {
      await this.ports.store.createNode(
        {
          nodeId: message.nodeId,
          pool,
          district: message.district,
          profile: message.profile,
          state: 'active',
          createdAt: now.toISOString(),
          origin: 'adopted',
          ...(instanceId === undefined ? {} : { instanceId }),
          // Priced by its own type and zone (node-price.ts), as a node nodescaler launched is.
          ...(instanceType === undefined ? {} : { instanceType }),
          ...(zone === undefined ? {} : { zone }),
          protected: isProtected({ nodeId: message.nodeId, protected: false }, poolConfig?.protectedNodes ?? []),
          stats: statsToStore(message),
          reason: 'adopted: reported stats without having been provisioned by nodescaler',
        },
        now,
      );
    } catch (error) {
      // Created concurrently by another invocation: store the stats on it instead.
      if (error instanceof ConflictError) return false;
      throw error;
    }
    // A pool the configuration lacks is recorded, so its nodes are listed (status) and counted (maxNodesTotal), never evaluated.
    if (poolConfig === undefined) await this.ports.store.ensurePool(pool);
    this.ports.log.info('node adopted', { nodeId: message.nodeId, pool, configured: poolConfig !== undefined });
    this.ports.metrics.record('NodesAdopted', 1, 'Count', { pool });
    return true;
  }

  private async evaluate(pools: readonly PoolId[], trigger: 'stats' | 'tick', urgent: ReadonlySet<PoolId> = new Set()): Promise<PoolOutcome[]> {
    if (pools.length === 0) return [];
    // The operator's pauses and overrides: one read per batch, whatever the number of pools.
    const listed = await this.ports.store.listControls();
    const controls = listed.pendingDrains.length > 0 ? { ...listed, pendingDrains: await advancePendingDrains(this.ports, this.config, listed.pendingDrains) } : listed;
    // A pool's decision reads its own nodes. Every node of every pool is read only for a scale-up (maxNodesTotal and the
    // resource limits count them all), once per batch: reading them for every batch that evaluated any pool made each
    // batch cost the whole table (issue 18, 2h).
    let loading: Promise<NodeRecord[]> | undefined;
    let loadError: unknown;
    const loadAllNodes = () =>
      (loading ??= this.loadAllNodes().catch((error: unknown) => {
        loadError = error;
        throw error;
      }));
    const loadNodes = (pool: PoolId) =>
      this.ports.store.listNodes(pool).catch((error: unknown) => {
        loadError = error;
        throw error;
      });
    const outOfTime = checksDeadline(this.ports.clock, this.ports.deadline);
    // Pools of one profile in several districts share their instance types: one read of them per batch.
    const markets = onceABatch(this.ports);
    // Several pools at once, outcomes in the pools' order: a pool checking candidates on the broker holds up no other.
    // Nothing a pool's evaluation shares with another depends on their order: the controls and every pool's nodes are read
    // once per batch before any decision of it is carried out, and a decision creates no node (the provisioner does,
    // re-checking the global limits when it claims the names on the capacity record: lib/workflows/launch/claim.ts).
    return inOrderAtMost(pools, POOLS_AT_ONCE, async (pool) => {
      try {
        return await this.evaluatePool(pool, { loadNodes, loadAllNodes, outOfTime, markets }, controls, trigger, urgent.has(pool));
      } catch (error) {
        // Without its nodes no pool can be evaluated: the whole evaluation fails, to be retried.
        if (loadError !== undefined) throw loadError;
        // A pool that cannot be evaluated now is evaluated again on the next tick; the stats are stored.
        this.ports.log.error('pool evaluation failed', { pool, error: describeError(error) });
        return { pool, kind: 'skipped', reason: `evaluation failed: ${describeError(error)}` };
      }
    });
  }

  private async loadAllNodes(): Promise<NodeRecord[]> {
    const { store } = this.ports;
    const known = new Set<PoolId>(this.pools.keys());
    for (const record of await store.listPools()) known.add(record.pool);
    const lists = await Promise.all([...known].map((pool) => store.listNodes(pool)));
    return lists.flat();
  }

  private async evaluatePool(
    poolId: PoolId,
    { loadNodes, loadAllNodes, outOfTime, markets }: BatchReads,
    controls: Controls,
    trigger: 'stats' | 'tick',
    urgent = false,
  ): Promise<PoolOutcome> {
    const { store, clock, log, metrics } = this.ports;
    const now = clock.now();
    let pool = (await store.getPool(poolId)) ?? (await store.ensurePool(poolId));
    // Stats and the tick both evaluate at most once per evaluationInterval: the tick is for pools whose stats stopped.
    if (!urgent && pool.lastEvaluatedAt && now.getTime() - Date.parse(pool.lastEvaluatedAt) < this.config.evaluationInterval) {
      return { pool: poolId, kind: 'skipped', reason: `evaluated at ${pool.lastEvaluatedAt}` };
    }
    const configured = effectiveConfig(this.config, this.pools.get(poolId)!, controls, poolId, now);
    const template = await this.templates.resolve(configured.poolConfig.template);
    const effective = { ...configured, poolConfig: { ...configured.poolConfig, template } };
    pool = await resendUnsentDecision(this.ports, pool, now);
    pool = await resendStalledDecision(this.ports, this.config, pool, now);
    // Stored with this evaluation's other pool fields, and used by its decision already.
    const prices = await readDueMarketPrices({ log, metrics, ...markets }, effective.config, effective.poolConfig, pool, now);
    pool = { ...pool, ...prices };

    // A node whose drain was sent but not yet begun is on its way out: decided on as draining, so that no scale-down
    // drains the replacement bought for it meanwhile (RELIABILITY, finding 17).
    const nodes = nodesAsDecided(await loadNodes(poolId), controls.pendingDrains, poolId);
    const drains = await store.listDrains(poolId);
    const booted = observedBootMs(nodes);
    const platform = this.ports.platform;
    const gearSources = {
      store,
      blocked: this.blockedGears,
      gearLists: (listed: readonly NodeRecord[]) => this.gearLists.attach(listed, store),
      ...(platform ? { listGears: (nodeId: string) => platform.listGears(nodeId) } : {}),
      ...(outOfTime ? { outOfTime } : {}),
    };
    const input = {
      now,
      config: effective.config,
      poolConfig: effective.poolConfig,
      pool: booted === undefined ? pool : { ...pool, observedBootMs: booted },
      nodes,
      drains,
      renewing: controls.pendingDrains.filter((pending) => pending.pool === poolId).length,
    };
    // Decided on the pool's own nodes first: only a scale-up is limited by the other pools' nodes (fewer nodes counted
    // only loosen those limits, so any other decision stands), and a scale-up is decided again with all of them.
    let evaluation = await decideWithMoveHistory(gearSources, { ...input, allNodes: nodes });
    if (evaluation.decision.kind === 'scale-up') {
      const allNodes = await loadAllNodes();
      // A renewal drains its node: decided again with its gears' moves read, as the first time.
      evaluation = evaluation.decision.renews?.length ? await decideWithMoveHistory(gearSources, { ...input, allNodes }) : decidePool({ ...input, allNodes });
    }
    const { decision, utilization } = evaluation;
    const gears = decision.kind === 'scale-down' ? (nodes.find((n) => n.nodeId === decision.nodeId)?.stats?.activeGears ?? 0) : undefined;
    const gate = gateDecision(decision, poolId, effective.mode, controls.pauses, now, gears);
    const poolPatch: PoolPatch = { ...evaluation.poolPatch, ...prices, ...launchTemplateReadPatch(configured.poolConfig.template, template, pool, now), ...templateSeenPatch(template, pool, now) };
    let shadow: ShadowDetails | undefined;
    let shadowRepeat: string | undefined;
    // Drains called off for the pool's demand (lib/domain/call-off.ts): an observed pool changes nothing.
    const callOffs = effective.mode === 'shadow' ? [] : (evaluation.callOff ?? []);
    // Not carried out: no scale-up happened for delayAfterAdd to count from (unless drains gave nodes back), no drain for maxDrainsPerHour.
    const notCarriedOut = !gate.act && decision.kind !== 'no-action';
    if ((notCarriedOut || (evaluation.callOff?.length ?? 0) > 0) && callOffs.length === 0) {
      delete poolPatch.lastScaleUpAt;
      delete poolPatch.lastDemandScaleUpAt;
    }
    if (notCarriedOut) {
      delete poolPatch.scaleDownsAt;
      delete poolPatch.lastRenewals;
      if ('shadow' in gate) {
        const key = shadowKey(decision);
        if (pool.shadow?.key === key && now.getTime() - Date.parse(pool.shadow.at) < this.config.leaseTtl) shadowRepeat = pool.shadow.at;
        else poolPatch.shadow = { key, at: now.toISOString() };
        shadow = decision.kind === 'scale-up' ? { action: 'scale-up', nodes: decision.count } : { action: 'scale-down', nodeId: decision.nodeId, gears: gears! };
        shadow.sentence = shadowSentence(decision, gears);
      }
    }

    try {
      pool = await store.updatePool(poolId, pool.version, poolPatch);
    } catch (error) {
      if (error instanceof ConflictError) {
        // Another invocation evaluated this pool at the same moment; its decision stands.
        return { pool: poolId, kind: 'skipped', reason: 'evaluated concurrently by another invocation' };
      }
      throw error;
    }

    // Before any scale-up is sent: a closed node the pool needs is open again first.
    const attrition = evaluation.attrition
      ? await applyAttrition(this.ports, evaluation.attrition, nodes, effective.mode !== 'shadow' && !pauseFor(controls.pauses, poolId, 'scale-down', now))
      : [];
    const calledOff = callOffs.length > 0 ? await applyCallOffs(this.ports, callOffs) : [];

    metrics.record('PoolUtilization', finitePercent(utilization.utilization), 'Percent', { pool: poolId });
    // One series per pool (docs/BENCHMARKS.md, the bill): the count by state is in this evaluation's log line (nodesByState).
    metrics.record('Nodes', Object.values(utilization.nodesByState).reduce<number>((sum, count) => sum + (count ?? 0), 0), 'Count', { pool: poolId });
    // A pool that renews drifted or expired nodes: how many are left, so the rollout shows as a line falling to 0.
    const due = nodesDueForRenewal(input);
    if (due !== undefined) metrics.record('NodesDueForRenewal', due, 'Count', { pool: poolId });
    // How old the newest figures behind this decision are: the time from a node's report to the decision it fed.
    const newest = nodes.reduce((latest, node) => Math.max(latest, node.stats ? Date.parse(node.stats.reportedAt) : 0), 0);
    if (newest > 0) metrics.record('DecisionLatency', Math.max(0, now.getTime() - newest), 'Milliseconds', { pool: poolId });
    const message = gate.act ? decisionMessage(poolId, decision, now) : undefined;
    let outcome: PoolOutcome = { pool: poolId, kind: decision.kind, reason: decision.reason };
    if (!gate.act) {
      outcome = shadow && !shadowRepeat
        ? { pool: poolId, kind: 'shadow', reason: gate.reason }
        : { pool: poolId, kind: 'no-action', reason: shadowRepeat ? `${gate.reason} (as recorded at ${shadowRepeat})` : gate.reason };
    }
    // A renewal's drain waits for its replacement, recorded before the scale-up is sent (lib/domain/renewal.ts).
    const renews = decision.kind === 'scale-up' ? (decision.renews ?? []) : [];
    const renewal = message && renews.length > 0 ? await recordRenewalDrains(store, renews, { pool: poolId, replacementDecisionId: message.decisionId, reason: decision.reason, at: now.toISOString() }) : undefined;
    if (renewal?.refused) outcome = { pool: poolId, kind: 'no-action', reason: `${decision.reason}; not carried out: ${renewal.refused}` };
    if (message && !renewal?.refused) {
      try {
        const leased = await leaseAndSend(this.ports, poolId, message, this.config.leaseTtl, now);
        pool = leased.pool;
        outcome = { ...outcome, decisionId: message.decisionId, sent: leased.sent };
        metrics.record(message.type === 'scale-up' ? 'ScaleUps' : 'ScaleDowns', 1, 'Count', { pool: poolId });
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
        const holder = (error.current as PoolRecord | undefined)?.lease?.holder ?? 'another action';
        outcome = { pool: poolId, kind: 'no-action', reason: `${decision.reason}; not carried out: lease taken by ${holder}` };
        for (const nodeId of renewal?.recorded ?? []) await store.deletePendingDrain(nodeId);
      }
    }

    if (attrition.length > 0) outcome = { ...outcome, reason: `${outcome.reason}; ${attrition.join('; ')}` };
    const details = {
      trigger,
      utilization: round(utilization.utilization),
      demand: utilization.demand,
      capacity: utilization.capacity,
      provisioningCapacity: utilization.provisioningCapacity,
      freeSlots: utilization.freeSlots,
      nodesByState: utilization.nodesByState,
      staleNodes: utilization.staleNodes,
      ...(decision.kind === 'scale-up' ? { count: decision.count, wanted: decision.wanted, clampedBy: decision.clampedBy, forecastNodes: decision.forecastNodes } : {}),
      ...(renews.length > 0 ? { renews } : {}),
      ...(decision.kind === 'scale-down' ? { nodeId: decision.nodeId } : {}),
      ...('rejected' in decision && decision.rejected?.length ? { rejected: decision.rejected.slice(0, 20) } : {}),
      ...(decision.kind === 'no-action' && decision.budget ? { budget: decision.budget } : {}),
      ...(outcome.kind === 'shadow' ? { shadow } : {}),
      ...(attrition.length > 0 ? { attrition } : {}),
      ...(calledOff.length > 0 ? { calledOff: calledOff.map((call) => call.nodeId) } : {}),
      ...(!gate.act && 'paused' in gate ? { paused: gate.paused } : {}),
      ...(effective.mode === 'shadow' ? { mode: 'shadow' } : {}),
      ...(Object.keys(effective.overridden).length > 0 ? { overrides: effective.overridden } : {}),
      ...(effective.schedule ? { schedule: effective.schedule } : {}),
    };
    await store.appendDecision(
      { pool: poolId, at: now.toISOString(), kind: outcome.kind === 'skipped' ? 'no-action' : outcome.kind, reason: outcome.reason, ...(outcome.decisionId ? { decisionId: outcome.decisionId } : {}), details },
      this.config.decisionLogTtl,
    );
    log.info(outcome.reason, { pool: poolId, decision: outcome.kind, decisionId: outcome.decisionId, ...details });
    return outcome;
  }
}

interface BatchReads {
  loadNodes: (pool: PoolId) => Promise<NodeRecord[]>;
  loadAllNodes: () => Promise<readonly NodeRecord[]>;
  /** True once the batch's candidate checks must stop (lib/app/pool-batch.ts checksDeadline); absent: no deadline. */
  outOfTime: (() => boolean) | undefined;
  /** The markets, each set of instance types read at most once a batch (`onceABatch`). */
  markets: Pick<MarketPricePorts, 'spotPrices' | 'onDemandPrices'>;
}

/** DynamoDB stores no Infinity: a pool with demand and no capacity logs `null`. */
function round(value: number): number | null {
  return Number.isFinite(value) ? Math.round(value * 1000) / 1000 : null;
}

function finitePercent(utilization: number): number {
  return Number.isFinite(utilization) ? Math.round(utilization * 1000) / 10 : 100;
}
