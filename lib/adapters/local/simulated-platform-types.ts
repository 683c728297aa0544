/** The simulated platform's records (lib/adapters/local/simulated-platform.ts): its options, nodes, moves and what it reports. */
import type { GearInfo } from '../../domain/model.js';
import type { MoveStatus } from '../../ports/platform.js';
import type { PlacementRule } from './sim-placement.js';

export interface SimulatedPlatformOptions {
  /** How long one gear move takes, in (virtual) milliseconds. */
  moveDurationMs: number;
  /** Share of moves that fail (0..1), drawn with `random` when the move starts. */
  moveFailureRate: number;
  /** Source of randomness for failures (default Math.random); give a seeded one for repeatable runs. */
  random?: () => number;
  /** Where a new gear goes: the least-loaded node (default) or as origin-server's broker chooses (lib/adapters/local/broker-placement.ts). */
  placement?: PlacementRule;
  /** Randomness of the broker's draw (default Math.random), kept apart from `random` so failures draw alike under either rule. */
  placementRandom?: () => number;
  /**
   * Count slots as origin-server does: `max_active_gears` "counts only currently active gears. Stopped and idled gears
   * are not limited" (resource_limits.conf). A gear placed or moved with `idle: true` then holds no slot, and a node's
   * `activeGears` leaves it out. Default false: every gear holds one.
   */
  idleTakesNoSlot?: boolean;
}

export interface SimNode {
  nodeId: string;
  district: string;
  profile: string;
  maxGears: number;
  active: boolean;
  /** In its district (added); a node host that runs but was never added takes no gears. */
  inDistrict: boolean;
  gears: Map<string, GearInfo>;
  /** Moves in flight towards this node that hold a slot until they complete. */
  incoming: number;
  /** Of `gears`, the idle ones holding no slot (`idleTakesNoSlot`). */
  idle: number;
}

export interface SimMove {
  commandId: string;
  gear: GearInfo;
  from: string;
  to: string;
  startedAt: number;
  completesAt: number;
  willFail: boolean;
  status: MoveStatus;
  /** It holds a slot on its target (an active gear, or any gear unless `idleTakesNoSlot`). */
  holdsSlot: boolean;
}

export interface NodeFacts {
  district: string;
  profile: string;
  active: boolean;
  activeGears: number;
  maxActiveGears: number;
  gears: GearInfo[];
}

/** One move as it happened, for tests and the local runtime's report. */
export interface MoveRecord {
  commandId: string;
  uuid: string;
  from: string;
  to: string;
  startedAt: string;
  idempotencyKey?: string;
  /** Set once the move ended. */
  outcome?: 'succeeded' | 'failed';
}
