/**
 * The pool lease as an outbox: a decision (the evaluator's, or a drain's
 * replacement request) is stored on the pool's lease in the same
 * conditional write that takes the lease, and only then sent. A crash or a
 * queue error between the two leaves the message on the lease, unsent; the
 * evaluator sends it again (`sendLeased`), and both consumers act once per
 * decisionId, so a copy sent twice does no harm.
 */
import type { Config } from '../config/index.js';
import { drainIdFor } from '../domain/drain.js';
import type { PoolId, PoolRecord } from '../domain/model.js';
import type { Message } from '../messages/index.js';
import type { Log } from '../ports/log.js';
import type { Metrics } from '../ports/metrics.js';
import type { Queue } from '../ports/queue.js';
import type { StateStore } from '../ports/state-store.js';

export interface OutboxPorts {
  store: StateStore;
  queue: Queue;
  log: Log;
}

type Decision = Extract<Message, { type: 'scale-up' | 'scale-down' }>;

/**
 * Takes `pool`'s lease for `message` (throws `ConflictError`, with the pool
 * as stored, when another decision holds it), then sends it. The pool as
 * marked sent, or as leased when the queue did not take the message.
 */
export async function leaseAndSend(ports: OutboxPorts, pool: PoolId, message: Decision, ttlMs: number, now: Date): Promise<{ pool: PoolRecord; sent: boolean }> {
  const leased = await ports.store.acquireLease(pool, { holder: message.decisionId, kind: message.type, ttlMs, message: { ...message } }, now);
  const sent = await sendLeased(ports, leased, now);
  return { pool: sent ?? leased, sent: sent !== undefined };
}

/** Sends the message stored on the pool's lease; the pool as marked sent, or undefined when the queue did not take it. */
export async function sendLeased(ports: OutboxPorts, pool: PoolRecord, now: Date): Promise<PoolRecord | undefined> {
  const lease = pool.lease!;
  // Stored from a validated decision message by leaseAndSend; the queue adapter validates it again.
  const body = lease.message as unknown as Message;
  const result = await ports.queue.send(lease.kind === 'scale-up' ? 'scale' : 'drain', [{ body, groupId: pool.pool, deduplicationId: lease.holder }]);
  if (result.failed.length > 0) {
    ports.log.error('decision message not accepted by its queue; it stays with the lease and is sent again', {
      pool: pool.pool,
      decisionId: lease.holder,
      error: result.failed[0]!.error,
    });
    return undefined;
  }
  return ports.store.markLeaseSent(pool.pool, lease.holder, now);
}

/** A decision whose lease was taken but whose message may not have left (crash, queue error) is sent again, unchanged. */
export async function resendUnsentDecision(ports: OutboxPorts, pool: PoolRecord, now: Date): Promise<PoolRecord> {
  const lease = pool.lease;
  if (!lease?.message || lease.sentAt || lease.expiresAt <= now.toISOString()) return pool;
  ports.log.warn('re-sending a decision that was not confirmed sent', { pool: pool.pool, decisionId: lease.holder });
  return (await sendLeased(ports, pool, now)) ?? pool;
}

/**
 * A decision sent leaseResendAfter ago that no consumer has taken up (no
 * scale-up claim, no drain for it: its message was dead-lettered after
 * failing, or lost with a queue) would hold the pool until its lease
 * expires, and a pool below min stays there that long. It is sent again,
 * the same message: both consumers act once per decisionId, so a copy still
 * queued does no harm.
 */
export async function resendStalledDecision(
  ports: OutboxPorts & { metrics: Metrics },
  config: Pick<Config, 'leaseResendAfter'>,
  pool: PoolRecord,
  now: Date,
): Promise<PoolRecord> {
  const lease = pool.lease;
  if (!lease?.message || !lease.sentAt || lease.expiresAt <= now.toISOString()) return pool;
  if (now.getTime() - Date.parse(lease.sentAt) < config.leaseResendAfter) return pool;
  const { store, log, metrics } = ports;
  const takenUp = lease.kind === 'scale-up' ? await store.getScaleUp(lease.holder) : await store.getDrain(drainIdFor(lease.holder));
  if (takenUp) return pool;
  log.warn('re-sending a decision no consumer has taken up', { pool: pool.pool, decisionId: lease.holder, kind: lease.kind, sentAt: lease.sentAt });
  metrics.record('DecisionsResent', 1, 'Count', { pool: pool.pool });
  return (await sendLeased(ports, pool, now)) ?? pool;
}
