import type { GearInfo } from '../domain/model.js';
import type { NodePlacement } from '../domain/placement.js';

export interface MoveHandle {
  /** Platform command id, stored with the move so a later step can read its result. */
  commandId: string;
}

/**
 * `targetFull`: the move failed because the target had no room; the gear is still on its source and may go elsewhere.
 * `busy`: another operation held the gear's application (the broker's application lock): nothing was done to the
 * gear, and the same move may go through later.
 * `gone`: the gear no longer exists (its tenant deleted it), so nothing is left to move. Whether an attempt that
 * failed as it was deleted had moved it first cannot be told.
 */
export type MoveStatus = { state: 'running' } | { state: 'succeeded' } | { state: 'failed'; error: string; targetFull?: boolean; busy?: boolean; gone?: boolean };

export interface MoveOptions {
  /**
   * Stable per (drain, gear, attempt). A start repeated with the same key returns
   * the handle of the move it started before instead of starting a second one.
   */
  idempotencyKey?: string;
  /**
   * True when an earlier call with this key may have started a move whose handle
   * was never recorded (a crash in between): the adapter looks for it before
   * starting anything. False (the default) lets the adapter skip that look-up.
   */
  mayExist?: boolean;
}

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
  /**
   * Adds a node to its district (`add-node`), in `placement`'s region and zone
   * when given; idempotent. A node already in the district but in no region
   * is placed (`set-region`). `ValidationError` when the region or zone does
   * not exist, or the node is already in another region (configuration to fix).
   */
  addNode(district: string, nodeId: string, placement?: NodePlacement): Promise<void>;
  /** Removes an empty node from its district (`remove-node`); idempotent. */
  removeNode(district: string, nodeId: string): Promise<void>;
  /**
   * Starts moving a gear to another node of the same district (`oo-admin-move`).
   * The gear stays on `fromNode` until the move completes; a failed move leaves
   * it there. `ConflictError` when the target has no room, `NotFoundError` when
   * the gear is not on `fromNode`.
   */
  startMove(gear: GearInfo, fromNode: string, toNode: string, options?: MoveOptions): Promise<MoveHandle>;
  /** Result of a move started earlier; failed with `gone` when the gear no longer exists anywhere. */
  moveStatus(handle: MoveHandle): Promise<MoveStatus>;
  /**
   * The move an earlier `startMove` with this idempotency key started, or undefined: never starts one. A drain that
   * stops with an attempt whose handle was never recorded (a crash between the start and its write) must still
   * record what the platform did with the gear, without moving it now. `TransientError` when it cannot look.
   */
  findMove(gear: GearInfo, fromNode: string, toNode: string, idempotencyKey: string): Promise<MoveHandle | undefined>;
  /**
   * Optional: the node's gear count and capacity as the platform knows them,
   * for reporting stats from the broker side (`nodescaler report-stats`) where
   * no agent runs on the node hosts. `undefined` for a node the platform does
   * not know. Never a guess: a figure that cannot be read is an error
   * (`TransientError` or `ValidationError`), not a default. Named
   * `readNodeFacts`: `SimulatedPlatform.nodeFacts` already exists (synchronous,
   * with the gear list) for tests and the simulation.
   */
  readNodeFacts?(nodeId: string): Promise<{ activeGears: number; maxActiveGears: number } | undefined>;
}
