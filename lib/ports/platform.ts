import type { GearInfo } from '../domain/model.js';

export interface MoveHandle {
  /** Platform command id, stored with the move so a later step can read its result. */
  commandId: string;
}

export type MoveStatus = { state: 'running' } | { state: 'succeeded' } | { state: 'failed'; error: string };

/**
 * The PaaS side: districts, nodes and gears (the OpenShift broker). Gears on
 * a node are read from here, never from reported stats, before any decision
 * that could lose one. Errors: `NotFoundError` (unknown node or gear),
 * `TransientError` (broker unreachable), `ConflictError` (target full).
 */
export interface Platform {
  /** Authoritative list of gears on a node. */
  listGears(nodeId: string): Promise<GearInfo[]>;
  /** Closes a node to new gears in its district (`oo-admin-ctl-district -c deactivate-node`). */
  deactivateNode(district: string, nodeId: string): Promise<void>;
  /** Re-opens a node to new gears (`activate-node`). */
  activateNode(district: string, nodeId: string): Promise<void>;
  /** Adds a node to its district (`add-node`); idempotent. */
  addNode(district: string, nodeId: string): Promise<void>;
  /** Removes an empty node from its district (`remove-node`); idempotent. */
  removeNode(district: string, nodeId: string): Promise<void>;
  /** Starts moving a gear to another node of the same district (`oo-admin-move`). */
  startMove(gear: GearInfo, fromNode: string, toNode: string): Promise<MoveHandle>;
  /** Result of a move started earlier. */
  moveStatus(handle: MoveHandle): Promise<MoveStatus>;
}
