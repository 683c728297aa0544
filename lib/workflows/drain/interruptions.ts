/**
 * EC2 interruptions: a stop, spot interruption or rebalance drains the node
 * at once (urgent: first in line, targets filled to capacity) and may ask
 * for a replacement; a termination by someone else marks the node lost.
 */
import { describeGears, isUrgent, replacementCount, replacementDecisionId, urgentDrainIdFor } from '../../domain/drain.js';
import type { DrainRecord, GearInfo, NodeRecord, PoolRecord } from '../../domain/model.js';
import { expectedGearsPerNode } from '../../domain/utilization.js';
import { ConflictError, TransientError } from '../../errors.js';
import type { Ec2Event, ScaleUpMessage } from '../../messages/index.js';
import { leaseAndSend } from '../../app/outbox.js';
import { appendDecision, describe, poolConfigOf, poolIdsOf, save, touchPool, type DrainContext } from './context.js';
import { requestAbort } from './ending.js';
import { claimNode, createDrain } from './records.js';

export interface EventOutcome {
  instanceId: string;
  nodeId?: string;
  action: 'ignored' | 'drain' | 'escalated' | 'lost';
  reason: string;
  drainId?: string;
}

/** An EC2 event from EventBridge: interruption and stop drain at once; termination by someone else marks the node lost. */
export async function handleEvent(ctx: DrainContext, event: Ec2Event): Promise<EventOutcome> {
  const { log, store } = ctx.ports;
  // One lookup: EventBridge delivers every interruption in the account, most for hosts nodescaler does not own.
  const node = await store.findNodeByInstance(event.instanceId);
  const base = { instanceId: event.instanceId };
  if (!node) {
    log.info('EC2 event for an instance nodescaler does not know; ignored', { ...base, eventId: event.eventId, type: event.type });
    return { ...base, action: 'ignored', reason: 'unknown instance' };
  }
  const at = { ...base, nodeId: node.nodeId };
  if (event.type === 'ec2-state-change') {
    if (event.state === 'shutting-down' || event.state === 'terminated') return { ...at, ...(await markLost(ctx, node, event)) };
    if (event.state === 'stopping' || event.state === 'stopped') return { ...at, ...(await urgentDrain(ctx, node, event, `instance ${event.state}`)) };
    return { ...at, action: 'ignored', reason: `instance ${event.state}: nothing to do` };
  }
  const cause = event.type === 'ec2-spot-interruption' ? `spot interruption warning (${event.action})` : 'rebalance recommendation';
  return { ...at, ...(await urgentDrain(ctx, node, event, cause)) };
}

export async function urgentDrain(ctx: DrainContext, node: NodeRecord, event: Ec2Event, cause: string): Promise<Omit<EventOutcome, 'instanceId' | 'nodeId'>> {
  const { store, clock, log } = ctx.ports;
  const now = clock.now().toISOString();
  if (node.state === 'active') {
    const outcome = await createDrain(ctx, urgentDrainFor(node, event, cause, now));
    log.warn('node interrupted: draining at once', { nodeId: node.nodeId, instanceId: event.instanceId, cause, drainId: outcome.drainId });
    await keepPoolMinimum(ctx, outcome.drainId, node);
    return { action: 'drain', reason: cause, drainId: outcome.drainId };
  }
  if (node.state === 'draining') {
    const current = node.drainId ? await store.getDrain(node.drainId) : undefined;
    if (current?.state === 'active') {
      if (!isUrgent(current) || current.abortRequestedAt) {
        // Escalate: first in line, fill targets to capacity; an abort in progress is called off (the host is going away).
        await save(ctx, current, { urgentSince: current.urgentSince ?? now, urgentCause: cause, abortRequestedAt: undefined, abortReason: undefined });
        log.warn('draining node interrupted: its drain is now urgent', { nodeId: node.nodeId, drainId: current.drainId, cause });
      }
      ctx.known.add(current.drainId);
      return { action: 'escalated', reason: cause, drainId: current.drainId };
    }
    const outcome = await createDrain(ctx, urgentDrainFor(node, event, cause, now));
    await claimNode(ctx, node, outcome.drainId);
    return { action: 'drain', reason: cause, drainId: outcome.drainId };
  }
  log.info('EC2 interruption for a node that holds nothing to move; ignored', { nodeId: node.nodeId, state: node.state, cause });
  return { action: 'ignored', reason: `node is ${node.state}` };
}

export async function markLost(ctx: DrainContext, node: NodeRecord, event: Ec2Event): Promise<Omit<EventOutcome, 'instanceId' | 'nodeId'>> {
  const { store, platform, clock, log, metrics } = ctx.ports;
  if (node.state !== 'active' && node.state !== 'draining' && node.state !== 'drained') {
    return { action: 'ignored', reason: `node is ${node.state} (nodescaler's own termination, or already lost)` };
  }
  let gears: GearInfo[] = [];
  let source = 'platform';
  try {
    gears = await platform.listGears(node.nodeId);
  } catch (error) {
    gears = node.stats?.gears ?? [];
    source = `last stats (platform: ${describe(error)})`;
  }
  const reason = `instance ${(event as { instanceId: string }).instanceId} ${event.type === 'ec2-state-change' ? event.state : event.type} outside nodescaler`;
  const now = clock.now();
  try {
    await store.transitionNode(node.nodeId, { from: node.state, to: 'lost', expectedVersion: node.version, patch: { reason: `lost: ${reason}; ${gears.length} gear(s) on it` } }, now);
  } catch (error) {
    if (error instanceof ConflictError) throw new TransientError(`node ${node.nodeId} changed while being marked lost; retried`);
    throw error;
  }
  metrics.record('NodesLost', 1, 'Count', { pool: node.pool });
  if (gears.length > 0) metrics.record('GearsLost', gears.length, 'Count', { pool: node.pool });
  log.error('node lost with its gears', {
    nodeId: node.nodeId,
    pool: node.pool,
    reason,
    gearsSource: source,
    gearCount: gears.length,
    gears: gears.slice(0, 200).map((gear) => ({ uuid: gear.uuid, app: gear.app })),
  });
  await appendDecision(ctx, node.pool, 'failure', `node ${node.nodeId} lost: ${reason}; gears lost: ${gears.length ? describeGears(gears) : 'none'}`, undefined, {
    gears: gears.slice(0, 100).map((gear) => gear.uuid),
  });
  if (node.drainId) {
    const drain = await store.getDrain(node.drainId);
    if (drain?.state === 'active') {
      ctx.known.add(drain.drainId);
      await requestAbort(ctx, drain, `node lost: ${reason}`);
    }
  }
  return { action: 'lost', reason, ...(node.drainId ? { drainId: node.drainId } : {}) };
}

/**
 * An interrupted node leaves even when it is empty, which the gears-driven
 * replacement would not cover: when the pool would drop below its `min`,
 * the replacement is requested now, before the node goes.
 */
export async function keepPoolMinimum(ctx: DrainContext, drainId: string, node: NodeRecord): Promise<void> {
  const poolConfig = poolConfigOf(ctx, node.pool);
  if (!poolConfig || poolConfig.min === 0 || !ctx.config.scaleDown.replaceInterrupted) return;
  const drain = await ctx.ports.store.getDrain(drainId);
  if (!drain || drain.state !== 'active' || drain.replacementDecisionId) return;
  const serving = (await ctx.ports.store.listNodes(node.pool)).filter(
    (other) => other.nodeId !== node.nodeId && (other.state === 'active' || other.state === 'provisioning'),
  ).length;
  if (serving < poolConfig.min) await requestReplacement(ctx, drain, node, 0);
}

/** Requests nodes for the gears an interrupted node cannot place (or to keep the pool's min), through the pool lease like the evaluator. */
export async function requestReplacement(ctx: DrainContext, drain: DrainRecord, node: NodeRecord, unplaced: number): Promise<DrainRecord> {
  const { store, clock, log, metrics } = ctx.ports;
  const poolConfig = poolConfigOf(ctx, drain.pool);
  if (!poolConfig) return drain;
  const now = clock.now();
  const pool = (await store.getPool(drain.pool)) ?? (await store.ensurePool(drain.pool));
  if (pool.exhaustedUntil !== undefined && pool.exhaustedUntil > now.toISOString()) {
    log.warn('no replacement for the interrupted node: pool capacity exhausted', { drainId: drain.drainId, pool: drain.pool, exhaustedUntil: pool.exhaustedUntil });
    return drain;
  }
  const nodes = await store.listNodes(drain.pool);
  const allNodes: NodeRecord[] = [];
  for (const id of await poolIdsOf(ctx)) allNodes.push(...(id === drain.pool ? nodes : await store.listNodes(id)));
  const sizing = replacementCount({
    unplaced,
    nodes,
    nodeId: node.nodeId,
    gearsPerNode: expectedGearsPerNode(poolConfig, nodes),
    config: ctx.config,
    poolConfig,
    allNodes,
  });
  if (sizing.count === 0) {
    log.warn('no replacement for the interrupted node', { drainId: drain.drainId, pool: drain.pool, wanted: sizing.wanted, clampedBy: sizing.clampedBy });
    return drain;
  }
  const decisionId = replacementDecisionId(drain.pool, node.nodeId, drain.drainId);
  const clamp = sizing.clampedBy ? `; clamped by ${sizing.clampedBy} (wanted ${sizing.wanted})` : '';
  const message: ScaleUpMessage = {
    type: 'scale-up',
    v: 1,
    decisionId,
    pool: drain.pool,
    count: sizing.count,
    reason: `replace interrupted node ${node.nodeId} (${drain.urgentCause ?? 'interruption'}): ${unplaced > 0 ? `${unplaced} gear(s) have no room` : `the pool would drop below min ${poolConfig.min}`}; +${sizing.count} node(s)${clamp}`.slice(0, 1024),
    decidedAt: now.toISOString(),
  };
  try {
    await leaseAndSend(ctx.ports, drain.pool, message, ctx.config.leaseTtl, now);
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    const holder = (error.current as PoolRecord | undefined)?.lease?.holder;
    log.warn('replacement left to the evaluator: the pool lease is held', { drainId: drain.drainId, pool: drain.pool, holder });
    return drain;
  }
  await touchPool(ctx, drain.pool, { lastScaleUpAt: now.toISOString() });
  metrics.record('Replacements', sizing.count, 'Count', { pool: drain.pool });
  await appendDecision(ctx, drain.pool, 'scale-up', message.reason, decisionId, { count: sizing.count, wanted: sizing.wanted, nodeId: node.nodeId });
  log.warn('replacement requested for the interrupted node', { drainId: drain.drainId, decisionId, count: sizing.count, pool: drain.pool });
  return save(ctx, drain, { replacementDecisionId: decisionId });
}


/** The drain an interruption starts: its id derives from the event, so a redelivered event finds it. */
export function urgentDrainFor(node: NodeRecord, event: Ec2Event, cause: string, now: string) {
  return {
    drainId: urgentDrainIdFor(event.eventId),
    decisionId: `event:${event.eventId}`,
    nodeId: node.nodeId,
    pool: node.pool,
    startedAt: now,
    reason: `${cause} for ${event.instanceId}`,
    moves: [],
    kind: 'interruption' as const,
    urgentSince: now,
    urgentCause: cause,
  };
}
