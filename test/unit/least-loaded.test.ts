import { describe, expect, it } from 'vitest';
import { LeastLoadedIndex, type LoadedNode } from '../../lib/adapters/local/least-loaded.js';
import { seededRandom } from '../../lib/sim/random.js';

interface Node extends LoadedNode {
  gears: Set<number>;
}

/** What a scan of every node picks: the active node with room and the lowest load, ties to the lowest id. */
function scan(nodes: Iterable<Node>): Node | undefined {
  let best: Node | undefined;
  for (const node of nodes) {
    if (!node.active || node.gears.size + node.incoming >= node.maxGears) continue;
    const load = (node.gears.size + node.incoming) / node.maxGears;
    const bestLoad = best ? (best.gears.size + best.incoming) / best.maxGears : Infinity;
    if (load < bestLoad || (load === bestLoad && best !== undefined && node.nodeId < best.nodeId)) best = node;
  }
  return best;
}

describe('LeastLoadedIndex', () => {
  it('picks what a scan of every node picks, through 20,000 random changes of gears, moves, capacity, activity and membership', () => {
    const random = seededRandom(3);
    const live = new Map<string, Node>();
    const index = new LeastLoadedIndex<Node>((node) => live.get(node.nodeId) === node);
    let created = 0;
    const add = () => {
      created += 1;
      const node: Node = { nodeId: `node-${created % 7}-${created}`, active: true, maxGears: [0, 1, 3, 4, 8][Math.floor(random() * 5)]!, gears: new Set(), incoming: 0 };
      live.set(node.nodeId, node);
      index.touch(node);
    };
    for (let i = 0; i < 12; i++) add();
    let gear = 0;
    let checked = 0;
    for (let step = 0; step < 20_000; step++) {
      const nodes = [...live.values()];
      const node = nodes[Math.floor(random() * nodes.length)];
      const roll = random();
      if (roll < 0.35) {
        // Place a gear where the index says, which must be where the scan says.
        const chosen = index.best();
        expect(chosen?.nodeId).toBe(scan(live.values())?.nodeId);
        checked += 1;
        if (chosen) {
          chosen.gears.add(gear++);
          index.touch(chosen);
        }
      } else if (!node) {
        add();
      } else if (roll < 0.55) {
        const first = node.gears.values().next();
        if (!first.done) node.gears.delete(first.value);
        index.touch(node);
      } else if (roll < 0.65) {
        node.incoming = Math.max(0, node.incoming + (random() < 0.5 ? 1 : -1));
        index.touch(node);
      } else if (roll < 0.72) {
        node.active = !node.active;
        index.touch(node);
      } else if (roll < 0.77) {
        node.maxGears = Math.floor(random() * 9);
        index.touch(node);
      } else if (roll < 0.8) {
        live.delete(node.nodeId);
        index.forget(node);
      } else if (roll < 0.83 || live.size < 4) {
        add();
      }
    }
    expect(checked).toBeGreaterThan(5_000);
  });

  it('chooses nothing when every node is full or inactive, and a node again once it has room', () => {
    const live = new Map<string, Node>();
    const index = new LeastLoadedIndex<Node>((node) => live.get(node.nodeId) === node);
    const a: Node = { nodeId: 'a', active: true, maxGears: 1, gears: new Set([1]), incoming: 0 };
    const b: Node = { nodeId: 'b', active: false, maxGears: 5, gears: new Set(), incoming: 0 };
    for (const node of [a, b]) {
      live.set(node.nodeId, node);
      index.touch(node);
    }
    expect(index.best()).toBeUndefined();
    a.gears.clear();
    index.touch(a);
    expect(index.best()).toBe(a);
    b.active = true;
    index.touch(b);
    expect(index.best()).toBe(a); // both empty: the lower id
    live.delete('a');
    index.forget(a);
    expect(index.best()).toBe(b);
  });
});
