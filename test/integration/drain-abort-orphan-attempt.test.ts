/**
 * A drain stopped (an operator's cancel) while one move attempt has no
 * handle: the start's answer was lost, so it is unknown whether the platform
 * moved the gear. The stopping drain once left that attempt `moving` for good:
 * a gear the platform moved was missing from the drain's moves, from the
 * gear's move history (maxMovesPerGear) and from GearMoves and TenantRestarts
 * (found by the reliability suite's check that every move the platform made
 * is on record). Now the stopping drain looks the attempt up by its key, and
 * never starts one.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { TransientError } from '../../lib/errors.js';
import type { Platform } from '../../lib/ports/platform.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { POOL, World, apps } from '../support/gear-mover-world.js';

const harness = dynaliteHarness();
afterAll(() => harness.close());

/** The first start of `uuid` is lost: after it reached the broker (`reached`), or before. Every start is counted. */
function losingFirstStart(w: World, uuid: string, calls: { startsOf: number; lost: boolean }, reached: boolean): Platform {
  const platform = w.checkedPlatform();
  return new Proxy(platform, {
    get(target, property, receiver) {
      if (property !== 'startMove') return Reflect.get(target, property, receiver) as unknown;
      return async (...args: Parameters<Platform['startMove']>) => {
        if (args[0].uuid !== uuid) return target.startMove(...args);
        calls.startsOf += 1;
        if (calls.lost) return target.startMove(...args);
        calls.lost = true;
        if (reached) await target.startMove(...args);
        throw new TransientError('broker request timed out');
      };
    },
  });
}

async function cancelledWithLostStart(reached: boolean) {
  const w = new World(await harness.create());
  await w.node('src.example.com', { gears: apps(1, 4) });
  await w.node('t1.example.com', { gears: [] });
  const calls = { startsOf: 0, lost: false };
  const mover = () => w.mover(losingFirstStart(w, 'g0x0', calls, reached));
  await mover().handleScaleDown(await w.decideScaleDown('src.example.com'));
  await mover().run(w.budget(50_000)).catch(() => undefined);
  const [drain] = await w.store.listDrains(POOL, 'active');
  const orphan = drain?.moves.find((m) => m.gear.uuid === 'g0x0');
  expect(orphan).toMatchObject({ state: 'moving' });
  expect(orphan?.commandId).toBeUndefined();
  await mover().cancelDrain('src.example.com', 'operator');
  await w.tickUntilIdle(mover, 20);
  const [stopped] = await w.store.listDrains(POOL, 'aborted');
  return { w, calls, stopped: stopped!, move: stopped!.moves.find((m) => m.gear.uuid === 'g0x0')! };
}

describe('a drain that stops with a move attempt whose handle was lost', () => {
  it('records the move the platform made, in the drain and in the gear history, without starting another', async () => {
    const { w, calls, stopped, move } = await cancelledWithLostStart(true);
    expect(w.sim.moveHistory().filter((m) => m.uuid === 'g0x0' && m.outcome === 'succeeded')).toHaveLength(1);
    expect(move).toMatchObject({ state: 'moved', target: 't1.example.com' });
    expect(calls.startsOf).toBe(1);
    expect((await w.store.getGearMoves(['g0x0'])).get('g0x0')).toHaveLength(1);
    // Every gear the platform moved is a moved move of the drain, and no other.
    const made = w.sim.moveHistory().filter((m) => m.outcome === 'succeeded').map((m) => m.uuid).sort();
    expect(stopped.moves.filter((m) => m.state === 'moved').map((m) => m.gear.uuid).sort()).toEqual(made);
    expect(w.metrics.sum('GearMoves')).toBe(made.length);
    expect(w.log.lines.some((e) => e.message === 'move attempt without a handle found by its key as the drain stops')).toBe(true);
  });

  it('gives back an attempt that never reached the platform: planned, the gear still on its node, nothing started', async () => {
    const { w, calls, move } = await cancelledWithLostStart(false);
    expect(move).toMatchObject({ state: 'planned', attempts: 0 });
    expect(move.commandId).toBeUndefined();
    expect(calls.startsOf).toBe(1);
    expect(w.sim.moveHistory().some((m) => m.uuid === 'g0x0')).toBe(false);
    expect((await w.store.getGearMoves(['g0x0'])).get('g0x0') ?? []).toEqual([]);
    expect(w.sim.nodeFacts('src.example.com').gears.map((g) => g.uuid)).toContain('g0x0');
  });
});
