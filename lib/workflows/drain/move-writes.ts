/**
 * Move persistence: each move of a drain is its own item with its own
 * version, so a change of the plan writes only the moves that changed (one
 * item per move transition), never the whole plan.
 */
import type { GearMove } from '../../domain/model.js';
import type { MoveWrite } from '../../ports/state-store.js';

/** A move's content without its version, for comparing what a caller changed. */
function content(move: GearMove): string {
  const { version: _version, ...rest } = move;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(rest).sort()) {
    const value = (rest as Record<string, unknown>)[key];
    if (value !== undefined) sorted[key] = value;
  }
  return JSON.stringify(sorted);
}

/**
 * The writes that turn the stored moves `before` into `after`: a create for a
 * gear without a move, an update (at the stored version) for a move whose
 * content changed, a delete for a move left out. Unchanged moves are not written.
 */
export function moveWrites(before: readonly GearMove[], after: readonly GearMove[]): MoveWrite[] {
  const stored = new Map(before.map((move) => [move.gear.uuid, move]));
  const writes: MoveWrite[] = [];
  const kept = new Set<string>();
  for (const move of after) {
    const uuid = move.gear.uuid;
    if (kept.has(uuid)) throw new Error(`gear ${uuid} has two moves in one drain`);
    kept.add(uuid);
    const held = stored.get(uuid);
    const { version: _version, ...fresh } = move;
    if (!held) writes.push({ kind: 'create', move: fresh });
    else if (held !== move && content(held) !== content(move)) writes.push({ kind: 'update', move: fresh, expectedVersion: storedVersion(held) });
  }
  for (const held of before) if (!kept.has(held.gear.uuid)) writes.push({ kind: 'delete', uuid: held.gear.uuid, expectedVersion: storedVersion(held) });
  return writes;
}

/** `after` with each move at the version it is stored at now: written ones as written, the others as they were. */
export function movesAfterWrites(before: readonly GearMove[], after: readonly GearMove[], written: readonly GearMove[]): GearMove[] {
  const stored = new Map(before.map((move) => [move.gear.uuid, move]));
  const fresh = new Map(written.map((move) => [move.gear.uuid, move]));
  return after.map((move) => fresh.get(move.gear.uuid) ?? stored.get(move.gear.uuid) ?? move);
}

function storedVersion(move: GearMove): number {
  if (move.version === undefined) throw new Error(`move of gear ${move.gear.uuid} has no stored version (split a drain's inline moves before writing one)`);
  return move.version;
}
