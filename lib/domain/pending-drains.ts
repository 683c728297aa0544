/**
 * Which drain a pending drain (lib/domain/controls.ts PendingDrain) starts, so the evaluator, the gear mover and the
 * CLI name the same one: the evaluator to see that it has begun, the gear mover to refuse it once an operator
 * cancelled it before it began (`cancel-drain`), the CLI to say which drain it cancelled.
 */
import { createHash } from 'node:crypto';
import { RENEWAL_DRAIN_PREFIX, type PendingDrain } from './controls.js';

/**
 * The gear mover's MANUAL_DECISION_PREFIX (lib/workflows/drain/context.ts; a test holds them equal): it makes such a
 * decision a drain of kind `manual`, without a lease. Not imported, so the evaluator's bundle does not take in the
 * gear mover.
 */
export const MANUAL_PREFIX = 'manual:';

/** Who asks for a renewal's drain (lib/domain/renewal.ts), in the pending drain and the decision log. */
export const RENEWAL_BY = 'nodescaler (renewal)';
/** What the version that renewed only drifted nodes wrote: its pending drains still start as renewals after an upgrade. */
const RENEWAL_BY_BEFORE_EXPIRY = 'nodescaler (scaleDown.renewDrifted)';

export function isRenewalRequest(by: string): boolean {
  return by === RENEWAL_BY || by === RENEWAL_BY_BEFORE_EXPIRY;
}

/**
 * The decisionId of the drain a pending drain starts, or started when the CLI sent it itself: a renewal's is told apart
 * by its node, as one scale-up replaces several.
 */
export function pendingDrainDecisionId(pending: PendingDrain): string {
  if (pending.decisionId !== undefined) return pending.decisionId;
  return isRenewalRequest(pending.by) ? `${RENEWAL_DRAIN_PREFIX}${pending.replacementDecisionId}:${nodeDigest(pending.nodeId)}` : `${MANUAL_PREFIX}after:${pending.replacementDecisionId}`;
}

/**
 * Why the gear mover must not begin the drain `decisionId` of `nodeId`: an operator cancelled its pending drain before
 * it began. Undefined when nothing cancelled it.
 */
export function cancelledBeforeBegun(pendingDrains: readonly PendingDrain[], nodeId: string, decisionId: string): string | undefined {
  const pending = pendingDrains.find((candidate) => candidate.nodeId === nodeId);
  if (pending?.cancelledAt === undefined || pendingDrainDecisionId(pending) !== decisionId) return undefined;
  return `cancelled by ${pending.cancelledBy ?? 'an operator'} at ${pending.cancelledAt} before it began${pending.cancelReason ? `: ${pending.cancelReason}` : ''}`;
}

/** 8 hex digits of a node id: a drain's id stays within the 128 characters of an operation id whatever the node's name. */
function nodeDigest(nodeId: string): string {
  return createHash('sha256').update(nodeId).digest('hex').slice(0, 8);
}
