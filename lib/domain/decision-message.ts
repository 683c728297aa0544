import type { PoolDecision } from './decision.js';
import type { ScaleDownMessage, ScaleUpMessage } from '../messages/index.js';
import type { PoolId } from './model.js';

/**
 * decisionIds are deterministic per pool and lease: the lease is taken at
 * `decidedAt`, and a retry resends the message stored with the lease, so
 * the same decision always travels under the same id (FIFO dedup, and the
 * consumers' idempotency key).
 */
export function decisionIdFor(kind: 'scale-up' | 'scale-down', pool: PoolId, decidedAt: Date): string {
  const safePool = pool.replace(/[^A-Za-z0-9_.-]/g, '_');
  return `${kind === 'scale-up' ? 'up' : 'down'}:${safePool}:${decidedAt.getTime()}`;
}

export function decisionMessage(pool: PoolId, decision: PoolDecision, decidedAt: Date): ScaleUpMessage | ScaleDownMessage | undefined {
  if (decision.kind === 'no-action') return undefined;
  const reason = decision.reason.length > 1024 ? `${decision.reason.slice(0, 1021)}...` : decision.reason;
  const common = { v: 1 as const, decisionId: decisionIdFor(decision.kind, pool, decidedAt), pool, reason, decidedAt: decidedAt.toISOString() };
  return decision.kind === 'scale-up'
    ? { type: 'scale-up', ...common, count: decision.count }
    : { type: 'scale-down', ...common, nodeId: decision.nodeId };
}
