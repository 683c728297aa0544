/**
 * The agents' gear lists, for an evaluation that needs them. A pool's listing
 * carries only each list's counts and digest (`NodeStats.listed`): the lists
 * are items of their own (StateStore.getNode reads one node's). The
 * evaluator needs them only once a drain is on the table (its candidates'
 * gears against the disruption budget, lib/app/move-history.ts), and then
 * every node's, as the nodes' gears known from earlier evaluations refuse
 * candidates without a read: one batched read (StateStore.getGearLists), not
 * a read per node, so a 200-node pool's evaluation is not 200 calls that may
 * fail. A list whose digest has not changed since it was read is kept in
 * memory (one evaluator per warm function instance): an unchanged pool costs
 * no read.
 */
import type { NodeRecord } from '../domain/model.js';
import type { StateStore, StoredGearList } from '../ports/state-store.js';

/** Most lists kept: a few KB each, so a few MB at most in a function instance. */
export const GEAR_LISTS_KEPT = 2_000;

export class GearLists {
  private readonly lists = new Map<string, StoredGearList>();

  constructor(private readonly kept = GEAR_LISTS_KEPT) {}

  /**
   * `nodes` with the gear list each one's stats count: from memory where the digest is unchanged, else read, all in
   * one batched read. A list stored a report ahead of its stats (a crash between the two writes) is taken as it is,
   * and read again next time. A node gone meanwhile stays without one, as an agent that sends none.
   */
  async attach(nodes: readonly NodeRecord[], store: Pick<StateStore, 'getGearLists'>): Promise<NodeRecord[]> {
    const missing = nodes.filter((node) => node.stats?.listed && !node.stats.gears && this.lists.get(node.nodeId)?.digest !== node.stats.listed.digest);
    const read = missing.length > 0 ? await store.getGearLists(missing.map((node) => node.nodeId)) : new Map<string, StoredGearList>();
    for (const [nodeId, list] of read) this.keep(nodeId, list);
    return nodes.map((node) => {
      const kept = node.stats?.listed && !node.stats.gears ? this.lists.get(node.nodeId) : undefined;
      return kept ? { ...node, stats: { ...node.stats!, gears: kept.gears } } : node;
    });
  }

  private keep(nodeId: string, list: StoredGearList): void {
    this.lists.delete(nodeId);
    this.lists.set(nodeId, list);
    if (this.lists.size > this.kept) this.lists.delete(this.lists.keys().next().value!);
  }
}

/** `nodes` with their agents' gear lists, read at once (no list kept from an earlier call): for a one-off need. */
export function withGearLists(nodes: readonly NodeRecord[], store: Pick<StateStore, 'getGearLists'>): Promise<NodeRecord[]> {
  return new GearLists().attach(nodes, store);
}
