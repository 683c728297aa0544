/**
 * Issue 18, item 2b: a drain whose close step (deactivate-node) keeps failing
 * must still end at drainTimeout. The timeout was checked only in the moving
 * phase, after the close, so the broker's refusal of every deactivate-node
 * held the node draining (and the pool's scale-down) for as long as it lasted.
 * The broker is the emulator, behind the real adapter.
 */
import { describe, expect, it } from 'vitest';
import { TransientError } from '../../lib/errors.js';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { nextDrain } from '../../lib/workflows/drain/phases.js';
import { brokerOnEmulator } from '../support/broker-platform.js';
import { POOL, World, apps } from '../support/gear-mover-world.js';

const MIN = 60_000;

describe('drain timeout, whatever step keeps failing (broker emulator)', () => {
  it('a drain whose deactivate-node the broker refuses on every tick ends at drainTimeout, node re-opened, pool freed', async () => {
    const w = new World(new InMemoryStateStore(), { config: { scaleDown: { drainTimeout: '20m' } } });
    const { broker, platform } = brokerOnEmulator(w.clock);
    broker.createDistrict('d1', 'small');
    broker.addNodeHost('src.example.com', 'small', 100);
    broker.addNodeHost('t1.example.com', 'small', 100);
    broker.joinDistrict('d1', 'src.example.com');
    broker.joinDistrict('d1', 't1.example.com');
    // Every deactivate-node the broker is sent fails as a broker in trouble does (the command times out on the broker host).
    let deactivations = 0;
    platform.deactivateNode = async (nodeId: string) => {
      deactivations++;
      throw new TransientError(`deactivate-node ${nodeId}: the broker command timed out`);
    };
    await w.node('src.example.com', { gears: apps(1, 3) });
    await w.node('t1.example.com');
    const mover = () => w.mover(platform);
    await mover().handleScaleDown(await w.decideScaleDown('src.example.com'));

    const start = w.clock.now().getTime();
    let endedAfter: number | undefined;
    for (let tick = 1; tick <= 40 && endedAfter === undefined; tick++) {
      await mover().run(w.budget(50_000));
      if ((await w.store.listDrains(POOL, 'active')).length === 0) endedAfter = w.clock.now().getTime() - start;
      w.clock.advance(MIN);
    }

    const [drain] = await w.store.listDrains(POOL, 'aborted');
    expect(drain?.abortReason).toBe('drain timed out: no gear moved for 20m (0 of 0 gear(s) moved)');
    // Simulated time: it ends within the tick after its timeout, not later.
    expect(endedAfter).toBeGreaterThanOrEqual(20 * MIN);
    expect(endedAfter).toBeLessThanOrEqual(22 * MIN);
    expect(await w.store.getNode('src.example.com')).toMatchObject({ state: 'active' });
    expect((await w.store.getPool(POOL))?.lease).toBeUndefined();
    expect(deactivations).toBeGreaterThan(0);
  });

  it('next() asks for the abort before the close once the drain is out of time', () => {
    const at = '2026-03-01T12:00:00.000Z';
    const drain = { drainId: 'drain:x', decisionId: 'x', nodeId: 'n1', pool: POOL, state: 'active' as const, version: 2, startedAt: at, updatedAt: at, reason: 't', moves: [] };
    const node = {
      nodeId: 'n1', pool: POOL, district: 'd1', profile: 'small', state: 'draining' as const, drainId: 'drain:x',
      version: 2, createdAt: at, stateChangedAt: at, origin: 'provisioned' as const, protected: false,
    };
    expect(nextDrain({ drain, node })).toEqual({ kind: 'effect', effect: { kind: 'close' } });
    expect(nextDrain({ drain, node, timedOut: 'drain timed out after 20m' })).toEqual({ kind: 'write', write: { kind: 'request-abort', reason: 'drain timed out after 20m' } });
    expect(nextDrain({ drain: { ...drain, closedAt: at }, node, timedOut: 'late' })).toEqual({ kind: 'write', write: { kind: 'request-abort', reason: 'late' } });
  });
});
