import type { Cloud } from '../../ports/cloud.js';
import type { Clock } from '../../ports/clock.js';
import type { Dns } from '../../ports/dns.js';
import type { Log } from '../../ports/log.js';
import type { Metrics } from '../../ports/metrics.js';
import type { Notifier } from '../../ports/notifier.js';
import type { Platform } from '../../ports/platform.js';
import type { Queue } from '../../ports/queue.js';
import type { StateStore } from '../../ports/state-store.js';

/** Ports the embedded local runtime (and handler tests) hand to the real handlers in place of AWS adapters. */
export interface InjectablePorts {
  store?: StateStore;
  queue?: Queue;
  clock?: Clock;
  cloud?: Cloud;
  platform?: Platform;
  dns?: Dns;
  log?: Log;
  metrics?: Metrics;
  notifier?: Notifier;
  /** How backoff waits (a virtual clock's advance in simulations); default a real timer. */
  sleep?: (ms: number) => Promise<void>;
}

const SLOT = Symbol.for('nodescaler.injectedPorts');
type Slot = { [SLOT]?: InjectablePorts };

/**
 * Installs ports for handlers loaded after this call: a handler builds its
 * ports once, at module scope, from `injectedPorts()` first and AWS second.
 * Kept on globalThis so that a handler module loaded twice (tests reset the
 * module registry) still sees it.
 */
export function injectPorts(ports: InjectablePorts): void {
  (globalThis as Slot)[SLOT] = { ...ports };
}

export function clearInjectedPorts(): void {
  delete (globalThis as Slot)[SLOT];
}

export function injectedPorts(): InjectablePorts {
  return (globalThis as Slot)[SLOT] ?? {};
}
