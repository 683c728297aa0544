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
  /** Moves in flight towards this node: each holds one slot until it completes. */
  incoming: number;
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
