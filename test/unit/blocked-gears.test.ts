import { describe, expect, it } from 'vitest';
import { BlockedGears, NODE_RELIST_MS } from '../../lib/app/blocked-gears.js';
import { GEAR_MOVE_WINDOW_MS, poolBudget } from '../../lib/domain/budget.js';
import type { GearInfo } from '../../lib/domain/model.js';
import { NOW, config } from '../support/builders.js';

const DAY = 86_400_000;
const at = (days: number) => new Date(NOW.getTime() - days * DAY).toISOString();
const later = (days: number) => new Date(NOW.getTime() + days * DAY);

describe('BlockedGears: gears read at their move limit, until their moves age out', () => {
  it('keeps a gear at the limit and gives back the moves read within the window', () => {
    const blocked = new BlockedGears();
    blocked.learn('g1', [at(8), at(3), at(1)], 2, NOW);
    expect(blocked.atLimit('g1', 2, NOW)).toEqual([at(3), at(1)]);
    expect(blocked.size).toBe(1);
  });

  it('does not keep a gear below the limit: its later moves would not be known', () => {
    const blocked = new BlockedGears();
    blocked.learn('g1', [at(1)], 2, NOW);
    expect(blocked.atLimit('g1', 2, NOW)).toBeUndefined();
    expect(blocked.size).toBe(0);
  });

  it('forgets a gear once a move leaves the rolling 7 days, so it is read again', () => {
    const blocked = new BlockedGears();
    blocked.learn('g1', [at(3), at(1)], 2, NOW);
    expect(blocked.atLimit('g1', 2, later(3.9))).toHaveLength(2);
    expect(blocked.atLimit('g1', 2, new Date(Date.parse(at(3)) + GEAR_MOVE_WINDOW_MS))).toBeUndefined();
    expect(blocked.size).toBe(0);
  });

  it('answers against the limit configured now: a raised limit frees the gear', () => {
    const blocked = new BlockedGears();
    blocked.learn('g1', [at(3), at(1)], 2, NOW);
    expect(blocked.atLimit('g1', 3, NOW)).toBeUndefined();
    expect(blocked.atLimit('g1', 2, NOW)).toBeUndefined();
  });

  it('keeps at most its bound, the oldest learned giving way', () => {
    const blocked = new BlockedGears(2);
    for (const uuid of ['g1', 'g2', 'g3']) blocked.learn(uuid, [at(2), at(1)], 2, NOW);
    expect(blocked.size).toBe(2);
    expect(blocked.atLimit('g1', 2, NOW)).toBeUndefined();
    expect(blocked.atLimit('g3', 2, NOW)).toHaveLength(2);
  });
});

describe('BlockedGears: listed nodes a gear refused, until it would not or NODE_RELIST_MS passes', () => {
  const gear: GearInfo = { uuid: 'g1', app: 'shop', size: 'small' };
  const budget = (overrides = {}) => poolBudget(config({ scaleDown: { budget: overrides } }), undefined);

  it('refuses the node by its gear, saying when it was listed', () => {
    const blocked = new BlockedGears();
    blocked.rememberNode('n-1', gear, [at(3), at(1)], NOW);
    expect(blocked.nodeRefusal('n-1', budget(), later(0.5 / 24))).toBe(
      `gear g1 (shop) moved 2 times in 7 d (maxMovesPerGear=2) until ${new Date(Date.parse(at(3)) + GEAR_MOVE_WINDOW_MS).toISOString()} (as listed at ${NOW.toISOString()})`,
    );
  });

  it('forgets the node after NODE_RELIST_MS, so it is listed again', () => {
    const blocked = new BlockedGears();
    blocked.rememberNode('n-1', gear, [at(3), at(1)], NOW);
    expect(blocked.nodeRefusal('n-1', budget(), new Date(NOW.getTime() + NODE_RELIST_MS))).toBeUndefined();
    expect(blocked.nodeCount).toBe(0);
  });

  it('forgets the node once its gear would no longer refuse it: a move aged out, or an application no longer do-not-move', () => {
    const blocked = new BlockedGears();
    blocked.rememberNode('n-1', gear, [at(6.99), at(1)], NOW);
    expect(blocked.nodeRefusal('n-1', budget(), new Date(NOW.getTime() + 30 * 60_000))).toBeUndefined();
    blocked.rememberNode('n-2', gear, [], NOW);
    expect(blocked.nodeRefusal('n-2', budget({ doNotMoveApps: ['shop'] }), NOW)).toContain('belongs to shop');
    expect(blocked.nodeRefusal('n-2', budget(), NOW)).toBeUndefined();
  });
});
