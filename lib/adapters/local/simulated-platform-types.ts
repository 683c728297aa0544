/** The simulated platform's records (lib/adapters/local/simulated-platform.ts): its options, nodes, moves and what it reports, and its bookkeeping check. */
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

/**
 * Where the gear bookkeeping disagrees with itself: a gear held by two nodes, or by a node its location does not name.
 * Empty when every gear is on exactly one node. Cheaper than building every gear's locations, for replays that check
 * at every step: given the gears placed, removed or moved since the last check (`changed`), it looks only at those
 * (each held where it is located) and at the totals (as many held as located), which is all a step can have changed.
 */
export function placementProblems(nodes: ReadonlyMap<string, SimNode>, locations: ReadonlyMap<string, string>, changed: ReadonlySet<string> | undefined): string[] {
  const problems: string[] = [];
  let held = 0;
  for (const node of nodes.values()) {
    held += node.gears.size;
    if (changed) continue;
    for (const uuid of node.gears.keys()) {
      const at = locations.get(uuid);
      if (at !== node.nodeId) problems.push(`gear ${uuid} is held by ${node.nodeId} but located on ${at ?? 'no node'}`);
    }
  }
  // A changed gear held by a second node, or held but not located, shows in the totals below.
  for (const uuid of changed ?? []) {
    const at = locations.get(uuid);
    if (at !== undefined && !nodes.get(at)?.gears.has(uuid)) problems.push(`gear ${uuid} is located on ${at}, which does not hold it`);
  }
  if (held !== locations.size) problems.push(`${held} gears held by nodes, ${locations.size} located`);
  return problems;
}
