import { describe, expect, it } from 'vitest';
import type { Config } from '../../lib/config/index.js';
import { chooseScaleDownCandidate } from '../../lib/domain/candidates.js';
import { launchedFromTemplate } from '../../lib/domain/drift.js';
import type { DrainRecord, NodeRecord } from '../../lib/domain/model.js';
import { computeUtilization, expectedGearsPerNode } from '../../lib/domain/utilization.js';
import { NOW, POOL, config, drain, move, node, poolConfigOf } from '../support/builders.js';

function choose(nodes: NodeRecord[], options: { drains?: DrainRecord[]; cfg?: Config; extraDemand?: number } = {}) {
  const cfg = options.cfg ?? config();
  const poolConfig = poolConfigOf(cfg);
  const drains = options.drains ?? [];
  const measured = computeUtilization({
    pool: POOL,
    nodes,
    drains,
    now: NOW,
    statsMaxAge: cfg.statsMaxAge,
    expectedGearsPerNode: expectedGearsPerNode(poolConfig, nodes),
  });
  const extra = options.extraDemand ?? 0;
  const utilization = { ...measured, demand: measured.demand + extra, freeSlots: measured.freeSlots - extra };
  return chooseScaleDownCandidate({ nodes, drains, poolConfig, config: cfg, now: NOW, utilization });
}

function utilizationOf(nodes: NodeRecord[], cfg: Config) {
  return computeUtilization({ pool: POOL, nodes, drains: [], now: NOW, statsMaxAge: cfg.statsMaxAge, expectedGearsPerNode: expectedGearsPerNode(poolConfigOf(cfg), nodes) });
}

const strategy = (candidateStrategy: 'least-disruption' | 'least-gears' | 'least-utilized' | 'oldest' | 'newest') => config({ scaleDown: { candidateStrategy } });

describe('chooseScaleDownCandidate', () => {
  it('least-gears: the node with the fewest gears', () => {
    const choice = choose([node('a', { gears: 30 }), node('b', { gears: 10 }), node('c', { gears: 20 })], { cfg: strategy('least-gears') });
    // It stays first up to c's 20 gears: the drain is called off past them (drain-price.ts).
    expect(choice).toEqual({ nodeId: 'b', activeGears: 10, strategy: 'least-gears', rejected: [], price: { gears: 10, limit: 20, next: 'c', nextGears: 20 } });
  });

  it('least-disruption (the default): fewest moves that restart a tenant, then fewest gears', () => {
    const withKinds = (id: string, gears: number, idleGears?: number, disruptiveGears?: number) => {
      const n = node(id, { gears });
      if (idleGears !== undefined) n.stats!.idleGears = idleGears;
      if (disruptiveGears !== undefined) n.stats!.disruptiveGears = disruptiveGears;
      return n;
    };
    // a: 30 gears, 4 disruptive; b: 10 gears of unknown kind (10 disruptive); c: 20 gears, 4 disruptive
    const nodes = [withKinds('a', 30, 20, 4), withKinds('b', 10), withKinds('c', 20, 0, 4)];
    // Level with a on disruptive moves and fewer gears: one new gear (a disruptive move) would put it behind a.
    expect(choose(nodes)).toEqual({ nodeId: 'c', activeGears: 20, strategy: 'least-disruption', rejected: [], price: { gears: 20, limit: 20, next: 'a', nextGears: 30 } });
    expect(choose(nodes, { cfg: strategy('least-gears') }).nodeId).toBe('b');
    // idle gears are not disruptive even when only idleGears is reported
    expect(choose([withKinds('x', 30, 28), withKinds('y', 10, 0, 5)]).nodeId).toBe('x');
  });

  it('a drifted node comes first among nodes level on disruptive moves, never before one that restarts fewer tenants', () => {
    const oldImage = { image: 'ami-0aaaaaaaaaaaaaaaa', settings: 'x' };
    const cfg = config({}, { template: { imageId: 'ami-0bbbbbbbbbbbbbbbb' } } as never);
    const current = { image: 'ami-0bbbbbbbbbbbbbbbb', settings: launchedFromTemplate(poolConfigOf(cfg).template).settings };
    const quiet = (id: string, gears: number, disruptiveGears: number, launchedFrom = current) => {
      const n = node(id, { gears, launchedFrom });
      n.stats!.idleGears = gears - disruptiveGears;
      n.stats!.disruptiveGears = disruptiveGears;
      return n;
    };
    // b and c restart 2 tenants each; c is drifted, so it goes before b despite 10 more gears (idle ones).
    const nodes = [quiet('a', 5, 4), quiet('b', 20, 2), quiet('c', 30, 2, oldImage)];
    const choice = choose(nodes, { cfg });
    expect(choice.nodeId).toBe('c');
    expect(choice.due).toBe('drifted: image ami-0aaaaaaaaaaaaaaaa -> ami-0bbbbbbbbbbbbbbbb');
    // Level with b on disruptive moves and drifted, it stays first until a new (disruptive) gear lands on it.
    expect(choice.price).toEqual({ gears: 30, limit: 30, next: 'b', nextGears: 20 });
    // One disruptive move fewer outranks drift: a restart is what a drain costs a tenant.
    const fewer = [quiet('b', 20, 1), quiet('c', 30, 2, oldImage)];
    expect(choose(fewer, { cfg }).nodeId).toBe('b');
    // With no template given (nothing known of it) the order is the gear count's.
    expect(chooseScaleDownCandidate({ nodes, drains: [], poolConfig: { protectedNodes: [] }, config: cfg, now: NOW, utilization: utilizationOf(nodes, cfg) }).nodeId).toBe('b');
  });

  it('a candidate the check refuses is skipped with its reason, the next one is checked', () => {
    const utilization = computeUtilization({ pool: POOL, nodes: [node('a', { gears: 10 }), node('b', { gears: 20 }), node('c', { gears: 60 })], drains: [], now: NOW, statsMaxAge: config().statsMaxAge, expectedGearsPerNode: 100 });
    const cfg = config();
    const seen: Array<[string, number]> = [];
    const choice = chooseScaleDownCandidate(
      { nodes: [node('a', { gears: 10 }), node('b', { gears: 20 }), node('c', { gears: 60 })], drains: [], poolConfig: poolConfigOf(cfg), config: cfg, now: NOW, utilization },
      (n, capacityAfter) => {
        seen.push([n.nodeId, capacityAfter]);
        return n.nodeId === 'a' ? { refused: 'does not pay' } : { accepted: 'pays' };
      },
    );
    expect(seen).toEqual([['a', 200], ['b', 200]]);
    expect(choice).toEqual({
      nodeId: 'b',
      activeGears: 20,
      strategy: 'least-disruption',
      accepted: 'pays',
      rejected: [{ nodeId: 'a', reason: 'does not pay' }],
      price: { gears: 20, limit: 60, next: 'c', nextGears: 60 },
    });
  });

  it('least-gears: ties go to the lower utilization, then the node id', () => {
    expect(choose([node('a', { gears: 10, max: 50 }), node('b', { gears: 10, max: 100 }), node('c', { gears: 10, max: 100 })]).nodeId).toBe('b');
  });

  it('least-utilized: the lowest activeGears / maxActiveGears', () => {
    const nodes = [node('a', { gears: 30, max: 200 }), node('b', { gears: 20, max: 100 }), node('c', { gears: 60, max: 100 })];
    expect(choose(nodes, { cfg: strategy('least-utilized') }).nodeId).toBe('a');
    expect(choose(nodes, { cfg: strategy('least-gears') }).nodeId).toBe('b');
  });

  it('oldest and newest: by creation time', () => {
    const nodes = [
      node('mid', { gears: 10, createdMinutesAgo: 60 }),
      node('old', { gears: 30, createdMinutesAgo: 600 }),
      node('new', { gears: 20, createdMinutesAgo: 15 }),
    ];
    expect(choose(nodes, { cfg: strategy('oldest') })).toMatchObject({ nodeId: 'old', strategy: 'oldest' });
    expect(choose(nodes, { cfg: strategy('newest') })).toMatchObject({ nodeId: 'new', strategy: 'newest' });
  });

  it('never chooses a protected node, by flag or by the pool protectedNodes list', () => {
    const cfg = config({}, { protectedNodes: ['listed'] });
    const choice = choose([node('flagged', { gears: 0, protected: true }), node('listed', { gears: 1 }), node('c', { gears: 20 }), node('d', { gears: 25 })], { cfg });
    expect(choice.nodeId).toBe('c');
    expect(choice.rejected).toEqual([
      { nodeId: 'flagged', reason: 'protected' },
      { nodeId: 'listed', reason: 'protected (pool protectedNodes)' },
    ]);
  });

  it('refuses nodes with stale or missing stats, and only considers active nodes', () => {
    const choice = choose([
      node('stale', { gears: 0, reportedMinutesAgo: 10 }),
      node('silent', { gears: null }),
      node('draining', { state: 'draining', gears: 0 }),
      node('prov', { state: 'provisioning' }),
      node('ok', { gears: 20 }),
      node('other', { gears: 30 }),
    ]);
    expect(choice.nodeId).toBe('ok');
    expect(choice.rejected.map((r) => r.nodeId)).toEqual(['stale', 'silent']);
    expect(choice.rejected[0]!.reason).toMatch(/^stale stats \(last report /);
    expect(choice.rejected[1]!.reason).toBe('no stats reported');
  });

  it('refuses a node receiving gears of an active drain', () => {
    const drains = [drain('d', [move('a'), move('a', 'moving')])];
    const choice = choose([node('a', { gears: 0 }), node('b', { gears: 20 }), node('c', { gears: 20 }), node('d', { state: 'draining', gears: 2 })], { drains });
    expect(choice.nodeId).toBe('b');
    expect(choice.rejected).toEqual([{ nodeId: 'a', reason: 'receiving gears of drain drain-d (2 pending moves)' }]);
  });

  it('refuses a node whose gears would push the other nodes above the scale-up threshold', () => {
    // a's 30 gears would need 30 slots; b and c have 5 each below 80%
    const choice = choose([node('a', { gears: 30 }), node('b', { gears: 75 }), node('c', { gears: 75 })]);
    expect(choice.nodeId).toBeUndefined();
    expect(choice.rejected).toEqual([
      { nodeId: 'a', reason: 'gears do not fit below 80% on the other nodes (30 gears, 10 free slots)' },
      { nodeId: 'b', reason: 'gears do not fit below 80% on the other nodes (75 gears, 55 free slots)' },
      { nodeId: 'c', reason: 'gears do not fit below 80% on the other nodes (75 gears, 55 free slots)' },
    ]);
  });

  it('refuses a node whose removal would leave the pool at or above the scale-up threshold', () => {
    // a is empty (its gears fit anywhere) but without its 100 slots the pool is at 170/200
    const choice = choose([node('a', { gears: 0 }), node('b', { gears: 100 }), node('c', { gears: 70 })]);
    expect(choice.nodeId).toBeUndefined();
    expect(choice.rejected[0]).toEqual({ nodeId: 'a', reason: 'pool would be at 0.85 >= 0.80 without it' });
    expect(choice.rejected.map((r) => r.nodeId)).toEqual(['a', 'c', 'b']);
  });

  it('goes on to the next candidate when the first is refused, listing only the refused ones', () => {
    // big has no gears but its 200 slots carry the pool: without them it is at 185/210
    const choice = choose([node('big', { gears: 0, max: 200 }), node('small', { gears: 5, max: 10 }), node('b', { gears: 90 }), node('c', { gears: 90 })]);
    expect(choice).toEqual({
      nodeId: 'small',
      activeGears: 5,
      strategy: 'least-disruption',
      rejected: [{ nodeId: 'big', reason: 'pool would be at 0.88 >= 0.80 without it' }],
      price: { gears: 5, limit: 90, next: 'b', nextGears: 90 },
    });
    // y (39) fits nowhere (x has 0, z 35 free below 80%), nor z (45: 0 + 1), nor x (40: 1 + 35)
    const crowded = choose([node('x', { gears: 40, max: 50 }), node('y', { gears: 39, max: 50 }), node('z', { gears: 45, max: 100 })]);
    expect(crowded.nodeId).toBeUndefined();
    expect(crowded.rejected.map((r) => r.nodeId)).toEqual(['y', 'x', 'z']);
  });

  it('counts slots reserved by pending moves on the other nodes', () => {
    const nodes = [node('a', { gears: 20 }), node('b', { gears: 50 }), node('c', { gears: 50 }), node('d', { state: 'draining', gears: 0 })];
    // Without the drain a's 20 gears fit (30 + 30 free below 80%).
    expect(choose(nodes).nodeId).toBe('a');
    // The drain of d still moves 25 gears to b and 20 to c: 5 + 10 free slots left.
    const moves = [...Array.from({ length: 25 }, () => move('b', 'moving')), ...Array.from({ length: 20 }, () => move('c', 'moving'))];
    const choice = choose(nodes, { drains: [drain('d', moves)] });
    expect(choice.nodeId).toBeUndefined();
    expect(choice.rejected).toContainEqual({ nodeId: 'a', reason: 'gears do not fit below 80% on the other nodes (20 gears, 15 free slots)' });
    expect(choice.rejected.filter((r) => r.reason.startsWith('receiving')).map((r) => r.nodeId)).toEqual(['b', 'c']);
  });

  it('keeps the configured headroom after the drain', () => {
    const cfg = config({ scaleUp: { headroomGears: 200 } });
    const choice = choose([node('a', { gears: 10 }), node('b', { gears: 10 }), node('c', { gears: 10 })], { cfg });
    expect(choice.nodeId).toBeUndefined();
    expect(choice.rejected[0]).toEqual({ nodeId: 'a', reason: 'pool would keep 170 free slots < headroomGears 200' });
  });

  it('names the whole free slots it would keep when demand is judged at a fractional level', () => {
    const cfg = config({ scaleUp: { headroomGears: 200 } });
    // The pays-off gate judges demand at its confident level, which a trend forecast makes fractional.
    const choice = choose([node('a', { gears: 10 }), node('b', { gears: 10 }), node('c', { gears: 10 })], { cfg, extraDemand: 0.6 });
    expect(choice.rejected[0]).toEqual({ nodeId: 'a', reason: 'pool would keep 169 free slots < headroomGears 200' });
  });

  it('checks candidates in exactly the strategy order (every one refused here)', () => {
    const many = Array.from({ length: 200 }, (_, i) =>
      node(`n${String(i).padStart(3, '0')}`, { gears: (i * 37) % 23, max: 50 + ((i * 11) % 7) * 10, createdMinutesAgo: 10 + ((i * 53) % 97) }),
    );
    const key = {
      'least-gears': (n: NodeRecord) => [n.stats!.activeGears, n.stats!.activeGears / n.stats!.maxActiveGears],
      'least-utilized': (n: NodeRecord) => [n.stats!.activeGears / n.stats!.maxActiveGears, n.stats!.activeGears],
      oldest: (n: NodeRecord) => [Date.parse(n.createdAt)],
      newest: (n: NodeRecord) => [-Date.parse(n.createdAt)],
    } as const;
    for (const name of ['least-gears', 'least-utilized', 'oldest', 'newest'] as const) {
      const cfg = config({ scaleUp: { headroomGears: 1_000_000 }, scaleDown: { candidateStrategy: name } });
      const expected = [...many]
        .sort((a, b) => {
          const ka = key[name](a);
          const kb = key[name](b);
          for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i]! - kb[i]!;
          return a.nodeId < b.nodeId ? -1 : 1;
        })
        .map((n) => n.nodeId);
      const choice = choose(many, { cfg });
      expect(choice.nodeId, name).toBeUndefined();
      expect(choice.rejected.map((r) => r.nodeId), name).toEqual(expected);
    }
  });

  it('allows a pool to drain its last, empty node', () => {
    expect(choose([node('only', { gears: 0 })]).nodeId).toBe('only');
  });
});
