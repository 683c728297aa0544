/**
 * A drain of a node that is itself the target of another drain's moves in
 * flight. The platform lists a moved gear on its target only once it lands,
 * so the node looked empty: its drain completed at once, and the
 * decommissioner caught it later (its `receiving` verdict). The plan is now
 * right at the source: a drain that may wait (scale-down, an operator's)
 * does not start on such a node, and an urgent one (an EC2 interruption)
 * waits for the moves to land, then moves them off. Gear mover on dynalite
 * with the simulated platform.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { GearMover } from '../../lib/app/drain.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { POOL, World, apps } from '../support/gear-mover-world.js';

const harness = dynaliteHarness();
afterAll(() => harness.close());

const SRC = 'src.example.com';
const TARGET = 'tgt.example.com';
const SPARE = 'spare.example.com';
const TARGET_INSTANCE = 'i-0123456789abcdef0';

/** Runs the gear mover for `steps` budget checks, with no waiting: moves started stay in flight. */
async function runSteps(mover: GearMover, steps: number): Promise<void> {
  let left = steps;
  await mover.run({ timeLeft: () => (left-- > 0 ? 60_000 : 0) });
}

/** A scale-down of SRC whose four moves onto TARGET (its only roomy neighbour) are in flight. */
async function movesInFlightOntoTarget(): Promise<{ w: World; mover: GearMover }> {
  const w = new World(await harness.create(), { moveDurationMs: 120_000, config: { scaleDown: { maxConcurrentMoves: 4 } } });
  await w.node(SRC, { gears: apps(4, 1, 's') });
  await w.node(TARGET, { gears: [], instanceId: TARGET_INSTANCE });
  const mover = w.mover();
  await mover.handleScaleDown(await w.decideScaleDown(SRC));
  for (let i = 0; i < 30 && w.sim.movesInFlight() < 4; i++) await runSteps(mover, 3);
  const [drain] = await w.store.listDrains(POOL, 'active');
  expect(drain?.moves.map((move) => [move.state, move.target])).toEqual(Array(4).fill(['moving', TARGET]));
  expect(await w.sim.listGears(TARGET)).toEqual([]);
  // Room elsewhere from now on, for what must leave TARGET.
  await w.node(SPARE, { gears: [] });
  return { w, mover };
}

describe('a drain of a node that gears are moving onto (dynalite, simulated platform)', () => {
  it('an operator\'s drain does not start: refused before the node is closed, naming the moves in flight', async () => {
    const { w, mover } = await movesInFlightOntoTarget();
    const started = await mover.drainNode(TARGET, 'maintenance', 'req-1');
    for (let i = 0; i < 10 && (await w.store.getDrain(started.drainId))?.state === 'active'; i++) await runSteps(mover, 8);
    expect(w.sim.movesInFlight()).toBe(4);

    const refused = (await w.store.listDrains(POOL, 'aborted')).find((drain) => drain.drainId === started.drainId);
    expect(refused?.abortReason).toMatch(/^4 gears are moving onto tgt\.example\.com \(s0x0 \(app-0\), s1x0 \(app-1\), s2x0 \(app-2\), s3x0 \(app-3\); drain \S+\): draining it now would move them twice$/);
    expect(refused?.closedAt).toBeUndefined();
    expect((await w.store.getNode(TARGET))?.state).toBe('active');
    expect(w.sim.nodeFacts(TARGET).active).toBe(true);

    // The scale-down carries on and its gears land on TARGET, moved once each.
    await w.tickUntilIdle(() => mover);
    expect(w.sim.moveHistory().map((move) => [move.from, move.to])).toEqual(Array(4).fill([SRC, TARGET]));
    w.checkGears();
  });

  it('an urgent drain waits for them to land, then moves them off; it never completes with gears on their way', async () => {
    const { w, mover } = await movesInFlightOntoTarget();
    const outcome = await mover.handleEvent({ type: 'ec2-rebalance', eventId: 'ev-1', instanceId: TARGET_INSTANCE, time: w.clock.now().toISOString() });
    expect(outcome).toMatchObject({ action: 'drain', nodeId: TARGET });
    await runSteps(mover, 12);

    // Closed and planned, but not drained: the platform lists TARGET empty while four gears are on their way.
    const waiting = (await w.store.getDrain(outcome.drainId!))!;
    expect(waiting).toMatchObject({ state: 'active', closedAt: expect.any(String) });
    expect(waiting.completedAt).toBeUndefined();
    expect((await w.store.getNode(TARGET))?.state).toBe('draining');
    expect(w.log.lines.some((entry) => /node looks empty, but 4 gears are moving onto tgt\.example\.com .*: the drain waits for them to land/.test(entry.message))).toBe(true);

    await w.tickUntilIdle(() => mover);
    const done = (await w.store.getDrain(outcome.drainId!))!;
    expect(done.state).toBe('completed');
    expect(done.moves.map((move) => [move.state, move.target])).toEqual(Array(4).fill(['moved', SPARE]));
    expect(await w.store.getNode(TARGET)).toMatchObject({ state: 'drained' });
    expect(await w.sim.listGears(TARGET)).toEqual([]);
    expect(w.sim.nodeFacts(SPARE).activeGears).toBe(4);
    w.checkGears();
  });
});
