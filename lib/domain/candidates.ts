/**
 * Which node to drain on scale-down. Only `active` nodes are candidates; a
 * candidate is refused (with the reason, for `explain`) when it is protected,
 * has stale or no stats, is receiving gears of a drain, or fails the fit
 * check: its gears must fit on the other schedulable nodes below the
 * scale-UP threshold, and the pool without it must stay below that threshold
 * (and keep its headroom), so a scale-down never triggers the next scale-up.
 * The default order, `least-disruption`, is by the moves that restart a tenant,
 * then by gears; a node closed for attrition offers no room. A candidate that
 * fits then goes through the caller's check (the pays-off check, payoff.ts).
 */
import type { CandidateStrategy, Config, PoolConfig } from '../config/index.js';
import { isClosedForAttrition } from './attrition.js';
import type { PoolUtilization, RejectedCandidate } from './decision.js';
import { drainPrice, type DrainPrice, type PricedNode } from './drain-price.js';
import type { DrainRecord, NodeRecord } from './model.js';
import { freshStatsTest, nodeFreeSlots, receivingNodes, reservedSlotsByNode } from './utilization.js';

export interface CandidateInput {
  /** Nodes of the pool, any state. */
  nodes: readonly NodeRecord[];
  /** Drains of the pool; the pending moves of active ones reserve slots on their targets. */
  drains: readonly DrainRecord[];
  poolConfig: Pick<PoolConfig, 'protectedNodes'>;
  config: { scaleUp: Pick<Config['scaleUp'], 'threshold' | 'headroomGears'>; scaleDown: Pick<Config['scaleDown'], 'candidateStrategy'>; statsMaxAge: number };
  now: Date;
  /** The pool's utilization now (computeUtilization). */
  utilization: PoolUtilization;
  /** Why a node may not be drained beyond the checks here (the disruption budget, lib/domain/budget.ts), or undefined. */
  refuse?: (node: NodeRecord) => string | undefined;
  /** Gears of nodes this decision already drains: they take free slots of the other nodes first. */
  committedGears?: number;
}

/** Refuses a candidate that passed the fit check (the pays-off check): a reason, or undefined to accept it. */
export type CandidateCheck = (node: NodeRecord, capacityAfter: number) => { refused: string; pending?: boolean } | { accepted: string };

export interface CandidateChoice {
  /** The node to drain; undefined when no candidate passed. */
  nodeId?: string;
  /** Gears on the chosen node. */
  activeGears?: number;
  strategy: CandidateStrategy;
  /** What the check said of the chosen node. */
  accepted?: string;
  /** The chosen node's price: the gears it held and the most it may hold when its drain starts (drain-price.ts). */
  price?: DrainPrice;
  /** Every node considered and refused, with the reason, in the order they were considered. */
  rejected: RejectedCandidate[];
}

interface Eligible {
  node: NodeRecord;
  /** Its own free slots below the threshold. */
  free: number;
  gears: number;
  /** Moves that restart a tenant (gears of unknown kind count). */
  disruptive: number;
  max: number;
  ratio: number;
  created: number;
}

const COMPARATORS: Record<CandidateStrategy, (a: Eligible, b: Eligible) => number> = {
  'least-disruption': (a, b) => a.disruptive - b.disruptive || a.gears - b.gears || a.ratio - b.ratio || byId(a, b),
  'least-gears': (a, b) => a.gears - b.gears || a.ratio - b.ratio || byId(a, b),
  'least-utilized': (a, b) => a.ratio - b.ratio || a.gears - b.gears || byId(a, b),
  oldest: (a, b) => a.created - b.created || byId(a, b),
  newest: (a, b) => b.created - a.created || byId(a, b),
};

function pricedNode(candidate: Eligible): PricedNode {
  return { nodeId: candidate.node.nodeId, gears: candidate.gears, disruptive: candidate.disruptive, max: candidate.max };
}

function byId(a: Eligible, b: Eligible): number {
  return a.node.nodeId < b.node.nodeId ? -1 : a.node.nodeId > b.node.nodeId ? 1 : 0;
}

function percent(fraction: number): string {
  return `${Math.round(fraction * 100)}%`;
}

function ratioText(value: number): string {
  return Number.isFinite(value) ? value.toFixed(2) : 'inf';
}

/**
 * The node to drain, by `scaleDown.candidateStrategy`, and every refused
 * candidate with its reason. O(n + k log n) for n nodes of which k are
 * checked before one passes (O(n log n) at worst).
 */
export function chooseScaleDownCandidate(input: CandidateInput, check?: CandidateCheck): CandidateChoice {
  const { ranked: _ranked, ...choice } = chooseRanked(input, check);
  return choice;
}

/** What a price compares: the chosen node and the one after it in the order, if any. */
interface Ranked {
  chosen: PricedNode;
  next?: PricedNode;
}

function chooseRanked(input: CandidateInput, check?: CandidateCheck): CandidateChoice & { ranked?: Ranked } {
  const { config, utilization } = input;
  const strategy = config.scaleDown.candidateStrategy;
  const threshold = config.scaleUp.threshold;
  const headroom = config.scaleUp.headroomGears;
  const isFresh = freshStatsTest(input.now.getTime(), config.statsMaxAge);
  const byAge = strategy === 'oldest' || strategy === 'newest';
  const protectedByConfig = new Set(input.poolConfig.protectedNodes);
  const reserved = reservedSlotsByNode(input.drains, input.nodes);
  const receiving = receivingNodes(input.drains);

  const rejected: RejectedCandidate[] = [];
  const eligible: Eligible[] = [];
  /** The positive free slots below the threshold of every schedulable node. */
  let totalFree = 0;

  for (const node of input.nodes) {
    if (node.state !== 'active') continue;
    const fresh = isFresh(node);
    // A node closed for attrition takes no gears: its free slots are no room for a drain's.
    const slots = fresh && !isClosedForAttrition(node) ? nodeFreeSlots(node, reserved, threshold) : 0;
    if (slots > 0) totalFree += slots;
    if (node.protected) {
      rejected.push({ nodeId: node.nodeId, reason: 'protected' });
    } else if (protectedByConfig.has(node.nodeId)) {
      rejected.push({ nodeId: node.nodeId, reason: 'protected (pool protectedNodes)' });
    } else if (!fresh) {
      rejected.push({
        nodeId: node.nodeId,
        reason: node.stats ? `stale stats (last report ${node.stats.reportedAt})` : 'no stats reported',
      });
    } else if (receiving.has(node.nodeId)) {
      rejected.push({
        nodeId: node.nodeId,
        reason: `receiving gears of drain ${receiving.get(node.nodeId)!} (${reserved.get(node.nodeId) ?? 0} pending moves)`,
      });
    } else if (refusedBy(input.refuse, node, rejected)) {
      // Refused by the disruption budget: the reason is in `rejected`.
    } else {
      const stats = node.stats!;
      const created = byAge ? Date.parse(node.createdAt) : 0;
      eligible.push({
        node,
        free: slots,
        gears: stats.activeGears,
        disruptive: disruptiveMoves(stats),
        max: stats.maxActiveGears,
        ratio: stats.maxActiveGears > 0 ? stats.activeGears / stats.maxActiveGears : Infinity,
        created: Number.isFinite(created) ? created : 0,
      });
    }
  }

  // In strategy order, lazily: usually the first candidate passes, so a heap
  // (O(n) to build, O(log n) a candidate) beats sorting the whole pool.
  const queue = new Heap(eligible, COMPARATORS[strategy]);
  const { demand, capacity, provisioningCapacity, freeSlots } = utilization;
  for (let candidate = queue.pop(); candidate !== undefined; candidate = queue.pop()) {
    const id = candidate.node.nodeId;
    const othersFree = totalFree - Math.max(0, candidate.free) - (input.committedGears ?? 0);
    if (candidate.gears > othersFree) {
      rejected.push({
        nodeId: id,
        reason: `gears do not fit below ${percent(threshold)} on the other nodes (${candidate.gears} gears, ${othersFree} free slots)`,
      });
      continue;
    }
    const capacityAfter = capacity - candidate.max + provisioningCapacity;
    const after = capacityAfter > 0 ? demand / capacityAfter : demand > 0 ? Infinity : 0;
    if (after >= threshold) {
      rejected.push({
        nodeId: id,
        reason: `pool would be at ${ratioText(after)} >= ${threshold.toFixed(2)} without it`,
      });
      continue;
    }
    // What the next evaluation sees while the drain runs: the node's slots are
    // gone while its gears still count as demand.
    const freeAfter = freeSlots - candidate.max;
    if (freeAfter < headroom) {
      rejected.push({ nodeId: id, reason: `pool would keep ${freeAfter} free slots < headroomGears ${headroom}` });
      continue;
    }
    const verdict = check?.(candidate.node, capacityAfter);
    if (verdict && 'refused' in verdict) {
      rejected.push(verdict.pending ? { nodeId: id, reason: verdict.refused, pending: true } : { nodeId: id, reason: verdict.refused });
      continue;
    }
    const next = queue.peek();
    const ranked = { chosen: pricedNode(candidate), ...(next ? { next: pricedNode(next) } : {}) };
    const price = drainPrice(strategy, ranked.chosen, ranked.next);
    return { nodeId: id, activeGears: candidate.gears, strategy, rejected, ...(verdict ? { accepted: verdict.accepted } : {}), ...(price ? { price } : {}), ranked };
  }
  return { strategy, rejected };
}

/** A further node of a decision that drains several. */
export interface FurtherChoice {
  nodeId: string;
  activeGears: number;
  price?: DrainPrice;
}

/**
 * Up to `count` nodes to drain at once, in strategy order: each chosen as `chooseScaleDownCandidate` would with the
 * ones before it already draining (their slots gone, their gears taking the others' free slots first), so every one
 * passes the fit check and the pays-off check for the pool the decision leaves. `rejected` is the first choice's.
 * Every node of the decision is priced against the node after the last one: the others drain too, so a node that
 * outgrew another of them would still come before every node the decision leaves.
 */
export function chooseScaleDownCandidates(input: CandidateInput, check: CandidateCheck | undefined, count: number): CandidateChoice & { more: FurtherChoice[] } {
  const { ranked: firstRanked, ...first } = chooseRanked(input, check);
  const more: Array<FurtherChoice & { ranked?: Ranked }> = [];
  if (first.nodeId === undefined) return { ...first, more };
  let nodes = input.nodes;
  let { capacity, freeSlots } = input.utilization;
  let committed = input.committedGears ?? 0;
  let chosen: FurtherChoice & { ranked?: Ranked } = { nodeId: first.nodeId, activeGears: first.activeGears ?? 0 };
  for (let i = 1; i < count; i++) {
    const node = nodes.find((n) => n.nodeId === chosen.nodeId)!;
    const max = node.stats?.maxActiveGears ?? 0;
    capacity -= max;
    freeSlots -= max;
    committed += chosen.activeGears;
    nodes = nodes.map((n) => (n === node ? { ...n, state: 'draining' as const } : n));
    const slots = capacity + input.utilization.provisioningCapacity;
    const utilization = { ...input.utilization, capacity, freeSlots, utilization: slots > 0 ? input.utilization.demand / slots : Infinity };
    const next = chooseRanked({ ...input, nodes, utilization, committedGears: committed }, check);
    if (next.nodeId === undefined) break;
    chosen = { nodeId: next.nodeId, activeGears: next.activeGears ?? 0, ...(next.ranked ? { ranked: next.ranked } : {}) };
    more.push(chosen);
  }
  if (more.length === 0) return { ...first, more };
  const after = more[more.length - 1]!.ranked?.next;
  const repriced = <T extends { price?: DrainPrice }>(choice: T, ranked: Ranked | undefined): T => {
    const { price: _own, ...rest } = choice;
    const price = ranked && drainPrice(input.config.scaleDown.candidateStrategy, ranked.chosen, after);
    return (price ? { ...rest, price } : rest) as T;
  };
  return { ...repriced(first, firstRanked), more: more.map(({ ranked, ...further }) => repriced(further, ranked)) };
}

/** Moves of the node's gears that restart a tenant: the reported count, else every gear not reported idle. */
export function disruptiveMoves(stats: Pick<NonNullable<NodeRecord['stats']>, 'activeGears' | 'idleGears' | 'disruptiveGears'>): number {
  if (stats.disruptiveGears !== undefined) return Math.min(stats.activeGears, stats.disruptiveGears);
  return Math.max(0, stats.activeGears - (stats.idleGears ?? 0));
}

/** Records the budget's refusal of `node`, if any; true when refused. */
function refusedBy(refuse: CandidateInput['refuse'], node: NodeRecord, rejected: RejectedCandidate[]): boolean {
  const reason = refuse?.(node);
  if (reason !== undefined) rejected.push({ nodeId: node.nodeId, reason });
  return reason !== undefined;
}

/** A binary min-heap over `items` (taken over, not copied) by `compare`. */
class Heap<T> {
  constructor(
    private readonly items: T[],
    private readonly compare: (a: T, b: T) => number,
  ) {
    for (let i = (items.length >> 1) - 1; i >= 0; i--) this.down(i);
  }

  peek(): T | undefined {
    return this.items[0];
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      this.down(0);
    }
    return top;
  }

  private down(start: number): void {
    const items = this.items;
    const n = items.length;
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) return;
      const right = left + 1;
      const child = right < n && this.compare(items[right]!, items[left]!) < 0 ? right : left;
      if (this.compare(items[child]!, items[i]!) >= 0) return;
      const swap = items[i]!;
      items[i] = items[child]!;
      items[child] = swap;
      i = child;
    }
  }
}
