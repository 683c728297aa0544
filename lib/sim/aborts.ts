/**
 * Why a replay's drains ended aborted: each aborted drain's stored
 * `abortReason` (the sentence the drain workflow wrote) by kind, and the
 * moves they made for no saving. An aborted drain costs tenant restarts and
 * saves nothing, so the summary names its cause next to the count.
 */
import type { DrainRecord } from '../domain/model.js';

/** The kinds, in the order a summary lists them when counts tie; the first pattern that matches names the kind. */
const KINDS: ReadonlyArray<readonly [kind: string, pattern: RegExp]> = [
  ['timeout', /^drain timed out\b/],
  ['budget: maxMovesPerGear', /^disruption budget: .*\(maxMovesPerGear=/],
  ['budget: do-not-move', /^disruption budget: .*(do-not-move|doNotMoveApps)/],
  ['budget: maxDraining', /already draining \(/],
  ['no room', /^(cannot place \d+ of \d+ gear|no room for gear )/],
  ['move failed', /could not be moved/],
  ['preempted', /^preempted by urgent drain/],
  ['cancelled', /^cancelled: /],
  ['called off', /^the pool scales up \(/],
  ['repriced', /^repriced: /],
  ['protected', /^node \S+ is protected$/],
  ['node changed', /^node \S+ (was re-opened|is held by|was drained by|is \w+$|has no record|belongs to pool)/],
];

/** The kind of a stored abort reason: a short, stable name for a tally. */
export function abortKind(reason: string | undefined): string {
  if (reason === undefined || reason === '') return 'no reason';
  for (const [kind, pattern] of KINDS) if (pattern.test(reason)) return kind;
  return 'other';
}

export interface AbortTally {
  /** Aborted drains by kind (abortKind). */
  byKind: Record<string, number>;
  /** Gears the aborted drains moved: restarts that bought no node. */
  moves: number;
  /** Aborted drains that moved at least one gear (the others were refused before any move). */
  afterMoves: number;
}

export function tallyAborts(drains: readonly Pick<DrainRecord, 'state' | 'abortReason' | 'moves'>[]): AbortTally {
  const tally: AbortTally = { byKind: {}, moves: 0, afterMoves: 0 };
  for (const drain of drains) {
    if (drain.state !== 'aborted') continue;
    const kind = abortKind(drain.abortReason);
    tally.byKind[kind] = (tally.byKind[kind] ?? 0) + 1;
    const moved = drain.moves.filter((move) => move.state === 'moved').length;
    tally.moves += moved;
    if (moved > 0) tally.afterMoves += 1;
  }
  return tally;
}

/** Several pools' tallies as one. */
export function addTallies(tallies: readonly AbortTally[]): AbortTally {
  const sum: AbortTally = { byKind: {}, moves: 0, afterMoves: 0 };
  for (const tally of tallies) {
    for (const [kind, count] of Object.entries(tally.byKind)) sum.byKind[kind] = (sum.byKind[kind] ?? 0) + count;
    sum.moves += tally.moves;
    sum.afterMoves += tally.afterMoves;
  }
  return sum;
}

/** One short line: `aborted drains: 37 timeout, 25 budget: maxMovesPerGear; 3219 moves in them (37 aborted after moving)`. */
export function abortLine(tally: AbortTally | undefined): string {
  const kinds = Object.entries(tally?.byKind ?? {}).sort((a, b) => b[1] - a[1] || order(a[0]) - order(b[0]));
  if (!tally || kinds.length === 0) return 'aborted drains: none';
  return `aborted drains: ${kinds.map(([kind, count]) => `${count} ${kind}`).join(', ')}; ${tally.moves} moves in them (${tally.afterMoves} aborted after moving a gear)`;
}

function order(kind: string): number {
  const i = KINDS.findIndex(([k]) => k === kind);
  return i < 0 ? KINDS.length : i;
}
