/**
 * The pool lease as an outbox: a decision (the evaluator's, or a drain's
 * replacement request) is stored on the pool's lease in the same
 * conditional write that takes the lease, and only then sent. A crash or a
 * queue error between the two leaves the message on the lease, unsent; the
 * evaluator sends it again (`sendLeased`), and both consumers act once per
 * decisionId, so a copy sent twice does no harm.
 */
import type { PoolId, PoolRecord } from '../domain/model.js';
import type { Message } from '../messages/index.js';
import type { Log } from '../ports/log.js';
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
