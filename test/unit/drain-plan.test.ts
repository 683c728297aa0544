import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { orderGears, planDrain, type PlanInput } from '../../lib/domain/drain-plan.js';
import type { GearInfo, NodeRecord } from '../../lib/domain/model.js';
import { reservationsExcept } from '../../lib/domain/drain.js';
import { reservedSlotsByNode } from '../../lib/domain/utilization.js';
import { NOW, drain, move, node } from '../support/builders.js';

const gear = (uuid: string, app = `app-${uuid}`, size = 'small'): GearInfo => ({ uuid, app, size });
const idleGear = (uuid: string, app = `app-${uuid}`): GearInfo => ({ ...gear(uuid, app), idle: true });

function input(fields: Partial<PlanInput> & { gears: GearInfo[]; nodes: NodeRecord[] }): PlanInput {
  return {
    sourceNodeId: 'src',
    pool: 'd1/small',
    reserved: new Map(),
    fillFraction: 0.8,
    antiAffinity: 'preferred',
    now: NOW,
    statsMaxAge: 5 * 60_000,
    ...fields,
  };
}

function targets(plan: ReturnType<typeof planDrain>): Record<string, string> {
  return Object.fromEntries(plan.placements.map((p) => [p.gear.uuid, p.target]));
}

describe('planDrain: capacity', () => {
  it('fills targets only up to the threshold fraction of their capacity', () => {
    // a: 80% of 10 = 8 slots, holds 6 -> 2 free; b: holds 7 -> 1 free.
    const nodes = [node('src', { gears: 3, max: 10 }), node('a', { gears: 6, max: 10 }), node('b', { gears: 7, max: 10 })];
    const plan = planDrain(input({ gears: [gear('g1'), gear('g2'), gear('g3')], nodes }));
    expect(plan.unplaced).toEqual([]);
    expect(plan.freeSlots).toBe(3);
    const counts = plan.placements.reduce<Record<string, number>>((acc, p) => ({ ...acc, [p.target]: (acc[p.target] ?? 0) + 1 }), {});
    expect(counts).toEqual({ a: 2, b: 1 });
  });

  it('packs: each gear goes to the target with the least room that takes it, ties by node id, so the emptiest node (the next candidate) stays empty', () => {
    const nodes = [node('src', { gears: 2 }), node('c', { gears: 50 }), node('b', { gears: 50 }), node('a', { gears: 10 })];
    const plan = planDrain(input({ gears: [gear('g1'), gear('g2')], nodes }));
    expect(targets(plan)).toEqual({ g1: 'b', g2: 'b' });
    // A full target takes nothing: the next fullest with room does.
    const full = [node('src', { gears: 2, max: 10 }), node('a', { gears: 8, max: 10 }), node('b', { gears: 6, max: 10 }), node('c', { gears: 1, max: 10 })];
    expect(Object.values(targets(planDrain(input({ gears: [gear('g1'), gear('g2')], nodes: full }))))).not.toContain('c');
  });

  it('uses fill fraction 1 for an urgent drain', () => {
    const nodes = [node('src', { gears: 2, max: 10 }), node('a', { gears: 9, max: 10 })];
    expect(planDrain(input({ gears: [gear('g1')], nodes })).unplaced).toHaveLength(1);
    expect(planDrain(input({ gears: [gear('g1')], nodes, fillFraction: 1 })).placements).toHaveLength(1);
  });

  it('never targets the source, draining, provisioning, stale or other-pool nodes', () => {
    const nodes = [
      node('src', { gears: 1 }),
      node('draining', { state: 'draining', gears: 0 }),
      node('booting', { state: 'provisioning' }),
      node('stale', { gears: 0, reportedMinutesAgo: 30 }),
      node('nostats', { gears: null }),
      node('other', { gears: 0, pool: 'd1/medium' }),
    ];
    const plan = planDrain(input({ gears: [gear('g1')], nodes }));
    expect(plan.targets).toBe(0);
    // No node to judge by is a stats gap, not a full pool.
    expect(plan.unplaced).toEqual([{ gear: gear('g1'), reason: 'no active node of pool d1/small with fresh stats has room below 80%', full: false }]);
  });

  it('calls the pool full when every open node with fresh stats is at the fill fraction: demand, not a stats gap', () => {
    const nodes = [node('src', { gears: 1 }), node('a', { gears: 80 }), node('b', { gears: 79 }), node('stale', { gears: 0, reportedMinutesAgo: 30 })];
    const reserved = new Map([['b', 1]]);
    const plan = planDrain(input({ gears: [gear('g1')], nodes, reserved }));
    expect(plan.targets).toBe(0);
    expect(plan.unplaced).toEqual([{ gear: gear('g1'), reason: 'no room left below 80% on the 2 active node(s) of pool d1/small', full: true }]);
  });
});

describe('planDrain: reservations', () => {
  it('counts the pending moves of other drains as used slots, and ignores finished ones', () => {
    const nodes = [node('src', { gears: 2 }), node('a', { gears: 70 }), node('b', { gears: 70 })];
    const other = drain('x', [move('a', 'planned'), move('a', 'moving'), move('a', 'moving'), move('b', 'moved'), move('b', 'failed')]);
    const reserved = reservedSlotsByNode([other]);
    expect(reserved).toEqual(new Map([['a', 3]]));
    // a: 80 - 70 - 3 = 7 free, b: 10 free -> b gets the first gear, then ...
    const plan = planDrain(input({ gears: Array.from({ length: 17 }, (_, i) => gear(`g${String(i).padStart(2, '0')}`)), nodes, reserved }));
    expect(plan.unplaced).toEqual([]);
    expect(plan.placements.filter((p) => p.target === 'a')).toHaveLength(7);
    expect(plan.placements.filter((p) => p.target === 'b')).toHaveLength(10);
    // One gear more than the room left is unplaced.
    const over = planDrain(input({ gears: Array.from({ length: 18 }, (_, i) => gear(`g${i}`)), nodes, reserved }));
    expect(over.unplaced).toHaveLength(1);
    expect(over.unplaced[0]).toMatchObject({ reason: 'no room left below 80% on the 2 active node(s) of pool d1/small', full: true });
  });

  it('avoids the target a gear was just refused by', () => {
    const nodes = [node('src', { gears: 1 }), node('a', { gears: 0 }), node('b', { gears: 40 })];
    const plan = planDrain(input({ gears: [gear('g1')], nodes, avoid: new Map([['g1', new Set(['a'])]]) }));
    expect(targets(plan)).toEqual({ g1: 'b' });
  });
});

describe('planDrain: idle gears (max_active_gears counts only active gears)', () => {
  // a: 80 - 78 = 2 free, b: 80 - 77 = 3 free: 5 slots for 3 active and 6 idle gears.
  const nodes = () => [node('src', { gears: 3, max: 100 }), node('a', { gears: 78, max: 100 }), node('b', { gears: 77, max: 100 })];
  const gears = [...['i1', 'i2', 'i3', 'i4', 'i5', 'i6'].map((id) => idleGear(id)), gear('g1'), gear('g2'), gear('g3')];

  it('places a node whose idle gears outnumber the room: the drain the evaluator priced by active gears is not refused', () => {
    const plan = planDrain(input({ gears, nodes: nodes() }));
    expect(plan.unplaced).toEqual([]);
    expect(plan.placements).toHaveLength(9);
    // Counted as slots, the same gears do not fit: the plan the agent's list used to get.
    const counted = planDrain(input({ gears: gears.map(({ idle: _idle, ...rest }) => rest), nodes: nodes() }));
    expect(counted.unplaced).toHaveLength(4);
  });

  it('gives the slots to the active gears first, never past the fill fraction', () => {
    const plan = planDrain(input({ gears, nodes: nodes() }));
    const active = plan.placements.filter((p) => !p.gear.idle);
    expect(active.map((p) => p.target).sort()).toEqual(['a', 'a', 'b']);
    expect(orderGears(gears).map((g) => g.uuid).slice(0, 3)).toEqual(['g1', 'g2', 'g3']);
  });

  it('sends idle gears where an active gear would go while room lasts, then each to the target with the most room left', () => {
    // Room after the active gears: a 0, b 2. Two idle gears pack into b as if they took slots; the other four
    // alternate by room left, the lower id on a tie: a, b, a, b.
    const plan = planDrain(input({ gears, nodes: nodes() }));
    const idle = plan.placements.filter((p) => p.gear.idle).map((p) => p.target);
    expect(idle).toEqual(['b', 'b', 'a', 'b', 'a', 'b']);
    // Were every idle gear to wake, the targets would stand level: a 78 + 2 + 2, b 77 + 1 + 4.
    const woken = (target: string) => nodes().find((n) => n.nodeId === target)!.stats!.activeGears + plan.placements.filter((p) => p.target === target).length;
    expect([woken('a'), woken('b')]).toEqual([82, 82]);
    expect(plan.placements.every((p) => !p.sharesApp)).toBe(true);
  });

  it('keeps required anti-affinity for idle gears, and leaves them unplaced only when no node could take a gear at all', () => {
    const shop = [idleGear('i1', 'shop'), idleGear('i2', 'shop'), idleGear('i3', 'shop')];
    const required = planDrain(input({ gears: shop, nodes: nodes(), antiAffinity: 'required' }));
    expect(required.placements.map((p) => p.target).sort()).toEqual(['a', 'b']);
    expect(required.unplaced).toEqual([expect.objectContaining({ reason: 'anti-affinity: every node with room already holds a gear of shop', full: false })]);
    const full = planDrain(input({ gears: shop, nodes: [node('src', { gears: 3 }), node('a', { gears: 80 })] }));
    expect(full.unplaced).toHaveLength(3);
    expect(full.unplaced[0]).toMatchObject({ full: true });
  });

  it("holds no slot for an idle gear's pending move, but counts its application for anti-affinity", () => {
    const idleMove = { ...move('a', 'moving', 'i9'), gear: idleGear('i9', 'shop') };
    const other = drain('x', [idleMove, move('a', 'planned')]);
    expect(reservedSlotsByNode([other])).toEqual(new Map([['a', 1]]));
    const { reserved, incomingApps } = reservationsExcept([other], 'none', new Set());
    expect(reserved).toEqual(new Map([['a', 1]]));
    expect(incomingApps.get('a')?.get('shop')).toBe(1);
  });
});

describe('planDrain: anti-affinity', () => {
  it('spreads the gears of one application over different nodes', () => {
    const nodes = [node('src', { gears: 3 }), node('a', { gears: 10 }), node('b', { gears: 20 }), node('c', { gears: 30 })];
    const plan = planDrain(input({ gears: [gear('g1', 'shop'), gear('g2', 'shop'), gear('g3', 'shop')], nodes }));
    expect(new Set(plan.placements.map((p) => p.target))).toEqual(new Set(['a', 'b', 'c']));
    expect(plan.placements.every((p) => !p.sharesApp)).toBe(true);
  });

  it('avoids nodes that already hold a gear of the application (from stats and from pending moves)', () => {
    const a = node('a', { gears: 1 });
    a.stats!.gears = [gear('x1', 'shop')];
    const nodes = [node('src', { gears: 1 }), a, node('b', { gears: 30 }), node('c', { gears: 40 })];
    const incomingApps = new Map([['b', new Map([['shop', 1]])]]);
    const plan = planDrain(input({ gears: [gear('g1', 'shop')], nodes, incomingApps }));
    expect(targets(plan)).toEqual({ g1: 'c' });
  });

  it('relaxes a preferred rule when every node with room holds the app, choosing the fewest', () => {
    const a = node('a', { gears: 2 });
    a.stats!.gears = [gear('x1', 'shop'), gear('x2', 'shop')];
    const b = node('b', { gears: 1 });
    b.stats!.gears = [gear('x3', 'shop')];
    const plan = planDrain(input({ gears: [gear('g1', 'shop')], nodes: [node('src', { gears: 1 }), a, b] }));
    expect(plan.placements).toEqual([{ gear: gear('g1', 'shop'), target: 'b', sharesApp: true }]);
  });

  it('leaves the gear unplaced under a required rule', () => {
    const a = node('a', { gears: 1 });
    a.stats!.gears = [gear('x1', 'shop')];
    const plan = planDrain(input({ gears: [gear('g1', 'shop'), gear('g2', 'blog')], nodes: [node('src', { gears: 2 }), a], antiAffinity: 'required' }));
    expect(targets(plan)).toEqual({ g2: 'a' });
    // A setting refused it, not a full pool.
    expect(plan.unplaced).toEqual([{ gear: gear('g1', 'shop'), reason: 'anti-affinity: every node with room already holds a gear of shop', full: false }]);
  });
});

describe('planDrain: availability zones', () => {
  it("keeps a gear in its node's zone: a node there first, though one in another zone has less room", () => {
    const nodes = [node('src', { gears: 2, zone: 'us-east-1a' }), node('a', { gears: 70, zone: 'us-east-1b' }), node('b', { gears: 10, zone: 'us-east-1a' })];
    expect(targets(planDrain(input({ gears: [gear('g1'), gear('g2')], nodes })))).toEqual({ g1: 'b', g2: 'b' });
  });

  it('goes to another zone only when its own has no room, and never before anti-affinity', () => {
    const full = [node('src', { gears: 2, max: 10, zone: 'us-east-1a' }), node('a', { gears: 8, max: 10, zone: 'us-east-1a' }), node('b', { gears: 2, max: 10, zone: 'us-east-1b' })];
    expect(targets(planDrain(input({ gears: [gear('g1')], nodes: full })))).toEqual({ g1: 'b' });
    const sibling = node('a', { gears: 2, max: 10, zone: 'us-east-1a' });
    sibling.stats!.gears = [gear('x1', 'shop')];
    const nodes = [node('src', { gears: 1, max: 10, zone: 'us-east-1a' }), sibling, node('b', { gears: 5, max: 10, zone: 'us-east-1b' })];
    expect(targets(planDrain(input({ gears: [gear('g1', 'shop')], nodes })))).toEqual({ g1: 'b' });
  });

  it('packs as before where zones are not known', () => {
    const nodes = [node('src', { gears: 2 }), node('a', { gears: 70 }), node('b', { gears: 10 })];
    expect(targets(planDrain(input({ gears: [gear('g1')], nodes })))).toEqual({ g1: 'a' });
  });
});

describe('planDrain: order and impossible plans', () => {
  it('places the largest gears first, then the applications with the most gears', () => {
    const order = orderGears([gear('s1', 'solo'), gear('m1', 'mid', 'medium'), gear('p1', 'pair'), gear('p2', 'pair'), gear('l1', 'big', 'large')]);
    expect(order.map((g) => g.uuid)).toEqual(['l1', 'm1', 'p1', 'p2', 's1']);
  });

  it('gives the scarce room to the largest gear', () => {
    const nodes = [node('src', { gears: 2 }), node('a', { gears: 79 })];
    const plan = planDrain(input({ gears: [gear('small-one', 'x'), gear('large-one', 'y', 'large')], nodes }));
    expect(targets(plan)).toEqual({ 'large-one': 'a' });
    expect(plan.unplaced.map((u) => u.gear.uuid)).toEqual(['small-one']);
  });

  it('reports every gear unplaced when the pool has no other node', () => {
    const plan = planDrain(input({ gears: [gear('g1'), gear('g2')], nodes: [node('src', { gears: 2 })] }));
    expect(plan.placements).toEqual([]);
    expect(plan.unplaced.map((u) => u.gear.uuid)).toEqual(['g1', 'g2']);
  });

  it('is deterministic whatever the input order', () => {
    const nodes = Array.from({ length: 20 }, (_, i) => node(`n${String(i).padStart(2, '0')}`, { gears: (i * 7) % 60 }));
    const gears = Array.from({ length: 40 }, (_, i) => gear(`g${i}`, `app${i % 6}`, i % 5 === 0 ? 'medium' : 'small'));
    const one = planDrain(input({ gears, nodes }));
    const two = planDrain(input({ gears: [...gears].reverse(), nodes: [...nodes].reverse() }));
    expect(two.placements).toEqual(one.placements);
  });
});

describe('planDrain: properties (fast-check)', () => {
  const arbitraryWorld = fc.record({
    targets: fc.array(fc.record({ gears: fc.integer({ min: 0, max: 60 }), max: fc.integer({ min: 1, max: 60 }), state: fc.constantFrom('active', 'active', 'draining', 'provisioning') as fc.Arbitrary<NodeRecord['state']>, apps: fc.array(fc.integer({ min: 0, max: 7 }), { maxLength: 5 }), zone: fc.constantFrom('us-east-1a', 'us-east-1b', undefined) }), { maxLength: 12 }),
    sourceZone: fc.constantFrom('us-east-1a', undefined),
    gears: fc.array(fc.record({ app: fc.integer({ min: 0, max: 7 }), size: fc.constantFrom('small', 'medium', 'large'), idle: fc.boolean() }), { maxLength: 40 }),
    reserved: fc.array(fc.integer({ min: 0, max: 11 }), { maxLength: 20 }),
    fill: fc.constantFrom(0.5, 0.8, 1),
    antiAffinity: fc.constantFrom('preferred', 'required') as fc.Arbitrary<'preferred' | 'required'>,
  });

  it('never overfills a target with active gears, places each gear at most once, accounts for every gear, and keeps required anti-affinity, zones or not', () => {
    fc.assert(
      fc.property(arbitraryWorld, (world) => {
        const nodes = world.targets.map((t, i) => {
          const n = node(`n${String(i).padStart(2, '0')}`, { gears: Math.min(t.gears, 2 * t.max), max: t.max, state: t.state, ...(t.zone ? { zone: t.zone } : {}) });
          if (n.stats) n.stats.gears = t.apps.map((a, g) => gear(`x${i}-${g}`, `app${a}`));
          return n;
        });
        const reserved = new Map<string, number>();
        for (const r of world.reserved) reserved.set(`n${String(r).padStart(2, '0')}`, (reserved.get(`n${String(r).padStart(2, '0')}`) ?? 0) + 1);
        const gears = world.gears.map((g, i) => ({ ...gear(`g${i}`, `app${g.app}`, g.size), ...(g.idle ? { idle: true } : {}) }));
        const source = node('src', { gears: gears.length, ...(world.sourceZone ? { zone: world.sourceZone } : {}) });
        const plan = planDrain(input({ gears, nodes: [source, ...nodes], reserved, fillFraction: world.fill, antiAffinity: world.antiAffinity }));

        expect(plan.placements.length + plan.unplaced.length).toBe(gears.length);
        expect(new Set([...plan.placements, ...plan.unplaced].map((p) => p.gear.uuid)).size).toBe(gears.length);
        const added = new Map<string, number>();
        for (const p of plan.placements) if (!p.gear.idle) added.set(p.target, (added.get(p.target) ?? 0) + 1);
        for (const [target, count] of added) {
          const n = nodes.find((x) => x.nodeId === target)!;
          expect(n.state).toBe('active');
          expect(n.stats!.activeGears + (reserved.get(target) ?? 0) + count).toBeLessThanOrEqual(Math.floor(world.fill * n.stats!.maxActiveGears + 1e-9));
        }
        if (world.antiAffinity === 'required') {
          expect(plan.placements.every((p) => !p.sharesApp)).toBe(true);
          for (const p of plan.placements) {
            const n = nodes.find((x) => x.nodeId === p.target)!;
            expect(n.stats!.gears!.some((g) => g.app === p.gear.app)).toBe(false);
            expect(plan.placements.filter((q) => q.target === p.target && q.gear.app === p.gear.app)).toHaveLength(1);
          }
        }
        // A gear is left unplaced only when no node had room for it at that point: then later gears of any app find none either,
        // unless anti-affinity (required) kept it off the nodes with room.
        // An idle gear takes no slot: under a preferred rule it is left only when no node had room to begin with.
        if (world.antiAffinity === 'preferred' && plan.unplaced.length > 0) {
          const room = nodes.filter((n) => n.state === 'active' && n.stats).reduce((sum, n) => sum + Math.max(0, Math.floor(world.fill * n.stats!.maxActiveGears + 1e-9) - n.stats!.activeGears - (reserved.get(n.nodeId) ?? 0)), 0);
          if (plan.unplaced.some((u) => !u.gear.idle)) expect(plan.placements.filter((p) => !p.gear.idle).length).toBe(room);
          if (plan.unplaced.some((u) => u.gear.idle)) expect(room).toBe(0);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('planDrain: concurrent drains', () => {
  it('never targets a node another drain is about to empty, even while it is still active', () => {
    const nodes = [node('src', { gears: 2 }), node('a', { gears: 60 }), node('b', { gears: 40 })];
    const open = planDrain(input({ gears: [gear('g1'), gear('g2')], nodes }));
    expect(Object.values(targets(open))).toContain('a');
    const plan = planDrain(input({ gears: [gear('g1'), gear('g2')], nodes, draining: new Set(['a']) }));
    expect(targets(plan)).toEqual({ g1: 'b', g2: 'b' });
  });
});
