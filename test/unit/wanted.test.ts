import { describe, expect, it } from 'vitest';
import type { NodeRecord } from '../../lib/domain/model.js';
import { computeUtilization } from '../../lib/domain/utilization.js';
import { heldLevel, heldLevelOf, nodesToHold, sizingSlots } from '../../lib/domain/wanted.js';
import { NOW, POOL, minutesAgo, node, nodes } from '../support/builders.js';

const scaleUp = { threshold: 0.98, target: 0.96, headroomGears: 30 };

describe('heldLevel (what a scale-up leaves a pool holding, and what a drain may leave it holding)', () => {
  it('is what a scale-up sizes to (target), below where one fires (threshold): the band between is the hysteresis', () => {
    expect(heldLevel(2000, scaleUp)).toBe(1920); // 0.96 x 2000, where a scale-up would fire at 0.98 x 2000 = 1960
    // 1,940 gears keep 20 nodes of 100 from scaling up, but a 21st node is not drained for them
    expect(1940).toBeLessThan(2000 * scaleUp.threshold);
    expect(1940).toBeGreaterThan(heldLevel(2000, scaleUp));
  });

  it('keeps the headroom free, which binds first on a small pool', () => {
    expect(heldLevel(300, scaleUp)).toBe(270); // 300 - 30 < 0.96 x 300 = 288
    expect(heldLevel(1000, { ...scaleUp, headroomGears: 0 })).toBe(960);
  });

  it('never uses a target above the threshold (a misordered configuration has no negative band)', () => {
    expect(heldLevel(1000, { threshold: 0.8, target: 0.9, headroomGears: 0 })).toBe(800);
  });
});

describe('nodesToHold (how many nodes a scale-up buys for a demand)', () => {
  it.each([
    // demand, slots, gears per node, headroom, nodes: why
    [1900, 2000, 100, 30, 0, '1,900 <= 0.96 x 2,000 and 100 free: already held'],
    [1921, 2000, 100, 30, 1, 'one gear above the target level'],
    [1950, 2000, 100, 0, 1, '1,950 / 0.96 = 2,032 slots'],
    [3600, 2000, 100, 30, 18, '3,600 / 0.96 = 3,750: the target rules'],
    [3600, 2000, 100, 300, 19, '3,600 + 300 = 3,900: the headroom rules'],
    [250, 300, 100, 30, 0, '250 + 30 <= 300'],
    [280, 300, 100, 30, 1, '280 + 30 > 300: a small pool is sized by its headroom'],
    [0, 0, 100, 30, 1, 'an empty pool still keeps its headroom'],
    [100, 0, 0, 0, 105, 'an unknown node size counts as one slot, never a division by zero'],
  ])('%i gears on %i slots (%i per node, headroom %i) -> +%i: %s', (demand, slots, perNode, headroomGears, expected) => {
    expect(nodesToHold(demand, slots, perNode, { ...scaleUp, headroomGears })).toBe(expected);
  });

  it('is the inverse of heldLevel: the fewest nodes after which the level holds the demand', () => {
    for (const target of [0.5, 0.8, 0.96]) {
      for (const headroomGears of [0, 7, 30, 250]) {
        for (const perNode of [1, 16, 100]) {
          for (const slots of [0, 90, 1000, 2048]) {
            for (const demand of [0, 1, 89, 960, 1000, 1919, 1921, 5000]) {
              const cfg = { threshold: 0.98, target, headroomGears };
              const n = nodesToHold(demand, slots, perNode, cfg);
              const context = JSON.stringify({ target, headroomGears, perNode, slots, demand, n });
              expect(heldLevel(slots + n * perNode, cfg) + 1e-6, context).toBeGreaterThanOrEqual(demand);
              if (n > 0) expect(heldLevel(slots + (n - 1) * perNode, cfg), context).toBeLessThan(demand);
            }
          }
        }
      }
    }
  });
});

describe('sizingSlots (which capacity counts for the sizing rule)', () => {
  const closed = (record: NodeRecord): NodeRecord => ({ ...record, attritionSince: minutesAgo(30) });
  const sized = (pool: NodeRecord[]) => {
    const u = computeUtilization({ pool: POOL, nodes: pool, drains: [], now: NOW, statsMaxAge: 5 * 60_000, expectedGearsPerNode: 100 });
    const slots = sizingSlots(u);
    return { demand: u.demand, slots, nodes: nodesToHold(u.demand, slots, 100, scaleUp) };
  };

  it.each<[string, NodeRecord[], { demand: number; slots: number; nodes: number }]>([
    ['ten full nodes', nodes(10, 97), { demand: 970, slots: 1000, nodes: 1 }],
    // A node booting takes gears within a boot delay: counting it keeps one demand from buying two nodes.
    ['ten full nodes and one provisioning', [...nodes(10, 97), node('boot', { state: 'provisioning' })], { demand: 970, slots: 1100, nodes: 0 }],
    // A node closed for attrition is reopened the moment the pool needs it (attrition.ts): a reserve, not a loss.
    ['nine nodes and one closed for attrition', [...nodes(9, 90), closed(node('closed', { gears: 40 }))], { demand: 850, slots: 1000, nodes: 0 }],
    // A draining node's slots are leaving; its gears must fit on the others.
    ['nine nodes and one draining', [...nodes(9, 90), node('leaving', { state: 'draining', gears: 60 })], { demand: 870, slots: 900, nodes: 1 }],
    // A stale node offers no free slot: only what it last held counts.
    ['nine nodes and one stale', [...nodes(9, 90), node('stale', { gears: 40, reportedMinutesAgo: 30 })], { demand: 850, slots: 940, nodes: 0 }],
  ])('%s', (_name, pool, expected) => {
    expect(sized(pool)).toEqual(expected);
  });
});

describe('heldLevelOf (the level, and which setting sets it)', () => {
  it('names the target, the threshold (when below the target) or the headroom, whichever is lower', () => {
    expect(heldLevelOf(2000, { threshold: 0.98, target: 0.96, headroomGears: 30 })).toEqual({ level: 1920, setBy: 'set by the target: 0.96 x 2000 slots' });
    expect(heldLevelOf(300, { threshold: 0.98, target: 0.96, headroomGears: 30 })).toEqual({ level: 270, setBy: 'set by the headroom: 300 slots - 30 headroomGears' });
    expect(heldLevelOf(1000, { threshold: 0.8, target: 0.9, headroomGears: 0 })).toEqual({ level: 800, setBy: 'set by the threshold: 0.8 x 1000 slots' });
  });
});
