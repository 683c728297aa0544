/** Finding and creating drain records: by pool, by node; drains for nodes left draining without one. */
import { drainOrder, redrainIdFor } from '../../domain/drain.js';
import type { DrainRecord, NodeRecord } from '../../domain/model.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import { poolIdsOf, type DrainContext, type RecordContext } from './context.js';

export interface StartOutcome {
  drainId: string;
  /** False when the drain existed already (a duplicate message or event), or the decision was refused. */
  created: boolean;
  /** Why a scale-down decision was not carried out: it no longer holds the pool's lease. */
  refused?: string;
}

export async function createDrain(ctx: RecordContext, drain: Omit<DrainRecord, 'version' | 'state' | 'updatedAt'>): Promise<StartOutcome> {
  const { store, clock, log } = ctx.ports;
  try {
    await store.createDrain({ ...drain, phase: 'starting' }, clock.now());
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    ctx.known.add(drain.drainId);
    return { drainId: drain.drainId, created: false };
  }
  ctx.known.add(drain.drainId);
  log.info('drain created', { drainId: drain.drainId, decisionId: drain.decisionId, nodeId: drain.nodeId, pool: drain.pool, kind: drain.kind, reason: drain.reason });
  return { drainId: drain.drainId, created: true };
}

/** A draining node without an active drain (handed back `drained -> draining`, or left by a lost race) gets one. */
export async function takeUpOrphans(ctx: DrainContext): Promise<void> {
  const { store, clock, log } = ctx.ports;
  for (const pool of await poolIdsOf(ctx)) {
    for (const node of await store.listNodes(pool)) {
      if (node.state !== 'draining') continue;
      const current = node.drainId ? await store.getDrain(node.drainId) : undefined;
      if (current?.state === 'active') {
        ctx.known.add(current.drainId);
        continue;
      }
      const drainId = redrainIdFor(node);
      const outcome = await createDrain(ctx, {
        drainId,
        decisionId: current?.decisionId ?? drainId,
        nodeId: node.nodeId,
        pool: node.pool,
        startedAt: clock.now().toISOString(),
        reason: current ? `node handed back after ${current.drainId} (${current.state}); draining it again` : 'node is draining without a drain; draining it again',
        moves: [],
        kind: 'redrain',
      });
      await claimNode(ctx, node, outcome.drainId);
      log.warn('draining node without an active drain taken up again', { nodeId: node.nodeId, drainId, previous: current?.drainId });
    }
  }
}

/** Points a draining node at `drainId`; a lost race is fine (the owner of the node decides, and the loser aborts). */
export async function claimNode(ctx: DrainContext, node: NodeRecord, drainId: string): Promise<void> {
  if (node.drainId === drainId) return;
  try {
    await ctx.ports.store.updateNode(node.nodeId, node.version, { drainId });
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
  }
}

export async function activeDrains(ctx: DrainContext): Promise<DrainRecord[]> {
  const { store } = ctx.ports;
  const found = new Map<string, DrainRecord>();
  for (const pool of await poolIdsOf(ctx)) for (const drain of await store.listDrains(pool, 'active')) found.set(drain.drainId, drain);
  for (const drainId of ctx.known) {
    if (found.has(drainId)) continue;
    const drain = await store.getDrain(drainId);
    if (drain?.state === 'active') found.set(drainId, drain);
    else ctx.known.delete(drainId);
  }
  return [...found.values()].sort(drainOrder);
}

export async function activeDrainOf(ctx: RecordContext, nodeId: string): Promise<DrainRecord | undefined> {
  const node = await ctx.ports.store.getNode(nodeId);
  if (!node) throw new NotFoundError('node', nodeId);
  if (node.drainId) {
    const drain = await ctx.ports.store.getDrain(node.drainId);
    if (drain?.state === 'active') return drain;
  }
  return (await ctx.ports.store.listDrains(node.pool)).find((drain) => drain.nodeId === nodeId);
}
