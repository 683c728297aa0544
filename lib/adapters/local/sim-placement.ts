import type { GearInfo } from '../../domain/model.js';
import { chooseAsBroker, type PlacementCandidate } from './broker-placement.js';
import { LeastLoadedIndex, slotsHeld } from './least-loaded.js';
import type { SimNode } from './simulated-platform-types.js';

/** How the simulated broker picks the node of a new gear. */
export type PlacementRule = 'least-loaded' | 'broker';

/**
 * Where the simulated platform creates a gear, per district/profile: the
 * least-loaded node (an O(log n) index; the replay's default)
 * or the broker's own rule (lib/adapters/local/broker-placement.ts: a weighted
 * draw among the nodes at most about average-full, away from the application's
 * other gears), which scans the pool's nodes for each gear.
 */
export class SimPlacement {
  private readonly indexes = new Map<string, LeastLoadedIndex<SimNode>>();
  private readonly pools = new Map<string, Set<SimNode>>();
  /** A number per node, in the order nodes arrived: the broker rule's tie order. */
  private readonly arrival = new Map<SimNode, number>();
  /** Per pool and application, the uuids of its gears (broker rule only). */
  private readonly appGears = new Map<string, Set<string>>();

  constructor(
    private readonly rule: PlacementRule,
    private readonly random: () => number,
    /** Whether the node is still the platform's and in its district: one outside takes no gears (a new host until add-node). */
    private readonly isLive: (node: SimNode) => boolean,
    private readonly locate: (uuid: string) => SimNode | undefined,
  ) {}

  /** Every change of a node's gears, incoming moves, capacity or activity comes here. */
  touch(node: SimNode): void {
    const key = placementKey(node.district, node.profile);
    if (this.rule === 'broker') {
      let nodes = this.pools.get(key);
      if (!nodes) this.pools.set(key, (nodes = new Set()));
      nodes.add(node);
      if (!this.arrival.has(node)) this.arrival.set(node, this.arrival.size);
      return;
    }
    let index = this.indexes.get(key);
    if (!index) this.indexes.set(key, (index = new LeastLoadedIndex<SimNode>(this.isLive)));
    index.touch(node);
  }

  forget(node: SimNode): void {
    const key = placementKey(node.district, node.profile);
    this.indexes.get(key)?.forget(node);
    this.pools.get(key)?.delete(node);
    this.arrival.delete(node);
  }

  gearCreated(node: SimNode, gear: GearInfo): void {
    if (this.rule !== 'broker') return;
    const key = appKey(node.district, node.profile, gear.app);
    let uuids = this.appGears.get(key);
    if (!uuids) this.appGears.set(key, (uuids = new Set()));
    uuids.add(gear.uuid);
  }

  gearDeleted(node: SimNode, gear: GearInfo): void {
    if (this.rule !== 'broker') return;
    const key = appKey(node.district, node.profile, gear.app);
    const uuids = this.appGears.get(key);
    uuids?.delete(gear.uuid);
    if (uuids?.size === 0) this.appGears.delete(key);
  }

  /** The node a new gear of `district/profile` goes to, or undefined when every one is full. */
  choose(district: string, profile: string, gear: GearInfo): SimNode | undefined {
    const key = placementKey(district, profile);
    if (this.rule !== 'broker') return this.indexes.get(key)?.best();
    const hosting = new Map<SimNode, number>();
    for (const uuid of this.appGears.get(appKey(district, profile, gear.app)) ?? []) {
      const node = this.locate(uuid);
      if (node) hosting.set(node, (hosting.get(node) ?? 0) + 1);
    }
    const candidates: Array<PlacementCandidate<SimNode>> = [];
    for (const node of this.pools.get(key) ?? []) {
      const held = slotsHeld(node);
      if (!this.isLive(node) || !node.active || held >= node.maxGears) continue;
      candidates.push({ node, id: this.arrival.get(node)!, consumedPercent: (100 * held) / node.maxGears, appGears: hosting.get(node) ?? 0 });
    }
    return chooseAsBroker(candidates, this.random, hosting.size > 0 ? Math.min(...hosting.values()) : undefined);
  }
}

export function placementKey(district: string, profile: string): string {
  return `${district}\u0000${profile}`;
}

function appKey(district: string, profile: string, app: string): string {
  return `${placementKey(district, profile)}\u0000${app}`;
}
