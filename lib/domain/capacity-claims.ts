/**
 * The global limits (maxNodesTotal, maxCores, maxMemoryGiB) across
 * concurrent claims. Two provisioner invocations (one per pool: the scale
 * queue runs two message groups at once) may read the same nodes and both
 * see room for the last node. So every claim of room is written to one
 * global capacity record, conditional on the version its room was read at:
 * of two claims that read the same room, one writes and the other reads
 * again. The record keeps each claim (a reservation) until the pool lists
 * show its nodes: a claim's nodes are created after it, and the pool lists
 * are eventually consistent (a GSI), so the listing alone would miss them.
 * Pure functions; lib/workflows/launch/claim.ts does the reads and writes.
 */
import { splitPoolId, type NodeRecord, type PoolId, type ScaleUpRecord } from './model.js';

/** One scale-up's claim of room, held on the capacity record until its nodes count by themselves. */
export interface CapacityReservation {
  pool: PoolId;
  /** The claimed node names, as the claim record will hold them (a claim resumed after a crash takes them from here). */
  slots: ScaleUpRecord['slots'];
  /** When the room was claimed: the claim's `createdAt`. */
  at: string;
  /** Why fewer nodes than requested were claimed. */
  reason?: string;
}

/** The global capacity record (one item): every claim of room writes it, conditional on `version`. */
export interface CapacityRecord {
  /** 0 when none is stored yet. */
  version: number;
  /** By decisionId. */
  reservations: Record<string, CapacityReservation>;
}

export const EMPTY_CAPACITY: CapacityRecord = { version: 0, reservations: {} };

/**
 * How long after its claim a reservation stays even when the pool lists
 * show all its nodes: the lists follow node writes within a second or so;
 * a minute is far beyond that, so no later claim reads a list that misses them.
 */
export const RESERVATION_SETTLE_MS = 60_000;

/**
 * How long past the claim's validity (`claimValidityMs`) a reservation
 * whose nodes were never all created still counts: longer than any
 * provisioner invocation runs (Lambda stops every function at 15 minutes),
 * so a node created by an invocation that checked the claim while it was
 * valid is in the table before its reservation goes.
 */
export const RESERVATION_INVOCATION_MARGIN_MS = 15 * 60_000;

/**
 * Whether a claimed slot's node may still be created (`ensureNodes`): a
 * claim resumed later than `validityMs` after it was made (a crash, a
 * message re-driven from a dead-letter queue) creates no more nodes, so the
 * room it reserved can be given back after `validityMs` + the margin.
 */
export function claimStillValid(claim: Pick<ScaleUpRecord, 'createdAt'>, now: Date, validityMs: number): boolean {
  return now.getTime() - Date.parse(claim.createdAt) <= validityMs;
}

/** The slots of reservations that the pool lists do not show: the caller reads each (strongly consistent) for `reservedNodes`. */
export function unlistedSlots(capacity: CapacityRecord, listed: readonly Pick<NodeRecord, 'nodeId'>[]): string[] {
  const seen = new Set(listed.map((node) => node.nodeId));
  const unlisted = new Set<string>();
  for (const reservation of Object.values(capacity.reservations)) {
    for (const slot of reservation.slots) if (!seen.has(slot.nodeId)) unlisted.add(slot.nodeId);
  }
  return [...unlisted].sort();
}

/**
 * What the reservations add to the listed nodes, and which reservations a
 * claim keeps when it writes the record.
 *
 * A reserved slot the lists show counts as listed (once). One they do not
 * show counts as its node when `read` has one (created, the lists have not
 * caught up; nothing when terminated), else as a `provisioning` node of its
 * pool while the claim may still create it (`validityMs` + the margin).
 * A reservation goes once every slot is listed or terminated and it is
 * older than RESERVATION_SETTLE_MS, or once nothing of it can count any more.
 */
export function reservedNodes(input: {
  capacity: CapacityRecord;
  listed: readonly Pick<NodeRecord, 'nodeId'>[];
  read: ReadonlyMap<string, NodeRecord | undefined>;
  now: Date;
  validityMs: number;
}): { nodes: NodeRecord[]; kept: Record<string, CapacityReservation> } {
  const seen = new Set(input.listed.map((node) => node.nodeId));
  const counted = new Map<string, NodeRecord>();
  const kept: Record<string, CapacityReservation> = {};
  const now = input.now.getTime();
  for (const [decisionId, reservation] of Object.entries(input.capacity.reservations)) {
    const age = now - Date.parse(reservation.at);
    const pending = !(age > input.validityMs + RESERVATION_INVOCATION_MARGIN_MS);
    let settled = age > RESERVATION_SETTLE_MS;
    for (const slot of reservation.slots) {
      if (seen.has(slot.nodeId)) continue;
      const node = input.read.get(slot.nodeId);
      if (node?.state === 'terminated') continue;
      if (node) counted.set(slot.nodeId, node);
      else if (pending) counted.set(slot.nodeId, placeholder(slot.nodeId, reservation, decisionId));
      settled = settled && !node && !pending;
    }
    if (!settled) kept[decisionId] = reservation;
  }
  return { nodes: [...counted.values()], kept };
}

/** A claimed node not created yet, as the limits count it: `provisioning` in its pool, of the pool's first instance type. */
function placeholder(nodeId: string, reservation: CapacityReservation, decisionId: string): NodeRecord {
  return {
    nodeId,
    pool: reservation.pool,
    ...splitPoolId(reservation.pool),
    state: 'provisioning',
    version: 0,
    createdAt: reservation.at,
    stateChangedAt: reservation.at,
    origin: 'provisioned',
    protected: false,
    decisionId,
  };
}
