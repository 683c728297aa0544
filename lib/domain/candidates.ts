/**
 * Which node to drain on scale-down. Only `active` nodes are candidates; a
 * candidate is refused (with the reason, for `explain`) when it is protected,
 * has stale or no stats, is receiving gears of a drain, or fails the fit
 * check: its gears must fit on the other schedulable nodes below the
 * scale-UP threshold, and the pool without it must stay below that threshold
 * (and keep its headroom), so a scale-down never triggers the next scale-up.
 */
import type { CandidateStrategy, Config, PoolConfig } from '../config/index.js';
import type { PoolUtilization, RejectedCandidate } from './decision.js';
import type { DrainRecord, NodeRecord } from './model.js';
import { hasFreshStats, nodeFreeSlots, receivingNodes, reservedSlotsByNode } from './utilization.js';

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
}

export interface CandidateChoice {
  /** The node to drain; undefined when no candidate passed. */
  nodeId?: string;
  /** Gears on the chosen node. */
  activeGears?: number;
  strategy: CandidateStrategy;
  /** Every node considered and refused, with the reason, in the order they were considered. */
  rejected: RejectedCandidate[];
}

interface Eligible {
  node: NodeRecord;
  gears: number;
  max: number;
  ratio: number;
  created: number;
}

const COMPARATORS: Record<CandidateStrategy, (a: Eligible, b: Eligible) => number> = {
  'least-gears': (a, b) => a.gears - b.gears || a.ratio - b.ratio || byId(a, b),
  'least-utilized': (a, b) => a.ratio - b.ratio || a.gears - b.gears || byId(a, b),
  oldest: (a, b) => a.created - b.created || byId(a, b),
  newest: (a, b) => b.created - a.created || byId(a, b),
};

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
 * candidate with its reason. O(n log n) in the pool's nodes.
 */
export function chooseScaleDownCandidate(input: CandidateInput): CandidateChoice {
  const { config, utilization } = input;
  const strategy = config.scaleDown.candidateStrategy;
  const threshold = config.scaleUp.threshold;
  const headroom = config.scaleUp.headroomGears;
  const nowMs = input.now.getTime();
  const protectedByConfig = new Set(input.poolConfig.protectedNodes);
  const reserved = reservedSlotsByNode(input.drains);
  const receiving = receivingNodes(input.drains);

  const rejected: RejectedCandidate[] = [];
  const eligible: Eligible[] = [];
  /** Free slots below the threshold of each schedulable node, and their positive sum. */
  const free = new Map<string, number>();
  let totalFree = 0;

  for (const node of input.nodes) {
    if (node.state !== 'active') continue;
    const fresh = hasFreshStats(node, nowMs, config.statsMaxAge);
    if (fresh) {
      const slots = nodeFreeSlots(node, reserved, threshold);
      free.set(node.nodeId, slots);
      if (slots > 0) totalFree += slots;
    }
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
    } else {
      const stats = node.stats!;
      const created = Date.parse(node.createdAt);
      eligible.push({
        node,
        gears: stats.activeGears,
        max: stats.maxActiveGears,
        ratio: stats.maxActiveGears > 0 ? stats.activeGears / stats.maxActiveGears : Infinity,
        created: Number.isFinite(created) ? created : 0,
      });
    }
  }

  eligible.sort(COMPARATORS[strategy]);

  const { demand, capacity, provisioningCapacity, freeSlots } = utilization;
  for (const candidate of eligible) {
    const id = candidate.node.nodeId;
    const own = free.get(id) ?? 0;
    const othersFree = totalFree - Math.max(0, own);
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
    // gone and its gears also reserve slots on their targets (decision.ts freeSlots).
    const freeAfter = freeSlots - candidate.max - candidate.gears;
    if (freeAfter < headroom) {
      rejected.push({ nodeId: id, reason: `pool would keep ${freeAfter} free slots < headroomGears ${headroom}` });
      continue;
    }
    return { nodeId: id, activeGears: candidate.gears, strategy, rejected };
  }
  return { strategy, rejected };
}
