/**
 * Gears the evaluator has read at their maxMovesPerGear limit, kept in memory
 * between evaluations (one evaluator per warm function instance) so a pool
 * whose candidates hold such gears is not read again every minute: while every
 * candidate of a 200-node pool held one, each evaluation read the move history
 * of 40 nodes' gears (about 1,600 read units a minute).
 *
 * Sound because a gear's recorded moves only grow until they age out of the
 * rolling 7 days: a gear read at its limit stays at it at least until the moves
 * read then leave the window, and only then is it read again. The gear mover
 * reads every gear again before its first move (lib/workflows/drain/budget-guard.ts).
 */
import { recentMoves } from '../domain/budget.js';

/** Most gears kept: about 200 bytes each, so a few MB at most in a function instance. */
export const BLOCKED_GEARS_KEPT = 20_000;

export class BlockedGears {
  private readonly moves = new Map<string, readonly string[]>();

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

  get size(): number {
    return this.moves.size;
  }
}
