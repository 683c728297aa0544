/**
 * Measures kept by the object they were measured from: a bucket series or its measure is the same object for as long
 * as the pool's buckets stay as they were (headroom.ts `bucketMaxima`), so what is worked out from it once serves
 * every minute in a row. Held weakly: a series no evaluation uses any more takes its measures with it.
 */
export type MeasureCache<O extends object, V> = WeakMap<O, Map<string | number, V>>;

/** `compute()` for `owner` and `key`, worked out once while `owner` lives (an undefined result is kept too). */
export function measuredOnce<O extends object, V>(cache: MeasureCache<O, V>, owner: O, key: string | number, compute: () => V): V {
  let byKey = cache.get(owner);
  if (!byKey) {
    byKey = new Map();
    cache.set(owner, byKey);
  }
  if (byKey.has(key)) return byKey.get(key) as V;
  const value = compute();
  byKey.set(key, value);
  return value;
}
