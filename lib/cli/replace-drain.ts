/**
 * `drain NODE --replace`: a replacement node first, through the pool lease
 * as the evaluator's own scale-ups (so nothing else scales the pool
 * meanwhile), and a pending drain the evaluator starts once that node has
 * joined (lib/app/replace-drain.ts).
 */
import type { Config } from '../config/index.js';
import type { PendingDrain } from '../domain/controls.js';
import { decisionIdFor } from '../domain/decision-message.js';
import type { NodeRecord, PoolRecord } from '../domain/model.js';
import { ConflictError } from '../errors.js';
import type { ScaleUpMessage } from '../messages/index.js';
import type { Clock } from '../ports/clock.js';
import { refused } from './exit.js';
import { alreadyPending } from './nodes.js';
import type { ReplaceView } from './safe-drain.js';
import type { OpenTarget } from './target.js';

export async function requestReplacementDrain(
  target: OpenTarget,
  config: Config,
  clock: Clock,
  node: NodeRecord,
  reason: string,
  by: string,
): Promise<Omit<ReplaceView, 'fit'>> {
  const { store, queue } = target;
  const now = clock.now();
  const decisionId = decisionIdFor('scale-up', node.pool, now);
  const message: ScaleUpMessage = {
    type: 'scale-up',
    v: 1,
    decisionId,
    pool: node.pool,
    count: 1,
    reason: `replacement for the drain of ${node.nodeId} (nodescaler drain --replace by ${by}): ${reason}`.slice(0, 1024),
    decidedAt: now.toISOString(),
  };
  try {
    const pool = await store.acquireLease(node.pool, { holder: decisionId, kind: 'scale-up', ttlMs: config.leaseTtl, message: { ...message } }, now);
    // As for the evaluator's scale-ups: delayAfterAdd keeps the new, empty node from being the next scale-down.
    await store.updatePool(node.pool, pool.version, { lastScaleUpAt: now.toISOString() });
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    const lease = (error.current as PoolRecord | undefined)?.lease;
    throw refused(`pool ${node.pool} has an action in flight (${lease?.kind ?? 'an action'} ${lease?.holder ?? ''}): no replacement requested, nothing changed`, 'run the command again when it is done (nodescaler status shows it)');
  }
  const pending: PendingDrain = { nodeId: node.nodeId, pool: node.pool, replacementDecisionId: decisionId, reason, by, at: now.toISOString() };
  try {
    await store.createPendingDrain(pending);
  } catch (error) {
    await store.releaseLease(node.pool, decisionId);
    if (!(error instanceof ConflictError)) throw error;
    throw alreadyPending((error.current as PendingDrain | undefined) ?? pending, config);
  }
  // A message the queue does not take stays with the lease: the evaluator sends it again on its next evaluation.
  const result = await queue.send('scale', [{ body: message, groupId: node.pool, deduplicationId: decisionId }]);
  if (result.failed.length === 0) await store.markLeaseSent(node.pool, decisionId, now);
  return { action: 'drain --replace', nodeId: node.nodeId, pool: node.pool, replacementDecisionId: decisionId, reason };
}
