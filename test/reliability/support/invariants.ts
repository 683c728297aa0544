/**
 * The DESIGN.md invariants a reliability scenario (scenario.ts) checks: after
 * every simulated minute (no gear lost, a decision carried out at most once,
 * the pool's and the global bounds, stats never going back, one drain per node
 * a decision names, the disruption budget) and once after the fault-free
 * settling time (nothing half-done left behind, every message accounted for,
 * the demand placed again). What breaks one is added to `violations`.
 */
import type { LocalSqs } from '../../../lib/adapters/local/local-sqs.js';
import type { SimulatedCloud } from '../../../lib/adapters/local/simulated-cloud.js';
import type { VirtualClock } from '../../../lib/adapters/local/virtual-clock.js';
import { alsoDrainIdFor, drainIdFor } from '../../../lib/domain/drain.js';
import type { StateStore } from '../../../lib/ports/state-store.js';
import type { SimWorld } from '../../../lib/sim/world.js';
import { budgetViolations } from './budgets.js';
import type { HostileHosts } from './hostile.js';
import { GEARS_PER_NODE, POISON_AFTER_MS, POOL, POOL_MAX, POOL_MIN, VCPUS, priorGearMoves, renewalsUncapped, type Scenario } from './scenario-config.js';

/** What the checks read of a running scenario. */
export interface ScenarioParts {
  scenario: Scenario;
  clock: VirtualClock;
  store: StateStore;
  sqs: LocalSqs;
  cloud: SimulatedCloud;
  world: SimWorld;
  hostile: HostileHosts;
  /** Hosts each scale-up decision asked for (the scenario's queue records them as they are sent). */
  requested: ReadonlyMap<string, number>;
}

export class ScenarioInvariants {
  /** The fewest nodes active or provisioning at the end of any minute. */
  fewestServing = Infinity;
  private readonly statsSeen = new Map<string, string>();
  private readonly scenario: Scenario;
  private readonly clock: VirtualClock;
  private readonly store: StateStore;
  private readonly sqs: LocalSqs;
  private readonly cloud: SimulatedCloud;
  private readonly world: SimWorld;
  private readonly hostile: HostileHosts;
  private readonly requested: ReadonlyMap<string, number>;

  constructor(
    parts: ScenarioParts,
    private readonly violations: string[],
  ) {
    this.scenario = parts.scenario;
    this.clock = parts.clock;
    this.store = parts.store;
    this.sqs = parts.sqs;
    this.cloud = parts.cloud;
    this.world = parts.world;
    this.hostile = parts.hostile;
    this.requested = parts.requested;
  }

  /** After every minute: the gears, the hosts launched, the bounds, the stats, and one drain per node a decision names. */
  async step(): Promise<void> {
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
    for (const effect of this.hostile.effects([...nodes, ...elsewhere], real, await this.store.getPool(POOL))) this.violations.push(`${at}: ${effect}`);
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
    this.violations.push(...budgetViolations(at, this.scenario.budget, POOL_MAX, drains, nodes, { prior: priorGearMoves(this.scenario), renewalsUncapped: renewalsUncapped(this.scenario) }));
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

  /** Every drain of the pool, whatever its state. */
  async allDrains() {
    const lists = await Promise.all((['active', 'completed', 'aborted'] as const).map((state) => this.store.listDrains(POOL, state)));
    return lists.flat();
  }

  /** After the fault-free settling time: nothing half-done is left behind, and every message is accounted for. */
  async settled(demand: number, faultsOffAt: number): Promise<void> {
    const at = this.clock.now().toISOString();
    const ledger = this.sqs.accounting();
    if (ledger.lost.length > 0) this.violations.push(`${at}: ${ledger.lost.length} messages lost (${ledger.lost.slice(0, 3).join(', ')})`);
    for (const letter of this.sqs.deadLetters()) {
      if (!letter.reason.trim()) this.violations.push(`${at}: dead letter ${letter.messageId} has no reason`);
      // A message still failing well after the faults stopped cannot be processed at all: a poison message.
      // Hostile messages end there, refused (their sender may not report for that node, or their date), whenever that is.
      if (this.hostile.bodies.has(letter.body)) continue;
      if (Date.parse(letter.at) > faultsOffAt + POISON_AFTER_MS) this.violations.push(`${letter.at}: ${letter.queue} message dead-lettered with no fault injected: ${letter.reason} (${letter.body.slice(0, 300)})`);
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
    // Gears beyond the district's UIDs stay refused whatever the pool holds: the platform's limit, not a stranded gear.
    const beyondUids = Math.max(0, demand - (this.scenario.districtUids ?? Infinity));
    if (demand <= reachable && sample.unplaced > beyondUids) {
      this.violations.push(`${at}: ${sample.unplaced - beyondUids} of ${demand} gears still unplaced after settling (capacity ${sample.capacity}${beyondUids > 0 ? `; ${beyondUids} more beyond the district's ${this.scenario.districtUids} UIDs` : ''})`);
    }
  }
}
