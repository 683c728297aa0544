/**
 * Stored records are deeply frozen snapshots, so reads hand them out without
 * copying (a long simulation reads far more than it writes) and no caller can
 * change the store by mutating what it got. Input is cloned once, then frozen.
 */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  for (const child of Object.values(value as object)) deepFreeze(child);
  return Object.freeze(value);
}

/**
 * A frozen copy that shares every part already frozen: a record rebuilt from a
 * stored one (`{ ...move, state }`, a moves array with one new entry) costs
 * only its new parts, not a deep clone of the whole.
 */
export function copy<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  if (Array.isArray(value)) return Object.freeze(value.map(copy)) as T;
  const out: Record<string, unknown> = {};
  for (const [field, child] of Object.entries(value as Record<string, unknown>)) if (child !== undefined) out[field] = copy(child);
  return Object.freeze(out) as T;
}

/** A map whose values are frozen as they are stored. */
export class FrozenMap<K, V> extends Map<K, V> {
  override set(key: K, value: V): this {
    return super.set(key, deepFreeze(value));
  }
}
