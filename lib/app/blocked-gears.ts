/**
 * What the evaluator learnt of candidates' gears, kept in memory between
 * evaluations (one evaluator per warm function instance), so a pool whose
 * candidates hold gears scale-down must not move is not read again every
 * minute. While every candidate of a 200-node pool held one, each evaluation
 * read the move history of 40 nodes' gears (about 1,600 read units a minute)
 * and, with the shipped agent (its stats count gears), listed 40 nodes on the
 * broker: one SSM command each, more than the evaluator's minute.
 *
 * - Gears read at their maxMovesPerGear limit: sound because a gear's recorded
 *   moves only grow until they age out of the rolling 7 days, so it stays at the
 *   limit at least until the moves read then leave the window; only then is it
 *   read again.
 * - Listed nodes one of whose gears refused them: taken as refused for
 *   NODE_RELIST_MS, while that gear still would be, without listing them again.
 *   Only ever a refusal, so never a drain of unchecked gears; a node whose
 *   refusing gear left waits at most that long to be a candidate again.
 *
 * The gear mover lists and reads every gear again before its first move
 * (lib/workflows/drain/budget-guard.ts).
 */
import { gearRefusal, recentMoves, type DisruptionBudget } from '../domain/budget.js';
import type { GearInfo } from '../domain/model.js';

/** Most gears (and nodes) kept: about 200 bytes each, so a few MB at most in a function instance. */
export const BLOCKED_GEARS_KEPT = 20_000;
/**
 * How long a listed node stays refused by the gear that refused it before it is listed again: a tenant who deletes
 * that gear frees the node within the hour, and a pool of 200 such nodes costs about 3 listings a minute.
 */
export const NODE_RELIST_MS = 3_600_000;

interface RefusedNode {
  gear: GearInfo;
  moves: readonly string[];
  listedAt: number;
}

export class BlockedGears {
  private readonly moves = new Map<string, readonly string[]>();
  private readonly nodes = new Map<string, RefusedNode>();

  constructor(private readonly kept = BLOCKED_GEARS_KEPT) {}

  /** The moves read of a gear still at `limit` within the window before `now`, or undefined (a gear no longer at it is forgotten). */
  atLimit(uuid: string, limit: number, now: Date): readonly string[] | undefined {
    const times = this.moves.get(uuid);
    if (times === undefined) return undefined;
    const recent = recentMoves(times, now.getTime());
    if (recent.length >= limit) return recent;
    this.moves.delete(uuid);
    return undefined;
  }

  /** Keeps a gear just read if it is at `limit`; the oldest kept gear gives way past the bound. */
  learn(uuid: string, times: readonly string[], limit: number, now: Date): void {
    const recent = recentMoves(times, now.getTime());
    if (recent.length < limit) return;
    this.moves.delete(uuid);
    this.moves.set(uuid, recent);
    if (this.moves.size > this.kept) this.moves.delete(this.moves.keys().next().value!);
  }

  /** Remembers that a listed node was refused for `gear` (with its moves within the window as read). */
  rememberNode(nodeId: string, gear: GearInfo, moves: readonly string[], now: Date): void {
    this.nodes.delete(nodeId);
    this.nodes.set(nodeId, { gear, moves, listedAt: now.getTime() });
    if (this.nodes.size > this.kept) this.nodes.delete(this.nodes.keys().next().value!);
  }

  /** Why a node listed less than NODE_RELIST_MS ago is still refused by its remembered gear, or undefined (then forgotten). */
  nodeRefusal(nodeId: string, budget: DisruptionBudget, now: Date): string | undefined {
    const known = this.nodes.get(nodeId);
    if (known === undefined) return undefined;
    const reason = now.getTime() - known.listedAt < NODE_RELIST_MS ? gearRefusal(budget, known.gear, known.moves, now.getTime()) : undefined;
    if (reason === undefined) {
      this.nodes.delete(nodeId);
      return undefined;
    }
    return `${reason} (as listed at ${new Date(known.listedAt).toISOString()})`;
  }

  get size(): number {
    return this.moves.size;
  }

  get nodeCount(): number {
    return this.nodes.size;
  }
}
