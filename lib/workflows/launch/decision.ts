/**
 * A scale-up decision's records: the claim of its node names (allocated
 * from the name counter, recorded once, re-checked against pool.max and
 * the global limits under the capacity record: claim.ts), one
 * `provisioning` node per name before any cloud call,
 * and its end: capacity exhaustion (nodes failed, pool backoff, operator
 * notice), the lease released and the decision logged.
 */
import type { PoolConfig } from '../../config/index.js';
import { effectiveConfig, pausedReason } from '../../domain/controls.js';
import { decisionMaxAgeMs, staleDecisionReason } from '../../domain/decision-message.js';
import { RELEASE_KIND_STEP } from '../../domain/decommission.js';
import type { NodeRecord, PoolId, PoolLease, ScaleUpRecord } from '../../domain/model.js';
import { isProtected } from '../../domain/node-stats.js';
import { PROVISION_STEPS, exhaustionPatch, pruneUnavailable } from '../../domain/provisioning.js';
import { ConflictError } from '../../errors.js';
import type { ScaleUpMessage } from '../../messages/index.js';
import type { PoolPatch } from '../../ports/state-store.js';
import { describeError, patchPool, releaseLease } from '../../app/steps.js';
import { claimStillValid, type CapacityReservation } from '../../domain/capacity-claims.js';
import { reserveRoom } from './claim.js';
import { summarize, type LaunchContext } from './context.js';

export type DecisionKind = 'provisioned' | 'partial' | 'exhausted' | 'refused';

/**
 * The decision's claim, recorded once: its room and names come from its
 * reservation on the capacity record (lib/workflows/launch/claim.ts), or a
 * refusal (superseded, stale, paused, no room) that reserves nothing.
 */
export async function claimNames(ctx: LaunchContext, message: ScaleUpMessage, poolConfig: PoolConfig): Promise<{ claim: ScaleUpRecord; created: boolean }> {
  const { store, clock, log, metrics } = ctx.ports;
  const existing = await store.getScaleUp(message.decisionId);
  if (existing) return { claim: existing, created: false };

  const now = clock.now();
  // Read before the nodes (reserveRoom): the claims that have left it show in the pool lists.
  const capacity = await store.getCapacity();
  // Reserved, then a crash before the claim record: the reservation is the claim (its names, its room).
  const reserved = capacity.reservations[message.decisionId];
  let room: CapacityReservation;
  if (reserved) room = reserved;
  else {
    // A decision that arrives after its lease expired and another action took the pool is superseded:
    // the evaluator decided again for the same need, and carrying out both would double it.
    const superseded = await supersededBy(ctx, message);
    // Too old to act on (re-driven from a dead-letter queue days later): refused before its first effect.
    const stale = superseded ? undefined : staleDecisionReason(message, now, decisionMaxAgeMs(ctx.config));
    if (stale !== undefined) metrics.record('StaleDecisions', 1, 'Count', { pool: message.pool });
    // An operator's pause refuses a decision before its first effect (the claim); one already claimed goes on.
    // The room is the pool's max as the evaluator saw it: with the runtime overrides applied.
    const controls = await store.listControls();
    const paused = pausedReason(controls.pauses, message.pool, 'scale-up', now);
    const refusal = superseded ? `superseded: the pool's lease is held by ${superseded.kind} ${superseded.holder}` : stale ?? paused;
    room =
      refusal !== undefined
        ? { pool: message.pool, slots: [], at: now.toISOString(), reason: refusal }
        : await reserveRoom(ctx, message, effectiveConfig(ctx.config, poolConfig, controls, message.pool, now).poolConfig, capacity, now);
  }
  const slots = room.slots;
  const claim: ScaleUpRecord = {
    decisionId: message.decisionId,
    pool: message.pool,
    requested: message.count,
    slots,
    createdAt: room.at,
    ...(room.reason === undefined ? {} : { reason: room.reason }),
  };
  const result = await store.claimScaleUp(claim, ctx.config.decisionLogTtl);
  if (result.created) {
    metrics.record('ScaleUps', 1, 'Count', { pool: message.pool });
    log.info('scale-up claimed its node names', {
      pool: message.pool,
      decisionId: message.decisionId,
      requested: message.count,
      nodes: slots.map((slot) => slot.nodeId),
      ...(room.reason === undefined ? {} : { limitedBy: room.reason }),
    });
  } else {
    log.warn('scale-up claimed concurrently by another delivery; using its names', { pool: message.pool, decisionId: message.decisionId });
  }
  return { claim: result.record, created: result.created };
}

/** The pool's unexpired lease, when another decision holds it: this one is superseded. */
export async function supersededBy(ctx: LaunchContext, message: ScaleUpMessage): Promise<PoolLease | undefined> {
  const lease = (await ctx.ports.store.getPool(message.pool))?.lease;
  const now = ctx.ports.clock.now().toISOString();
  return lease !== undefined && lease.holder !== message.decisionId && lease.expiresAt > now ? lease : undefined;
}

export async function ensureNodes(ctx: LaunchContext, message: ScaleUpMessage, poolConfig: PoolConfig, claim: ScaleUpRecord): Promise<NodeRecord[]> {
  const { store, clock, log } = ctx.ports;
  const nodes: NodeRecord[] = [];
  let superseded: PoolLease | undefined | null = null;
  for (const slot of claim.slots) {
    const existing = await store.getNode(slot.nodeId);
    if (existing) {
      if (existing.decisionId !== message.decisionId) {
        log.error('a node of this name exists already and is not this decision\'s; its slot is skipped', {
          nodeId: slot.nodeId,
          decisionId: message.decisionId,
          holder: existing.decisionId ?? existing.origin,
        });
      }
      nodes.push(existing);
      continue;
    }
    // A claim resumed after its lease ran out and another decision took the pool (a crash between the
    // claim and the node records, a redelivery much later) creates no more nodes: the evaluator decided
    // again for the same need, and both would exceed it and the limits.
    if (superseded === null) superseded = await supersededBy(ctx, message);
    if (superseded !== undefined) {
      log.warn('scale-up resumed after another decision took the pool; its remaining slot is dropped', { nodeId: slot.nodeId, decisionId: message.decisionId, holder: superseded.holder });
      continue;
    }
    const now = clock.now();
    // A claim resumed after its validity creates no more nodes: the room it reserved is given back to other
    // claims once that time (and an invocation's) has passed (lib/domain/capacity-claims.ts).
    if (!claimStillValid(claim, now, decisionMaxAgeMs(ctx.config))) {
      log.warn('scale-up resumed after its claim expired; its remaining slot is dropped', { nodeId: slot.nodeId, decisionId: message.decisionId, claimedAt: claim.createdAt });
      continue;
    }
    try {
      nodes.push(
        await store.createNode(
          {
            nodeId: slot.nodeId,
            pool: message.pool,
            district: poolConfig.district,
            profile: poolConfig.profile,
            state: 'provisioning',
            createdAt: now.toISOString(),
            origin: 'provisioned',
            protected: isProtected({ nodeId: slot.nodeId, protected: false }, poolConfig.protectedNodes),
            cloudName: slot.cloudName,
            decisionId: message.decisionId,
            reason: `provisioning for ${message.decisionId}: ${message.reason}`,
            steps: {},
            launchPhase: 'requesting',
          },
          now,
        ),
      );
    } catch (error) {
      if (!(error instanceof ConflictError) || !error.current) throw error;
      nodes.push(error.current as NodeRecord);
    }
  }
  return nodes;
}

export async function failForCapacity(ctx: LaunchContext, node: NodeRecord, tried: readonly string[]): Promise<NodeRecord> {
  const now = ctx.ports.clock.now();
  try {
    return await ctx.ports.store.transitionNode(
      node.nodeId,
      {
        from: 'provisioning',
        to: 'failed',
        patch: {
          reason: `capacity exhausted: no offering could launch a host (${tried.join('; ') || 'no offering configured'})`,
          steps: { ...node.steps, [PROVISION_STEPS.capacityExhausted]: now.toISOString(), [RELEASE_KIND_STEP]: 'failed' },
        },
      },
      now,
    );
  } catch (error) {
    if (!(error instanceof ConflictError) || !error.current) throw error;
    return error.current as NodeRecord;
  }
}

export async function markExhausted(ctx: LaunchContext, message: ScaleUpMessage, poolConfig: PoolConfig, tried: readonly string[]): Promise<void> {
  const { store, clock, log, metrics, notifier } = ctx.ports;
  const now = clock.now();
  const pool = await patchPool(store, message.pool, (current) =>
    exhaustionPatch(current, now, { initial: ctx.config.scaleUp.exhaustedBackoff, max: ctx.config.scaleUp.exhaustedBackoffMax }),
  );
  metrics.record('CapacityExhausted', 1, 'Count', { pool: message.pool });
  const backoff = Math.round((pool.exhaustedBackoffMs ?? 0) / 60_000);
  const line = `capacity exhausted in pool ${message.pool}: every offering failed; no scale-up until ${pool.exhaustedUntil} (backoff ${backoff}m)`;
  log.error(line, { pool: message.pool, decisionId: message.decisionId, tried, exhaustedUntil: pool.exhaustedUntil, backoffMs: pool.exhaustedBackoffMs });
  if (notifier) {
    const types = poolConfig.template.instanceTypes.map((type) => type.name).join(', ') || 'the template default';
    try {
      await notifier.notify({
        subject: `nodescaler: capacity exhausted in ${message.pool}`.slice(0, 100),
        pool: message.pool,
        dedupKey: `exhausted:${message.decisionId}`,
        message: [
          `Pool ${message.pool} needs ${message.count === 1 ? '1 more node' : `${message.count} more nodes`} and the cloud has no capacity for any of its offerings.`,
          `Why the nodes are needed: ${message.reason}`,
          `Instance types tried: ${types}.`,
          `Attempts: ${tried.join('; ')}.`,
          `nodescaler will not scale this pool up again before ${pool.exhaustedUntil}.`,
          'To help: raise the EC2 quota (vCPU / instance limits), add instance types or subnets to the pool template, or add hosts by hand.',
        ].join('\n'),
      });
    } catch (error) {
      log.warn('operator notice about capacity exhaustion not sent', { pool: message.pool, error: describeError(error) });
    }
  }
}

/** A launch worked: the exhaustion backoff starts over, and offerings no longer remembered are dropped. */
export async function clearExhaustion(ctx: LaunchContext, poolId: PoolId): Promise<void> {
  const now = ctx.ports.clock.now();
  await patchPool(ctx.ports.store, poolId, (pool) => {
    const patch: PoolPatch = {};
    if (pool.exhaustedBackoffMs !== undefined || pool.exhaustedUntil !== undefined) Object.assign(patch, { exhaustedBackoffMs: undefined, exhaustedUntil: undefined });
    const kept = pruneUnavailable(pool.unavailableOfferings, now);
    if (Object.keys(kept).length !== Object.keys(pool.unavailableOfferings ?? {}).length) patch.unavailableOfferings = kept;
    return Object.keys(patch).length === 0 ? undefined : patch;
  });
}

export async function finishDecision(ctx: LaunchContext, message: ScaleUpMessage, kind: DecisionKind, reason: string, nodes: readonly NodeRecord[], log: boolean): Promise<void> {
  const { store, clock } = ctx.ports;
  await releaseLease(store, message.pool, message.decisionId);
  if (!log) return;
  await store.appendDecision(
    {
      pool: message.pool,
      at: clock.now().toISOString(),
      kind: kind === 'provisioned' ? 'scale-up' : kind === 'refused' ? 'refused' : 'failure',
      reason,
      decisionId: message.decisionId,
      details: { requested: message.count, handler: ctx.config.handler, nodes: nodes.map(summarize) },
    },
    ctx.config.decisionLogTtl,
  );
}

export function outcomeReason(ctx: LaunchContext, message: ScaleUpMessage, claim: ScaleUpRecord, nodes: readonly NodeRecord[], kind: DecisionKind, exhausted?: readonly string[]): string {
  const requested = nodes.filter((node) => node.steps?.[PROVISION_STEPS.hostRequested] !== undefined).length;
  const limited = claim.reason ? `; ${claim.reason}` : '';
  const base = `scale-up ${message.decisionId}: ${requested} of ${message.count} hosts requested through handler ${ctx.config.handler}${limited}`;
  return kind === 'provisioned' ? base : `${base}; capacity exhausted (${(exhausted ?? []).join('; ') || 'see earlier attempt'})`;
}
