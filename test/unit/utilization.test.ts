import { describe, expect, it } from 'vitest';
import { computeUtilization, expectedGearsPerNode, landedSinceReport, nodeFreeSlots, reservedSlotsByNode } from '../../lib/domain/utilization.js';
import type { NodeRecord } from '../../lib/domain/model.js';
import { NOW, POOL, drain, minutesAgo, move, node } from '../support/builders.js';

const FIVE_MIN = 5 * 60_000;

function utilization(nodes: NodeRecord[], drains = [] as ReturnType<typeof drain>[], gearsPerNode = 100) {
  return computeUtilization({ pool: POOL, nodes, drains, now: NOW, statsMaxAge: FIVE_MIN, expectedGearsPerNode: gearsPerNode });
}

describe('computeUtilization', () => {
  it('divides the gears of active nodes by their slots', () => {
    const u = utilization([node('a', { gears: 30 }), node('b', { gears: 50 })]);
    expect(u).toMatchObject({ pool: POOL, demand: 80, capacity: 200, provisioningCapacity: 0, freeSlots: 120, staleNodes: [] });
    expect(u.utilization).toBeCloseTo(0.4);
    expect(u.nodesByState).toEqual({ active: 2 });
  });

  it('is 0 for an empty pool and Infinity for demand with no capacity', () => {
    expect(utilization([]).utilization).toBe(0);
    const onlyDraining = utilization([node('d', { state: 'draining', gears: 10 })]);
    expect(onlyDraining.demand).toBe(10);
    expect(onlyDraining.capacity).toBe(0);
    expect(onlyDraining.utilization).toBe(Infinity);
    expect(onlyDraining.freeSlots).toBe(-10);
  });

  it('counts gears of draining nodes as demand but not their slots as capacity', () => {
    const u = utilization([node('a', { gears: 20 }), node('d', { state: 'draining', gears: 30 })]);
    expect(u.demand).toBe(50);
    expect(u.capacity).toBe(100);
    expect(u.utilization).toBeCloseTo(0.5);
  });

  it('counts a stale node as full (its last gears are demand and capacity, no free slot) and reports it', () => {
    const u = utilization([node('a', { gears: 20 }), node('old', { gears: 40, reportedMinutesAgo: 6 })]);
    expect(u.demand).toBe(60);
    expect(u.capacity).toBe(140);
    expect(u.freeSlots).toBe(80);
    expect(u.staleNodes).toEqual(['old']);
  });

  it('counts an active node that never reported as 0/0 and reports it as stale', () => {
    const u = utilization([node('a', { gears: 20 }), node('silent', { gears: null })]);
    expect(u.demand).toBe(20);
    expect(u.capacity).toBe(100);
    expect(u.staleNodes).toEqual(['silent']);
  });

  it('treats stats exactly statsMaxAge old as fresh', () => {
    expect(utilization([node('a', { gears: 10, reportedMinutesAgo: 5 })]).staleNodes).toEqual([]);
  });

  it('counts provisioning nodes at the expected gears per node', () => {
    const u = utilization([node('a', { gears: 90 }), node('p1', { state: 'provisioning' }), node('p2', { state: 'provisioning' })], [], 80);
    expect(u.provisioningCapacity).toBe(160);
    expect(u.utilization).toBeCloseTo(90 / 260);
    expect(u.freeSlots).toBe(170);
    expect(u.nodesByState).toEqual({ active: 1, provisioning: 2 });
  });

  it('counts a draining node’s gears once: as demand, not again as the slots its moves reserve', () => {
    const d = drain('d', [move('a', 'planned'), move('a', 'moving'), move('b', 'moved'), move('b', 'failed')]);
    const finished = drain('e', [move('a', 'planned')], { state: 'aborted' });
    const u = utilization([node('a', { gears: 10 }), node('b', { gears: 10 }), node('d', { state: 'draining', gears: 4 })], [d, finished]);
    expect(u.demand).toBe(24);
    expect(u.freeSlots).toBe(200 - 24);
  });

  it('leaves terminated nodes out and counts the other states', () => {
    const u = utilization([
      node('a', { gears: 10 }),
      node('t', { state: 'terminated' }),
      node('x', { state: 'drained' }),
      node('f', { state: 'failed' }),
    ]);
    expect(u.nodesByState).toEqual({ active: 1, drained: 1, failed: 1 });
    expect(u.demand).toBe(10);
  });
});

describe('expectedGearsPerNode', () => {
  it('prefers the configured gearsPerNode', () => {
    expect(expectedGearsPerNode({ gearsPerNode: 40 }, [node('a', { max: 100 })])).toBe(40);
  });

  it('uses the median maxActiveGears of nodes that reported', () => {
    const nodes = [node('a', { max: 50 }), node('b', { max: 200 }), node('c', { max: 80 }), node('p', { state: 'provisioning' })];
    expect(expectedGearsPerNode({ gearsPerNode: undefined }, nodes)).toBe(80);
    // even count: the lower median (never promises more than half the nodes hold)
    expect(expectedGearsPerNode({ gearsPerNode: undefined }, [node('a', { max: 50 }), node('b', { max: 200 })])).toBe(50);
  });

  it('falls back to 100 without any stats', () => {
    expect(expectedGearsPerNode({ gearsPerNode: undefined }, [node('p', { state: 'provisioning' })])).toBe(100);
    expect(expectedGearsPerNode({ gearsPerNode: undefined }, [])).toBe(100);
  });
});

describe('nodeFreeSlots', () => {
  it('is floor(threshold x max) - gears - reserved on the node', () => {
    const d = drain('d', [move('a'), move('a'), move('b')]);
    expect(nodeFreeSlots(node('a', { gears: 50, max: 100 }), [d], 0.8)).toBe(80 - 50 - 2);
    expect(nodeFreeSlots(node('a', { gears: 50, max: 100 }), reservedSlotsByNode([d]), 0.8)).toBe(28);
    expect(nodeFreeSlots(node('c', { gears: 0, max: 15 }), [d], 0.8)).toBe(12);
  });

  it('is exact for fractions that floating point cannot hold', () => {
    expect(nodeFreeSlots(node('a', { gears: 0, max: 100 }), [], 0.57)).toBe(57);
  });

  it('can be negative for a node above the threshold', () => {
    expect(nodeFreeSlots(node('a', { gears: 95, max: 100 }), [], 0.8)).toBe(-15);
  });

  it('offers nothing on a node without stats', () => {
    expect(nodeFreeSlots(node('a', { gears: null }), [drain('d', [move('a')])], 0.8)).toBe(-1);
  });
});

describe('gears that landed after their target last reported', () => {
  const landed = (target: string, finishedMinutesAgo: number) => ({ ...move(target, 'moved'), finishedAt: minutesAgo(finishedMinutesAgo) });

  it('hold their slot until the target reports them', () => {
    // a reported 2 minutes ago: the gear that landed a minute ago is not in its 50 yet; the one from 3 minutes ago is.
    const nodes = [node('a', { gears: 50, max: 100, reportedMinutesAgo: 2 }), node('b', { gears: 10, max: 100, reportedMinutesAgo: 0 })];
    const d = drain('src', [landed('a', 1), landed('a', 3), landed('b', 1), move('b')]);
    expect(reservedSlotsByNode([d], nodes)).toEqual(new Map([['a', 1], ['b', 1]]));
    expect(nodeFreeSlots(nodes[0]!, reservedSlotsByNode([d], nodes), 0.98)).toBe(98 - 50 - 1);
    expect(nodeFreeSlots(nodes[0]!, [d], 0.98)).toBe(98 - 50 - 1);
    // Without the nodes, only the pending move counts (as before).
    expect(reservedSlotsByNode([d])).toEqual(new Map([['b', 1]]));
  });

  it('counts only moves that finished, on a node that has reported', () => {
    const isLanded = landedSinceReport([node('a', { reportedMinutesAgo: 2 }), node('new', { state: 'provisioning' })]);
    expect(isLanded({ state: 'moved', target: 'a', finishedAt: minutesAgo(1) })).toBe(true);
    expect(isLanded({ state: 'moved', target: 'a', finishedAt: minutesAgo(2) })).toBe(false);
    expect(isLanded({ state: 'moving', target: 'a', finishedAt: minutesAgo(1) })).toBe(false);
    expect(isLanded({ state: 'failed', target: 'a', finishedAt: minutesAgo(1) })).toBe(false);
    expect(isLanded({ state: 'moved', target: 'a' })).toBe(false);
    expect(isLanded({ state: 'moved', target: 'new', finishedAt: minutesAgo(1) })).toBe(false);
    expect(isLanded({ state: 'moved', target: 'gone', finishedAt: minutesAgo(1) })).toBe(false);
  });

  it('compares times that are not in canonical form by their instant', () => {
    const reported = node('a', { reportedMinutesAgo: 2 });
    reported.stats!.reportedAt = '2025-03-10T09:58:00Z';
    const isLanded = landedSinceReport([reported]);
    expect(isLanded({ state: 'moved', target: 'a', finishedAt: '2025-03-10T09:59:00.000Z' })).toBe(true);
    expect(isLanded({ state: 'moved', target: 'a', finishedAt: '2025-03-10T09:57:59.999Z' })).toBe(false);
  });
});
