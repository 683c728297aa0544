/**
 * The evaluator's decision with what the disruption budget needs to know of
 * the candidate's gears (lib/domain/budget.ts): their applications and
 * do-not-move flags, and their moves in the last 7 days. Read cheaply: only
 * for the node the decision would drain, and the decision is taken again
 * with them; a candidate refused for a gear gives way to the next one, whose
 * gears are read in turn. A pool's listing carries only the counts of each
 * agent's gear list: once a drain is on the table the lists are read
 * (lib/app/gear-lists.ts, a list unchanged since its last read from memory).
 * A node whose agent lists no gears (over 500, or an agent that sends counts)
 * has them listed by the platform, once per candidate. After a share of the pool's nodes (`candidateReads`) a candidate
 * whose gears were not read is refused, so no decision drains unchecked gears.
 * Gears read at their limit, and listed nodes a gear refused, are remembered
 * (lib/app/blocked-gears.ts) and taken as known in later evaluations. A listing
 * the broker cannot give now ends the reads: no drain this time. A renewal
 * (lib/domain/renewal.ts) has its drifted node's gears read the same way. So does the
 * evaluation's deadline (`outOfTime`, lib/app/pool-batch.ts): the pool decides
 * with what it read, unread candidates refused, and its reason says so. The gear
 * mover checks the gears again before its first move
 * (lib/workflows/drain/budget-guard.ts).
 */
import { GEAR_MOVE_WINDOW_MS, gearRefusal, poolBudget, poolSize, type DisruptionBudget } from '../domain/budget.js';
import type { PoolEvaluation, PoolEvaluationInput } from '../domain/decision.js';
import { decidePool } from '../domain/evaluate.js';
import type { GearInfo, NodeRecord } from '../domain/model.js';
import { NodescalerError } from '../errors.js';
import type { StateStore } from '../ports/state-store.js';
import type { BlockedGears } from './blocked-gears.js';

/** Fewest candidates whose gears are read in one evaluation before unread ones are refused. */
export const MIN_CANDIDATE_READS = 4;
/**
 * The share of the pool's nodes whose gears one evaluation may read: what MIN_CANDIDATE_READS is of a 20-node pool.
 * Gears a drain moved land on many nodes, so in a pool of 200 the first four candidates all held a gear at its
 * maxMovesPerGear limit for days, and every other node was refused unread: drains stopped while most nodes were free
 * to go (held-out shape s1-7 at 20,000 gears: 196 nodes through a trough that needs 153).
 */
export const CANDIDATE_READ_SHARE = 0.2;

/** Candidates one evaluation reads the gears of in a pool of `poolNodes` nodes: a share of the pool, at least MIN_CANDIDATE_READS. */
export function candidateReads(poolNodes: number): number {
  return Math.max(MIN_CANDIDATE_READS, Math.ceil(CANDIDATE_READ_SHARE * poolNodes - 1e-9));
}

export interface GearSources {
  store: Pick<StateStore, 'getGearMoves'>;
  /** The platform's gear list of a node (Platform.listGears), for a candidate whose stats list none; absent: left to the gear mover. */
  listGears?: (nodeId: string) => Promise<GearInfo[]>;
  /** Gears read at their limit in earlier evaluations: taken as read, so they cost no read and no candidate round. */
  blocked?: BlockedGears;
  /** The nodes with their agents' gear lists (a pool's listing carries only their counts: lib/app/gear-lists.ts); absent: as listed. */
  gearLists?: (nodes: readonly NodeRecord[]) => Promise<readonly NodeRecord[]>;
  /** True once the evaluation's deadline is reached: no further listing or read is started. Absent: bounded by count alone. */
  outOfTime?: () => boolean;
}

/** What a decision's reason adds when its candidate checks stopped at the evaluation's deadline. */
export const CHECKS_CUT_SHORT = 'candidate checks cut short: evaluation deadline';

export async function decideWithMoveHistory(
  sources: GearSources,
  input: PoolEvaluationInput,
  decide: (input: PoolEvaluationInput) => PoolEvaluation = decidePool,
): Promise<PoolEvaluation> {
  const history = new Map<string, readonly string[]>(input.moveHistory ?? []);
  const knownRefusals = new Map<string, string>(input.knownRefusals ?? []);
  const since = input.now.getTime() - GEAR_MOVE_WINDOW_MS;
  const budget = poolBudget(input.config, input.poolConfig);
  const { blocked } = sources;
  const fromBlocked = (uuid: string): boolean => {
    const moves = blocked?.atLimit(uuid, budget.maxMovesPerGear, input.now);
    if (moves) history.set(uuid, moves);
    return moves !== undefined;
  };
  // What earlier evaluations learnt is taken only once a drain is on the table: most evaluations decide nothing of the kind.
  let remembered = blocked === undefined;
  let nodes: readonly NodeRecord[] = input.nodes;
  // The nodes as their agents listed them, once a drain is on the table: what a platform listing adds is told from it.
  let reported = input.nodes;
  let listsRead = sources.gearLists === undefined;
  // Counted in nodes listed or read, not rounds: one decision may drain several nodes (budget.ts drainsPerDecision), read
  // together; a node known from an earlier evaluation costs nothing.
  const reads = candidateReads(poolSize(input.nodes));
  let nodesRead = 0;
  // Decided with what was read: a candidate whose gears are unread is refused (moveHistoryFinal), never drained unchecked.
  const withWhatWasRead = () => decide({ ...input, nodes, moveHistory: history, moveHistoryFinal: true, knownRefusals });
  const cutShort = (): PoolEvaluation => {
    const evaluation = withWhatWasRead();
    return { ...evaluation, decision: { ...evaluation.decision, reason: `${evaluation.decision.reason}; ${CHECKS_CUT_SHORT}` } };
  };
  for (;;) {
    const final = nodesRead >= reads;
    const evaluation = decide({ ...input, nodes, moveHistory: history, moveHistoryFinal: final, knownRefusals });
    const drained = drainedBy(evaluation.decision);
    if (drained.length === 0 || final) return evaluation;
    if (!listsRead) {
      listsRead = true;
      try {
        nodes = reported = await sources.gearLists!(nodes);
      } catch (error) {
        // The table busy: no drain this time (its candidates' gears unread), and the pool's evaluation still stands.
        if (!(error instanceof NodescalerError && error.retryable)) throw error;
        return withWhatWasRead();
      }
    }
    if (!remembered) {
      remembered = true;
      if (recall(blocked!, nodes, budget, input.now, fromBlocked, knownRefusals)) continue;
    }
    let learnt = false;
    const unread: string[] = [];
    for (const nodeId of drained) {
      const candidate = nodes.find((node) => node.nodeId === nodeId);
      let gears = candidate?.stats?.gears;
      const listing = candidate?.stats !== undefined && gears === undefined;
      if (listing) {
        if (!sources.listGears) return evaluation;
        if (sources.outOfTime?.()) return cutShort();
        let listed: GearInfo[];
        try {
          listed = await sources.listGears(candidate!.nodeId);
        } catch (error) {
          // The broker busy or the invocation's time short: no drain this time, and the pool's evaluation still stands.
          if (!(error instanceof NodescalerError && error.retryable)) throw error;
          return withWhatWasRead();
        }
        gears = listed;
        nodes = nodes.map((node) => (node === candidate ? { ...node, stats: { ...node.stats!, gears: listed } } : node));
      }
      const unknown = (gears ?? []).map((gear) => gear.uuid).filter((uuid) => !history.has(uuid));
      const notRemembered = unknown.filter((uuid) => !fromBlocked(uuid));
      // A remembered gear refuses the node already: its other gears' moves would not change that.
      if (notRemembered.length === unknown.length) unread.push(...notRemembered);
      if (listing || (notRemembered.length === unknown.length && unknown.length > 0)) nodesRead++;
      if (listing || unknown.length > 0) learnt = true;
    }
    if (!learnt) return evaluation;
    if (unread.length > 0) {
      if (sources.outOfTime?.()) return cutShort();
      const read = await sources.store.getGearMoves(unread);
      for (const uuid of unread) {
        const moves = (read.get(uuid) ?? []).filter((at) => Date.parse(at) > since);
        history.set(uuid, moves);
        blocked?.learn(uuid, moves, budget.maxMovesPerGear, input.now);
      }
    }
    if (blocked) rememberListedRefusals(blocked, reported, nodes, budget, history, input.now);
  }
}

/** The nodes a decision drains: a scale-down's (it may drain several at once, budget.ts drainsPerDecision), or the nodes a renewal replaces (renewal.ts). */
function drainedBy(decision: PoolEvaluation['decision']): string[] {
  if (decision.kind === 'scale-down') return [decision.nodeId, ...(decision.alsoNodeIds ?? [])];
  return decision.kind === 'scale-up' ? (decision.renews ?? []) : [];
}

/** Remembers each node listed in this evaluation (its stats listed no gears) that one of its gears refuses. */
function rememberListedRefusals(
  blocked: BlockedGears,
  reported: readonly NodeRecord[],
  nodes: readonly NodeRecord[],
  budget: DisruptionBudget,
  history: ReadonlyMap<string, readonly string[]>,
  now: Date,
): void {
  nodes.forEach((node, index) => {
    if (reported[index]?.stats?.gears !== undefined || node.stats?.gears === undefined) return;
    const refusing = node.stats.gears.find((gear) => gearRefusal(budget, gear, history.get(gear.uuid), now.getTime()) !== undefined);
    if (refusing) blocked.rememberNode(node.nodeId, refusing, history.get(refusing.uuid) ?? [], now);
  });
}

/** Takes what `blocked` remembers of the pool's nodes as known; true when any was. */
function recall(
  blocked: BlockedGears,
  nodes: readonly NodeRecord[],
  budget: DisruptionBudget,
  now: Date,
  fromBlocked: (uuid: string) => boolean,
  knownRefusals: Map<string, string>,
): boolean {
  let known = 0;
  for (const node of nodes) {
    if (node.stats?.gears) {
      for (const gear of node.stats.gears) if (fromBlocked(gear.uuid)) known++;
      continue;
    }
    const refusal = knownRefusals.has(node.nodeId) ? undefined : blocked.nodeRefusal(node.nodeId, budget, now);
    if (refusal) {
      knownRefusals.set(node.nodeId, refusal);
      known++;
    }
  }
  return known > 0;
}
