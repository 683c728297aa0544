/**
 * A scale-down drain the pool's scale-up calls off (lib/domain/call-off.ts,
 * lib/app/call-off.ts), on dynalite: the moves in flight settle, the node
 * re-opens with the gears still on it, the gears already moved stay where
 * they are, and nothing counts it as a failure.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { applyCallOffs } from '../../lib/app/call-off.js';
import { ThresholdEvaluator, type PoolOutcome } from '../../lib/app/evaluate.js';
import { drainsToCallOff } from '../../lib/domain/call-off.js';
import { progressOf } from '../../lib/domain/drain.js';
import { config as buildConfig } from '../support/builders.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { POOL, World, apps } from '../support/gear-mover-world.js';

const harness = dynaliteHarness();
afterAll(() => harness.close());

async function drainUnderWay(): Promise<World> {
  const w = new World(await harness.create());
  await w.node('src.example.com', { gears: apps(4, 5) });
  await w.node('t1.example.com', { gears: [] });
  await w.node('t2.example.com', { gears: [] });
  const mover = w.mover();
  await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
  await w.report();
  await mover.run(w.budget(50_000));
  return w;
}

/** The pool's open nodes fill (gears created by tenants) while the drain runs: 170 of 200 open slots, above the 0.80 threshold. */
async function demandTurnsUp(w: World): Promise<void> {
  for (const target of ['t1.example.com', 't2.example.com']) {
    for (let g = 0; g < 75; g++) {
      w.sim.putGear(target, { uuid: `new-${target}-${g}`, app: `new-${g}`, size: 'small' });
      w.gears++;
    }
  }
  await w.report();
}

/** Evaluates once a minute until the pool decides a scale-up (at most 6 times); the deciding outcome. */
async function evaluateUntilScaleUp(w: World, evaluator: ThresholdEvaluator): Promise<PoolOutcome> {
  for (let i = 0; i < 6; i++) {
    const [outcome] = await evaluator.tick();
    if (outcome && /wants \+|\+\d+ nodes? to/.test(outcome.reason)) return outcome;
    w.clock.advance(60_000);
    await w.report();
  }
  throw new Error('the pool never decided to scale up');
}

describe('a scale-down drain called off by its pool scaling up (dynalite)', () => {
  it('is called off by the evaluator when the pool scales up, and only said (not done) in shadow mode', async () => {
    const w = await drainUnderWay();
    await demandTurnsUp(w);
    const ports = { store: w.store, queue: w.queue, clock: w.clock, metrics: w.metrics, log: w.log };

    const observed = await evaluateUntilScaleUp(w, new ThresholdEvaluator(ports, buildConfig({ mode: 'shadow', scaleDown: { delayAfterAdd: '0s' } }, { max: 50 })));
    expect(observed.reason).toMatch(/calls off 1 scale-down drain\(s\) instead of buying their nodes \(src\.example\.com: \d+ gears left\)/);
    const [still] = await w.store.listDrains(POOL, 'active');
    expect(still?.calledOffAt).toBeUndefined();
    // Nothing was done, so nothing delays the observed pool's next scale-down either.
    expect((await w.store.getPool(POOL))?.lastDemandScaleUpAt).toBeUndefined();

    const decided = await evaluateUntilScaleUp(w, new ThresholdEvaluator(ports, w.config));
    expect(decided.reason).toMatch(/calls off 1 scale-down drain\(s\) instead of buying their nodes/);
    const [calledOff] = await w.store.listDrains(POOL, 'active');
    expect(calledOff).toMatchObject({ drainId: still!.drainId, calledOffAt: w.clock.now().toISOString() });
    expect(calledOff?.abortReason).toMatch(/^the pool scales up \(pool d1\/small at 0\.\d\d\): src\.example\.com re-opens with \d+ gear\(s\) still on it$/);
    // The pool counts it as a scale-up for the delays: no drain decided right after.
    expect((await w.store.getPool(POOL))?.lastDemandScaleUpAt).toBe(w.clock.now().toISOString());

    await w.tickUntilIdle(() => w.mover());
    expect(await w.store.getNode('src.example.com')).toMatchObject({ state: 'active' });
    expect(w.sim.nodeFacts('src.example.com').active).toBe(true);
  });

  it('re-opens the node with its remaining gears, keeps the moved ones where they are, and is no failure', async () => {
    const w = await drainUnderWay();
    const [under] = await w.store.listDrains(POOL, 'active');
    expect((await w.store.getNode('src.example.com'))?.state).toBe('draining');
    expect(w.sim.nodeFacts('src.example.com').active).toBe(false);

    const plan = drainsToCallOff(await w.store.listDrains(POOL, 'active'), await w.store.listNodes(POOL), 1, 'pool d1/small at 0.99');
    const called = await applyCallOffs({ store: w.store, clock: w.clock, log: w.log }, plan.callOff);
    expect(called.map((call) => call.drainId)).toEqual([under!.drainId]);
    expect(await w.store.getDrain(under!.drainId)).toMatchObject({ calledOffAt: w.clock.now().toISOString(), abortReason: called[0]!.reason });

    await w.tickUntilIdle(() => w.mover());
    const ended = await w.store.getDrain(under!.drainId);
    expect(ended?.state).toBe('aborted');
    const { moved } = progressOf(ended!.moves);
    const left = w.sim.nodeFacts('src.example.com').activeGears;
    // Called off part-way: some gears moved (and stay moved), the rest never left.
    expect(moved).toBeGreaterThan(0);
    expect(left).toBeGreaterThan(0);
    expect(moved + left).toBe(20);
    expect(w.sim.nodeFacts('t1.example.com').activeGears + w.sim.nodeFacts('t2.example.com').activeGears).toBe(moved);
    // The node takes gears again, on the platform and in the table.
    expect(w.sim.nodeFacts('src.example.com').active).toBe(true);
    expect(await w.store.getNode('src.example.com')).toMatchObject({ state: 'active' });
    expect((await w.store.getNode('src.example.com'))?.drainId).toBeUndefined();
    // No failure: no delayAfterFailure on the pool, no DrainsAborted alarm, nothing handed to the decommissioner.
    expect((await w.store.getPool(POOL))?.lastDrainFailureAt).toBeUndefined();
    expect(w.metrics.sum('DrainsAborted')).toBe(0);
    expect(w.metrics.sum('DrainsCalledOff')).toBe(1);
    expect(w.queue.sent('decommission')).toEqual([]);
    const [logged] = await w.store.listDecisions(POOL, 1);
    expect(logged).toMatchObject({ kind: 'scale-up', decisionId: under!.decisionId });
    expect(logged?.reason).toBe(`drain ${under!.drainId} of src.example.com called off: the pool scales up (pool d1/small at 0.99): src.example.com re-opens with ${called[0]!.gearsLeft} gear(s) still on it`);
  });

  it('leaves a drain that changed since the evaluation read it: one already stopping is not called off', async () => {
    const w = await drainUnderWay();
    const plan = drainsToCallOff(await w.store.listDrains(POOL, 'active'), await w.store.listNodes(POOL), 1, 'pool d1/small at 0.99');
    await w.mover().cancelDrain('src.example.com', 'operator');
    expect(await applyCallOffs({ store: w.store, clock: w.clock, log: w.log }, plan.callOff)).toEqual([]);
    const [stopping] = await w.store.listDrains(POOL, 'active');
    expect(stopping?.calledOffAt).toBeUndefined();
    expect(stopping?.abortReason).toBe('cancelled: operator');
  });
});
