/**
 * The drain planner: where each gear of a draining node goes. A pure function
 * of data, so the same plan comes out for the same state table and platform.
 *
 * Rules, in order of strength:
 *   1. Same pool (district and profile), `active` nodes only, never the
 *      source, and only nodes with fresh stats (a node whose figures are stale
 *      has no known room, as the evaluator sees it).
 *   2. Capacity: a target takes gears up to `floor(fillFraction x
 *      maxActiveGears) - activeGears - reserved`, where `reserved` counts the
 *      pending moves of every active drain (utilization.ts) and the gears this
 *      plan already sent there. `fillFraction` is the scale-up threshold for a
 *      normal drain (a scale-down never pushes a node into the next
 *      scale-up), and 1 for an urgent one (an interrupted host must empty).
 *   3. Anti-affinity: gears of one application go to nodes that hold no gear
 *      of it (as far as stats and pending moves tell); `preferred` falls back
 *      to the node with room that holds the fewest, `required` leaves the gear
 *      unplaced.
 *   4. Its own availability zone: among the nodes that hold no gear of the
 *      application, one in the source node's zone first, another zone only
 *      when none there has room. A move across zones would gather a scaled
 *      application's gears, spread over zones for its availability (the
 *      broker's zones, Karpenter's topology spread), into fewer of them, and
 *      copy the gear's data across zones (paid per gigabyte). Nodes of
 *      unknown zone count as the source's when its zone is unknown.
 *   5. Largest gears first (by size name), then the applications with the
 *      most gears (the most constrained), then by uuid; each gear goes to the
 *      target with the least room left that still takes it (packing), ties by
 *      node id. Spreading would fill the emptiest nodes, which are the next
 *      scale-down candidates (least-disruption picks the node with the fewest
 *      gears): their gears would be moved twice, and each later drain would
 *      move a fuller node. Packing keeps the emptiest nodes empty.
 *
 * Each active gear takes one slot: OpenShift counts `max_active_gears` in
 * gears, and the evaluator and `reservedSlotsByNode` count a pending move as
 * one slot. A gear its agent marked idle (stopped or idled) takes none: the
 * platform counts only active gears against `max_active_gears`, and the
 * agent's `activeGears`, by which the evaluator chose the node, leaves it
 * out. Counting it would make a plan refuse a drain the evaluator priced as
 * fitting. It is placed after the active gears, by the same rules, as if it
 * took a slot (it may wake); only when that room is spent does it go, never
 * refused for room, to the target with the most room left, its idle gears
 * counted, so the gears that wake are spread where they fit best.
 */
import type { GearInfo, NodeRecord, PoolId } from './model.js';
import { freshStatsTest } from './utilization.js';

/** Tolerance for `fraction x maxActiveGears`, as in utilization.ts. */
const EPSILON = 1e-9;

/** Known gear sizes, smallest first; an unknown size ranks below `small`. */
export const GEAR_SIZE_RANK: Readonly<Record<string, number>> = { small: 1, medium: 2, large: 3, xlarge: 4 };

export type AntiAffinity = 'preferred' | 'required';

export interface PlanInput {
  /** The draining node. */
  sourceNodeId: string;
  pool: PoolId;
  /** The gears to place. */
  gears: readonly GearInfo[];
  /** Nodes of the pool, any state. */
  nodes: readonly NodeRecord[];
  /** Slots already reserved on each node by pending moves (every active drain, this one's moves that keep their target included). */
  reserved: ReadonlyMap<string, number>;
  /** Applications already headed to each node by pending moves: node -> app -> gears. */
  incomingApps?: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /** Fill targets up to this fraction of their capacity (0..1). */
  fillFraction: number;
  antiAffinity: AntiAffinity;
  now: Date;
  /** Stats older than this (ms) make a node unusable as a target. */
  statsMaxAge: number;
  /** Targets a given gear must not get (e.g. the one whose move just failed for lack of room), by gear uuid. */
  avoid?: ReadonlyMap<string, ReadonlySet<string>>;
  /** Nodes no gear may go to: those other drains are about to empty (their node may still be `active` before the drain begins). */
  draining?: ReadonlySet<string>;
}

export interface Placement {
  gear: GearInfo;
  target: string;
  /** True when the target already holds (or receives) a gear of the same application: anti-affinity was relaxed. */
  sharesApp: boolean;
}

export interface Unplaced {
  gear: GearInfo;
  reason: string;
  /** The active nodes with fresh stats are all full (below the fill fraction): demand, not a setting or a stats gap. */
  full: boolean;
}

export interface DrainPlan {
  placements: Placement[];
  unplaced: Unplaced[];
  /** How many nodes could take gears at all. */
  targets: number;
  /** Free slots over all targets before this plan. */
  freeSlots: number;
}

/** Places every gear it can; see the module comment for the rules. O(g x n) comparisons of integers at worst. */
export function planDrain(input: PlanInput): DrainPlan {
  const { gears, fillFraction } = input;
  /** app -> target index -> gears of that app there (listed in stats, or headed there), for the apps this plan places only. */
  const appTargets = new Map<string, Map<number, number>>();
  for (const gear of gears) if (!appTargets.has(gear.app)) appTargets.set(gear.app, new Map());

  const isFresh = freshStatsTest(input.now.getTime(), input.statsMaxAge);
  const eligible: Array<{ node: NodeRecord; free: number }> = [];
  let freeSlots = 0;
  /** Open nodes with fresh stats that are full: with the eligible ones, the nodes that say the pool has no room. */
  let full = 0;
  for (const node of input.nodes) {
    if (node.state !== 'active' || node.nodeId === input.sourceNodeId || node.pool !== input.pool || input.draining?.has(node.nodeId)) continue;
    // Closed for attrition: the next node to drain, never a target (its gears would move twice).
    if (node.attritionSince !== undefined) continue;
    const stats = node.stats;
    if (!stats || !isFresh(node)) continue;
    const free = Math.floor(fillFraction * stats.maxActiveGears + EPSILON) - stats.activeGears - (input.reserved.get(node.nodeId) ?? 0);
    if (free <= 0) {
      full += 1;
      continue;
    }
    eligible.push({ node, free });
    freeSlots += free;
  }
  eligible.sort((a, b) => (a.node.nodeId < b.node.nodeId ? -1 : a.node.nodeId > b.node.nodeId ? 1 : 0));
  const targets = eligible.map((entry) => entry.node.nodeId);
  const sourceZone = input.nodes.find((node) => node.nodeId === input.sourceNodeId)?.zone;
  /** 0 for a target in the source's zone (or both unknown), 1 for another. */
  const zoneTier = Uint8Array.from(eligible, (entry) => (entry.node.zone === sourceZone ? 0 : 1));
  const slots = new Int32Array(eligible.length);
  eligible.forEach((entry, i) => {
    slots[i] = entry.free;
    const listed = entry.node.stats!.gears;
    if (listed) {
      for (const gear of listed) {
        const where = appTargets.get(gear.app);
        if (where) where.set(i, (where.get(i) ?? 0) + 1);
      }
    }
    const incoming = input.incomingApps?.get(entry.node.nodeId);
    if (incoming) {
      for (const [app, n] of incoming) {
        const where = appTargets.get(app);
        if (where) where.set(i, (where.get(i) ?? 0) + n);
      }
    }
  });

  const placements: Placement[] = [];
  const unplaced: Unplaced[] = [];
  const percent = `${Math.round(fillFraction * 100)}%`;

  /** Room counting the idle gears this plan sent too: where an idle gear goes while it lasts. */
  const asIfActive = Int32Array.from(slots);
  for (const gear of orderGears(gears)) {
    const avoid = input.avoid?.get(gear.uuid);
    const holders = appTargets.get(gear.app)!;
    const idle = gear.idle === true;
    const free = idle ? asIfActive : slots;
    // Pass 1: of the nodes that hold no gear of the app, the source's zone first, then the least room left (the first minimum: lowest node id).
    let chosen = -1;
    let chosenRank = Infinity;
    for (let i = 0; i < free.length; i++) {
      const room = free[i]!;
      if (room <= 0) continue;
      const rank = zoneTier[i]! * 2 ** 31 + room;
      if (rank >= chosenRank) continue;
      if ((holders.size > 0 && holders.has(i)) || avoid?.has(targets[i]!)) continue;
      chosen = i;
      chosenRank = rank;
    }
    let sharesApp = false;
    if (chosen < 0 && holders.size > 0) {
      // Pass 2: every node with room holds the app; the fewest of it, then the least room, then the lowest id.
      let bestCount = Infinity;
      for (const [i, count] of holders) {
        const room = free[i]!;
        if (room <= 0 || avoid?.has(targets[i]!)) continue;
        if (count < bestCount || (count === bestCount && (room < free[chosen]! || (room === free[chosen]! && i < chosen)))) {
          chosen = i;
          bestCount = count;
        }
      }
      if (chosen >= 0) {
        if (input.antiAffinity === 'required') {
          unplaced.push({ gear, reason: `anti-affinity: every node with room already holds a gear of ${gear.app}`, full: false });
          continue;
        }
        sharesApp = true;
      }
    }
    if (chosen < 0 && idle && free.length > 0) {
      chosen = mostRoom(free, holders, avoid, targets);
      sharesApp = holders.has(chosen);
      if (sharesApp && input.antiAffinity === 'required') {
        unplaced.push({ gear, reason: `anti-affinity: every node with room already holds a gear of ${gear.app}`, full: false });
        continue;
      }
    }
    if (chosen < 0) {
      unplaced.push({
        gear,
        reason:
          targets.length + full === 0
            ? `no active node of pool ${input.pool} with fresh stats has room below ${percent}`
            : `no room left below ${percent} on the ${targets.length + full} active node(s) of pool ${input.pool}`,
        full: targets.length + full > 0,
      });
      continue;
    }
    if (!idle) slots[chosen] = slots[chosen]! - 1;
    asIfActive[chosen] = asIfActive[chosen]! - 1;
    holders.set(chosen, (holders.get(chosen) ?? 0) + 1);
    placements.push({ gear, target: targets[chosen]!, sharesApp });
  }
  return { placements, unplaced, targets: targets.length, freeSlots };
}

/**
 * The target an idle gear goes to once the room is spent: the most room left (idle gears counted), a node without
 * the application's gears first, the source's zone not preferred (every node is past its room), ties by lowest id.
 */
function mostRoom(room: Int32Array, holders: ReadonlyMap<number, number>, avoid: ReadonlySet<string> | undefined, targets: readonly string[]): number {
  let chosen = -1;
  for (let i = 0; i < room.length; i++) {
    if (avoid?.has(targets[i]!)) continue;
    if (chosen < 0) {
      chosen = i;
      continue;
    }
    const holds = holders.has(i);
    const chosenHolds = holders.has(chosen);
    if ((chosenHolds && !holds) || (chosenHolds === holds && room[i]! > room[chosen]!)) chosen = i;
  }
  return chosen;
}

/** Active gears before idle ones (they need the slots), then largest size first, then applications with more gears, then app name and uuid: a total, deterministic order. */
export function orderGears(gears: readonly GearInfo[]): GearInfo[] {
  const perApp = new Map<string, number>();
  for (const gear of gears) perApp.set(gear.app, (perApp.get(gear.app) ?? 0) + 1);
  return [...gears].sort(
    (a, b) =>
      Number(a.idle === true) - Number(b.idle === true) ||
      (GEAR_SIZE_RANK[b.size] ?? 0) - (GEAR_SIZE_RANK[a.size] ?? 0) ||
      perApp.get(b.app)! - perApp.get(a.app)! ||
      compare(a.app, b.app) ||
      compare(a.uuid, b.uuid),
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
