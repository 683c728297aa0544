/**
 * Scale-down drains give way to demand. When a pool scales up while some of
 * its nodes drain for scale-down, buying a node while another is being
 * emptied pays twice: a host to boot, and the moves (tenant restarts) still to
 * come on the draining one. So the drains are called off first: the node
 * re-opens, its gears stay, and its slots take the new demand at once
 * instead of after a boot delay. Only what the called-off nodes cannot give
 * is bought.
 *
 * - Only the evaluator's scale-down drains, not yet ended, not urgent: an
 *   operator's drain, an interruption's and a re-drain are never called off.
 * - A drain whose node is still active (not begun) is called off whatever the
 *   count: its slots already count, and beginning would close them.
 * - Of the draining nodes, as many as the scale-up wanted nodes, those with
 *   the most gears still on them first (their moves are the most saved);
 *   each gives back a node: the pool is one profile.
 * - A draining node already emptied is called off too, last: its moves are
 *   spent, but re-opening it still spares a boot and a host. Only a drain the
 *   platform listed empty (`completedAt`: its node is being handed back) ends.
 * - Gears that wait now (creations the broker refused) are bought for all the
 *   same; the call-offs come on top (`nodesToBuy`). A called-off node re-opens
 *   only once its moves in flight settle, at the gear mover's next round, so
 *   it cannot stand in for the node a waiting gear needs; counting it did, and
 *   at 2,000 nodes bursts met that delay (NASA at 200,000 gears: more waiting
 *   than cluster-autoscaler, more drains aborted on full targets).
 *
 * Karpenter re-validates a consolidation before it disrupts and gives up when
 * pods turn pending; this is the same rule for a drain already under way.
 * A call-off is not a failure: no delayAfterFailure, no DrainsAborted.
 *
 * Pure functions of data.
 */
import { drainKind, isPending, isUrgent } from './drain.js';
import type { DrainRecord, NodeRecord } from './model.js';

export interface CallOff {
  drainId: string;
  nodeId: string;
  /** Gears still on the node (its last report, or the moves still to make): what the call-off spares. */
  gearsLeft: number;
  /** False for a drain that has not closed its node yet (its slots already count). */
  returnsNode: boolean;
  reason: string;
}

export interface CallOffPlan {
  callOff: CallOff[];
  /** Nodes the re-opened ones give back, out of `wanted`. */
  nodesBack: number;
}

/**
 * Nodes a scale-up buys that wanted `wanted`, when its call-offs give back
 * `nodesBack` and the gears waiting now need `waitingNodes` (0: none wait):
 * the call-offs stand in only for what the waiting gears do not need.
 */
export function nodesToBuy(wanted: number, nodesBack: number, waitingNodes: number): number {
  return Math.max(0, wanted - nodesBack, Math.min(wanted, waitingNodes));
}

/** Whether the drain may be called off at all (see above). */
export function callable(drain: DrainRecord): boolean {
  return drain.state === 'active' && drainKind(drain) === 'scale-down' && !isUrgent(drain) && !drain.abortRequestedAt && !drain.completedAt;
}

/**
 * Which scale-down drains to call off for a scale-up that wanted `wanted` nodes, and how many of them they give back.
 * `why` ends each reason (the scale-up's trigger).
 */
export function drainsToCallOff(drains: readonly DrainRecord[], nodes: readonly NodeRecord[], wanted: number, why: string): CallOffPlan {
  const byId = new Map(nodes.map((node) => [node.nodeId, node]));
  const notBegun: CallOff[] = [];
  const draining: CallOff[] = [];
  for (const drain of drains) {
    if (!callable(drain)) continue;
    const node = byId.get(drain.nodeId);
    if (!node) continue;
    if (node.state === 'active' && node.drainId !== drain.drainId) {
      notBegun.push({ drainId: drain.drainId, nodeId: node.nodeId, gearsLeft: node.stats?.activeGears ?? 0, returnsNode: false, reason: '' });
      continue;
    }
    if (node.state !== 'draining' || node.drainId !== drain.drainId) continue;
    const gearsLeft = Math.max(node.stats?.activeGears ?? 0, drain.moves.filter(isPending).length);
    draining.push({ drainId: drain.drainId, nodeId: node.nodeId, gearsLeft, returnsNode: true, reason: '' });
  }
  draining.sort((a, b) => b.gearsLeft - a.gearsLeft || a.nodeId.localeCompare(b.nodeId));
  const back = draining.slice(0, Math.max(0, wanted));
  const callOff = [...back, ...notBegun].map((c) => ({ ...c, reason: reasonOf(c, why) }));
  return { callOff, nodesBack: back.length };
}

function reasonOf(call: CallOff, why: string): string {
  const what = call.returnsNode ? `re-opens with ${call.gearsLeft} gear(s) still on it` : 'was not closed yet';
  return `the pool scales up (${why}): ${call.nodeId} ${what}`;
}

/**
 * The decision log's sentence for the call-offs of one evaluation. `spared`:
 * the nodes they spared buying (all they give back, unless gears wait).
 */
export function callOffText(plan: CallOffPlan, spared = plan.nodesBack): string {
  const back = plan.callOff.filter((c) => c.returnsNode);
  const parts: string[] = [];
  if (back.length > 0) parts.push(`calls off ${back.length} scale-down drain(s) ${sparedText(spared, back.length)} (${back.map((c) => `${c.nodeId}: ${c.gearsLeft} gears left`).join(', ')})`);
  const notBegun = plan.callOff.length - back.length;
  if (notBegun > 0) parts.push(`calls off ${notBegun} scale-down drain(s) not begun`);
  return parts.join('; ');
}

function sparedText(spared: number, returned: number): string {
  if (spared >= returned) return 'instead of buying their nodes';
  if (spared > 0) return `instead of buying ${spared} of their nodes (gears wait now)`;
  return 'as well as buying for the gears that wait now (a called-off node re-opens once its moves in flight settle)';
}
