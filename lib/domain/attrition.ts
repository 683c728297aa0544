/**
 * Drain by attrition: the nodes scale-down will most likely empty next (the
 * candidates that fit but do not pay yet, as many as the pool can spare) are
 * closed to new gears early (`Platform.deactivateNode`), so gears that leave
 * on their own empty them for free, and a drain moves only what is left once
 * the saving is due (lib/domain/payoff.ts, one-off-need.ts). They are
 * reopened, as many as the pool needs, as soon as demand turns.
 *
 * Safety, by construction:
 * - a closed node keeps its gears and stays `active` (nothing is stranded:
 *   closing only stops new placements), and it is never a drain target;
 * - its free slots do not count: whenever the pool without them would scale
 *   up (free slots below headroomGears, utilization or the forecast at the
 *   threshold) or needs them for its confident demand, it is reopened in the
 *   same evaluation, before any scale-up is decided;
 * - gears the broker refused (waiting.ts) are demand too: closed nodes are
 *   reopened, in one evaluation, until the open nodes' free slots take every
 *   waiting gear and still keep the headroom, and nothing is closed while
 *   gears wait. Counting only the placed gears reopened one node an
 *   evaluation (enough for the headroom), so a burst's gears waited minutes
 *   beside closed free slots;
 * - the record is marked (`attritionSince`) before the platform closes the
 *   node and cleared after it reopens (lib/app/attrition.ts), so after a crash
 *   the record may call an open node closed (harmless: it is counted as
 *   closed, and reopened again), never a closed node open.
 */
import type { Config } from '../config/index.js';
import type { PoolDecision, PoolEvaluation, PoolEvaluationInput, PoolUtilization } from './decision.js';
import type { NodeRecord } from './model.js';
import { nodesPerEvaluation, poolSize } from './budget.js';
import { quantileOfSorted, type MeasuredRises } from './headroom.js';
import { poolConfidentDemand } from './payoff.js';
import { waitingGears, type WaitingGears } from './waiting.js';
import { heldLevel } from './wanted.js';
import { measuredOnce, type MeasureCache } from './memo.js';

export interface AttritionPlan {
  /**
   * Close these nodes to new gears, the next likely scale-down candidates first; empty when there is nothing to
   * close. More than one in one evaluation at a big pool's pace (budget.ts `nodesPerEvaluation`).
   */
  close: Array<{ nodeId: string; reason: string }>;
  /** Reopen these closed nodes. */
  reopen: Array<{ nodeId: string; reason: string }>;
}

/** Whether the node is closed to new gears for attrition. */
export function isClosedForAttrition(node: Pick<NodeRecord, 'state' | 'attritionSince'>): boolean {
  return node.state === 'active' && node.attritionSince !== undefined;
}

/** Free slots of the closed nodes (fresh stats), which the pool cannot place gears on. */
export function closedFreeSlots(nodes: readonly NodeRecord[]): number {
  let free = 0;
  for (const node of nodes) {
    if (!isClosedForAttrition(node) || !node.stats) continue;
    free += Math.max(0, node.stats.maxActiveGears - node.stats.activeGears);
  }
  return free;
}

export interface AttritionInput {
  nodes: readonly NodeRecord[];
  utilization: PoolUtilization;
  /** The pool's decision this evaluation. */
  decision: PoolDecision;
  /** Forecast demand at the boot delay, when forecasting. */
  forecastDemand?: number;
  /** Confident demand (payoff.ts), when the pays-off check ran. */
  confidentDemand?: number;
  /**
   * Gears the broker refused that are not placed yet (waiting.ts), when a fresh report says so; `refusedAt`: the
   * end of its window (the broker found no open node with room then).
   */
  waiting?: Pick<WaitingGears, 'demand' | 'unplaced'> & { refusedAt?: string };
  config: { scaleUp: Pick<Config['scaleUp'], 'threshold' | 'target' | 'headroomGears'> };
  /** Most nodes closed in one evaluation (budget.ts `nodesPerEvaluation`); 1 when not given. */
  closePerEvaluation?: number;
  /** Free slots the open nodes keep after a close when more than headroomGears (`payoff.attritionReserve`). */
  closeReserve?: number;
}

/**
 * What to close and reopen. When the pool, without the closed nodes' free
 * slots, would scale up or cannot hold its confident demand, reopens closed
 * nodes, fullest first (the least emptied), until it could (once the nodes
 * this decision drains are gone); every one when the pool scales up. Otherwise closes the
 * first candidate the pays-off check found fitting but not yet paying that is
 * still open, if the open nodes would still hold the level a scale-up sizes
 * to (wanted.ts): after a burst every node it bought is closed within minutes,
 * one an evaluation (a big pool several: budget.ts `nodesPerEvaluation`), and departing gears empty them all, not only
 * the next.
 */
export function planAttrition(input: AttritionInput): AttritionPlan {
  const { nodes, utilization: u, decision, config } = input;
  const { threshold, headroomGears } = config.scaleUp;
  const closed = nodes.filter(isClosedForAttrition);
  const plan: AttritionPlan = { close: [], reopen: [] };
  const waiting = Math.max(0, input.waiting?.unplaced ?? 0);
  const level = Math.max(u.demand, input.forecastDemand ?? 0, input.confidentDemand ?? 0, waiting > 0 ? (input.waiting?.demand ?? 0) : 0);
  const allSlots = u.capacity + u.provisioningCapacity;
  const closedFree = closedFreeSlots(closed);
  // A closed node's slots reach a gear only once an evaluation reopens it: the open nodes keep the reserve free for a
  // jump, on closing and while demand climbs back, not only the headroom a scale-up would buy.
  const keepFree = Math.max(headroomGears, input.closeReserve ?? 0);

  if (closed.length > 0) {
    // Waiting gears take a running open node's slot now, a booting node's only once it joins. The broker refused them
    // because no open node had room: an open node's free slots count only from stats reported since (the evaluation
    // a refusal triggers may hold stats older than it).
    const openRunningFree = waiting > 0 ? freeSlotsReportedSince(nodes, input.waiting?.refusedAt) : 0;
    // Nodes this decision drains that are open: their slots leave the pool and their gears take open nodes' slots.
    const drainedIds = decision.kind === 'scale-down' ? [decision.nodeId, ...(decision.alsoNodeIds ?? [])] : [];
    const leaving = nodes.filter((n) => drainedIds.includes(n.nodeId) && !isClosedForAttrition(n) && n.stats);
    const leavingSlots = leaving.reduce((sum, n) => sum + n.stats!.maxActiveGears, 0);
    const leavingText = leaving.length === 1 ? `once ${leaving[0]!.nodeId} is drained` : `once ${leaving.map((n) => n.nodeId).join(', ')} are drained`;
    const short = (free: number) => {
      const openSlots = allSlots - free - leavingSlots;
      const openFree = u.freeSlots - free - leavingSlots;
      const runningFree = openRunningFree + closedFree - free - leavingSlots;
      return waiting > 0 && (runningFree < waiting || runningFree + u.provisioningCapacity - waiting < headroomGears)
        ? `without it the running open nodes keep ${Math.max(0, runningFree)} free slots (+${u.provisioningCapacity} booting) for ${waiting} waiting gears + headroomGears ${headroomGears}`
        : openFree < keepFree
          ? `without it the pool keeps ${openFree} free slots < ${keepFree > headroomGears ? `the attrition reserve ${keepFree}` : `headroomGears ${headroomGears}`}`
          : level >= threshold * openSlots
            ? `without it the pool would be at ${(level / Math.max(openSlots, 1)).toFixed(2)} >= ${threshold.toFixed(2)}`
            : undefined;
    };
    // A drain of another node reopens only what the pool needs once that node is gone (`short`): its gears go to open
    // nodes (candidates.ts counts no closed node's slots as room), and a closed node reopened for no need takes new
    // gears, and the drained node's, which its own drain later moves again.
    const all = decision.kind === 'scale-up' ? 'the pool scales up' : undefined;
    let stillClosed = closedFree;
    // A closed node the decision drains as a further node stays closed: its drain deactivates it anyway.
    const drained = new Set(decision.kind === 'scale-down' ? (decision.alsoNodeIds ?? []) : []);
    for (const node of [...closed].sort((a, b) => (b.stats?.activeGears ?? 0) - (a.stats?.activeGears ?? 0))) {
      if (drained.has(node.nodeId)) continue;
      const lacking = short(stillClosed);
      const why = all ?? (lacking && leaving.length > 0 ? `${lacking} ${leavingText}` : lacking);
      if (why === undefined) break;
      plan.reopen.push({ nodeId: node.nodeId, reason: `reopen ${node.nodeId} to new gears: ${why}` });
      stillClosed -= freeOf(node);
    }
    if (plan.reopen.length > 0) return plan;
  }

  if (decision.kind !== 'no-action' || waiting > 0) return plan;
  // A big pool closes as many as its pace allows an evaluation, each with the ones before it closed: one an evaluation
  // closed a 200-node pool's spare nodes ten times as slowly as a 20-node pool's, and left them fuller when drained.
  const limit = Math.max(1, input.closePerEvaluation ?? 1);
  let free = closedFree;
  for (const pending of decision.rejected ?? []) {
    if (plan.close.length >= limit) break;
    if (!pending.pending || closed.some((n) => n.nodeId === pending.nodeId)) continue;
    const node = nodes.find((n) => n.nodeId === pending.nodeId);
    if (!node?.stats || node.state !== 'active') break;
    // The open nodes must still hold the level as a scale-up would size them (headroom free, at most `target`), so a
    // wiggle does not reopen what was just closed, and keep the reserve free for a jump.
    const after = free + freeOf(node);
    if (level > heldLevel(allSlots - after, config.scaleUp) || u.freeSlots - after < keepFree) break;
    free = after;
    plan.close.push({ nodeId: node.nodeId, reason: `close ${node.nodeId} to new gears (next to drain; ${pending.reason}): departing gears empty it for free` });
  }
  return plan;
}

/** Free slots of the open active nodes whose stats were reported at or after `since` (all of them without it). */
function freeSlotsReportedSince(nodes: readonly NodeRecord[], since: string | undefined): number {
  const sinceMs = since === undefined ? -Infinity : Date.parse(since);
  let free = 0;
  for (const node of nodes) {
    if (node.state !== 'active' || isClosedForAttrition(node) || !node.stats || Date.parse(node.stats.reportedAt) < sinceMs) continue;
    free += freeOf(node);
  }
  return free;
}

function freeOf(node: NodeRecord): number {
  return node.stats ? Math.max(0, node.stats.maxActiveGears - node.stats.activeGears) : 0;
}

/**
 * The evaluator's hook: the evaluation with its attrition plan. Closing needs
 * scale-down and the pays-off check enabled with `attrition`; closed nodes are
 * reopened whatever the settings (a node closed under other settings must
 * not stay closed).
 */
export function withAttrition(input: PoolEvaluationInput, evaluation: PoolEvaluation, measured?: MeasuredRises): PoolEvaluation {
  const { config, now } = input;
  const payoff = config.scaleDown.payoff;
  const closing = config.scaleDown.enabled && payoff.enabled && payoff.attrition;
  if (!closing && !input.nodes.some(isClosedForAttrition)) return evaluation;
  const u = evaluation.utilization;
  const confident = poolConfidentDemand(config, evaluation.poolPatch.demandHistory, now, u.demand);
  const waiting = waitingGears(input.pool, evaluation.poolPatch.demandHistory, now, u.demand);
  const refusedAt = input.pool.refused?.windowEnd;
  const plan = planAttrition({
    ...(waiting ? { waiting: { demand: waiting.demand, unplaced: waiting.unplaced, ...(refusedAt ? { refusedAt } : {}) } } : {}),
    nodes: input.nodes,
    utilization: u,
    decision: evaluation.decision,
    confidentDemand: confident,
    config,
    ...(evaluation.forecast ? { forecastDemand: evaluation.forecast.demand } : {}),
    closePerEvaluation: nodesPerEvaluation(config, input.poolConfig, poolSize(input.nodes)),
    ...(measured && payoff.attritionReserve > 0 && measured.byStanding.length > 0
      ? { closeReserve: allRisesQuantile(measured, payoff.attritionReserve) }
      : {}),
  });
  if (!closing) plan.close = [];
  return plan.close.length > 0 || plan.reopen.length > 0 ? { ...evaluation, attrition: plan } : evaluation;
}

/** The `quantile` of every rise measured, rounded up: once per measure (the same measure serves minutes in a row). */
function allRisesQuantile(measured: MeasuredRises, quantile: number): number {
  return measuredOnce(risesQuantiles, measured, quantile, () => Math.ceil(quantileOfSorted(Float64Array.from(measured.byStanding, (r) => r.rise).sort(), quantile)));
}

const risesQuantiles: MeasureCache<MeasuredRises, number> = new WeakMap();
