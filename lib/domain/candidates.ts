/**
 * Which node to drain on scale-down. Only `active` nodes are candidates; a
 * candidate is refused (with the reason, for `explain`) when it is protected,
 * has stale or no stats, is receiving gears of a drain, or fails the fit
 * check: its gears must fit on the other schedulable nodes below the
 * scale-UP threshold, and the pool without it must stay below that threshold
 * (and keep its headroom), so a scale-down never triggers the next scale-up.
 * The default order, `least-disruption`, is by the moves that restart a tenant,
 * then nodes due for renewal first (drifted, or older than expireAfter:
 * expiry.ts; a drain now spares the node's own replacement later), then by
 * gears; a node closed for attrition offers no room. A candidate that fits
 * then goes through the caller's check (the pays-off check, payoff.ts).
 */
import type { CandidateStrategy, Config, PoolConfig } from '../config/index.js';
import { isClosedForAttrition } from './attrition.js';
import type { PoolUtilization, RejectedCandidate } from './decision.js';
import { drainPrice, type DrainPrice, type PricedNode } from './drain-price.js';
import { expireAfterOf, renewalDueTest } from './expiry.js';
import type { DrainRecord, NodeRecord } from './model.js';
import { freshStatsTest, nodeFreeSlots, receivingNodes, reservedSlotsByNode } from './utilization.js';

export interface CandidateInput {
  /** Nodes of the pool, any state. */
  nodes: readonly NodeRecord[];
  /** Drains of the pool; the pending moves of active ones reserve slots on their targets. */
  drains: readonly DrainRecord[];
  /** `template`, when given, marks drifted nodes (drift.ts); `expireAfter`, with scaleDown's, expired ones (expiry.ts). */
  poolConfig: Pick<PoolConfig, 'protectedNodes'> & Partial<Pick<PoolConfig, 'template' | 'expireAfter'>>;
  config: { scaleUp: Pick<Config['scaleUp'], 'threshold' | 'headroomGears'>; scaleDown: Pick<Config['scaleDown'], 'candidateStrategy'> & Partial<Pick<Config['scaleDown'], 'expireAfter'>>; statsMaxAge: number };
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
  /** Why the chosen node is due for renewal (drifted or expired: expiry.ts), when it is. */
  due?: string;
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
  /** Why it is due for renewal (drifted or expired), or undefined. */
  due: string | undefined;
}

const COMPARATORS: Record<CandidateStrategy, (a: Eligible, b: Eligible) => number> = {
  'least-disruption': (a, b) => a.disruptive - b.disruptive || dueFirst(a, b) || a.gears - b.gears || a.ratio - b.ratio || byId(a, b),
  'least-gears': (a, b) => a.gears - b.gears || a.ratio - b.ratio || dueFirst(a, b) || byId(a, b),
  'least-utilized': (a, b) => a.ratio - b.ratio || a.gears - b.gears || dueFirst(a, b) || byId(a, b),
  oldest: (a, b) => a.created - b.created || dueFirst(a, b) || byId(a, b),
  newest: (a, b) => b.created - a.created || dueFirst(a, b) || byId(a, b),
};

function dueFirst(a: Eligible, b: Eligible): number {
  return (a.due === undefined ? 1 : 0) - (b.due === undefined ? 1 : 0);
}

function pricedNode(candidate: Eligible): PricedNode {
  const priced: PricedNode = { nodeId: candidate.node.nodeId, gears: candidate.gears, disruptive: candidate.disruptive, max: candidate.max };
  return candidate.due === undefined ? priced : { ...priced, due: true };
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
  const queue = new CandidateQueue(input, check);
  const { ranked: _ranked, left: _left, ...choice } = queue.choose(queue.start);
  return choice;
}

/** What a price compares: the chosen node and the one after it in the order, if any. */
interface Ranked {
  chosen: PricedNode;
  next?: PricedNode;
}

/** The pool a choice judges: its slots and the gears that earlier choices of the decision move into it. */
interface PoolLeft {
  capacity: number;
  freeSlots: number;
  /** Positive free slots below the threshold of every schedulable node. */
  totalFree: number;
  /** Gears of nodes the decision already drains: they take free slots of the other nodes first. */
  committed: number;
}

type Verdict = { refused: RejectedCandidate; byCheck: boolean } | { accepted?: string };

/**
 * The pool's candidates in strategy order, scanned and ranked once. A 10,000-node pool's decision drains up to a
 * hundred nodes; ranking the pool again for each (as a fresh choice with the earlier ones draining) took half a
 * second a decision. Each later choice sees the pool only tighter (fewer slots, fewer free ones, more gears to place), so a
 * candidate a fit rule refused stays refused and only the check's refusals are asked again: the same nodes, in the
 * same order, as ranking afresh.
 */
class CandidateQueue {
  private readonly heap: Heap<Eligible>;
  /** Candidates popped and not chosen, in strategy order (before every one the heap holds); `again`: the check refused it. */
  private readonly passed: Array<{ candidate: Eligible; again: boolean }> = [];
  /** Refusals of the scan: protected, stale, receiving, the budget's. */
  private readonly scanned: RejectedCandidate[] = [];
  readonly start: PoolLeft;

  constructor(
    private readonly input: CandidateInput,
    private readonly check: CandidateCheck | undefined,
  ) {
    const { config } = input;
    const strategy = config.scaleDown.candidateStrategy;
    const isFresh = freshStatsTest(input.now.getTime(), config.statsMaxAge);
    const byAge = strategy === 'oldest' || strategy === 'newest';
    const protectedByConfig = new Set(input.poolConfig.protectedNodes);
    const due = renewalDueTest({ template: input.poolConfig.template, expireAfter: expireAfterOf(config.scaleDown, input.poolConfig), nowMs: input.now.getTime(), drift: true });
    const reserved = reservedSlotsByNode(input.drains, input.nodes);
    const receiving = receivingNodes(input.drains);
    const rejected = this.scanned;
    const eligible: Eligible[] = [];
    let totalFree = 0;

    for (const node of input.nodes) {
      if (node.state !== 'active') continue;
      const fresh = isFresh(node);
      // A node closed for attrition takes no gears: its free slots are no room for a drain's.
      const slots = fresh && !isClosedForAttrition(node) ? nodeFreeSlots(node, reserved, config.scaleUp.threshold) : 0;
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
          due: due(node),
        });
      }
    }
    // In strategy order, lazily: usually the first candidate passes, so a heap
    // (O(n) to build, O(log n) a candidate) beats sorting the whole pool.
    this.heap = new Heap(eligible, COMPARATORS[strategy]);
    const { capacity, freeSlots } = input.utilization;
    this.start = { capacity, freeSlots, totalFree, committed: input.committedGears ?? 0 };
  }

  /**
   * The first candidate that passes for `left`, then the pool it leaves; every refusal of this choice in `rejected`
   * when `explained` (a decision names only its first choice's: the others' would copy the scan's every time).
   */
  choose(left: PoolLeft, explained = true): CandidateChoice & { ranked?: Ranked; left?: PoolLeft } {
    const strategy = this.input.config.scaleDown.candidateStrategy;
    const rejected = explained ? [...this.scanned] : [];
    const chosen = (candidate: Eligible, next: Eligible | undefined, accepted: string | undefined) => {
      const ranked = { chosen: pricedNode(candidate), ...(next ? { next: pricedNode(next) } : {}) };
      const price = drainPrice(strategy, ranked.chosen, ranked.next);
      const after: PoolLeft = {
        capacity: left.capacity - candidate.max,
        freeSlots: left.freeSlots - candidate.max,
        totalFree: left.totalFree - Math.max(0, candidate.free),
        committed: left.committed + candidate.gears,
      };
      const choice = {
        nodeId: candidate.node.nodeId,
        activeGears: candidate.gears,
        strategy,
        rejected,
        ...(accepted !== undefined ? { accepted } : {}),
        ...(candidate.due !== undefined ? { due: candidate.due } : {}),
      };
      return { ...choice, ...(price ? { price } : {}), ranked, left: after };
    };
    for (let i = 0; i < this.passed.length; i++) {
      const entry = this.passed[i]!;
      if (!entry.again) continue;
      const verdict = this.verdict(entry.candidate, left);
      if ('refused' in verdict) {
        if (explained) rejected.push(verdict.refused);
        entry.again = verdict.byCheck;
        continue;
      }
      this.passed.splice(i, 1);
      return chosen(entry.candidate, this.passed[i]?.candidate ?? this.heap.peek(), verdict.accepted);
    }
    for (let candidate = this.heap.pop(); candidate !== undefined; candidate = this.heap.pop()) {
      const verdict = this.verdict(candidate, left);
      if ('refused' in verdict) {
        if (explained) rejected.push(verdict.refused);
        this.passed.push({ candidate, again: verdict.byCheck });
        continue;
      }
      return chosen(candidate, this.heap.peek(), verdict.accepted);
    }
    return { strategy, rejected };
  }

  private verdict(candidate: Eligible, left: PoolLeft): Verdict {
    const { threshold, headroomGears: headroom } = this.input.config.scaleUp;
    const { demand, provisioningCapacity } = this.input.utilization;
    const nodeId = candidate.node.nodeId;
    const othersFree = left.totalFree - Math.max(0, candidate.free) - left.committed;
    if (candidate.gears > othersFree) {
      const reason = `gears do not fit below ${percent(threshold)} on the other nodes (${candidate.gears} gears, ${othersFree} free slots)`;
      return { refused: { nodeId, reason }, byCheck: false };
    }
    const capacityAfter = left.capacity - candidate.max + provisioningCapacity;
    const after = capacityAfter > 0 ? demand / capacityAfter : demand > 0 ? Infinity : 0;
    if (after >= threshold) {
      return { refused: { nodeId, reason: `pool would be at ${ratioText(after)} >= ${threshold.toFixed(2)} without it` }, byCheck: false };
    }
    // What the next evaluation sees while the drain runs: the node's slots are
    // gone while its gears still count as demand.
    const freeAfter = left.freeSlots - candidate.max;
    if (freeAfter < headroom) {
      // Demand judged at its confident level can be fractional (a trend forecast): the slots kept are whole.
      return { refused: { nodeId, reason: `pool would keep ${Math.floor(freeAfter)} free slots < headroomGears ${headroom}` }, byCheck: false };
    }
    const verdict = this.check?.(candidate.node, capacityAfter);
    if (verdict && 'refused' in verdict) {
      const refused = verdict.pending ? { nodeId, reason: verdict.refused, pending: true } : { nodeId, reason: verdict.refused };
      return { refused, byCheck: true };
    }
    return verdict ? { accepted: verdict.accepted } : {};
  }
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
  const queue = new CandidateQueue(input, check);
  const { ranked: firstRanked, left: firstLeft, ...first } = queue.choose(queue.start);
  const more: Array<FurtherChoice & { ranked?: Ranked }> = [];
  let left = firstLeft;
  for (let i = 1; i < count && left !== undefined; i++) {
    const next = queue.choose(left, false);
    if (next.nodeId === undefined) break;
    more.push({ nodeId: next.nodeId, activeGears: next.activeGears ?? 0, ...(next.ranked ? { ranked: next.ranked } : {}) });
    left = next.left;
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
