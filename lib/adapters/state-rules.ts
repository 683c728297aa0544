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

/** An instance id keys the node instance index, whose keys cannot be empty (DynamoDB refuses the write). */
export function assertInstanceId(nodeId: string, fields: { instanceId?: string } | undefined): void {
  if (fields?.instanceId === '') {
    throw new ValidationError({ path: 'instanceId', message: `node ${nodeId}: instanceId must not be empty (remove it with undefined)`, value: '' });
  }
}

/** Of the nodes found on one instance (one, but for a corrupted table), the live one. */
export function liveFirst<T extends { state: NodeState; nodeId: string }>(nodes: readonly T[]): T | undefined {
  return [...nodes].sort((a, b) => Number(a.state === 'terminated') - Number(b.state === 'terminated') || a.nodeId.localeCompare(b.nodeId))[0];
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
