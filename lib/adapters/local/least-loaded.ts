/** What the index needs of a node: its load figures and an id for ties. */
export interface LoadedNode {
  nodeId: string;
  active: boolean;
  maxGears: number;
  gears: { readonly size: number };
  /** Slots held by moves in flight towards the node. */
  incoming: number;
  /** Of `gears`, the idle ones that hold no slot (a platform that counts only active gears, as origin-server does). */
  idle?: number;
}

/** The slots a node's gears and incoming moves hold: every gear but the idle ones that hold none. */
export function slotsHeld(node: LoadedNode): number {
  return node.gears.size - (node.idle ?? 0) + node.incoming;
}

interface Entry<N> {
  node: N;
  load: number;
  stamp: number;
}

/**
 * The least-loaded active node with room, by (load, node id), in O(log n):
 * a binary heap of (load, id) entries. A node whose load changes gets a fresh
 * entry (`touch`); its older entries go stale and are dropped when they reach
 * the top, as are entries of nodes that are full, inactive or gone (`isLive`).
 * A full or inactive node comes back with its next `touch`, which every change
 * of its gears, incoming moves, capacity or activity must call. Scanning every
 * node for each new gear made placing a cluster's gears cost nodes x gears.
 */
export class LeastLoadedIndex<N extends LoadedNode> {
  private heap: Array<Entry<N>> = [];
  private readonly stamps = new Map<N, number>();

  constructor(private readonly isLive: (node: N) => boolean) {}

  /** `node`'s load changed (or it is new): its current entry. */
  touch(node: N): void {
    const stamp = (this.stamps.get(node) ?? 0) + 1;
    this.stamps.set(node, stamp);
    this.push({ node, load: loadOf(node), stamp });
    // Stale entries pile up with every change: rebuild from the live nodes when they outnumber them.
    if (this.heap.length > 2 * this.stamps.size + 32) this.compact();
  }

  /** The node no longer exists: forget it (its entries are dropped as they surface). */
  forget(node: N): void {
    this.stamps.delete(node);
  }

  /** The active node with room and the lowest (load, id), or undefined when every one is full. */
  best(): N | undefined {
    while (this.heap.length > 0) {
      const top = this.heap[0]!;
      if (this.current(top) && top.node.active && slotsHeld(top.node) < top.node.maxGears) return top.node;
      this.pop();
    }
    return undefined;
  }

  private current(entry: Entry<N>): boolean {
    return this.stamps.get(entry.node) === entry.stamp && this.isLive(entry.node);
  }

  private compact(): void {
    const entries = this.heap.filter((entry) => this.current(entry));
    this.heap = [];
    for (const entry of entries) this.push(entry);
  }

  private push(entry: Entry<N>): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
      if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
      if (smallest === i) return;
      [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
      i = smallest;
    }
  }
}

/** A node without slots counts as full (never chosen) rather than NaN, which would break the heap's order. */
function loadOf(node: LoadedNode): number {
  return node.maxGears > 0 ? slotsHeld(node) / node.maxGears : Infinity;
}

/** Lower load first, then the lower node id: the order a scan of every node would choose by. */
function before(a: Entry<LoadedNode>, b: Entry<LoadedNode>): boolean {
  if (a.load !== b.load) return a.load < b.load;
  return a.node.nodeId < b.node.nodeId;
}
