/**
 * Carries out an evaluation's call-offs (lib/domain/call-off.ts): each drain,
 * read again, has its stop requested as a call-off; the gear mover's next
 * round lets its moves in flight settle and re-opens the node
 * (lib/workflows/drain/ending.ts). A drain that changed since the evaluation
 * read it (ended, urgent, stopping) is left as it is. A write that loses a
 * race with the gear mover is logged and left: the next evaluation plans the
 * same call-off while the pool still wants nodes, and buys what it cannot
 * take back.
 */
import { callable, type CallOff } from '../domain/call-off.js';
import { ConflictError, describeError } from '../errors.js';
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import type { StateStore } from '../ports/state-store.js';
import { requestAbort } from '../workflows/drain/ending.js';

export interface CallOffPorts {
  store: StateStore;
  clock: Clock;
  log: Log;
}

/** Requests each call-off; returns the drains called off. */
export async function applyCallOffs(ports: CallOffPorts, callOffs: readonly CallOff[]): Promise<CallOff[]> {
  const ctx = { ports, known: new Set<string>() };
  const done: CallOff[] = [];
  for (const call of callOffs) {
    const drain = await ports.store.getDrain(call.drainId);
    if (!drain || !callable(drain)) continue;
    try {
      await requestAbort(ctx, drain, call.reason, { calledOff: true });
      done.push(call);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      ports.log.warn('drain not called off: it changed meanwhile; the next evaluation decides again', { drainId: call.drainId, error: describeError(error) });
    }
  }
  return done;
}
