/**
 * The gear mover honours the disruption budget (lib/domain/budget.ts): a
 * scale-down drain checks the gears the platform lists before its first
 * move, records every completed move in the gears' history, starts drains
 * concurrently up to maxDraining, and never plans a gear onto a node another
 * drain is about to empty. An operator's drain is not held back.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { GEAR_MOVE_WINDOW_MS } from '../../lib/domain/budget.js';
import { MANUAL_DECISION_PREFIX } from '../../lib/app/drain.js';
import { RENEWAL_DRAIN_PREFIX } from '../../lib/domain/controls.js';
import { launchedFromTemplate, templateIdentity } from '../../lib/domain/drift.js';
import { POOL, World, apps } from '../support/gear-mover-world.js';

async function world(options: ConstructorParameters<typeof World>[1] = {}): Promise<World> {
  return new World(new InMemoryStateStore(), options);
}

describe('gear mover: disruption budget', () => {
  it('aborts a scale-down drain before any move when the node holds a gear of a do-not-move application, and re-opens the node', async () => {
    const w = await world({ config: { scaleDown: { budget: { doNotMoveApps: ['app-1'] } } } });
    await w.node('src.example.com', { gears: apps(2, 2) });
    await w.node('t1.example.com');
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
    await w.tickUntilIdle(() => mover);

    const [aborted] = await w.store.listDrains(POOL, 'aborted');
    expect(aborted?.abortReason).toBe('disruption budget: gear g1x0 belongs to app-1 (scaleDown.budget.doNotMoveApps) (and 1 more gear(s): g1x1 (app-1))');
    expect(aborted?.moves).toEqual([]);
    expect(w.sim.nodeFacts('src.example.com').activeGears).toBe(4);
    expect(await w.store.getNode('src.example.com')).toMatchObject({ state: 'active' });
    expect(w.sim.nodeFacts('src.example.com').active).toBe(true);
  });

  it('aborts when a listed gear was moved as often as maxMovesPerGear allows in the last 7 days; the flag from the node\u2019s stats counts too', async () => {
    const w = await world({ config: { scaleDown: { budget: { maxMovesPerGear: 1 } } } });
    await w.node('src.example.com', { gears: apps(1, 2) });
    await w.node('t1.example.com');
    await w.store.recordGearMoves([{ uuid: 'g0x1', at: new Date(w.clock.now().getTime() - 86_400_000).toISOString(), key: 'old#1' }], GEAR_MOVE_WINDOW_MS);
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
    await w.tickUntilIdle(() => mover);
    const [aborted] = await w.store.listDrains(POOL, 'aborted');
    expect(aborted?.abortReason).toMatch(/^disruption budget: gear g0x1 \(app-0\) moved 1 times in 7 d \(maxMovesPerGear=1\) until /);
    expect(w.sim.nodeFacts('src.example.com').activeGears).toBe(2);
  });

  it('an operator\u2019s drain moves a do-not-move gear all the same, and records the move', async () => {
    const w = await world({ config: { scaleDown: { budget: { doNotMoveApps: ['app-0'] } } } });
    await w.node('src.example.com', { gears: apps(1, 1) });
    await w.node('t1.example.com');
    const mover = w.mover();
    await mover.handleScaleDown({ ...w.scaleDown('src.example.com'), decisionId: `${MANUAL_DECISION_PREFIX}op-1` });
    await w.tickUntilIdle(() => mover);
    expect((await w.store.listDrains(POOL, 'completed')).map((d) => d.nodeId)).toEqual(['src.example.com']);
    expect(w.sim.nodeFacts('t1.example.com').activeGears).toBe(1);
    expect((await w.store.getGearMoves(['g0x0'])).get('g0x0')).toHaveLength(1);
  });

  it('a renewal\u2019s drain (nodescaler\u2019s own, of the operator\u2019s kind) is held to the budget and to a pause of scale-down', async () => {
    const w = await world({ config: { scaleDown: { budget: { doNotMoveApps: ['app-0'] } } } });
    await w.node('src.example.com', { gears: apps(1, 1) });
    await w.node('t1.example.com');
    const mover = w.mover();
    await mover.handleScaleDown({ ...w.scaleDown('src.example.com'), decisionId: `${RENEWAL_DRAIN_PREFIX}up:d1_small:1` });
    await w.tickUntilIdle(() => mover);
    const [aborted] = await w.store.listDrains(POOL, 'aborted');
    expect(aborted).toMatchObject({ kind: 'manual', abortReason: 'disruption budget: gear g0x0 belongs to app-0 (scaleDown.budget.doNotMoveApps)', moves: [] });
    expect(w.sim.nodeFacts('src.example.com').activeGears).toBe(1);

    const paused = await world();
    await paused.node('src.example.com', { gears: apps(1, 1) });
    await paused.node('t1.example.com');
    await paused.store.putPause({ pool: POOL, actions: 'scale-down', by: 'alice', reason: 'incident 42', at: paused.clock.now().toISOString() });
    const held = await paused.mover().handleScaleDown({ ...paused.scaleDown('src.example.com'), decisionId: `${RENEWAL_DRAIN_PREFIX}up:d1_small:2` });
    expect(held).toMatchObject({ created: false, refused: expect.stringContaining('incident 42') });
    // An operator's own drain is not held back by the pause.
    expect(await paused.mover().handleScaleDown({ ...paused.scaleDown('src.example.com'), decisionId: `${MANUAL_DECISION_PREFIX}op-2` })).toMatchObject({ created: true });
  });

  it('a renewal\u2019s drain of a node past its expireGrace moves a gear at its move limit; not before, and never a do-not-move gear', async () => {
    const DAY = 86_400_000;
    const renewal = async (launchedMsAgo: number, budget: Record<string, unknown> = {}) => {
      const w = await world({ config: { scaleDown: { expireAfter: '10d', expireGrace: '1d', budget: { maxMovesPerGear: 1, ...budget } } } });
      await w.node('src.example.com', { gears: apps(1, 2), launchedMsAgo });
      await w.node('t1.example.com');
      await w.store.recordGearMoves([{ uuid: 'g0x1', at: new Date(w.clock.now().getTime() - DAY).toISOString(), key: 'old#1' }], GEAR_MOVE_WINDOW_MS);
      const mover = w.mover();
      await mover.handleScaleDown({ ...w.scaleDown('src.example.com'), decisionId: `${RENEWAL_DRAIN_PREFIX}up:d1_small:7` });
      await w.tickUntilIdle(() => mover);
      return w;
    };
    // Expired 2 days ago, a day past its grace: both gears move, and the capped one's history has its second move.
    const past = await renewal(12 * DAY);
    expect((await past.store.listDrains(POOL, 'completed')).map((d) => d.nodeId)).toEqual(['src.example.com']);
    expect(past.sim.nodeFacts('t1.example.com').activeGears).toBe(2);
    expect((await past.store.getGearMoves(['g0x1'])).get('g0x1')).toHaveLength(2);
    // Expired 12 hours ago: within its grace the limit holds.
    const within = await renewal(10.5 * DAY);
    const [aborted] = await within.store.listDrains(POOL, 'aborted');
    expect(aborted?.abortReason).toMatch(/^disruption budget: gear g0x1 \(app-0\) moved 1 times in 7 d \(maxMovesPerGear=1\) until /);
    expect(within.sim.nodeFacts('src.example.com').activeGears).toBe(2);
    // Past its grace, a do-not-move application still holds it.
    const kept = await renewal(12 * DAY, { doNotMoveApps: ['app-0'] });
    expect((await kept.store.listDrains(POOL, 'aborted'))[0]?.abortReason).toMatch(/^disruption budget: gear g0x0 belongs to app-0/);
    // The evaluator's scale-down of the same node is not a renewal: the limit holds it whatever the node's age.
    const w = await world({ config: { scaleDown: { expireAfter: '10d', expireGrace: '1d', budget: { maxMovesPerGear: 1 } } } });
    await w.node('src.example.com', { gears: apps(1, 2), launchedMsAgo: 12 * DAY });
    await w.node('t1.example.com');
    await w.store.recordGearMoves([{ uuid: 'g0x1', at: new Date(w.clock.now().getTime() - DAY).toISOString(), key: 'old#1' }], GEAR_MOVE_WINDOW_MS);
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
    await w.tickUntilIdle(() => mover);
    expect((await w.store.listDrains(POOL, 'aborted'))[0]?.abortReason).toMatch(/moved 1 times in 7 d \(maxMovesPerGear=1\)/);
  });

  it('a renewal\u2019s drain of a drifted node moves a gear at its move limit only past driftGrace from when the pool record first saw its template', async () => {
    const HOUR = 3_600_000;
    const renewal = async (seenMsAgo: number | undefined, options: { identity?: string; drifted?: boolean } = {}) => {
      const w = await world({ config: { scaleDown: { renewDrifted: true, driftGrace: '1d', budget: { maxMovesPerGear: 1 } } } });
      const template = w.config.pools[0]!.template;
      const now = launchedFromTemplate(template);
      await w.node('src.example.com', { gears: apps(1, 2), launchedMsAgo: 240 * HOUR, launchedFrom: options.drifted === false ? now : { ...now, image: 'ami-0aaaaaaaaaaaaaaaa' } });
      await w.node('t1.example.com');
      const record = await w.store.ensurePool(POOL);
      if (seenMsAgo !== undefined) {
        const since = new Date(w.clock.now().getTime() - seenMsAgo).toISOString();
        await w.store.updatePool(POOL, record.version, { templateSeen: { identity: options.identity ?? templateIdentity(template), since } });
      }
      await w.store.recordGearMoves([{ uuid: 'g0x1', at: new Date(w.clock.now().getTime() - 24 * HOUR).toISOString(), key: 'old#1' }], GEAR_MOVE_WINDOW_MS);
      const mover = w.mover();
      await mover.handleScaleDown({ ...w.scaleDown('src.example.com'), decisionId: `${RENEWAL_DRAIN_PREFIX}up:d1_small:7` });
      await w.tickUntilIdle(() => mover);
      return w;
    };
    const refusedByCap = async (w: Awaited<ReturnType<typeof renewal>>) => {
      expect((await w.store.listDrains(POOL, 'aborted'))[0]?.abortReason).toMatch(/^disruption budget: gear g0x1 \(app-0\) moved 1 times in 7 d \(maxMovesPerGear=1\)/);
      expect(w.sim.nodeFacts('src.example.com').activeGears).toBe(2);
    };
    // The pool's template first seen 3 days ago: 2 days past the grace, both gears move.
    const past = await renewal(72 * HOUR);
    expect((await past.store.listDrains(POOL, 'completed')).map((d) => d.nodeId)).toEqual(['src.example.com']);
    expect((await past.store.getGearMoves(['g0x1'])).get('g0x1')).toHaveLength(2);
    // Seen 2 hours ago: within the grace. Never seen, or seen as another template: no clock to count from.
    await refusedByCap(await renewal(2 * HOUR));
    await refusedByCap(await renewal(undefined));
    await refusedByCap(await renewal(72 * HOUR, { identity: 'ami-other|0000|' }));
    // A node launched from the pool's template is not drifted: a message calling its drain a renewal lifts nothing.
    await refusedByCap(await renewal(72 * HOUR, { drifted: false }));
  });

  it('records each completed move once in its gear\u2019s history', async () => {
    const w = await world();
    await w.node('src.example.com', { gears: apps(3, 1) });
    await w.node('t1.example.com');
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
    await w.tickUntilIdle(() => mover);
    const history = await w.store.getGearMoves(['g0x0', 'g1x0', 'g2x0', 'never']);
    expect([...history.keys()].sort()).toEqual(['g0x0', 'g1x0', 'g2x0']);
    for (const times of history.values()) expect(times).toHaveLength(1);
  });

  it('runs drains at once up to maxDraining and refuses the one over it', async () => {
    const w = await world({ config: { scaleDown: { budget: { maxDraining: 3 } } } });
    for (const id of ['a', 'b', 'c', 'd']) await w.node(`${id}.example.com`, { gears: apps(2, 1, id) });
    for (const id of ['t1', 't2', 't3']) await w.node(`${id}.example.com`);
    const mover = w.mover();
    for (const id of ['a', 'b', 'c']) {
      await mover.handleScaleDown(await w.decideScaleDown(`${id}.example.com`));
      w.clock.advance(1000);
    }
    await mover.run(w.budget(20_000));
    const draining = (await w.store.listNodes(POOL)).filter((n) => n.state === 'draining').map((n) => n.nodeId);
    expect(draining).toEqual(['a.example.com', 'b.example.com', 'c.example.com']);
    const targets = new Set((await w.store.listDrains(POOL, 'active')).flatMap((d) => d.moves.map((m) => m.target)));
    expect([...targets].every((target) => target.startsWith('t'))).toBe(true);

    await mover.handleScaleDown(await w.decideScaleDown('d.example.com'));
    await w.tickUntilIdle(() => mover);
    expect((await w.store.listDrains(POOL, 'completed')).map((d) => d.nodeId).sort()).toEqual(['a.example.com', 'b.example.com', 'c.example.com']);
    const [refused] = await w.store.listDrains(POOL, 'aborted');
    expect(refused).toMatchObject({ nodeId: 'd.example.com', abortReason: '3 node(s) of pool d1/small already draining (scaleDown.budget.maxDraining=3)' });
  });
});
