/**
 * Fault injection for the reliability suite: wraps the ports the real
 * handlers are given so that any call can fail before its effect, fail after
 * it (the effect happened, the caller saw an error: a timed-out request that
 * went through), or kill the invocation (Lambda's process dies: nothing after
 * that point happens, and the batch is redelivered). Each invocation runs in
 * its own async context, so two invocations running at once fail apart.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { TransientError } from '../../../lib/errors.js';
import type { Clock } from '../../../lib/ports/clock.js';

export interface FaultRates {
  /** Share of port calls that fail with a retryable error before they take effect. */
  errorBefore: number;
  /** Share of mutating port calls that take effect and then fail (the nasty case). */
  errorAfter: number;
  /** Share of port calls at which the invocation dies, before or after the effect (half each). */
  crash: number;
  /** Largest clock skew of an invocation against the world, either way (Lambda hosts do not share one clock). */
  skewMs: number;
  /** Only calls named so (`cloud.createHost`) or of these ports (`cloud`) fail; default: every call. */
  only?: readonly string[];
}

export const NO_FAULTS: FaultRates = { errorBefore: 0, errorAfter: 0, crash: 0, skewMs: 0 };

/** The invocation is dead: thrown by every port call after the fatal one. */
export class Crash extends Error {
  constructor(where: string) {
    super(`injected crash at ${where}`);
    this.name = 'Crash';
  }
}

interface Invocation {
  id: number;
  crashed: boolean;
  crashedAt?: string;
  skewMs: number;
}

export interface FaultCounts {
  calls: number;
  errorsBefore: number;
  errorsAfter: number;
  crashes: number;
  invocations: number;
}

/** Which calls of a port change something (the rest only read and can only fail before). */
export type PortShape = { readonly reads: readonly string[] };

export class FaultInjector {
  private readonly context = new AsyncLocalStorage<Invocation>();
  private rates: FaultRates = NO_FAULTS;
  private sequence = 0;
  readonly counts: FaultCounts = { calls: 0, errorsBefore: 0, errorsAfter: 0, crashes: 0, invocations: 0 };

  constructor(private readonly random: () => number) {}

  setRates(rates: FaultRates): void {
    this.rates = rates;
  }

  /**
   * Runs one invocation in its own fault context. `crashed` says the
   * invocation died: its result means nothing and Lambda returns every message
   * of its batch to the queue.
   */
  async invocation<T>(body: () => Promise<T>): Promise<{ crashed: boolean; crashedAt?: string; result?: T; error?: unknown }> {
    this.counts.invocations += 1;
    const skewMs = this.rates.skewMs > 0 ? Math.round((this.random() * 2 - 1) * this.rates.skewMs) : 0;
    const invocation: Invocation = { id: ++this.sequence, crashed: false, skewMs };
    try {
      const result = await this.context.run(invocation, body);
      return invocation.crashed ? { crashed: true, ...(invocation.crashedAt ? { crashedAt: invocation.crashedAt } : {}) } : { crashed: false, result };
    } catch (error) {
      return invocation.crashed ? { crashed: true, ...(invocation.crashedAt ? { crashedAt: invocation.crashedAt } : {}) } : { crashed: false, error };
    }
  }

  /** A clock that reads the world's time plus the running invocation's skew. */
  skewedClock(world: Clock): Clock {
    const context = this.context;
    return {
      now: () => new Date(world.now().getTime() + (context.getStore()?.skewMs ?? 0)),
    };
  }

  /** `port` with faults on every method call made inside an invocation; calls from outside (the test's world) pass untouched. */
  wrap<T extends object>(port: T, name: string, shape: PortShape): T {
    const reads = new Set(shape.reads);
    return new Proxy(port, {
      get: (target, property, receiver) => {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function' || typeof property !== 'string') return value;
        const method = value as (...args: unknown[]) => Promise<unknown>;
        return (...args: unknown[]) => this.call(`${name}.${property}`, !reads.has(property), () => method.apply(target, args));
      },
    });
  }

  private async call(where: string, mutates: boolean, effect: () => Promise<unknown>): Promise<unknown> {
    const invocation = this.context.getStore();
    if (!invocation) return effect();
    if (invocation.crashed) throw new Crash(`${where} after the crash`);
    this.counts.calls += 1;
    const only = this.rates.only;
    if (only && !only.some((target) => where === target || where.startsWith(`${target}.`))) return effect();
    // Other invocations get to run between any two calls, in varying order.
    for (let hops = Math.floor(this.random() * 3); hops > 0; hops--) await Promise.resolve();
    if (invocation.crashed) throw new Crash(`${where} after the crash`);
    const { errorBefore, errorAfter, crash } = this.rates;
    const roll = this.random();
    if (roll < crash / 2) return this.die(invocation, `before ${where}`);
    if (roll < crash / 2 + errorBefore) {
      this.counts.errorsBefore += 1;
      throw new TransientError(`injected fault before ${where}`);
    }
    const result = await effect();
    if (!mutates) return result;
    const after = this.random();
    if (after < crash / 2) return this.die(invocation, `after ${where}`);
    if (after < crash / 2 + errorAfter) {
      this.counts.errorsAfter += 1;
      throw new TransientError(`injected fault after ${where} took effect`);
    }
    return result;
  }

  private die(invocation: Invocation, where: string): never {
    this.counts.crashes += 1;
    invocation.crashed = true;
    invocation.crashedAt = where;
    throw new Crash(where);
  }
}

/** The read-only calls of each port: everything else may take effect and then fail. */
export const STORE_READS: PortShape = { reads: ['getNode', 'listNodes', 'getPool', 'listPools', 'getDrain', 'listDrains', 'getScaleUp', 'listDecisions', 'listDecisionsSince', 'listControls', 'getGearLists'] };
export const CLOUD_READS: PortShape = { reads: ['describeHosts', 'listManagedHosts'] };
export const PLATFORM_READS: PortShape = { reads: ['listGears', 'moveStatus', 'findMove', 'readNodeFacts', 'nodeLoad', 'hasNode'] };
export const QUEUE_READS: PortShape = { reads: [] };
export const MARKET_READS: PortShape = { reads: ['currentSpotPrices', 'onDemandPrices'] };
