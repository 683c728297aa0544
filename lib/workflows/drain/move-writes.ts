/**
 * Move persistence: each move of a drain is its own item with its own
 * version, so a change of the plan writes only the moves that changed (one
 * item per move transition), never the whole plan.
 */
import type { GearMove } from '../../domain/model.js';
import type { MoveWrite } from '../../ports/state-store.js';

/**
 * Whether two moves hold the same content, their versions aside: JSON's
 * equality (a field set to undefined is a field left out; key order does not
 * matter, at any depth), compared in place rather than serialized, since a
 * drain compares every move of its plan at every step.
 */
function sameContent(held: GearMove, move: GearMove): boolean {
  return sameJson(held, move, 'version');
}

function sameJson(a: unknown, b: unknown, ignoredKey?: string): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => sameJson(item, b[index]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  let fields = 0;
  for (const key in left) {
    if (key === ignoredKey || left[key] === undefined) continue;
    fields += 1;
    if (!sameJson(left[key], right[key])) return false;
  }
  for (const key in right) if (key !== ignoredKey && right[key] !== undefined) fields -= 1;
  return fields === 0;
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
    else if (!sameContent(held, move)) writes.push({ kind: 'update', move: fresh, expectedVersion: storedVersion(held) });
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
