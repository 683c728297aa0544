import { chooseAsBroker, type PlacementCandidate } from '../adapters/local/broker-placement.js';
import type { PlacementRule } from '../adapters/local/sim-placement.js';
import { activeDemandSeries, firstStepSlots } from './active-demand.js';
import { AppModel, MoveLedger } from './disruption.js';
import { nodesFor, peakDemand, type SimPool } from './pools.js';
import { seededRandom } from './random.js';
import { combinePools, ResultRecorder, SeriesSampler, type PolicyName, type PolicyResult, type PoolResult } from './results.js';
import { applyDemandStep, Churn } from './churn.js';
import { demandAt } from './trace.js';

export type BaselinePolicy = Exclude<PolicyName, 'nodescaler'>;
export const BASELINES: readonly BaselinePolicy[] = ['static-peak', 'cluster-autoscaler', 'karpenter', 'clairvoyant-1h', 'clairvoyant-4h'];

export interface BaselineOptions {
  bootDelaySeconds: number;
  tickSeconds: number;
  moveSeconds: number;
  maxConcurrentMoves: number;
  seed: number;
  sampleEverySeconds: number;
  /** Most nodes of all pools together (limits.maxNodesTotal). */
  maxNodesTotal: number;
  /** Where new and evicted gears go (default the least-loaded node), as nodescaler's replay places them. */
  placement?: PlacementRule;
  /**
   * Slots counted as origin-server counts them (ReplayOptions.idleTakesNoSlot): an idled application's gears hold
   * none, though drains move them and a node holding one is not empty. The clairvoyant blocks and static-peak size
   * for the active gears.
   */
  idleTakesNoSlot?: boolean;
}

/** The defaults the baselines follow (cluster-autoscaler FAQ, Karpenter disruption docs); see the README. */
export const CLUSTER_AUTOSCALER = { utilizationThreshold: 0.5, unneededSeconds: 600, delayAfterAddSeconds: 600, maxEmptyBulkDelete: 10 };
export const KARPENTER = { consolidateAfterSeconds: 30, budgetShare: 0.1 };

interface Node {
  gears: Set<number>;
  /** Of `gears`, those holding a slot: every one, or the active ones with `idleTakesNoSlot`. */
  held: number;
  readyAt: number;
  draining: boolean;
  /** cluster-autoscaler: since when the node is under the utilization threshold. */
  lowSince?: number;
  /** Karpenter: last time a gear arrived on or left the node. */
  lastChangeAt: number;
}

/**
 * One pool under a comparison policy, on a light model of the world nodescaler
 * runs in: nodes of `gearsPerNode` slots that boot in `bootDelaySeconds`,
 * gears placed on the least-loaded ready node (or where the broker would put
 * them, `placement: 'broker'`), departures taken at random, and drains that
 * move `maxConcurrentMoves` gears every `moveSeconds` to where new gears go,
 * releasing the node once it is empty.
 */
class PoolSim {
  readonly nodes: Node[] = [];
  private readonly placed: number[] = [];
  private readonly position = new Map<number, number>();
  private readonly home = new Map<number, Node>();
  private readonly waiting: number[] = [];
  private readonly apps: AppModel;
  private readonly random: () => number;
  /** The broker's draws, apart from `random` so departures draw alike under either placement. */
  private readonly brokerRandom: (() => number) | undefined;
  readonly recorder: ResultRecorder;
  readonly ledger = new MoveLedger();
  private hint = 0;
  private readonly churn: Churn;
  private lastAddAt = -Infinity;
  private readonly peak: number;
  /** With `idleTakesNoSlot`, the gears holding a slot at each tick (active-demand.ts): what static-peak and the clairvoyant blocks size for. */
  private readonly activeDemand: Int32Array | undefined;
  movesThisStep = 0;

  constructor(
    readonly policy: BaselinePolicy,
    readonly pool: SimPool,
    private readonly options: BaselineOptions,
    seed: number,
  ) {
    this.random = seededRandom(seed);
    this.brokerRandom = options.placement === 'broker' ? seededRandom(seed + 13) : undefined;
    this.apps = new AppModel(seededRandom(seed + 7), pool.trace.apps);
    this.recorder = new ResultRecorder(policy, pool.gearsPerNode, options.sampleEverySeconds, this.ledger, pool.pricePerHour);
    const sized = policy === 'static-peak' || policy.startsWith('clairvoyant');
    this.activeDemand = options.idleTakesNoSlot && sized ? activeDemandSeries(pool, options.tickSeconds, seed) : undefined;
    this.peak = this.activeDemand ? this.activeDemand.reduce((most, gears) => Math.max(most, gears), 0) : peakDemand(pool.trace);
    this.churn = new Churn(pool.trace.churnPerHour);
    const initial = policy === 'static-peak' ? nodesFor(pool, this.peak) : policy.startsWith('clairvoyant') ? this.clairvoyantTarget(0) : nodesFor(pool, firstStepSlots(pool, seed, options.idleTakesNoSlot));
    for (let i = 0; i < initial; i++) this.nodes.push({ gears: new Set(), held: 0, readyAt: 0, draining: false, lastChangeAt: 0 });
  }

  /** Demand, departures, drains, boots and placement for the step at `t`; the demand. */
  advance(t: number): number {
    const step = demandAt(this.pool.trace, t, this.hint);
    this.hint = step.index;
    this.movesThisStep = 0;
    this.applyDemand(step.demand, t);
    this.progressDrains(t);
    this.placeWaiting(t);
    return step.demand;
  }

  /** The policy's decision at `t`; `room`: nodes the global limit still allows. */
  decide(t: number, demand: number, room: number): number {
    switch (this.policy) {
      case 'static-peak':
        return 0;
      case 'cluster-autoscaler':
        return this.clusterAutoscaler(t, room);
      case 'karpenter':
        return this.karpenter(t, room);
      default:
        return this.clairvoyant(t, room, demand);
    }
  }

  record(t: number, demand: number): void {
    let ready = 0;
    for (const node of this.nodes) if (node.readyAt <= t && !node.draining) ready += 1;
    this.recorder.step({ at: t, demand, capacity: ready * this.pool.gearsPerNode, nodes: this.nodes.length, unplaced: this.waiting.length, moves: this.movesThisStep }, this.options.tickSeconds);
  }

  result(): PoolResult {
    const { id, instanceType, gearsPerNode, min, max } = this.pool;
    return { pool: id, instanceType, gearsPerNode, min, max, ...this.recorder.figures(this.apps.created) };
  }

  // --- the policies -------------------------------------------------------

  /**
   * cluster-autoscaler: scale up only for gears waiting, as many nodes as they
   * need beyond those booting; scale down a node whose utilization stayed under
   * 0.5 for 10 minutes and whose gears fit on the others, not within 10
   * minutes of an add: empty ones up to 10 at once, others one at a time.
   */
  private clusterAutoscaler(t: number, room: number): number {
    const added = this.addForWaiting(t, room);
    const ca = CLUSTER_AUTOSCALER;
    for (const node of this.nodes) {
      if (node.readyAt > t || node.draining) continue;
      if (node.held / this.pool.gearsPerNode < ca.utilizationThreshold) node.lowSince ??= t;
      else delete node.lowSince;
    }
    if (t - this.lastAddAt < ca.delayAfterAddSeconds) return added;
    const unneeded = this.nodes.filter((n) => n.readyAt <= t && !n.draining && n.lowSince !== undefined && t - n.lowSince >= ca.unneededSeconds);
    let removable = this.nodes.length - this.pool.min;
    let empties = 0;
    for (const node of unneeded) {
      if (node.gears.size > 0 || empties >= ca.maxEmptyBulkDelete || removable <= 0) continue;
      this.startDrain(node, t);
      empties += 1;
      removable -= 1;
    }
    if (removable <= 0 || this.nodes.some((n) => n.draining && n.gears.size > 0)) return added;
    let free = this.freeSlots(t);
    for (const node of unneeded.filter((n) => n.gears.size > 0).sort((a, b) => a.gears.size - b.gears.size)) {
      if (node.held <= free - (this.pool.gearsPerNode - node.held)) {
        this.startDrain(node, t);
        free -= this.pool.gearsPerNode;
        break;
      }
    }
    return added;
  }

  /**
   * Karpenter, consolidationPolicy WhenEmptyOrUnderutilized: scale up for
   * waiting gears; drain every node (fewest gears first) whose gears fit on the
   * nodes that stay, once it went consolidateAfter (30 s) without a gear
   * arriving or leaving, as long as no more than 10 % of the pool's nodes
   * (rounded up) are being disrupted.
   */
  private karpenter(t: number, room: number): number {
    const added = this.addForWaiting(t, room);
    const budget = Math.ceil(KARPENTER.budgetShare * this.nodes.length);
    let allowed = budget - this.nodes.filter((n) => n.draining).length;
    let removable = this.nodes.length - this.pool.min;
    let free = this.freeSlots(t);
    const candidates = this.nodes
      .filter((n) => n.readyAt <= t && !n.draining && t - n.lastChangeAt >= KARPENTER.consolidateAfterSeconds)
      .sort((a, b) => a.gears.size - b.gears.size);
    for (const node of candidates) {
      if (allowed <= 0 || removable <= 0) break;
      if (node.held > free - (this.pool.gearsPerNode - node.held)) continue;
      this.startDrain(node, t);
      free -= this.pool.gearsPerNode;
      allowed -= 1;
      removable -= 1;
    }
    return added;
  }

  /**
   * Perfect foresight, not a policy: for each block of H hours it runs
   * ceil(block peak / gearsPerNode) nodes, launching a boot delay before the
   * block starts and draining what the block does not need, fewest gears first.
   */
  private clairvoyant(t: number, room: number, _demand: number): number {
    const want = Math.max(this.clairvoyantTarget(t), this.clairvoyantTarget(t + this.options.bootDelaySeconds));
    const serving = this.nodes.filter((n) => !n.draining);
    if (serving.length < want) return this.add(Math.min(room, want - serving.length), t);
    let excess = serving.length - want;
    if (excess > 0) {
      for (const node of serving.filter((n) => n.readyAt <= t).sort((a, b) => a.gears.size - b.gears.size)) {
        if (excess <= 0) break;
        this.startDrain(node, t);
        excess -= 1;
      }
    }
    return 0;
  }

  private readonly blockTargets = new Map<number, number>();

  /** Nodes for the peak of the block of H hours that holds `t` (none past the end). */
  private clairvoyantTarget(t: number): number {
    const block = (this.policy === 'clairvoyant-1h' ? 1 : 4) * 3600;
    const number = Math.floor(t / block);
    const known = this.blockTargets.get(number);
    if (known !== undefined) return known;
    const trace = this.pool.trace;
    const from = number * block;
    let peak = 0;
    if (this.activeDemand) {
      const tick = this.options.tickSeconds;
      for (let i = Math.ceil(from / tick); i < this.activeDemand.length && i * tick < from + block; i++) peak = Math.max(peak, this.activeDemand[i]!);
    } else if (from < trace.durationSeconds) {
      for (let index = demandAt(trace, from, 0).index; index < trace.steps.length && trace.steps[index]!.at < from + block; index++) {
        if (trace.steps[index]!.demand > peak) peak = trace.steps[index]!.demand;
      }
    }
    const target = nodesFor(this.pool, peak);
    this.blockTargets.set(number, target);
    return target;
  }

  // --- the world ------------------------------------------------------------

  private addForWaiting(t: number, room: number): number {
    let booting = 0;
    for (const node of this.nodes) if (node.readyAt > t) booting += 1;
    const short = this.waiting.length - booting * this.pool.gearsPerNode;
    if (short <= 0) return 0;
    return this.add(Math.min(room, Math.ceil(short / this.pool.gearsPerNode)), t);
  }

  private add(count: number, t: number): number {
    const n = Math.max(0, Math.min(count, this.pool.max - this.nodes.length));
    for (let i = 0; i < n; i++) this.nodes.push({ gears: new Set(), held: 0, readyAt: t + this.options.bootDelaySeconds, draining: false, lastChangeAt: t });
    if (n > 0) {
      this.lastAddAt = t;
      this.recorder.event(t, 'up');
    }
    return n;
  }

  private startDrain(node: Node, t: number): void {
    node.draining = true;
    this.ledger.drainsStarted += 1;
    this.recorder.event(t, 'down');
  }

  /** Free slots of ready nodes that take gears. */
  private freeSlots(t: number): number {
    let free = 0;
    for (const node of this.nodes) if (node.readyAt <= t && !node.draining) free += this.pool.gearsPerNode - node.held;
    return free;
  }

  private applyDemand(demand: number, t: number): void {
    // App churn: as nodescaler's world (lib/sim/world.ts), replaced gears leave at random and as many new ones wait.
    const state = { placedCount: () => this.placed.length, removeAt: (position: number) => this.remove(this.placed[position]!, t), waiting: this.waiting };
    applyDemandStep(state, demand, this.options.tickSeconds, this.churn, this.random, () => this.apps.next().id);
  }

  /**
   * Each draining node moves up to maxConcurrentMoves gears per moveSeconds
   * to the least-loaded other node; empty, it is released. As in Kubernetes,
   * a drain is not called off: a gear evicted when no other node has room
   * waits (and counts as a move, it was stopped), and the waiting gears make
   * the policy scale up.
   */
  private progressDrains(t: number): void {
    const perTick = Math.max(1, Math.floor((this.options.tickSeconds / this.options.moveSeconds) * this.options.maxConcurrentMoves));
    for (let i = this.nodes.length - 1; i >= 0; i--) {
      const node = this.nodes[i]!;
      if (!node.draining) continue;
      let budget = perTick;
      for (const gear of node.gears) {
        if (budget-- <= 0) break;
        node.gears.delete(gear);
        const slot = this.holdsSlot(gear);
        node.held -= slot;
        this.ledger.record(gear, t, this.apps.disruptive(gear));
        this.movesThisStep += 1;
        const target = this.brokerRandom ? this.asBroker(t, gear) : this.leastLoaded(t);
        if (target) {
          target.gears.add(gear);
          target.held += slot;
          target.lastChangeAt = t;
          this.home.set(gear, target);
        } else {
          this.unplace(gear);
          this.waiting.unshift(gear);
        }
      }
      if (node.gears.size === 0) this.nodes.splice(i, 1);
    }
  }

  private placeWaiting(t: number): void {
    if (this.brokerRandom) return this.placeWaitingAsBroker(t);
    // The queue's head moves, and the placed gears leave it in one splice: a shift per gear was a tenth of a replay.
    let next = 0;
    while (next < this.waiting.length) {
      const target = this.leastLoaded(t);
      if (!target) break;
      const room = this.pool.gearsPerNode - target.held;
      const left = this.waiting.length - next;
      // An idle gear takes none of the room (idleTakesNoSlot): it goes along with the gears that do.
      let take = Math.min(room, left, Math.max(1, Math.ceil(left / this.nodes.length)));
      while (take > 0 && next < this.waiting.length) {
        const gear = this.waiting[next++]!;
        const slot = this.holdsSlot(gear);
        take -= slot;
        target.gears.add(gear);
        target.held += slot;
        this.home.set(gear, target);
        this.position.set(gear, this.placed.length);
        this.placed.push(gear);
      }
      target.lastChangeAt = t;
    }
    this.waiting.splice(0, next);
  }

  /** Gear by gear, each where the broker would put it. */
  private placeWaitingAsBroker(t: number): void {
    let placed = 0;
    for (; placed < this.waiting.length; placed++) {
      const gear = this.waiting[placed]!;
      const target = this.asBroker(t, gear);
      if (!target) break;
      target.gears.add(gear);
      target.held += this.holdsSlot(gear);
      target.lastChangeAt = t;
      this.home.set(gear, target);
      this.position.set(gear, this.placed.length);
      this.placed.push(gear);
    }
    // Once, not a shift per gear: thousands wait after a burst.
    this.waiting.splice(0, placed);
  }

  /** The broker's node for `gear` (lib/adapters/local/broker-placement.ts), away from its application's other gears. */
  private asBroker(t: number, gear: number): Node | undefined {
    // An application's gears have consecutive ids, at most 10 of them.
    const app = this.apps.appOf(gear);
    const hosting = new Map<Node, number>();
    for (let sibling = Math.max(0, gear - 9); sibling <= gear + 9; sibling++) {
      const home = sibling !== gear && this.apps.appOf(sibling) === app ? this.home.get(sibling) : undefined;
      if (home) hosting.set(home, (hosting.get(home) ?? 0) + 1);
    }
    const candidates: Array<PlacementCandidate<Node>> = [];
    const slots = this.pool.gearsPerNode;
    for (let i = 0; i < this.nodes.length; i++) {
      const node = this.nodes[i]!;
      if (node.readyAt > t || node.draining || node.held >= slots) continue;
      candidates.push({ node, id: i, consumedPercent: (100 * node.held) / slots, appGears: hosting.size > 0 ? (hosting.get(node) ?? 0) : 0 });
    }
    return chooseAsBroker(candidates, this.brokerRandom!, hosting.size > 0 ? Math.min(...hosting.values()) : undefined);
  }

  /** 1 when the gear holds a slot where it is, else 0 (an idle gear with `idleTakesNoSlot`). */
  private holdsSlot(gear: number): 0 | 1 {
    return this.options.idleTakesNoSlot && this.apps.idle(gear) ? 0 : 1;
  }

  private leastLoaded(t: number): Node | undefined {
    let best: Node | undefined;
    for (const node of this.nodes) {
      if (node.readyAt > t || node.draining || node.held >= this.pool.gearsPerNode) continue;
      if (!best || node.held < best.held) best = node;
    }
    return best;
  }

  /** Takes a placed gear out of the placed list (it stays in the run). */
  private unplace(gear: number): void {
    const at = this.position.get(gear)!;
    const last = this.placed.pop()!;
    if (at < this.placed.length) {
      this.placed[at] = last;
      this.position.set(last, at);
    }
    this.position.delete(gear);
    this.home.delete(gear);
  }

  private remove(gear: number, t: number): void {
    const node = this.home.get(gear);
    this.unplace(gear);
    if (node?.gears.delete(gear)) node.held -= this.holdsSlot(gear);
    if (node) node.lastChangeAt = t;
  }

}

/** Replays every pool under one comparison policy, with the global node limit across pools. */
export function runBaseline(policy: BaselinePolicy, pools: SimPool[], options: BaselineOptions): PolicyResult {
  const sims = pools.map((pool, i) => new PoolSim(policy, pool, options, options.seed + 1000 * i));
  const duration = pools.reduce((longest, p) => Math.max(longest, p.trace.durationSeconds), 0);
  const total = new SeriesSampler(options.sampleEverySeconds);
  const events: PolicyResult['events'] = [];
  for (let t = 0; t < duration; t += options.tickSeconds) {
    const demands = sims.map((sim) => sim.advance(t));
    let nodes = sims.reduce((sum, sim) => sum + sim.nodes.length, 0);
    sims.forEach((sim, i) => {
      nodes += sim.decide(t, demands[i]!, Math.max(0, options.maxNodesTotal - nodes));
    });
    let point = { at: t, demand: 0, capacity: 0, nodes: 0, unplaced: 0, moves: 0 };
    sims.forEach((sim, i) => {
      sim.record(t, demands[i]!);
      const last = sim.recorder.lastPoint!;
      point = { at: t, demand: point.demand + last.demand, capacity: point.capacity + last.capacity, nodes: point.nodes + last.nodes, unplaced: point.unplaced + last.unplaced, moves: point.moves + (last.moves ?? 0) };
    });
    total.add(point);
  }
  if (sims.length === 1) {
    const sim = sims[0]!;
    const pool = sim.result();
    return { policy, ...pool, deadLetters: 0, invariantViolations: 0, pools: [pool], series: sim.recorder.series, events: sim.recorder.events };
  }
  for (const sim of sims) events.push(...sim.recorder.events);
  events.sort((a, b) => a.at - b.at);
  return combinePools(policy, sims.map((sim) => sim.result()), { days: duration / 86400, maxNodes: total.maxNodes, series: total.points, events });
}
