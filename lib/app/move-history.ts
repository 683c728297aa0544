/**
 * The evaluator's decision with the gears' move history (the disruption
 * budget's maxMovesPerGear), read cheaply: only the gears of the node the
 * decision would drain are read, and the decision is taken again with them;
 * a candidate refused for a gear at its limit gives way to the next one,
 * whose gears are read in turn. After a few rounds a candidate whose gears
 * were not read is refused, so no decision drains unchecked gears.
 */
import { GEAR_MOVE_WINDOW_MS } from '../domain/budget.js';
import type { PoolEvaluation, PoolEvaluationInput } from '../domain/decision.js';
import { decidePool } from '../domain/evaluate.js';
import type { StateStore } from '../ports/state-store.js';

/** Candidates whose gears are read in one evaluation before unread ones are refused. */
const MAX_ROUNDS = 4;

export async function decideWithMoveHistory(
  store: Pick<StateStore, 'getGearMoves'>,
  input: PoolEvaluationInput,
  decide: (input: PoolEvaluationInput) => PoolEvaluation = decidePool,
): Promise<PoolEvaluation> {
  const history = new Map<string, readonly string[]>(input.moveHistory ?? []);
  const since = input.now.getTime() - GEAR_MOVE_WINDOW_MS;
  for (let round = 0; ; round++) {
    const final = round >= MAX_ROUNDS;
    const evaluation = decide({ ...input, moveHistory: history, moveHistoryFinal: final });
    const decision = evaluation.decision;
    if (decision.kind !== 'scale-down' || final) return evaluation;
    const gears = input.nodes.find((node) => node.nodeId === decision.nodeId)?.stats?.gears ?? [];
    const unread = gears.map((gear) => gear.uuid).filter((uuid) => !history.has(uuid));
    if (unread.length === 0) return evaluation;
    const read = await store.getGearMoves(unread);
    for (const uuid of unread) history.set(uuid, (read.get(uuid) ?? []).filter((at) => Date.parse(at) > since));
  }
}
