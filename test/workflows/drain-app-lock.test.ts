/**
 * origin-server runs every gear move in its application's lock
 * (Lock.run_in_app_lock: 10 tries 5 s apart, then LockUnavailableException,
 * which oo-admin-move does not rescue). A drain that moved two gears of one
 * application at once had the second fail after 50 s while the first copied
 * its gear for minutes, spending its attempts; a tenant's deploy holding the
 * lock did the same. Moves now go one per application at a time, and a move
 * the lock kept back is tried again without spending an attempt. The broker
 * is the emulator, behind the real adapter, with moves of 2 minutes.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import type { GearInfo } from '../../lib/domain/model.js';
import { brokerOnEmulator } from '../support/broker-platform.js';
import { POOL, World } from '../support/gear-mover-world.js';

const MIN = 60_000;

async function drainOnBroker(gears: GearInfo[], prepare: (broker: ReturnType<typeof brokerOnEmulator>['broker'], now: number) => void = () => undefined) {
  const w = new World(new InMemoryStateStore(), { config: { scaleDown: { drainTimeout: '30m', moveAttempts: 2, moveRetryDelay: '1m' } } });
  const { broker, platform } = brokerOnEmulator(w.clock, { moveDurationMs: 2 * MIN });
  broker.createDistrict('d1', 'small');
  for (const name of ['src.example.com', 't1.example.com']) {
    broker.addNodeHost(name, 'small', 100);
    broker.joinDistrict('d1', name);
  }
  for (const gear of gears) broker.placeGear('src.example.com', gear);
  await w.node('src.example.com', { gears });
  await w.node('t1.example.com');
  prepare(broker, w.clock.now().getTime());
  await w.mover(platform).handleScaleDown(await w.decideScaleDown('src.example.com'));
  for (let tick = 0; tick < 40 && (await w.store.listDrains(POOL, 'active')).length > 0; tick++) {
    await w.mover(platform).run(w.budget(50_000));
    w.clock.advance(MIN);
  }
  return { w, broker };
}

const shop = (n: number): GearInfo => ({ uuid: `shop${n}`, app: 'shop-acme', size: 'small' });

describe("moves and the application's lock (broker emulator)", () => {
  it('moves the three gears of one application one after another: no attempt fails on the lock', async () => {
    const { w, broker } = await drainOnBroker([shop(0), shop(1), shop(2), { uuid: 'blog0', app: 'blog-acme', size: 'small' }]);
    expect((await w.store.listDrains(POOL, 'completed')).map((drain) => drain.nodeId)).toEqual(['src.example.com']);
    expect(broker.gearsOn('t1.example.com').map((gear) => gear.uuid).sort()).toEqual(['blog0', 'shop0', 'shop1', 'shop2']);
    expect(w.metrics.sum('GearMoveFailures')).toBe(0);
    expect(w.metrics.sum('GearMoves')).toBe(4);
  });

  it("waits out a tenant's deploy that holds the lock past the moves' attempts, and completes the drain", async () => {
    const { w, broker } = await drainOnBroker([shop(0)], (emulator, now) => emulator.holdAppLock('shop-acme', now + 6 * MIN));
    // Each try in the first 6 minutes met the lock: as many as moveAttempts (2), which as failed attempts would have failed the move and the drain.
    expect(w.metrics.sum('GearMoveFailures')).toBeGreaterThanOrEqual(2);
    expect((await w.store.listDrains(POOL, 'completed')).map((drain) => drain.nodeId)).toEqual(['src.example.com']);
    expect(broker.whereIs('shop0')).toBe('t1.example.com');
  });
});
