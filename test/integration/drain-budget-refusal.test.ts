/**
 * A scale-down drain the disruption budget refuses never closes its node: the
 * gear mover checks the gears the platform lists before deactivate-node
 * (lib/workflows/drain/ending.ts, begin), so a refusal costs no close and no
 * re-open. The check before the first plan still catches a gear that reached
 * the node between that check and the close.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { GEAR_MOVE_WINDOW_MS } from '../../lib/domain/budget.js';
import type { Platform } from '../../lib/ports/platform.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { POOL, World, apps } from '../support/gear-mover-world.js';

const harness = dynaliteHarness();
afterAll(() => harness.close());

/** The world's platform, with the calls that close and re-open a node recorded, and `beforeClose` run before a close. */
function watched(w: World, beforeClose: () => void = () => {}): { platform: Platform; calls: string[] } {
  const calls: string[] = [];
  const inner = w.checkedPlatform();
  const platform: Platform = Object.create(inner);
  platform.deactivateNode = async (district, nodeId) => {
    calls.push(`deactivate ${nodeId}`);
    beforeClose();
    return inner.deactivateNode(district, nodeId);
  };
  platform.activateNode = async (district, nodeId) => {
    calls.push(`activate ${nodeId}`);
    return inner.activateNode(district, nodeId);
  };
  return { platform, calls };
}

describe('gear mover on dynalite: a drain the disruption budget refuses', () => {
  it('never closes the node when a listed gear is at maxMovesPerGear: refused before the start, the node never draining', async () => {
    const w = new World(await harness.create(), { config: { scaleDown: { budget: { maxMovesPerGear: 1 } } } });
    await w.node('src.example.com', { gears: apps(1, 3) });
    await w.node('t1.example.com');
    await w.store.recordGearMoves([{ uuid: 'g0x2', at: new Date(w.clock.now().getTime() - 86_400_000).toISOString(), key: 'old#1' }], GEAR_MOVE_WINDOW_MS);
    const before = await w.store.getNode('src.example.com');
    const { platform, calls } = watched(w);
    const mover = w.mover(platform);
    await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
    expect(await mover.run(w.budget())).toMatchObject({ drains: 1, aborted: 1, pending: 0 });

    const [refused] = await w.store.listDrains(POOL, 'aborted');
    expect(refused?.abortReason).toMatch(/^disruption budget: gear g0x2 \(app-0\) moved 1 times in 7 d \(maxMovesPerGear=1\) until /);
    expect(refused?.closedAt).toBeUndefined();
    expect(calls).toEqual([]);
    expect(w.sim.nodeFacts('src.example.com')).toMatchObject({ active: true, activeGears: 3 });
    expect(w.sim.moveHistory()).toEqual([]);
    // The node's record was never written: it never left `active`.
    expect(await w.store.getNode('src.example.com')).toMatchObject({ state: 'active', version: before!.version });
    expect(await w.store.getNode('src.example.com').then((node) => node?.drainId)).toBeUndefined();
    // Refused, not failed: no delayAfterFailure, no DrainsAborted, the lease free.
    const pool = await w.store.getPool(POOL);
    expect(pool?.lastDrainFailureAt).toBeUndefined();
    expect(pool?.lease).toBeUndefined();
    expect(w.metrics.sum('DrainsAborted')).toBe(0);
    const [logged] = await w.store.listDecisions(POOL, 1);
    expect(logged).toMatchObject({ kind: 'refused', decisionId: refused!.decisionId });
  });

  it('still refuses, after the close, a gear of a do-not-move application that reached the node before it closed, and re-opens it', async () => {
    const w = new World(await harness.create(), { config: { scaleDown: { budget: { doNotMoveApps: ['billing'] } } } });
    await w.node('src.example.com', { gears: apps(1, 2) });
    await w.node('t1.example.com');
    const { platform, calls } = watched(w, () => {
      w.sim.putGear('src.example.com', { uuid: 'late', app: 'billing', size: 'small' });
      w.gears++;
    });
    const mover = w.mover(platform);
    await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
    await w.tickUntilIdle(() => mover);

    const [aborted] = await w.store.listDrains(POOL, 'aborted');
    expect(aborted?.abortReason).toBe('disruption budget: gear late belongs to billing (scaleDown.budget.doNotMoveApps)');
    expect(calls).toEqual(['deactivate src.example.com', 'activate src.example.com']);
    expect(w.sim.moveHistory()).toEqual([]);
    expect(w.sim.nodeFacts('src.example.com')).toMatchObject({ active: true, activeGears: 3 });
    expect(await w.store.getNode('src.example.com')).toMatchObject({ state: 'active' });
  });
});
