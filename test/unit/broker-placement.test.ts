import { describe, expect, it } from 'vitest';
import { chooseAsBroker, weightedIndex, type PlacementCandidate } from '../../lib/adapters/local/broker-placement.js';
import { seededRandom } from '../../lib/sim/random.js';

/** Candidates n1, n2, … at these consumed percentages, with these gears of the new gear's application. */
function servers(consumed: number[], appGears: number[] = []): Array<PlacementCandidate<string>> {
  return consumed.map((percent, i) => ({ node: `n${i + 1}`, id: i, consumedPercent: percent, appGears: appGears[i] ?? 0 }));
}

/** How often each node is chosen over `draws` seeded draws. */
function tally(candidates: Array<PlacementCandidate<string>>, draws: number, fewest?: number): Map<string, number> {
  const random = seededRandom(7);
  const counts = new Map<string, number>();
  for (let i = 0; i < draws; i++) {
    const node = chooseAsBroker(candidates, random, fewest);
    if (node !== undefined) counts.set(node, (counts.get(node) ?? 0) + 1);
  }
  return counts;
}

describe('weightedIndex (select_best_fit_node_impl draw)', () => {
  it('gives position i of n the weight round(n/2) + i, as the broker comment works out for four servers', () => {
    // The broker's example: [4,3,2,1] => 14 positions; 0,1 => 0; 2,3,4 => 1; 5..8 => 2; 9..13 => 3.
    const chosen = Array.from({ length: 14 }, (_, r) => weightedIndex(4, () => r / 14));
    expect(chosen).toEqual([0, 0, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3]);
  });

  it('stays within the list for one server and at the top of the range', () => {
    expect(weightedIndex(1, () => 0.999999)).toBe(0);
    expect(weightedIndex(7, () => 0.999999)).toBe(6);
    expect(weightedIndex(7, () => 0)).toBe(0);
  });
});

describe('chooseAsBroker', () => {
  it('spreads gears over the nodes, most often the emptiest, not always it', () => {
    const counts = tally(servers([40, 30, 20, 10]), 14_000);
    // Weights 2 : 3 : 4 : 5 from the fullest to the emptiest.
    expect(counts.get('n4')! / 14_000).toBeCloseTo(5 / 14, 1);
    expect(counts.get('n1')! / 14_000).toBeCloseTo(2 / 14, 1);
    expect(counts.get('n4')!).toBeGreaterThan(counts.get('n3')!);
    expect(counts.get('n3')!).toBeGreaterThan(counts.get('n1')!);
  });

  it('of more than four, never chooses a node above the average plus 1 - average/100', () => {
    // Average 26, cut-off 26.74: the 90 % node is out.
    const counts = tally(servers([10, 10, 10, 10, 90]), 2_000);
    expect(counts.get('n5')).toBeUndefined();
    expect([...counts.values()].reduce((a, b) => a + b, 0)).toBe(2_000);
  });

  it('keeps only the nodes at or below the cut-off, fewer than the four its comment promises (Ruby delete_if)', () => {
    // Average 45, cut-off 45.55: only the empty node stays, though the comment says at least max(4, 20 %).
    const counts = tally(servers([0, 50, 50, 50, 50, 50, 50, 50, 50, 50]), 500);
    expect([...counts.keys()]).toEqual(['n1']);
  });

  it('of four or fewer, may choose a nearly full node', () => {
    const counts = tally(servers([10, 10, 10, 99]), 2_000);
    expect(counts.get('n4')).toBeGreaterThan(0);
  });

  it("keeps a scaled application's new gear off the nodes holding its other gears", () => {
    const counts = tally(servers([10, 10, 10, 10, 10], [1, 0, 2, 0, 0]), 2_000, 1);
    expect(counts.get('n1')).toBeUndefined();
    expect(counts.get('n3')).toBeUndefined();
    expect(counts.get('n2')! + counts.get('n4')! + counts.get('n5')!).toBe(2_000);
  });

  it('when every candidate holds some of its gears, chooses among those holding the fewest', () => {
    const counts = tally(servers([10, 10, 10], [2, 1, 1]), 1_000, 1);
    expect(counts.get('n1')).toBeUndefined();
    expect(counts.get('n2')! + counts.get('n3')!).toBe(1_000);
  });

  it('chooses nothing from no candidates, and the same node for the same draws', () => {
    expect(chooseAsBroker([], () => 0.5)).toBeUndefined();
    const first = [...tally(servers([30, 20, 20, 10, 5, 5]), 50).entries()];
    const again = [...tally(servers([30, 20, 20, 10, 5, 5]), 50).entries()];
    expect(again).toEqual(first);
  });
});
