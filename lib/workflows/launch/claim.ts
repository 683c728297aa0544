/**
 * The room a scale-up claims under pool.max and the global limits
 * (maxNodesTotal, maxCores, maxMemoryGiB), serial across provisioner
 * invocations: the scale queue runs two pools' messages at once, and both
 * may read the same nodes and see room for the last node. The room is read
 * from the global capacity record (the claims whose nodes the pool lists do
 * not show yet) and then the nodes; the claim is written to that record
 * only if no other claim wrote it since (`putCapacity` on its version). A
 * lost race reads the room again, a bounded number of times
 * (lib/domain/capacity-claims.ts has the rules).
 */
import type { PoolConfig } from '../../config/index.js';
import { poolNaming } from '../../config/index.js';
import { reservedNodes, unlistedSlots, type CapacityRecord, type CapacityReservation } from '../../domain/capacity-claims.js';
import { decisionMaxAgeMs } from '../../domain/decision-message.js';
import type { ScaleUpRecord } from '../../domain/model.js';
import { nodeNames, scaleUpRoom } from '../../domain/provisioning.js';
import { resourceRooms } from '../../domain/scale-up-limits.js';
import { ConflictError } from '../../errors.js';
import type { ScaleUpMessage } from '../../messages/index.js';
import { MAX_WRITE_RACES } from '../../app/steps.js';
import { allNodes, type LaunchContext } from './context.js';

export interface Room {
  granted: number;
  reason?: string;
}

/**
 * What the limits leave for this decision now (the evaluator's clamp may be
 * minutes old), counting the nodes of claims not listed yet; `kept`: the
 * reservations a claim written on `capacity` keeps. The nodes are read after
 * `capacity`, so a claim that left the record before this read shows in them.
 */
async function roomFor(
  ctx: LaunchContext,
  message: ScaleUpMessage,
  poolConfig: PoolConfig,
  capacity: CapacityRecord,
  now: Date,
): Promise<Room & { kept: CapacityRecord['reservations'] }> {
  const listed = await allNodes(ctx);
  const unlisted = unlistedSlots(capacity, listed);
  const read = new Map(await Promise.all(unlisted.map(async (nodeId) => [nodeId, await ctx.ports.store.getNode(nodeId)] as const)));
  const reserved = reservedNodes({ capacity, listed, read, now, validityMs: decisionMaxAgeMs(ctx.config) });
  const nodes = [...listed, ...reserved.nodes];
  const room = scaleUpRoom({
    requested: message.count,
    pool: message.pool,
    poolMax: poolConfig.max,
    maxNodesTotal: ctx.config.limits.maxNodesTotal,
    allNodes: nodes,
    resourceRooms: resourceRooms(ctx.config, poolConfig, nodes),
  });
  return { ...room, kept: reserved.kept };
}

/**
 * Claims the room for `message` and names for it: written to the capacity
 * record (read as `capacity`) before the claim record, so a crash in between
 * resumes from the reservation. No room: nothing is written. `ConflictError`
 * (retryable) after MAX_WRITE_RACES lost races in a row.
 */
export async function reserveRoom(
  ctx: LaunchContext,
  message: ScaleUpMessage,
  poolConfig: PoolConfig,
  capacity: CapacityRecord,
  now: Date,
): Promise<CapacityReservation> {
  const { store, log } = ctx.ports;
  const naming = poolNaming(ctx.config, poolConfig);
  const at = now.toISOString();
  // Names taken in a lost race are used by the next attempt: the counter is not spent twice for one decision.
  const names: ScaleUpRecord['slots'] = [];
  let current = capacity;
  for (let race = 0; ; race++) {
    const mine = current.reservations[message.decisionId];
    if (mine) return mine;
    const room = await roomFor(ctx, message, poolConfig, current, now);
    if (room.granted === 0) return { pool: message.pool, slots: [], at, ...(room.reason === undefined ? {} : { reason: room.reason }) };
    while (names.length < room.granted) names.push(await freshNames(ctx, naming));
    const reservation: CapacityReservation = { pool: message.pool, slots: names.slice(0, room.granted), at, ...(room.reason === undefined ? {} : { reason: room.reason }) };
    try {
      await store.putCapacity({ ...room.kept, [message.decisionId]: reservation }, current.version);
      return reservation;
    } catch (error) {
      if (!(error instanceof ConflictError) || race >= MAX_WRITE_RACES) throw error;
      log.info('room claimed by another scale-up meanwhile; reading the room again', { pool: message.pool, decisionId: message.decisionId, race: race + 1 });
      current = (error.current as CapacityRecord | undefined) ?? (await store.getCapacity());
    }
  }
}

/**
 * The next counter number whose host name no node has yet: hosts added by
 * hand and adopted may already carry `<base>-<N>` names the counter never gave.
 */
async function freshNames(ctx: LaunchContext, naming: ReturnType<typeof poolNaming>): Promise<ScaleUpRecord['slots'][number]> {
  for (let attempt = 0; attempt < 1000; attempt++) {
    const names = nodeNames(naming, await ctx.ports.store.allocateNameNumber(naming.base));
    if (!(await ctx.ports.store.getNode(names.nodeId))) return names;
  }
  throw new ConflictError(`no free node name for base ${naming.base} after 1000 numbers`, undefined);
}
