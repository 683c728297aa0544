/**
 * Crash injection for resumability tests: a `StateStore` whose next write
 * matching a predicate throws `Crash` instead of being written, as if the
 * process died just before it. Everything else goes to the real store.
 */
import type { NodeRecord } from '../../lib/domain/model.js';
import type { NodePatch, StateStore } from '../../lib/ports/state-store.js';

export class Crash extends Error {
  constructor(what: string) {
    super(`simulated crash before ${what}`);
    this.name = 'Crash';
  }
}

/** A write about to happen: node writes carry `nodeId`, pool writes `pool`. */
type NodeWrite = { nodeId: string; patch: NodePatch & Record<string, unknown>; to?: NodeRecord['state']; pool?: string };

export function crashingStore(store: StateStore): StateStore & { crashBefore(predicate: (write: NodeWrite) => boolean, what: string): void } {
  let pending: { predicate: (write: NodeWrite) => boolean; what: string } | undefined;
  const check = (write: NodeWrite) => {
    if (pending && pending.predicate(write)) {
      const { what } = pending;
      pending = undefined;
      throw new Crash(what);
    }
  };
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'crashBefore') {
        return (predicate: (write: NodeWrite) => boolean, what: string) => {
          pending = { predicate, what };
        };
      }
      if (property === 'updateNode') {
        return async (nodeId: string, expectedVersion: number, patch: NodePatch) => {
          check({ nodeId, patch });
          return target.updateNode(nodeId, expectedVersion, patch);
        };
      }
      if (property === 'updatePool') {
        return async (pool: string, expectedVersion: number, patch: Parameters<StateStore['updatePool']>[2]) => {
          check({ nodeId: '', pool, patch: patch as NodePatch & Record<string, unknown> });
          return target.updatePool(pool, expectedVersion, patch);
        };
      }
      if (property === 'createNode') {
        return async (node: Parameters<StateStore['createNode']>[0], now: Date) => {
          check({ nodeId: node.nodeId, patch: {}, to: node.state });
          return target.createNode(node, now);
        };
      }
      if (property === 'transitionNode') {
        return async (nodeId: string, change: Parameters<StateStore['transitionNode']>[1], now: Date) => {
          check({ nodeId, patch: change.patch ?? {}, to: change.to });
          return target.transitionNode(nodeId, change, now);
        };
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  }) as StateStore & { crashBefore(predicate: (write: NodeWrite) => boolean, what: string): void };
}

/**
 * Kills an invocation at one step: the `at`-th call to a listed method of any
 * wrapped object throws `Crash`, before or after the call takes effect, and
 * every call after it throws too (the process is gone). `steps` counts the
 * listed calls, so a clean run tells how many steps there are to crash at.
 */
export class Injector {
  steps = 0;
  dead = false;
  constructor(
    private readonly at: number,
    private readonly when: 'before' | 'after',
  ) {}
  wrap<T extends object>(target: T, mutating: ReadonlySet<string>): T {
    return new Proxy(target, {
      get: (object, property, receiver) => {
        const value = Reflect.get(object, property, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          if (this.dead) throw new Crash('the invocation is dead');
          const counts = mutating.has(String(property));
          const step = counts ? ++this.steps : 0;
          if (counts && step === this.at && this.when === 'before') {
            this.dead = true;
            throw new Crash(`crash before step ${step} (${String(property)})`);
          }
          const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(object, args);
          if (counts && step === this.at && this.when === 'after') {
            this.dead = true;
            throw new Crash(`crash after step ${step} (${String(property)})`);
          }
          return result;
        };
      },
    });
  }
}
