/**
 * The agents' gear lists, for an evaluation that needs them. A pool's listing
 * carries only each list's counts and digest (`NodeStats.listed`): the lists
 * are items of their own, read one node at a time (StateStore.getNode). The
 * evaluator needs them only once a drain is on the table (its candidates'
 * gears against the disruption budget, lib/app/move-history.ts), and then
 * every node's, as the nodes' gears known from earlier evaluations refuse
 * candidates without a read. A list whose digest has not changed since it was
 * read is kept in memory (one evaluator per warm function instance): an
 * unchanged pool costs no read.
 */
import type { GearInfo, NodeRecord } from '../domain/model.js';
import type { StateStore } from '../ports/state-store.js';

/** Most lists kept: a few KB each, so a few MB at most in a function instance. */
export const GEAR_LISTS_KEPT = 2_000;
/** Lists read at once: a 200-node pool's are read in eight rounds, not 200 requests at once. */
const READS_AT_ONCE = 25;

export class GearLists {
  private readonly lists = new Map<string, { digest: string; gears: GearInfo[] }>();

  constructor(private readonly kept = GEAR_LISTS_KEPT) {}

  /**
   * `nodes` with the gear list each one's stats count, from memory where the digest is unchanged, else read. A node
   * whose list changed again meanwhile, or that is gone, stays without one (as an agent that sends none).
   */
  async attach(nodes: readonly NodeRecord[], store: Pick<StateStore, 'getNode'>): Promise<NodeRecord[]> {
    const missing = nodes.filter((node) => node.stats?.listed && !node.stats.gears && this.lists.get(node.nodeId)?.digest !== node.stats.listed.digest);
    for (let at = 0; at < missing.length; at += READS_AT_ONCE) {
      const read = await Promise.all(missing.slice(at, at + READS_AT_ONCE).map((node) => store.getNode(node.nodeId)));
      for (const node of read) if (node?.stats?.gears && node.stats.listed) this.keep(node.nodeId, node.stats.listed.digest, node.stats.gears);
    }
    return nodes.map((node) => {
      const listed = node.stats?.listed;
      const kept = listed && !node.stats!.gears ? this.lists.get(node.nodeId) : undefined;
      return kept && kept.digest === listed!.digest ? { ...node, stats: { ...node.stats!, gears: kept.gears } } : node;
    });
  }

  private keep(nodeId: string, digest: string, gears: GearInfo[]): void {
    this.lists.delete(nodeId);
    this.lists.set(nodeId, { digest, gears });
    if (this.lists.size > this.kept) this.lists.delete(this.lists.keys().next().value!);
  }
}

/** `nodes` with their agents' gear lists, each read once (no list kept from an earlier call): for a one-off need. */
export function withGearLists(nodes: readonly NodeRecord[], store: Pick<StateStore, 'getNode'>): Promise<NodeRecord[]> {
  return new GearLists().attach(nodes, store);
}
