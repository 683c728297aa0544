/**
 * A gear its tenant deletes while its move runs: the platform answers the move
 * failed and the gear gone (Platform.moveStatus `gone`). The drain drops the
 * move and finishes. Retried instead, the move fails on every attempt (on the
 * broker the refusal comes in the command's status, not at its start) until
 * the drain gives up and aborts: found by a soak on the broker emulator
 * (docs/RELIABILITY.md, finding 22).
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Platform } from '../../lib/ports/platform.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { POOL, World, apps } from '../support/gear-mover-world.js';

const harness = dynaliteHarness();
afterAll(() => harness.close());

/** The platform as the gear mover sees it, with the tenant deleting `uuid` as soon as its move has started. */
function deletedOnceMoving(w: World, uuid: string): Platform {
  const platform = w.checkedPlatform();
  return new Proxy(platform, {
    get(target, property, receiver) {
      if (property !== 'startMove') return Reflect.get(target, property, receiver) as unknown;
      return async (...args: Parameters<Platform['startMove']>) => {
        const handle = await target.startMove(...args);
        if (args[0].uuid === uuid && w.sim.removeGear(uuid)) w.gears -= 1;
        return handle;
      };
    },
  });
}

describe('a gear its tenant deletes while its move runs', () => {
  it('is dropped from the plan, not retried: the drain completes with the other moves and counts no failure', async () => {
    const w = new World(await harness.create());
    await w.node('src.example.com', { gears: apps(2, 2) });
    await w.node('t1.example.com', { gears: [] });
    const mover = () => w.mover(deletedOnceMoving(w, 'g0x0'));
    await mover().handleScaleDown(await w.decideScaleDown('src.example.com'));
    await w.tickUntilIdle(mover, 10);

    const [done] = await w.store.listDrains(POOL, 'completed');
    expect(done?.moves.map((m) => m.gear.uuid).sort()).toEqual(['g0x1', 'g1x0', 'g1x1']);
    expect(done?.moves.every((m) => m.state === 'moved')).toBe(true);
    expect(await w.store.listDrains(POOL, 'aborted')).toEqual([]);
    expect(w.metrics.sum('GearMoveFailures')).toBe(0);
    expect(w.metrics.sum('GearMoves')).toBe(3);
    expect(w.sim.nodeFacts('t1.example.com').activeGears).toBe(3);
    // Each gear that moved has its move on record (what maxMovesPerGear counts), and the deleted one none: g1x0's
    // move ended in the same pass as the dropped one, beside a planned move of g0x0's application.
    const uuids = ['g0x0', 'g0x1', 'g1x0', 'g1x1'];
    const history = await w.store.getGearMoves(uuids);
    expect(uuids.map((uuid) => history.get(uuid)?.length ?? 0)).toEqual([0, 1, 1, 1]);
    expect(w.log.lines.filter((e) => e.message === 'gear deleted during its move; dropped from the plan')).toHaveLength(1);
  });
});
