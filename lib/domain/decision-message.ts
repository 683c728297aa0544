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
    : {
        type: 'scale-down',
        ...common,
        nodeId: decision.nodeId,
        ...(decision.alsoNodeIds?.length ? { alsoNodeIds: decision.alsoNodeIds } : {}),
        ...(decision.prices?.length ? { prices: decision.prices } : {}),
      };
}

/** How far ahead of a consumer's clock the evaluator's may be. */
export const DECISION_CLOCK_SKEW_MS = 5 * 60_000;

/** The oldest a decision may be when a consumer takes it up: `decisionMaxAge`, else the lease it was taken under. */
export function decisionMaxAgeMs(config: { decisionMaxAge?: number; leaseTtl: number }): number {
  return config.decisionMaxAge ?? config.leaseTtl;
}

/**
 * Why a decision is too old to act on, or undefined. A decision is a
 * picture of its pool at `decidedAt`; taken up later than `maxAgeMs` (a
 * message re-driven from a dead-letter queue, a queue backlog) it would act
 * on a pool that has changed since. The evaluator decides again instead.
 */
export function staleDecisionReason(message: { decisionId: string; decidedAt: string }, now: Date, maxAgeMs: number): string | undefined {
  const age = now.getTime() - Date.parse(message.decidedAt);
  // Dated ahead of every clock we run on: it would never grow old.
  if (age < -DECISION_CLOCK_SKEW_MS) return `refused: decision ${message.decisionId} is dated ${message.decidedAt}, in the future (now is ${now.toISOString()})`;
  if (!(age > maxAgeMs)) return undefined;
  return `stale: decision ${message.decisionId} was made at ${message.decidedAt}, ${Math.round(age / 60_000)}m ago, more than decisionMaxAge (${Math.round(maxAgeMs / 60_000)}m); the evaluator decides again`;
}
