import type { NodeState, PoolLease } from '../domain/model.js';
import type { LeaseRequest } from '../ports/state-store.js';
import { illegalSources } from '../domain/lifecycle.js';
import { ValidationError } from '../errors.js';

/** Rules both `StateStore` adapters apply before any write, so they cannot drift. */

export function sourcesOf(from: NodeState | readonly NodeState[]): readonly NodeState[] {
  return typeof from === 'string' ? [from] : from;
}

export function assertLegalTransition(nodeId: string, from: readonly NodeState[], to: NodeState): void {
  if (from.length === 0) {
    throw new ValidationError({ path: 'from', message: `transition of node ${nodeId} to ${to} names no source state` });
  }
  const illegal = illegalSources(from, to);
  if (illegal.length > 0) {
    throw new ValidationError({
      path: 'to',
      message: `node ${nodeId}: illegal transition ${illegal.map((s) => `${s} -> ${to}`).join(', ')}`,
      value: to,
    });
  }
}

export function grantLease(request: LeaseRequest, now: Date): PoolLease {
  const lease: PoolLease = {
    holder: request.holder,
    kind: request.kind,
    acquiredAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + request.ttlMs).toISOString(),
  };
  if (request.message) lease.message = request.message;
  return lease;
}

export function decisionExpiry(at: string, ttlMs: number): number {
  return Math.floor((Date.parse(at) + ttlMs) / 1000);
}
