/**
 * A drain whose pending item an operator cancelled (`nodescaler cancel-drain`) after the gear mover had taken its
 * message, read the controls and created the drain: its first step reads the cancel again and ends the drain
 * refused, before the node's first change; the evaluator keeps the cancelled item while that drain is active. The CLI
 * looks for the drain after its write too (test/cli/safe-drain), so between them a cancel written before the drain
 * began always stops it.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { MANUAL_DECISION_PREFIX } from '../../lib/app/drain.js';
import { advancePendingDrains } from '../../lib/app/replace-drain.js';
import { drainIdFor } from '../../lib/domain/drain.js';
import { POOL, START, World, apps } from '../support/gear-mover-world.js';

const decisionId = `${MANUAL_DECISION_PREFIX}20260301T120000Z:0a1b2c3d`;

async function takenThenCancelled(cancel: boolean) {
  const w = new World(new InMemoryStateStore());
  await w.node('src.example.com', { gears: apps(1, 2) });
  await w.node('t1.example.com');
  const at = w.clock.now().toISOString();
  await w.store.createPendingDrain({ nodeId: 'src.example.com', pool: POOL, decisionId, reason: 'kernel update', by: 'local user alice', at, sentAt: at });
  const mover = w.mover();
  expect(await mover.handleScaleDown({ ...w.scaleDown('src.example.com'), decisionId })).toMatchObject({ created: true });
  if (cancel) {
    expect(await w.store.cancelPendingDrain('src.example.com', { at, by: 'local user bob', reason: 'wrong node' })).toBe('cancelled');
    // The evaluator passes before the drain's first step (which kept failing, say), its message past decisionMaxAge by
    // then: the item the step refuses the drain by is kept while the drain is active.
    w.clock.advance(16 * 60_000);
    await evaluatorPass(w);
    expect((await w.store.listControls()).pendingDrains).toMatchObject([{ nodeId: 'src.example.com', cancelledAt: at }]);
  }
  await w.tickUntilIdle(() => mover);
  return w;
}

/** The evaluator's pass over the pending drains (lib/app/replace-drain.ts), as each evaluation makes it. */
async function evaluatorPass(w: World): Promise<void> {
  await advancePendingDrains({ store: w.store, queue: w.queue, clock: w.clock, log: w.log }, w.config, (await w.store.listControls()).pendingDrains);
}

describe('a drain created before its cancel was written', () => {
  it('is refused at its first step: the node is never closed, no gear moves, and the pool does not back off', async () => {
    const w = await takenThenCancelled(true);
    const drain = await w.store.getDrain(drainIdFor(decisionId));
    expect(drain).toMatchObject({ state: 'aborted', abortReason: `cancelled by local user bob at ${START} before it began: wrong node` });
    expect(drain?.closedAt).toBeUndefined();
    expect(w.sim.moveHistory()).toEqual([]);
    expect(w.sim.nodeFacts('src.example.com')).toMatchObject({ active: true, activeGears: 2 });
    expect(await w.store.getNode('src.example.com')).toMatchObject({ state: 'active' });
    expect((await w.store.getPool(POOL))?.lastDrainFailureAt).toBeUndefined();
    expect(await w.store.listDecisions(POOL, 10)).toContainEqual(expect.objectContaining({ kind: 'refused', decisionId }));
    // The drain ended: the next pass ends the item, without a failure.
    await evaluatorPass(w);
    expect((await w.store.listControls()).pendingDrains).toEqual([]);
    expect(await w.store.listDecisions(POOL, 10)).not.toContainEqual(expect.objectContaining({ kind: 'failure' }));
  });

  it('is carried out when nothing cancelled it', async () => {
    const w = await takenThenCancelled(false);
    expect(await w.store.getDrain(drainIdFor(decisionId))).toMatchObject({ state: 'completed' });
    expect(w.sim.moveHistory()).toHaveLength(2);
  });
});
