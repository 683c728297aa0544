/**
 * A move attempt whose start answer was lost (a timeout: unknown whether the
 * platform started it) is looked up by its key after the grace time. When the
 * tenant deleted the gear meanwhile, the attempt is dropped from the plan, as
 * a planned move of a departed gear is: the drain finishes. It once stayed
 * `moving` for ever, and every pass "recovered" it again: a gear mover
 * invocation spent its whole budget on it each minute (found by the soak run).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { TransientError } from '../../lib/errors.js';
import type { Platform } from '../../lib/ports/platform.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { POOL, World, apps } from '../support/gear-mover-world.js';

const harness = dynaliteHarness();
afterAll(() => harness.close());

/** The platform as the gear mover sees it, with the first start of `uuid` (of all movers sharing `calls`) timing out before it reaches the broker. */
function losingFirstStart(w: World, uuid: string, calls: { startsOf: number; lost: boolean }): Platform {
  const platform = w.checkedPlatform();
  return new Proxy(platform, {
    get(target, property, receiver) {
      if (property !== 'startMove') return Reflect.get(target, property, receiver) as unknown;
      return async (...args: Parameters<Platform['startMove']>) => {
        if (args[0].uuid === uuid) {
          calls.startsOf += 1;
          if (!calls.lost) {
            calls.lost = true;
            throw new TransientError('broker request timed out');
          }
        }
        return target.startMove(...args);
      };
    },
  });
}

describe('a move attempt without a handle, whose gear the tenant deleted', () => {
  it('is dropped from the plan: the drain completes and the attempt is tried again once, not on every pass', async () => {
    const w = new World(await harness.create());
    await w.node('src.example.com', { gears: apps(1, 4) });
    await w.node('t1.example.com', { gears: [] });
    const calls = { startsOf: 0, lost: false };
    const mover = () => w.mover(losingFirstStart(w, 'g0x0', calls));
    await mover().handleScaleDown(await w.decideScaleDown('src.example.com'));
    await mover().run(w.budget(50_000)).catch(() => undefined);
    const [drain] = await w.store.listDrains(POOL, 'active');
    expect(drain?.moves.find((m) => m.gear.uuid === 'g0x0')).toMatchObject({ state: 'moving' });
    expect(drain?.moves.find((m) => m.gear.uuid === 'g0x0')?.commandId).toBeUndefined();

    // The tenant deletes the gear before the attempt is looked up by its key.
    expect(w.sim.removeGear('g0x0')).toBe(true);
    w.gears -= 1;
    await w.tickUntilIdle(mover, 10);

    const [done] = await w.store.listDrains(POOL, 'completed');
    expect(done?.moves.map((m) => m.gear.uuid).sort()).toEqual(['g0x1', 'g0x2', 'g0x3']);
    expect(done?.moves.every((m) => m.state === 'moved')).toBe(true);
    expect(calls.startsOf).toBe(2);
    expect(w.sim.nodeFacts('t1.example.com').activeGears).toBe(3);
    expect(w.log.lines.some((e) => e.message === 'gear left the node before its move; dropped from the plan')).toBe(true);
  });
});
