import { describe, expect, it } from 'vitest';
import { NodeNotInDistrictError } from '../../lib/ports/platform-errors.js';
import { SimulatedPlatform } from '../../lib/adapters/local/simulated-platform.js';
import { ConflictError, NotFoundError, ValidationError } from '../../lib/errors.js';

/** A clock that moves only when told to. */
class VirtualClock {
  private ms: number;
  constructor(start: string) {
    this.ms = Date.parse(start);
  }
  now(): Date {
    return new Date(this.ms);
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

const gear = (uuid: string, app = 'shop') => ({ uuid, app, size: 'small' });

function setup(options: { moveFailureRate?: number; random?: () => number } = {}) {
  const clock = new VirtualClock('2026-03-01T12:00:00Z');
  const platform = new SimulatedPlatform(clock, { moveDurationMs: 30_000, moveFailureRate: options.moveFailureRate ?? 0, ...(options.random ? { random: options.random } : {}) });
  platform.registerNode('d1', 'small', 'n1', 3);
  platform.registerNode('d1', 'small', 'n2', 3);
  return { clock, platform };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('SimulatedPlatform', () => {
  it('finds no placement problem through moves, and names a gear its bookkeeping holds twice', async () => {
    const { clock, platform } = setup();
    platform.putGear('n1', gear('g1'));
    platform.putGear('n1', gear('g2'));
    const handle = await platform.startMove(gear('g1'), 'n1', 'n2');
    expect(platform.gearPlacementProblems()).toEqual([]);
    clock.advance(30_000);
    expect((await platform.moveStatus(handle)).state).toBe('succeeded');
    expect(platform.gearPlacementProblems()).toEqual([]);
    expect(platform.hasGear('g1')).toBe(true);
    // A bug that left g2 on both nodes: the check must see it.
    (platform as unknown as { nodes: Map<string, { gears: Map<string, unknown> }> }).nodes.get('n2')!.gears.set('g2', gear('g2'));
    expect(platform.gearPlacementProblems()).toEqual(['gear g2 is held by n2 but located on n1', '3 gears held by nodes, 2 located']);
  });

  it("checks only the gears changed since the last check, and still sees a changed gear's bookkeeping go wrong", async () => {
    const { clock, platform } = setup();
    const books = platform as unknown as { nodes: Map<string, { gears: Map<string, unknown> }>; locations: Map<string, string> };
    platform.putGear('n1', gear('g1'));
    platform.putGear('n1', gear('g2'));
    expect(platform.gearPlacementProblems('changed')).toEqual([]);
    await platform.startMove(gear('g1'), 'n1', 'n2');
    clock.advance(30_000);
    expect(platform.gearPlacementProblems('changed')).toEqual([]);
    // A bug in a step that changed g2: its location moved, the gear did not.
    books.locations.set('g2', 'n2');
    (platform as unknown as { changed: Set<string> }).changed.add('g2');
    expect(platform.gearPlacementProblems('changed')).toEqual(['gear g2 is located on n2, which does not hold it']);
    // A gear held twice shows in the totals, changed or not.
    books.locations.set('g2', 'n1');
    books.nodes.get('n2')!.gears.set('g2', gear('g2'));
    expect(platform.gearPlacementProblems('changed')).toEqual(['3 gears held by nodes, 2 located']);
    // The whole check still names it.
    expect(platform.gearPlacementProblems()).toEqual(['gear g2 is held by n2 but located on n1', '3 gears held by nodes, 2 located']);
  });

  it('counts each node\'s gears by kind as they are placed, removed and moved', async () => {
    const { clock, platform } = setup();
    platform.putGear('n1', gear('idle-1'));
    expect(platform.gearKinds('n1')).toBeUndefined();
    platform.countGearKinds('d1', 'small', (uuid) => uuid.split('-')[0]);
    expect(Object.fromEntries(platform.gearKinds('n1')!)).toEqual({ idle: 1 });
    expect(platform.placeGear('d1', 'small', gear('head-1'))).toBe('n2');
    platform.putGear('n1', gear('head-2'));
    await platform.startMove(gear('head-2'), 'n1', 'n2');
    // Until the move completes the gear is on its source.
    expect(Object.fromEntries(platform.gearKinds('n1')!)).toEqual({ idle: 1, head: 1 });
    clock.advance(30_000);
    expect(Object.fromEntries(platform.gearKinds('n1')!)).toEqual({ idle: 1, head: 0 });
    expect(Object.fromEntries(platform.gearKinds('n2')!)).toEqual({ head: 2 });
    platform.removeGear('idle-1');
    expect(Object.fromEntries(platform.gearKinds('n1')!)).toEqual({ idle: 0, head: 0 });
  });

  it('places gears on the least-loaded active node of the district/profile, and reports full', async () => {
    const { platform } = setup();
    expect(platform.placeGear('d1', 'small', gear('a'))).toBe('n1');
    expect(platform.placeGear('d1', 'small', gear('b'))).toBe('n2');
    await platform.deactivateNode('d1', 'n1');
    expect(platform.placeGear('d1', 'small', gear('c'))).toBe('n2');
    expect(platform.placeGear('d1', 'small', gear('d'))).toBe('n2');
    expect(platform.placeGear('d1', 'small', gear('e'))).toBeUndefined();
    expect(platform.placeGear('d2', 'small', gear('f'))).toBeUndefined();
    expect(platform.nodeFacts('n2')).toMatchObject({ activeGears: 3, maxActiveGears: 3, active: true });
  });

  it('moves a gear atomically at completion time: on the source until then, on the target after', async () => {
    const { clock, platform } = setup();
    platform.putGear('n1', gear('a'));
    const handle = await platform.startMove(gear('a'), 'n1', 'n2');
    clock.advance(29_999);
    expect(await platform.moveStatus(handle)).toEqual({ state: 'running' });
    expect(platform.gearLocations().get('a')).toEqual(['n1']);
    clock.advance(1);
    expect(await platform.moveStatus(handle)).toEqual({ state: 'succeeded' });
    expect(platform.gearLocations().get('a')).toEqual(['n2']);
    expect((await platform.listGears('n1')).map((g) => g.uuid)).toEqual([]);
  });

  it('leaves a failed move on its source; scripted failures come first', async () => {
    const { clock, platform } = setup();
    platform.putGear('n1', gear('a'));
    platform.scriptMoveFailures('a', 1);
    const first = await platform.startMove(gear('a'), 'n1', 'n2');
    clock.advance(30_000);
    expect((await platform.moveStatus(first)).state).toBe('failed');
    expect(platform.gearLocations().get('a')).toEqual(['n1']);
    const second = await platform.startMove(gear('a'), 'n1', 'n2');
    clock.advance(30_000);
    expect(await platform.moveStatus(second)).toEqual({ state: 'succeeded' });
  });

  it('draws failures from its random source at the configured rate', async () => {
    const { clock, platform } = setup({ moveFailureRate: 0.5, random: () => 0.4 });
    platform.putGear('n1', gear('a'));
    const handle = await platform.startMove(gear('a'), 'n1', 'n2');
    clock.advance(30_000);
    expect((await platform.moveStatus(handle)).state).toBe('failed');
  });

  it('returns the same move for the same idempotency key instead of moving twice', async () => {
    const { clock, platform } = setup();
    platform.putGear('n1', gear('a'));
    const one = await platform.startMove(gear('a'), 'n1', 'n2', { idempotencyKey: 'k1' });
    const two = await platform.startMove(gear('a'), 'n1', 'n2', { idempotencyKey: 'k1', mayExist: true });
    expect(two).toEqual(one);
    clock.advance(30_000);
    expect(await platform.startMove(gear('a'), 'n1', 'n2', { idempotencyKey: 'k1' })).toEqual(one);
    expect(platform.moveHistory()).toHaveLength(1);
  });

  it('holds a slot on the target while a move is in flight, and refuses a full target', async () => {
    const { platform } = setup();
    platform.registerNode('d1', 'small', 'n3', 1);
    platform.putGear('n1', gear('a'));
    platform.putGear('n1', gear('b'));
    await platform.startMove(gear('a'), 'n1', 'n3');
    expect(await rejection(platform.startMove(gear('b'), 'n1', 'n3'))).toBeInstanceOf(ConflictError);
    expect(await rejection(platform.startMove(gear('a'), 'n1', 'n2'))).toBeInstanceOf(ConflictError);
  });

  it('refuses moves of unknown gears, across districts, and removal of a node that holds gears', async () => {
    const { platform } = setup();
    platform.registerNode('d2', 'small', 'm1', 3);
    platform.putGear('n1', gear('a'));
    expect(await rejection(platform.startMove(gear('zz'), 'n1', 'n2'))).toBeInstanceOf(NotFoundError);
    expect(await rejection(platform.startMove(gear('a'), 'n2', 'n1'))).toBeInstanceOf(NotFoundError);
    expect(await rejection(platform.startMove(gear('a'), 'n1', 'm1'))).toBeInstanceOf(ValidationError);
    expect(await rejection(platform.removeNode('d1', 'n1'))).toBeInstanceOf(ConflictError);
    expect(await rejection(platform.listGears('ghost'))).toBeInstanceOf(NotFoundError);
    expect(platform.removeGear('a')).toBe(true);
    await platform.removeNode('d1', 'n1');
    // As the broker: a second remove-node answers "doesn't belong to district" (the wanted end state, as a NotFoundError).
    expect(await rejection(platform.removeNode('d1', 'n1'))).toBeInstanceOf(NodeNotInDistrictError);
    expect(platform.hasNode('n1')).toBe(false);
  });
});

describe('SimulatedPlatform: idle gears, counted as origin-server counts them (idleTakesNoSlot)', () => {
  const idle = (uuid: string, app = 'shop') => ({ ...gear(uuid, app), idle: true });

  function idleSetup(idleTakesNoSlot: boolean) {
    const clock = new VirtualClock('2026-03-01T12:00:00Z');
    const platform = new SimulatedPlatform(clock, { moveDurationMs: 30_000, moveFailureRate: 0, idleTakesNoSlot });
    platform.registerNode('d1', 'small', 'n1', 2);
    platform.registerNode('d1', 'small', 'n2', 2);
    return { clock, platform };
  }

  it('leaves idle gears out of activeGears and out of the slots, so a full node still takes them', async () => {
    const { clock, platform } = idleSetup(true);
    platform.putGear('n1', gear('a1', 'a'));
    platform.putGear('n1', gear('a2', 'b'));
    platform.putGear('n1', idle('i1'));
    expect(platform.nodeFacts('n1')).toMatchObject({ activeGears: 2, maxActiveGears: 2 });
    expect(platform.nodeLoad('n1').activeGears).toBe(2);
    // An active gear finds n1 full; an idle one moves there, and holds no slot on its way.
    platform.putGear('n2', gear('a3', 'c'));
    platform.putGear('n2', idle('i2'));
    expect((await rejection(platform.startMove(gear('a3', 'c'), 'n2', 'n1'))) instanceof ConflictError).toBe(true);
    await platform.startMove(gear('i2'), 'n2', 'n1');
    expect(platform.placeGear('d1', 'small', gear('new', 'd'))).toBe('n2');
    clock.advance(30_000);
    expect(platform.nodeFacts('n1')).toMatchObject({ activeGears: 2 });
    expect(platform.nodeFacts('n1').gears.map((g) => g.uuid).sort()).toEqual(['a1', 'a2', 'i1', 'i2']);
    expect(platform.nodeFacts('n2')).toMatchObject({ activeGears: 2 });
    // Removed, an idle gear frees no slot it never held.
    expect(platform.removeGear('i1')).toBe(true);
    expect(platform.nodeFacts('n1').activeGears).toBe(2);
    expect(platform.gearPlacementProblems()).toEqual([]);
  });

  it('lists gears as the broker does, without their run state; the node still holds them (remove-node refuses)', async () => {
    const { platform } = idleSetup(true);
    platform.putGear('n1', idle('i1'));
    expect(await platform.listGears('n1')).toEqual([gear('i1')]);
    await platform.deactivateNode('d1', 'n1');
    await expect(platform.removeNode('d1', 'n1')).rejects.toThrow(/still holds 1 gear/);
  });

  it('counts every gear in the slots without the option (the replays since session 1)', async () => {
    const { platform } = idleSetup(false);
    platform.putGear('n1', gear('a1', 'a'));
    platform.putGear('n1', idle('i1'));
    expect(platform.nodeFacts('n1').activeGears).toBe(2);
    expect(() => platform.putGear('n1', idle('i2'))).toThrow(ConflictError);
  });
});
