import { describe, expect, it } from 'vitest';
import { drainPrice, priceOf, repricedReason, type PricedNode } from '../../lib/domain/drain-price.js';

const node = (nodeId: string, gears: number, disruptive = gears, max = 100): PricedNode => ({ nodeId, gears, disruptive, max });

describe('drainPrice', () => {
  it('least-disruption: new gears count as disruptive moves; the node stays first until it passes the next one', () => {
    // An empty node ahead of one with 18 gears of unknown kind: 18 new gears tie it, the 19th puts it behind.
    expect(drainPrice('least-disruption', node('a', 0), node('b', 18))).toEqual({ gears: 0, limit: 18, next: 'b', nextGears: 18 });
    // Level on disruptive moves: any new gear puts it behind.
    expect(drainPrice('least-disruption', node('a', 20, 4), node('b', 30, 4))).toEqual({ gears: 20, limit: 20, next: 'b', nextGears: 30 });
    // 3 disruptive moves ahead, but at 3 more gears it would hold more than b's 11: 2.
    expect(drainPrice('least-disruption', node('a', 10, 2), node('b', 11, 5))).toEqual({ gears: 10, limit: 12, next: 'b', nextGears: 11 });
  });

  it('least-disruption: level on disruptive moves, a drifted node stays ahead of one that is not whatever their gear counts', () => {
    const drifted = (n: PricedNode): PricedNode => ({ ...n, due: true });
    // 1 disruptive move ahead and drifted: one new gear levels it with b, where drift still puts it first.
    expect(drainPrice('least-disruption', drifted(node('a', 30, 2)), node('b', 20, 3))).toEqual({ gears: 30, limit: 31, next: 'b', nextGears: 20 });
    // Not drifted behind a drifted next: level would put it behind, so one fewer than the margin.
    expect(drainPrice('least-disruption', node('a', 10, 2), drifted(node('b', 30, 4)))).toEqual({ gears: 10, limit: 11, next: 'b', nextGears: 30 });
    // Both drifted: the gear count decides, as for two current nodes.
    expect(drainPrice('least-disruption', drifted(node('a', 10, 2)), drifted(node('b', 11, 5)))).toEqual({ gears: 10, limit: 12, next: 'b', nextGears: 11 });
  });

  it('least-gears and least-utilized keep the node ahead by gears and by share of its slots', () => {
    expect(drainPrice('least-gears', node('a', 10), node('b', 25))).toEqual({ gears: 10, limit: 25, next: 'b', nextGears: 25 });
    // b is 30 of 50 slots (0.6): a, of 100 slots, stays ahead up to 60 gears.
    expect(drainPrice('least-utilized', node('a', 10, 10, 100), node('b', 30, 30, 50))).toEqual({ gears: 10, limit: 60, next: 'b', nextGears: 30 });
  });

  it('has no price without a next node, or where gears do not order the strategy', () => {
    expect(drainPrice('least-disruption', node('a', 0), undefined)).toBeUndefined();
    expect(drainPrice('oldest', node('a', 0), node('b', 50))).toBeUndefined();
    expect(drainPrice('newest', node('a', 0), node('b', 50))).toBeUndefined();
  });
});

describe('repricedReason', () => {
  const price = { gears: 0, limit: 18, next: 'b', nextGears: 18 };

  it('stands up to the limit, and says past it what the node holds, what was priced and what the next node holds', () => {
    expect(repricedReason(price, 'a', 0, 18)).toBeUndefined();
    expect(repricedReason(price, 'a', 18, 18)).toBeUndefined();
    expect(repricedReason(price, 'a', 80, 18)).toBe('repriced: a holds 80 gears, the decision priced 0 and b holds 18; past 18 it no longer comes before b: the evaluator decides again');
  });

  it('raises the limit by what the next node gained: the broker filled both', () => {
    expect(repricedReason(price, 'a', 30, 30)).toBeUndefined();
    expect(repricedReason(price, 'a', 31, 30)).toBe('repriced: a holds 31 gears, the decision priced 0 and b holds 30; past 30 it no longer comes before b: the evaluator decides again');
    // A next node that lost gears does not lower it: the decision chose on what it saw.
    expect(repricedReason(price, 'a', 18, 2)).toBeUndefined();
  });

  it('holds the limit as decided when the next node could not be listed', () => {
    expect(repricedReason(price, 'a', 19)).toBe('repriced: a holds 19 gears, the decision priced 0 and b held 18; past 18 it no longer comes before b: the evaluator decides again');
  });

  it('a drain without a price is never repriced', () => {
    expect(repricedReason(undefined, 'a', 6000, 0)).toBeUndefined();
  });
});

describe('priceOf', () => {
  it('finds the price of the named node among the decision\u2019s', () => {
    const prices = [
      { nodeId: 'a', gears: 1, limit: 4, next: 'c', nextGears: 4 },
      { nodeId: 'b', gears: 2, limit: 5, next: 'c', nextGears: 5 },
    ];
    expect(priceOf(prices, 'b')).toEqual({ gears: 2, limit: 5, next: 'c', nextGears: 5 });
    expect(priceOf(prices, 'z')).toBeUndefined();
    expect(priceOf(undefined, 'a')).toBeUndefined();
  });
});
