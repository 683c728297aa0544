/**
 * The gear mover refuses to drain a protected node with the list the
 * evaluator reads: the file's pools[].protectedNodes, or the runtime override
 * that replaces it (`nodescaler set POOL protectedNodes ...`). It read the
 * file alone, so a node protected at runtime was drained by an operator's
 * drain (or a decision taken before the override).
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { MANUAL_DECISION_PREFIX } from '../../lib/app/drain.js';
import { POOL, World, apps } from '../support/gear-mover-world.js';

describe('gear mover: protectedNodes override', () => {
  it('refuses, before closing the node, a drain of a node protected by the runtime override', async () => {
    const w = new World(new InMemoryStateStore());
    await w.node('src.example.com', { gears: apps(1, 2) });
    await w.node('t1.example.com');
    await w.store.putOverrides({ pool: POOL, values: { protectedNodes: ['src.example.com'] }, updatedAt: w.clock.now().toISOString(), updatedBy: 'alice', reason: 'canary' }, 0);
    const mover = w.mover();
    await mover.handleScaleDown({ ...w.scaleDown('src.example.com'), decisionId: `${MANUAL_DECISION_PREFIX}req-1` });
    await w.tickUntilIdle(() => mover);

    const [refused] = await w.store.listDrains(POOL, 'aborted');
    expect(refused?.abortReason).toBe('node src.example.com is protected');
    expect(refused?.closedAt).toBeUndefined();
    expect(w.sim.moveHistory()).toEqual([]);
    expect(w.sim.nodeFacts('src.example.com')).toMatchObject({ active: true, activeGears: 2 });
    expect(await w.store.getNode('src.example.com')).toMatchObject({ state: 'active' });
  });

  it('drains the node once the override no longer lists it', async () => {
    const w = new World(new InMemoryStateStore());
    await w.node('src.example.com', { gears: apps(1, 2) });
    await w.node('t1.example.com');
    await w.store.putOverrides({ pool: POOL, values: { protectedNodes: ['t1.example.com'] }, updatedAt: w.clock.now().toISOString(), updatedBy: 'alice', reason: 'canary' }, 0);
    const mover = w.mover();
    await mover.handleScaleDown({ ...w.scaleDown('src.example.com'), decisionId: `${MANUAL_DECISION_PREFIX}req-2` });
    await w.tickUntilIdle(() => mover);
    expect(await w.store.listDrains(POOL, 'completed')).toHaveLength(1);
  });
});
