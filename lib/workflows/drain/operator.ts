/**
 * An operator's drain actions (`nodescaler drain NODE`, `cancel-drain NODE`):
 * they only write drain records; the gear mover's next tick does the rest.
 * They need the state table, a clock and a log, nothing of the platform.
 */
import { drainIdFor } from '../../domain/drain.js';
import type { DrainRecord } from '../../domain/model.js';
import { NotFoundError } from '../../errors.js';
import { MANUAL_DECISION_PREFIX, type RecordContext } from './context.js';
import { requestAbort } from './ending.js';
import { activeDrainOf, createDrain, type StartOutcome } from './records.js';

export type OperatorPorts = RecordContext['ports'];

function contextOf(ports: OperatorPorts): RecordContext {
  return { ports, known: new Set() };
}

/** An operator's drain: the same drain as a scale-down, of kind `manual`, without a lease. */
export async function drainNode(ports: OperatorPorts, nodeId: string, reason: string, requestId: string): Promise<StartOutcome> {
  return startManualDrain(contextOf(ports), nodeId, reason, requestId);
}

export async function startManualDrain(ctx: RecordContext, nodeId: string, reason: string, requestId: string): Promise<StartOutcome> {
  const node = await ctx.ports.store.getNode(nodeId);
  if (!node) throw new NotFoundError('node', nodeId);
  const decisionId = `${MANUAL_DECISION_PREFIX}${requestId}`;
  return createDrain(ctx, {
    drainId: drainIdFor(decisionId),
    decisionId,
    nodeId,
    pool: node.pool,
    startedAt: ctx.ports.clock.now().toISOString(),
    reason,
    moves: [],
    kind: 'manual',
  });
}

/** Stops a node's active drain: moves in flight settle, then the node re-opens. Undefined when the node has no active drain. */
export async function cancelDrain(ports: OperatorPorts, nodeId: string, reason: string): Promise<DrainRecord | undefined> {
  return cancelNodeDrain(contextOf(ports), nodeId, reason);
}

export async function cancelNodeDrain(ctx: RecordContext, nodeId: string, reason: string): Promise<DrainRecord | undefined> {
  const drain = await activeDrainOf(ctx, nodeId);
  if (!drain) return undefined;
  return requestAbort(ctx, drain, `cancelled: ${reason}`, { cancelled: true });
}
