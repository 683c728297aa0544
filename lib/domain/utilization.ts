/**
 * Pool utilization: how many gears need a place (demand), how many slots the
 * pool offers (capacity, plus what is still provisioning), and the per-node
 * free-slot view the scale-down fit check uses. Pure functions of data.
 */
import type { PoolConfig } from '../config/index.js';
import type { PoolUtilization } from './decision.js';
import type { DrainRecord, GearMove, NodeRecord, NodeState, PoolId } from './model.js';

/** Gears a node is assumed to hold when nothing better is known. */
export const DEFAULT_GEARS_PER_NODE = 100;

/** Tolerance for `threshold x maxActiveGears` (0.57 x 100 is 56.99999999999999 in floating point). */
const EPSILON = 1e-9;

export interface UtilizationInput {
  pool: PoolId;
  /** Nodes of the pool, any state. */
  nodes: readonly NodeRecord[];
  /** Drains of the pool; only `active` ones reserve slots. */
  drains: readonly DrainRecord[];
  now: Date;
  /** Stats older than this (milliseconds) are stale. */
  statsMaxAge: number;
  /** Slots a provisioning node is expected to bring (see `expectedGearsPerNode`). */
  expectedGearsPerNode: number;
}

/** `YYYY-MM-DDTHH:MM:SS.sssZ`, the form `toISOString` writes and the messages normalize to: it sorts as it reads. */
const CANONICAL_ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * A test for an ISO time at or after `cutoffMs`. Canonical ISO times are
 * compared as text against the cutoff written once, which is several times
 * faster than `Date.parse` on large pools; any other form is parsed.
 */
export function atOrAfterTest(cutoffMs: number): (iso: string) => boolean {
  const cutoff = Number.isFinite(cutoffMs) && cutoffMs >= 0 && cutoffMs < 253_402_300_800_000 ? new Date(cutoffMs).toISOString() : undefined;
  return (iso) => {
    if (cutoff !== undefined && iso.length === 24 && CANONICAL_ISO.test(iso)) return iso >= cutoff;
    const at = Date.parse(iso);
    return Number.isFinite(at) && at >= cutoffMs;
  };
}

/** A test for fresh stats (reported within `statsMaxAge` of `nowMs`; a report from the near future counts as fresh). */
export function freshStatsTest(nowMs: number, statsMaxAge: number): (node: NodeRecord) => boolean {
  const recent = atOrAfterTest(nowMs - statsMaxAge);
  return (node) => node.stats?.reportedAt !== undefined && recent(node.stats.reportedAt);
}

/** True when the node has stats reported within `statsMaxAge` of `nowMs` (a report from the near future counts as fresh). */
export function hasFreshStats(node: NodeRecord, nowMs: number, statsMaxAge: number): boolean {
  return freshStatsTest(nowMs, statsMaxAge)(node);
}

/** A move that still holds a slot on its target: planned or under way. */
function isPendingMove(state: string): boolean {
  return state === 'planned' || state === 'moving';
}

/**
 * Calls `visit` for each move that holds a slot on its target (unless its gear is idle, which counts only for
 * anti-affinity): the pending moves of active drains and, given the
 * pool's `nodes`, the moves whose gear landed after the target's last report (`landedSinceReport`). The one walk
 * behind `reservedSlotsByNode` and the planner's `reservationsExcept` (drain.ts).
 */
export function forEachSlotHolder(
  drains: readonly DrainRecord[],
  nodes: readonly NodeRecord[] | undefined,
  visit: (move: GearMove, drain: DrainRecord, pending: boolean) => void,
): void {
  const landed = nodes ? landedSinceReport(nodes) : undefined;
  for (const drain of drains) {
    if (drain.state !== 'active') continue;
    for (const move of drain.moves) {
      const pending = isPendingMove(move.state);
      if (pending || landed?.(move)) visit(move, drain, pending);
    }
  }
}

/** Slots held on each target node (`forEachSlotHolder`); an idle gear's move holds none (drain-plan.ts). */
export function reservedSlotsByNode(drains: readonly DrainRecord[], nodes?: readonly NodeRecord[]): Map<string, number> {
  const reserved = new Map<string, number>();
  forEachSlotHolder(drains, nodes, (move) => {
    if (!move.gear.idle) reserved.set(move.target, (reserved.get(move.target) ?? 0) + 1);
  });
  return reserved;
}

/**
 * A test for a finished move whose gear is on its target but not yet in the target's report: it finished after the
 * target last measured its gears. Such a gear is neither pending (no reservation holds its slot) nor counted in
 * `activeGears`, so without it the target looked a slot emptier per gear that landed since its report. At 2,000
 * nodes, with a hundred drains landing gears every minute on the fullest nodes (the plan packs), the slots that did
 * not exist were planned again and again: the platform refused each move (target full), and after `MAX_REPLANS`
 * such refusals the drain stopped, its moves spent, while demand was falling (NASA at 200,000 gears: 479 drains).
 * A move noticed finished after a report that already showed its gear counts twice until the next report: the side
 * of a plan that waits a minute, not of a move the platform refuses.
 */
export function landedSinceReport(nodes: readonly NodeRecord[]): (move: Pick<GearMove, 'state' | 'target' | 'finishedAt'>) => boolean {
  // Built at the first finished move: a decision with no drains, or none with a gear landed, reads no node's report.
  let reportedAt: Map<string, string> | undefined;
  return (move) => {
    if (move.state !== 'moved' || move.finishedAt === undefined) return false;
    if (!reportedAt) {
      reportedAt = new Map();
      for (const node of nodes) if (node.stats?.reportedAt !== undefined) reportedAt.set(node.nodeId, node.stats.reportedAt);
    }
    const report = reportedAt.get(move.target);
    return report !== undefined && laterThan(move.finishedAt, report);
  };
}

/** `a` after `b`, as ISO times: compared as text when both are canonical (they sort as they read), else parsed. */
function laterThan(a: string, b: string): boolean {
  if (a.length === 24 && b.length === 24 && CANONICAL_ISO.test(a) && CANONICAL_ISO.test(b)) return a > b;
  return Date.parse(a) > Date.parse(b);
}

/** Which drain each receiving node gets gears from (the first one found). */
export function receivingNodes(drains: readonly DrainRecord[]): Map<string, string> {
  const receiving = new Map<string, string>();
  for (const drain of drains) {
    if (drain.state !== 'active') continue;
    for (const move of drain.moves) {
      if (isPendingMove(move.state) && !receiving.has(move.target)) receiving.set(move.target, drain.drainId);
    }
  }
  return receiving;
}

/**
 * A node's free slots below a utilization fraction:
 * `floor(threshold x maxActiveGears) - activeGears - reserved on this node`.
 * Negative when the node is already above the fraction. A node without stats
 * has no known capacity (its free slots are minus its reservations).
 * `drains` may be the drains themselves (gears landed since the node's report count too) or `reservedSlotsByNode(drains, nodes)`
 * (faster in a loop).
 */
export function nodeFreeSlots(
  node: NodeRecord,
  drains: readonly DrainRecord[] | ReadonlyMap<string, number>,
  thresholdFraction: number,
): number {
  const reservedMap = drains instanceof Map ? (drains as ReadonlyMap<string, number>) : reservedSlotsByNode(drains as readonly DrainRecord[], [node]);
  const reserved = reservedMap.get(node.nodeId) ?? 0;
  const stats = node.stats;
  if (!stats) return -reserved;
  return Math.floor(thresholdFraction * stats.maxActiveGears + EPSILON) - stats.activeGears - reserved;
}

/**
 * Slots a new node of the pool is expected to bring: the configured
 * `gearsPerNode`, else the (lower) median `maxActiveGears` of the pool's
 * nodes that reported, else 100.
 */
export function expectedGearsPerNode(poolConfig: Pick<PoolConfig, 'gearsPerNode'>, nodes: readonly NodeRecord[]): number {
  if (poolConfig.gearsPerNode !== undefined) return poolConfig.gearsPerNode;
  let count = 0;
  for (const node of nodes) if (node.stats && node.state !== 'terminated') count++;
  if (count === 0) return DEFAULT_GEARS_PER_NODE;
  const sizes = new Float64Array(count);
  let i = 0;
  for (const node of nodes) if (node.stats && node.state !== 'terminated') sizes[i++] = node.stats.maxActiveGears;
  sizes.sort();
  const median = sizes[(count - 1) >> 1]!;
  return median > 0 ? median : DEFAULT_GEARS_PER_NODE;
}

/** Whether a node in `state` holds gears that count in its pool's demand: an active node's, and a draining one's until they are moved. */
export function holdsDemand(state: NodeState): boolean {
  return state === 'active' || state === 'draining';
}

/**
 * The pool's utilization (semantics in decision.ts). Demand is the gears of
 * active and draining nodes; capacity is the slots of active nodes with fresh
 * stats, plus what the stale ones last held (so a stale node offers no free
 * slot); provisioning nodes count `expectedGearsPerNode` slots each.
 */
export function computeUtilization(input: UtilizationInput): PoolUtilization {
  const isFresh = freshStatsTest(input.now.getTime(), input.statsMaxAge);
  let demand = 0;
  let capacity = 0;
  let provisioning = 0;
  const nodesByState: Partial<Record<NodeState, number>> = {};
  const staleNodes: string[] = [];

  for (const node of input.nodes) {
    const state = node.state;
    if (state === 'terminated') continue;
    nodesByState[state] = (nodesByState[state] ?? 0) + 1;
    if (state === 'provisioning') provisioning++;
    if (!holdsDemand(state)) continue;
    const gears = node.stats?.activeGears ?? 0;
    demand += gears;
    // A draining node's slots are on their way out: only an active node offers capacity.
    if (state !== 'active') continue;
    if (isFresh(node)) {
      capacity += node.stats!.maxActiveGears;
    } else {
      capacity += gears;
      staleNodes.push(node.nodeId);
    }
  }

  const provisioningCapacity = provisioning * input.expectedGearsPerNode;
  const total = capacity + provisioningCapacity;
  const utilization = total > 0 ? demand / total : demand > 0 ? Infinity : 0;
  return {
    pool: input.pool,
    demand,
    capacity,
    provisioningCapacity,
    utilization,
    // A draining node's gears are already in demand; the slots they reserve on
    // their targets are those same gears, so reservations only matter per node.
    freeSlots: total - demand,
    nodesByState,
    staleNodes,
  };
}
