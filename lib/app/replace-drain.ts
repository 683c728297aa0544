/**
 * The evaluator's part of `nodescaler drain NODE --replace`: each drain
 * waiting for its replacement is started once the replacement has joined
 * (a manual scale-down on the drain queue, as `nodescaler drain` sends it),
 * or given up when the replacement was refused or failed. The rule is
 * lib/domain/controls.ts's pendingDrainStep. A started drain stays pending,
 * marked sent, until the gear mover has begun it (sentDrainStep): meanwhile
 * the evaluator counts its node as draining. One an operator cancelled
 * before it was sent is dropped.
 */
import type { Config } from '../config/index.js';
import { isSent, pendingDrainStep, sentDrainStep, type PendingDrain } from '../domain/controls.js';
import { isRenewalRequest, pendingDrainDecisionId, RENEWAL_BY } from '../domain/pending-drains.js';
import { decisionMaxAgeMs } from '../domain/decision-message.js';
import { drainIdFor } from '../domain/drain.js';
import { ConflictError } from '../errors.js';
import type { ScaleDownMessage } from '../messages/index.js';
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import type { Queue } from '../ports/queue.js';
import type { StateStore } from '../ports/state-store.js';

export { MANUAL_PREFIX, RENEWAL_BY } from '../domain/pending-drains.js';

export async function advancePendingDrains(
  ports: { store: StateStore; queue: Queue; clock: Clock; log: Log },
  config: Config,
  pendingDrains: readonly PendingDrain[],
): Promise<PendingDrain[]> {
  const { store, queue, clock, log } = ports;
  // What stays pending after this pass, as stored: a drain sent but not yet begun keeps its node counted as leaving.
  const remaining: PendingDrain[] = [];
  for (const pending of pendingDrains) {
    try {
      const now = clock.now();
      const decisionId = pendingDrainDecisionId(pending);
      const replacement = pending.replacementDecisionId;
      // Cancelled before its message went out: never sent (the operator's cancel-drain is in the audit trail). One
      // cancelled after is kept, for the gear mover to refuse its message by, until that message is past decisionMaxAge.
      if (pending.cancelledAt !== undefined && !isSent(pending)) {
        if (await store.deletePendingDrain(pending.nodeId)) log.info('pending drain cancelled before it started', { nodeId: pending.nodeId, pool: pending.pool, by: pending.cancelledBy });
        continue;
      }
      // A plain `drain NODE` is recorded as sent: the CLI writes it just before it sends the message.
      if (pending.sentAt !== undefined || replacement === undefined) {
        const drain = await store.getDrain(drainIdFor(decisionId));
        const next = sentDrainStep(pending.sentAt ?? pending.at, drain, pending.cancelledAt !== undefined, now, decisionMaxAgeMs(config));
        if (next.step === 'wait') {
          remaining.push(pending);
          continue;
        }
        if (!(await store.deletePendingDrain(pending.nodeId)) || next.step === 'begun') continue;
        if (pending.cancelledAt !== undefined) {
          log.info('cancelled pending drain ended', { nodeId: pending.nodeId, pool: pending.pool, by: pending.cancelledBy });
          continue;
        }
        await appendPendingOutcome(store, config, pending, now, 'failure', `drain of ${pending.nodeId} not begun: ${next.reason}`);
        log.warn('pending drain given up', { nodeId: pending.nodeId, pool: pending.pool, reason: next.reason });
        continue;
      }
      const claim = await store.getScaleUp(replacement);
      const slotNodes = await Promise.all((claim?.slots ?? []).map((slot) => store.getNode(slot.nodeId)));
      const next = pendingDrainStep(pending, claim, slotNodes, now, config.scaleUp.maxNodeProvisionTime + config.leaseTtl);
      if (next.step === 'wait') {
        remaining.push(pending);
        continue;
      }
      if (next.step === 'start') {
        // Sent under an id of its own: a repeat is one drain (FIFO dedup, the gear mover's drainId).
        const renewal = isRenewalRequest(pending.by);
        const asked = renewal ? pending.by : `nodescaler drain --replace by ${pending.by}`;
        const reason = `manual drain (${asked}): ${pending.reason}; ${next.reason}`.slice(0, 1024);
        const message: ScaleDownMessage = { type: 'scale-down', v: 1, decisionId, pool: pending.pool, nodeId: pending.nodeId, reason, decidedAt: now.toISOString() };
        const sent = await queue.send('drain', [{ body: message, groupId: pending.pool, deduplicationId: decisionId }]);
        if (sent.failed.length > 0) {
          remaining.push(pending); // sent again by the next evaluation
          continue;
        }
        // Kept, marked sent, until the gear mover has begun the drain; exactly one invocation logs the start.
        const marked = await store.markPendingDrainSent(pending.nodeId, now.toISOString());
        if (marked === 'gone') continue;
        remaining.push({ ...pending, sentAt: now.toISOString() });
        if (marked === 'already') continue;
        await appendPendingOutcome(store, config, pending, now, 'scale-down', `drain of ${pending.nodeId} started: ${next.reason}`);
        log.info('pending drain started', { nodeId: pending.nodeId, pool: pending.pool, reason: next.reason });
        continue;
      }
      if (!(await store.deletePendingDrain(pending.nodeId))) continue;
      await appendPendingOutcome(store, config, pending, now, 'failure', `drain of ${pending.nodeId} not started: ${next.reason}`);
      log.info('pending drain given up', { nodeId: pending.nodeId, pool: pending.pool, reason: next.reason });
    } catch (error) {
      remaining.push(pending);
      log.error('pending drain not advanced; tried again on the next evaluation', { nodeId: pending.nodeId, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return remaining;
}

async function appendPendingOutcome(store: StateStore, config: Config, pending: PendingDrain, now: Date, kind: 'scale-down' | 'failure', reason: string): Promise<void> {
  await store.appendDecision(
    {
      pool: pending.pool,
      at: now.toISOString(),
      kind,
      reason,
      decisionId: pending.replacementDecisionId ?? pending.decisionId,
      by: pending.by,
      details: { nodeId: pending.nodeId, ...(pending.replacementDecisionId ? { replacementDecisionId: pending.replacementDecisionId } : { drainDecisionId: pending.decisionId }), requestedAt: pending.at },
    },
    config.decisionLogTtl,
  );
}

/**
 * The evaluator's renewal of drifted and expired nodes (lib/domain/renewal.ts): their drains, pending until the replacements
 * join, recorded before the replacements' scale-up is sent. When one of the nodes waits for a replacement already,
 * none is recorded (those recorded here are removed again) and the scale-up is not sent: `refused` says why.
 */
export async function recordRenewalDrains(
  store: StateStore,
  nodeIds: readonly string[],
  pending: Omit<PendingDrain, 'by' | 'nodeId'>,
): Promise<{ recorded: string[]; refused?: string }> {
  const recorded: string[] = [];
  for (const nodeId of nodeIds) {
    try {
      await store.createPendingDrain({ ...pending, nodeId, by: RENEWAL_BY });
      recorded.push(nodeId);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      for (const done of recorded) await store.deletePendingDrain(done);
      return { recorded: [], refused: `${nodeId} already waits for a replacement` };
    }
  }
  return { recorded };
}
