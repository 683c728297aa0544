/**
 * The in-memory store's gear lists, kept apart from the stats as the DynamoDB
 * adapter keeps them (lib/adapters/dynamodb/node-stats.ts: an item of its own,
 * written when its digest changes): a pool's listing carries each list's
 * counts and digest, one node's read carries the list.
 */
import type { NodeRecord, NodeStats } from '../../domain/model.js';
import { gearListSummary, withoutGearList } from '../../domain/node-stats.js';
import type { StoredGearList } from '../../ports/state-store.js';
import { copy } from './frozen.js';

export class MemoryGearLists {
  /** Each node's newest stored list (the GEARS# item), with its digest. */
  private readonly lists = new Map<string, StoredGearList>();

  /** The stats to keep with the node (their list's counts); the list itself kept here when it changed since `held`. */
  keep(nodeId: string, stats: NodeStats, held?: NodeStats): NodeStats {
    if (!stats.gears) return stats;
    const listed = stats.listed ?? gearListSummary(stats.gears);
    if (held?.listed?.digest !== listed.digest || !this.lists.has(nodeId)) this.lists.set(nodeId, Object.freeze({ digest: listed.digest, gears: copy(stats.gears) }));
    return { ...withoutGearList(stats), listed };
  }

  /** A node as `getNode` reads it: with the list its stats count. */
  attach(node: NodeRecord): NodeRecord {
    const gears = node.stats?.listed ? this.lists.get(node.nodeId)?.gears : undefined;
    return gears ? copy({ ...node, stats: { ...node.stats!, gears } }) : node;
  }

  /** The stored lists of these nodes; a node without one is absent. */
  read(nodeIds: readonly string[]): Map<string, StoredGearList> {
    const found = new Map<string, StoredGearList>();
    for (const nodeId of nodeIds) {
      const list = this.lists.get(nodeId);
      if (list) found.set(nodeId, list);
    }
    return found;
  }

  /** A terminated node's list goes with its stats. */
  drop(nodeId: string): void {
    this.lists.delete(nodeId);
  }
}
