import { describe, expect, it } from 'vitest';
import { SimulatedPlatform } from '../../lib/adapters/local/simulated-platform.js';
import { seededRandom } from '../../lib/sim/random.js';

/** A clock that moves only when told to. */
function virtualClock() {
  let ms = Date.parse('2026-03-01T12:00:00Z');
  return { now: () => new Date(ms), advance: (by: number) => (ms += by) };
}
const gear = (uuid: string, app = uuid) => ({ uuid, app, size: 'small' });

/** A broker-placing platform with `nodes` nodes of `slots` each in d1/small. */
function brokerPlatform(nodes: number, slots: number, clock = virtualClock()): SimulatedPlatform {
  const platform = new SimulatedPlatform(clock, { moveDurationMs: 30_000, moveFailureRate: 0, placement: 'broker', placementRandom: seededRandom(3) });
  for (let i = 1; i <= nodes; i++) platform.registerNode('d1', 'small', `n${i}`, slots);
  return platform;
}

describe('SimulatedPlatform placing as the broker', () => {
  it('spreads new gears over the emptier nodes rather than filling the emptiest first', () => {
    const platform = brokerPlatform(6, 100);
    const where = new Set<string>();
    for (let i = 0; i < 6; i++) where.add(platform.placeGear('d1', 'small', gear(`g${i}`))!);
    // Least-loaded would put six gears on six nodes in name order; the broker's draw repeats some and skips others.
    const leastLoaded = new SimulatedPlatform(virtualClock(), { moveDurationMs: 30_000, moveFailureRate: 0 });
    for (let i = 1; i <= 6; i++) leastLoaded.registerNode('d1', 'small', `n${i}`, 100);
    const inOrder = Array.from({ length: 6 }, (_, i) => leastLoaded.placeGear('d1', 'small', gear(`g${i}`)));
    expect(inOrder).toEqual(['n1', 'n2', 'n3', 'n4', 'n5', 'n6']);
    expect(where.size).toBeLessThan(6);
    // Many gears later the nodes stay near the average: none runs ahead by more than the cut-off lets it.
    for (let i = 6; i < 300; i++) platform.placeGear('d1', 'small', gear(`g${i}`));
    const loads = platform.nodeIds().map((id) => platform.nodeLoad(id).activeGears);
    expect(loads.reduce((a, b) => a + b, 0)).toBe(300);
    expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(4);
  });

  it('never places on a deactivated, full or not yet added node', async () => {
    const platform = brokerPlatform(5, 4);
    platform.registerNode('d1', 'small', 'new', 4, { joined: false });
    await platform.deactivateNode('d1', 'n1');
    const placed = Array.from({ length: 16 }, (_, i) => platform.placeGear('d1', 'small', gear(`g${i}`)));
    expect(placed.filter((node) => node === 'n1' || node === 'new')).toEqual([]);
    expect(placed.every((node) => node !== undefined)).toBe(true);
    expect(platform.placeGear('d1', 'small', gear('one-too-many'))).toBeUndefined();
  });

  it("keeps a scaled application's gears on different nodes, also after one of them moved", async () => {
    const clock = virtualClock();
    const platform = brokerPlatform(5, 100, clock);
    const first = platform.placeGear('d1', 'small', gear('a-1', 'shop'))!;
    const second = platform.placeGear('d1', 'small', gear('a-2', 'shop'))!;
    expect(second).not.toBe(first);
    const third = platform.placeGear('d1', 'small', gear('a-3', 'shop'))!;
    expect([first, second]).not.toContain(third);
    // Once the first gear moves, its old node is free of the application again and its new one is not.
    const target = platform.nodeIds().find((id) => ![first, second, third].includes(id))!;
    await platform.startMove(gear('a-1', 'shop'), first, target);
    clock.advance(30_000);
    const fourth = platform.placeGear('d1', 'small', gear('a-4', 'shop'))!;
    expect([second, third, target]).not.toContain(fourth);
    platform.removeGear('a-2');
    const fifth = platform.placeGear('d1', 'small', gear('a-5', 'shop'))!;
    expect([third, target, fourth]).not.toContain(fifth);
  });
});
