/**
 * A StateStore that meters its reads: calls, records returned, their bytes
 * and an estimate of the DynamoDB read capacity they would consume, for the
 * stats-batch benchmark (`npm run bench -- stats-batch`) and the tests that
 * bound what a batch reads.
 *
 * The estimate follows DynamoDB's rules on the record's JSON size (close to
 * its item size): a strongly consistent GetItem costs one RCU per 4 KiB of
 * the item, a query on the pool index (eventually consistent) half an RCU
 * per 4 KiB of everything it returns, rounded up per call. A lookup by
 * instance (`find*`) is counted as the read of the node it returns (its
 * keys-only query adds half an RCU).
 */
import type { StateStore } from '../../ports/state-store.js';

const KIB4 = 4096;

export interface ReadMeter {
  calls: Map<string, number>;
  /** `listNodes` calls by pool. */
  nodeLists: Map<string, number>;
  records: number;
  bytes: number;
  rcu: number;
}

export function emptyMeter(): ReadMeter {
  return { calls: new Map(), nodeLists: new Map(), records: 0, bytes: 0, rcu: 0 };
}

/** `store` with every `get*`, `list*` and `find*` call metered into `meter` (writes pass through unmetered). */
export function meteredStore(store: StateStore, meter: ReadMeter): StateStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function' || typeof property !== 'string' || !/^(get|list|find)/.test(property)) return value;
      return async (...args: unknown[]) => {
        const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        meter.calls.set(property, (meter.calls.get(property) ?? 0) + 1);
        if (property === 'listNodes') meter.nodeLists.set(String(args[0]), (meter.nodeLists.get(String(args[0])) ?? 0) + 1);
        const items = Array.isArray(result) ? result : result === undefined ? [] : [result];
        const bytes = items.reduce((sum: number, item) => sum + Buffer.byteLength(JSON.stringify(item)), 0);
        meter.records += items.length;
        meter.bytes += bytes;
        const query = property.startsWith('list');
        meter.rcu += query ? Math.max(0.5, Math.ceil(bytes / KIB4) / 2) : Math.max(1, Math.ceil(bytes / KIB4)) + (property.startsWith('find') ? 0.5 : 0);
        return result;
      };
    },
  });
}
