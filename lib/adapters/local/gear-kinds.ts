/**
 * Per-node counts of gears by kind (a simulated world's idle and disruptive
 * gears), kept as gears are placed, removed and moved. A world's node agents
 * report these counts every time a node's gears change: counting every gear of
 * every reporting node each minute was a seventh of a 20,000-gear replay.
 */
export class GearKinds {
  /** How each pool (district/profile) classifies its gears; gears of other pools are not counted. */
  private readonly classifiers = new Map<string, (uuid: string) => string | undefined>();
  private readonly counts = new Map<string, Map<string, number>>();

  /** Counts the gears of `pool` from now on by `kindOf`, starting with the ones `existing` already hold. */
  classify(pool: string, kindOf: (uuid: string) => string | undefined, existing: Iterable<{ nodeId: string; gears: ReadonlyMap<string, unknown> }>): void {
    this.classifiers.set(pool, kindOf);
    for (const node of existing) {
      this.counts.delete(node.nodeId);
      for (const uuid of node.gears.keys()) this.change(pool, node.nodeId, uuid, 1);
    }
  }

  /** A gear of `pool` arrived on (`delta` 1) or left (-1) a node. */
  change(pool: string, nodeId: string, uuid: string, delta: 1 | -1): void {
    const kind = this.classifiers.get(pool)?.(uuid);
    if (kind === undefined) return;
    let counts = this.counts.get(nodeId);
    if (!counts) this.counts.set(nodeId, (counts = new Map()));
    counts.set(kind, (counts.get(kind) ?? 0) + delta);
  }

  /** The node's gears by kind; undefined when its pool is not classified. */
  of(pool: string, nodeId: string): ReadonlyMap<string, number> | undefined {
    if (!this.classifiers.has(pool)) return undefined;
    return this.counts.get(nodeId) ?? new Map();
  }

  forget(nodeId: string): void {
    this.counts.delete(nodeId);
  }
}
