import { afterAll, describe, expect, it } from 'vitest';
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { TABLE_KEYS } from '../../lib/adapters/dynamodb/table-definition.js';
import type { DrainRecord } from '../../lib/domain/model.js';
import { drainIdFor } from '../../lib/domain/drain.js';
import type { DrainCompleteMessage, ScaleUpMessage } from '../../lib/messages/index.js';
import type { Platform } from '../../lib/ports/platform.js';
import type { Queue } from '../../lib/ports/queue.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { Crash, Injector } from '../support/crash.js';
import { POOL, World, apps } from '../support/gear-mover-world.js';

const harness = dynaliteHarness();
afterAll(() => harness.close());

async function world(options: ConstructorParameters<typeof World>[1] = {}): Promise<World> {
  return new World(await harness.create(), options);
}

async function onlyDrain(w: World, state: DrainRecord['state']): Promise<DrainRecord> {
  const drains = await w.store.listDrains(POOL, state);
  expect(drains).toHaveLength(1);
  return drains[0]!;
}

describe('gear mover on dynalite with the simulated platform', () => {
  it('drains 50 gears: every gear on exactly one node at every step, one move each, drain-complete sent, lease released', async () => {
    const w = await world();
    const gears = apps(10, 5);
    await w.node('src.example.com', { gears });
    for (let i = 1; i <= 5; i++) await w.node(`t${i}.example.com`, { gears: apps(1, 30, `t${i}-`) });
    const message = w.scaleDown('src.example.com');
    await w.leaseFor(message);

    const mover = w.mover();
    expect(await mover.handleScaleDown(message)).toEqual({ drainId: drainIdFor(message.decisionId), created: true });
    expect((await w.store.getPool(POOL))?.lease).toBeUndefined();
    const summary = await mover.run(w.budget(30 * 60_000));
    expect(summary).toEqual({ drains: 1, completed: 1, aborted: 0, pending: 0 });

    // Every gear left the source exactly once, to a node of the pool, and is on exactly one node.
    w.checkGears();
    expect(w.checks).toBeGreaterThan(100);
    const history = w.sim.moveHistory();
    expect(history).toHaveLength(50);
    expect(new Set(history.map((m) => m.uuid))).toEqual(new Set(gears.map((g) => g.uuid)));
    expect(history.every((m) => m.outcome === 'succeeded' && m.from === 'src.example.com')).toBe(true);
    expect(await w.sim.listGears('src.example.com')).toEqual([]);
    // Capacity: no target above 80 % of 100; anti-affinity: the five gears of an app went to five different nodes.
    for (let i = 1; i <= 5; i++) expect(w.sim.nodeFacts(`t${i}.example.com`).activeGears).toBe(40);
    for (let a = 0; a < 10; a++) {
      const targets = history.filter((m) => m.uuid.startsWith(`g${a}x`)).map((m) => m.to);
      expect(new Set(targets).size).toBe(5);
    }

    const drain = await onlyDrain(w, 'completed');
    expect(drain).toMatchObject({ drainId: drainIdFor(message.decisionId), nodeId: 'src.example.com', kind: 'scale-down' });
    expect(drain.moves.every((m) => m.state === 'moved' && m.attempts === 1)).toBe(true);
    expect(await w.store.getNode('src.example.com')).toMatchObject({ state: 'drained', drainId: drain.drainId });
    expect(w.sim.nodeFacts('src.example.com').active).toBe(false);
    const sent = w.queue.sent('decommission') as DrainCompleteMessage[];
    expect(sent).toEqual([{ type: 'drain-complete', v: 1, drainId: drain.drainId, nodeId: 'src.example.com', pool: POOL, completedAt: drain.completedAt }]);
    expect(w.metrics.sum('GearMoves')).toBe(50);
    expect(w.metrics.points.find((p) => p.name === 'DrainDuration')).toMatchObject({ unit: 'Seconds', dimensions: { pool: POOL } });
    // Three moves at a time, 30 s each: 17 rounds, about 9 minutes.
    expect(w.metrics.sum('DrainDuration')).toBeGreaterThan(8 * 60);
    expect(w.metrics.sum('DrainDuration')).toBeLessThan(12 * 60);
  });

  it('retries a move that fails twice, with doubling backoff, and completes', async () => {
    const w = await world();
    await w.node('src.example.com', { gears: apps(1, 3) });
    await w.node('t1.example.com', { gears: [] });
    w.sim.scriptMoveFailures('g0x0', 2);
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
    expect((await mover.run(w.budget())).completed).toBe(1);

    const attempts = w.sim.moveHistory().filter((m) => m.uuid === 'g0x0');
    expect(attempts.map((m) => m.outcome)).toEqual(['failed', 'failed', 'succeeded']);
    const gaps = [1, 2].map((i) => Date.parse(attempts[i]!.startedAt) - Date.parse(attempts[i - 1]!.startedAt));
    expect(gaps[0]).toBeGreaterThanOrEqual(30_000 + 30_000);
    expect(gaps[1]).toBeGreaterThanOrEqual(30_000 + 60_000);
    const drain = await onlyDrain(w, 'completed');
    expect(drain.moves.find((m) => m.gear.uuid === 'g0x0')).toMatchObject({ state: 'moved', attempts: 3 });
    expect(w.metrics.sum('GearMoveFailures')).toBe(2);
  });

  it('aborts when a move always fails: node re-opened, moved gears stay, pool drain failure time set', async () => {
    const w = await world();
    await w.node('src.example.com', { gears: apps(1, 4) });
    await w.node('t1.example.com', { gears: [] });
    w.sim.scriptMoveFailures('g0x1', 'always');
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
    expect((await mover.run(w.budget())).aborted).toBe(1);

    const drain = await onlyDrain(w, 'aborted');
    expect(drain.abortReason).toMatch(/^gear g0x1 \(app-0\) could not be moved to t1\.example\.com after 3 attempt\(s\): simulated failure/);
    expect(w.sim.moveHistory().filter((m) => m.uuid === 'g0x1')).toHaveLength(3);
    const node = await w.store.getNode('src.example.com');
    expect(node?.state).toBe('active');
    expect(node?.drainId).toBeUndefined();
    expect(w.sim.nodeFacts('src.example.com')).toMatchObject({ active: true, activeGears: 1 });
    expect(w.sim.gearLocations().get('g0x1')).toEqual(['src.example.com']);
    expect(w.sim.nodeFacts('t1.example.com').activeGears).toBe(3);
    // The pool's scale-down backs off; its scale-up does not (no host failed).
    expect((await w.store.getPool(POOL))?.lastDrainFailureAt).toBeDefined();
    expect((await w.store.getPool(POOL))?.lastFailureAt).toBeUndefined();
    expect(w.metrics.sum('DrainsAborted')).toBe(1);
    expect(w.metrics.sum('DrainsCalledOff')).toBe(0);
    expect(w.metrics.sum('DrainsOutgrown')).toBe(0);
    expect(w.queue.sent('decommission')).toEqual([]);
    const [logged] = await w.store.listDecisions(POOL, 1);
    expect(logged).toMatchObject({ kind: 'failure', decisionId: drain.decisionId });
  });

  it('keeps an ended drain, completed or aborted, drainHistoryTtl after it ends, then lets DynamoDB remove it with its moves', async () => {
    const w = await world({ config: { drainHistoryTtl: '30d' } });
    await w.node('src.example.com', { gears: apps(1, 3) });
    await w.node('stuck.example.com', { gears: apps(1, 2, 's-') });
    await w.node('t1.example.com', { gears: [] });
    w.sim.scriptMoveFailures('s-0x1', 'always');
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
    expect(await mover.run(w.budget())).toMatchObject({ completed: 1 });
    await mover.handleScaleDown(await w.decideScaleDown('stuck.example.com'));
    expect(await mover.run(w.budget())).toMatchObject({ aborted: 1 });

    const tableName = (w.store as unknown as { tableName: string }).tableName;
    for (const drain of [await onlyDrain(w, 'completed'), await onlyDrain(w, 'aborted')]) {
      const items = await harness.local!.client.send(
        new QueryCommand({ TableName: tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: `DRAIN#${drain.drainId}` } }, ConsistentRead: true }),
      );
      const due = Math.floor((Date.parse(drain.updatedAt) + 30 * 86_400_000) / 1000);
      // The header and one item per move, every one due at the same second.
      expect(items.Items?.map((item) => item.sk!.S).sort()).toEqual(['DRAIN', ...drain.moves.map((m) => `MOVE#${m.gear.uuid}`)].sort());
      expect(items.Items?.map((item) => Number(item[TABLE_KEYS.ttl]?.N))).toEqual(items.Items!.map(() => due));
    }
  });

  it('aborts before moving anything when the plan cannot place every gear', async () => {
    const w = await world();
    await w.node('src.example.com', { gears: apps(1, 10) });
    await w.node('t1.example.com', { gears: apps(1, 75, 't') });
    const message = w.scaleDown('src.example.com');
    await w.leaseFor(message);
    const mover = w.mover();
    await mover.handleScaleDown(message);
    await mover.run(w.budget());
    const drain = await onlyDrain(w, 'aborted');
    expect(drain.abortReason).toMatch(/^cannot place 5 of 10 gear\(s\) of src\.example\.com: no room left below 80%/);
    expect(w.sim.moveHistory()).toEqual([]);
    expect(await w.store.getNode('src.example.com')).toMatchObject({ state: 'active' });
    expect(w.sim.nodeFacts('src.example.com').active).toBe(true);
    expect((await w.store.getPool(POOL))?.lease).toBeUndefined();
    // The pool outgrew the drain: counted apart, no page, no failure backoff on the scale-up the pool may need next.
    expect(drain.outgrownAt).toBeDefined();
    expect((await w.store.getPool(POOL))?.lastDrainFailureAt).toBeUndefined();
    expect(w.metrics.sum('DrainsAborted')).toBe(0);
    expect(w.metrics.sum('DrainsOutgrown')).toBe(1);
    const [logged] = await w.store.listDecisions(POOL, 1);
    expect(logged).toMatchObject({ kind: 'scale-down', decisionId: drain.decisionId });
    expect(logged!.reason).toMatch(/^drain \S+ of src\.example\.com outgrown: cannot place 5 of 10/);
  });

  it('stops a drain whose gear finds every target full, as outgrown: the gear stays, the node re-opens, nothing pages', async () => {
    const w = await world();
    await w.node('src.example.com', { gears: apps(1, 1) });
    await w.node('t1.example.com', { max: 10, gears: [] });
    await w.node('t2.example.com', { max: 10, gears: [] });
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
    // New applications fill both targets after their last report: the stats still show room, the platform has none.
    for (const target of ['t1.example.com', 't2.example.com']) {
      for (let i = 0; i < 10; i++) w.sim.putGear(target, { uuid: `${target}-late${i}`, app: `late-${target}`, size: 'small' });
      w.gears += 10;
    }
    expect((await mover.run(w.budget())).aborted).toBe(1);

    const drain = await onlyDrain(w, 'aborted');
    expect(drain.abortReason).toMatch(/^no room for gear g0x0 \(app-0\): 5 target\(s\) in a row filled or left before it could land \(last t[12]\.example\.com: node t[12]\.example\.com has no room/);
    expect(drain.moves).toMatchObject([{ state: 'failed', noRoom: true, replans: 5 }]);
    expect(drain.outgrownAt).toBeDefined();
    expect(w.sim.gearLocations().get('g0x0')).toEqual(['src.example.com']);
    expect(w.sim.nodeFacts('src.example.com').active).toBe(true);
    expect(await w.store.getNode('src.example.com')).toMatchObject({ state: 'active' });
    expect((await w.store.getPool(POOL))?.lastDrainFailureAt).toBeUndefined();
    expect(w.metrics.sum('DrainsAborted')).toBe(0);
    expect(w.metrics.sum('DrainsOutgrown')).toBe(1);
    expect(w.queue.sent('decommission')).toEqual([]);
  });

  it('aborts a drain that moves no gear for drainTimeout, letting the moves in flight settle first', async () => {
    // Moves that take 40 minutes: none ends within the 30-minute timeout.
    const w = await world({ moveDurationMs: 40 * 60_000, config: { scaleDown: { drainTimeout: '30m' }, platform: { commandTimeout: '25m' } } });
    // Six single-gear applications: three moves in flight at once (one per application).
    await w.node('src.example.com', { gears: apps(6, 1) });
    await w.node('t1.example.com', { gears: [] });
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
    await mover.run(w.budget(60 * 60_000));
    const drain = await onlyDrain(w, 'aborted');
    expect(drain.abortReason).toBe('drain timed out: no gear moved for 30m (0 of 6 gear(s) moved)');
    expect(drain.moves.filter((m) => m.state === 'moved')).toHaveLength(3);
    expect(w.sim.movesInFlight()).toBe(0);
    expect(w.sim.nodeFacts('t1.example.com').activeGears).toBe(3);
    expect(await w.store.getNode('src.example.com')).toMatchObject({ state: 'active' });
  });

  it('does not abort a drain that keeps moving gears past drainTimeout: it completes (issue 19)', async () => {
    // 12 gears, 3 at a time, 10 minutes a move: 40 minutes of moves, every batch within the 30-minute timeout. Stopping
    // it at 30 minutes (9 of 12 moved) would re-open the node with 9 tenant restarts paid for nothing.
    const w = await world({ moveDurationMs: 10 * 60_000, config: { scaleDown: { drainTimeout: '30m' }, platform: { commandTimeout: '25m' } } });
    await w.node('src.example.com', { gears: apps(4, 3) });
    for (let i = 1; i <= 3; i++) await w.node(`t${i}.example.com`, { gears: [] });
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
    const summary = await mover.run(w.budget(90 * 60_000));
    expect(summary).toMatchObject({ completed: 1, aborted: 0 });
    const drain = await onlyDrain(w, 'completed');
    expect(drain.moves.filter((m) => m.state === 'moved')).toHaveLength(12);
    expect(w.sim.moveHistory()).toHaveLength(12);
    expect(await w.store.getNode('src.example.com')).toMatchObject({ state: 'drained' });
  });

  it('re-plans a gear whose target filled up', async () => {
    const w = await world({ config: { scaleDown: { maxConcurrentMoves: 1 } } });
    await w.node('src.example.com', { gears: apps(2, 1) });
    await w.node('t1.example.com', { max: 10, gears: [] });
    await w.node('t2.example.com', { max: 10, gears: apps(1, 1, 't2-') });
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
    // Plan, then fill t1 (new applications arrive on it) before the moves start.
    await mover.run({ timeLeft: (() => { let steps = 0; return () => (steps++ < 8 ? 60_000 : 0); })() });
    const planned = await onlyDrain(w, 'active');
    const toT1 = planned.moves.filter((m) => m.target === 't1.example.com' && m.state === 'planned');
    expect(toT1.length).toBeGreaterThan(0);
    for (let i = 0; i < 10; i++) {
      try {
        w.sim.putGear('t1.example.com', { uuid: `late${i}`, app: 'late', size: 'small' });
        w.gears++;
      } catch {
        break; // full (moves in flight hold their slots)
      }
    }
    await w.report();
    await w.tickUntilIdle(() => mover);
    const drain = await onlyDrain(w, 'completed');
    expect(drain.moves.some((m) => (m.replans ?? 0) > 0)).toBe(true);
    expect(await w.sim.listGears('src.example.com')).toEqual([]);
  });

  it('counts the gears that landed on a target after its last report: a second drain plans no slot already taken', async () => {
    // Node agents report once a minute; a drain's moves land in between. Two drains pack onto the same fullest node.
    const w = await world({ reportWhileWaiting: false, config: { scaleDown: { budget: { maxDraining: 2 } } } });
    await w.node('a.example.com', { gears: apps(6, 1, 'a') });
    await w.node('b.example.com', { gears: apps(6, 1, 'b').map((gear) => ({ ...gear, app: `b-${gear.app}` })) });
    await w.node('t1.example.com', { max: 10, gears: [] });
    await w.node('t2.example.com', { max: 10, gears: [] });
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('a.example.com'));
    // Long enough for a's first three moves (three at a time, 30 s each) to land, not for the rest.
    await mover.run(w.budget(40_000));
    const a = await onlyDrain(w, 'active');
    expect(a.moves.filter((m) => m.state === 'moved' && m.target === 't1.example.com')).toHaveLength(3);
    expect(a.moves.filter((m) => m.state !== 'moved' && m.target === 't1.example.com')).toHaveLength(3);
    // t1 holds three of a's gears; its stats still say it is empty.
    expect(w.sim.nodeFacts('t1.example.com').activeGears).toBe(3);
    expect((await w.store.getNode('t1.example.com'))?.stats?.activeGears).toBe(0);

    await mover.handleScaleDown(await w.decideScaleDown('b.example.com'));
    expect(await mover.run(w.budget())).toMatchObject({ completed: 2, aborted: 0 });
    const b = (await w.store.listDrains(POOL, 'completed')).find((d) => d.nodeId === 'b.example.com')!;
    // Below the 0.8 threshold t1 has 8 slots: 3 landed, 3 on their way, so 2 left for b; the rest went to t2, and no move was refused.
    expect(b.moves.filter((m) => m.target === 't1.example.com')).toHaveLength(2);
    expect(b.moves.filter((m) => m.target === 't2.example.com')).toHaveLength(4);
    expect(b.moves.every((m) => m.state === 'moved' && m.attempts === 1 && m.replans === undefined)).toBe(true);
    expect(w.sim.nodeFacts('t1.example.com').activeGears).toBe(8);
    w.checkGears();
  });

  it('starts one drain for a duplicate scale-down, delivered twice and concurrently', async () => {
    const w = await world();
    await w.node('src.example.com', { gears: apps(4, 3) });
    await w.node('t1.example.com', { gears: [] });
    await w.node('t2.example.com', { gears: [] });
    const message = await w.decideScaleDown('src.example.com');
    const [a, b] = [w.mover(), w.mover()];
    const outcomes = await Promise.all([a.handleScaleDown(message), b.handleScaleDown(message)]);
    expect(outcomes.filter((o) => o.created)).toHaveLength(1);
    await Promise.all([a.run(w.budget()), b.run(w.budget())]);
    expect(await a.handleScaleDown(message)).toEqual({ drainId: drainIdFor(message.decisionId), created: false });
    await a.run(w.budget());

    expect((await w.store.listDrains(POOL, 'completed')).map((d) => d.drainId)).toEqual([drainIdFor(message.decisionId)]);
    const history = w.sim.moveHistory();
    expect(history).toHaveLength(12);
    expect(new Set(history.map((m) => m.uuid)).size).toBe(12);
    expect(new Set((w.queue.sent('decommission') as DrainCompleteMessage[]).map((m) => m.drainId))).toEqual(new Set([drainIdFor(message.decisionId)]));
  });

  it('drains again a node the decommissioner hands back (drained -> draining)', async () => {
    const w = await world();
    await w.node('src.example.com', { gears: apps(1, 2) });
    await w.node('t1.example.com', { gears: [] });
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
    await mover.run(w.budget());
    // A gear the platform still lists after all; the decommissioner refuses the node.
    w.sim.putGear('src.example.com', { uuid: 'straggler', app: 'late', size: 'small' });
    w.gears++;
    const node = (await w.store.getNode('src.example.com'))!;
    await w.store.transitionNode(node.nodeId, { from: 'drained', to: 'draining', patch: { reason: 'decommissioner: still holds 1 gear' } }, w.clock.now());
    w.clock.advance(60_000);
    await w.report();
    const summary = await mover.run(w.budget());
    expect(summary.completed).toBe(1);
    const drains = await w.store.listDrains(POOL, 'completed');
    expect(drains.map((d) => d.kind).sort()).toEqual(['redrain', 'scale-down']);
    expect(w.sim.gearLocations().get('straggler')).toEqual(['t1.example.com']);
    expect(await w.store.getNode('src.example.com')).toMatchObject({ state: 'drained' });
    expect((w.queue.sent('decommission') as DrainCompleteMessage[]).map((m) => m.drainId)).toHaveLength(2);
  });

  it('drains an interrupted node at once, ahead of a normal drain, and requests a replacement through the pool lease', async () => {
    const w = await world({ config: { scaleDown: { maxConcurrentDrains: 1 } } });
    await w.node('spot.example.com', { gears: apps(3, 4, 's'), instanceId: 'i-0123456789abcdef0' });
    await w.node('normal.example.com', { gears: apps(1, 2, 'n') });
    await w.node('t1.example.com', { gears: apps(1, 95, 't') });
    await w.node('t2.example.com', { max: 10, gears: apps(1, 5, 'u') });
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('normal.example.com'));
    await mover.run({ timeLeft: (() => { let n = 0; return () => (n++ < 6 ? 60_000 : 0); })() });
    expect((await w.store.getNode('normal.example.com'))?.state).toBe('draining');

    const event = { type: 'ec2-spot-interruption' as const, eventId: 'ev-1', instanceId: 'i-0123456789abcdef0', action: 'terminate' as const, time: w.clock.now().toISOString() };
    const outcome = await mover.handleEvent(event);
    expect(outcome).toMatchObject({ action: 'drain', nodeId: 'spot.example.com' });
    // The same event delivered again finds the same drain.
    expect(await mover.handleEvent(event)).toMatchObject({ drainId: outcome.drainId });
    await mover.run(w.budget(10 * 60_000));

    // Urgent: started although maxConcurrentDrains=1, targets filled to capacity, the normal drain preempted for room.
    const urgent = (await w.store.getDrain(outcome.drainId!))!;
    expect(urgent).toMatchObject({ state: 'completed', kind: 'interruption', urgentCause: 'spot interruption warning (terminate)' });
    expect(await w.store.getNode('spot.example.com')).toMatchObject({ state: 'drained' });
    expect(w.sim.nodeFacts('t1.example.com').activeGears).toBe(100);
    const normal = (await w.store.listDrains(POOL, 'aborted')).find((d) => d.nodeId === 'normal.example.com');
    expect(normal?.abortReason).toMatch(/^preempted by urgent drain/);
    expect((await w.store.getNode('normal.example.com'))?.state).toBe('active');
    w.checkGears();

    // Its first plan lacked room for 4 gears: one replacement node, through the pool lease as the evaluator does it.
    const [request] = w.queue.recorded('scale');
    const body = request?.message as ScaleUpMessage;
    expect(body).toMatchObject({ type: 'scale-up', pool: POOL, count: 1 });
    expect(body.reason).toMatch(/^replace interrupted node spot\.example\.com \(spot interruption warning \(terminate\)\): \d+ gear\(s\) have no room/);
    expect(request).toMatchObject({ groupId: POOL, deduplicationId: body.decisionId });
    expect((await w.store.getPool(POOL))?.lease).toMatchObject({ holder: body.decisionId, kind: 'scale-up', sentAt: expect.any(String) });
    expect(urgent.replacementDecisionId).toBe(body.decisionId);
    // delayAfterAdd counts from the replacement; the pays-off check's wait after a scale-up does not (demand did not ask).
    const poolAfter = await w.store.getPool(POOL);
    expect(poolAfter?.lastScaleUpAt).toBe(body.decidedAt);
    expect(poolAfter?.lastDemandScaleUpAt).toBeUndefined();
  });

  it('marks a node terminated by someone else lost, reports its gears, and ends its drain', async () => {
    const w = await world();
    await w.node('gone.example.com', { gears: apps(1, 3, 'x'), instanceId: 'i-0fedcba9876543210' });
    await w.node('t1.example.com', { gears: [] });
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('gone.example.com'));
    await mover.run({ timeLeft: (() => { let n = 0; return () => (n++ < 4 ? 60_000 : 0); })() });
    const outcome = await mover.handleEvent({ type: 'ec2-state-change', eventId: 'ev-9', instanceId: 'i-0fedcba9876543210', state: 'terminated', time: w.clock.now().toISOString() });
    expect(outcome).toMatchObject({ action: 'lost', nodeId: 'gone.example.com' });
    expect((await w.store.getNode('gone.example.com'))?.state).toBe('lost');
    expect(w.metrics.sum('GearsLost')).toBe(3);
    expect(w.log.lines.find((l) => l.message === 'node lost with its gears')?.attributes).toMatchObject({
      gearCount: 3,
      gears: [
        { uuid: 'x0x0', app: 'app-0' },
        { uuid: 'x0x1', app: 'app-0' },
        { uuid: 'x0x2', app: 'app-0' },
      ],
    });
    await mover.run(w.budget());
    expect((await w.store.listDrains(POOL, 'aborted'))[0]?.abortReason).toMatch(/^node lost: instance i-0fedcba9876543210 terminated/);
    expect(await mover.handleEvent({ type: 'ec2-state-change', eventId: 'ev-10', instanceId: 'i-0fedcba9876543210', state: 'terminated', time: w.clock.now().toISOString() })).toMatchObject({ action: 'ignored' });
  });
});

// ---------------------------------------------------------------------------
// Crashes.
/** The steps a crash may follow or precede: writes, platform actions, sends (Injector, test/support/crash.ts). */
const STORE_WRITES = new Set(['createDrain', 'updateDrain', 'transitionNode', 'updateNode', 'updatePool', 'releaseLease', 'acquireLease', 'markLeaseSent', 'appendDecision']);
const PLATFORM_ACTIONS = new Set(['deactivateNode', 'activateNode', 'startMove', 'moveStatus', 'listGears']);
const SENDS = new Set(['send']);

describe('gear mover: a crash after any step resumes on the next tick with no duplicate move', () => {
  async function scenario(at: number, when: 'before' | 'after', store: 'dynalite' | 'memory'): Promise<{ steps: number; crashed: boolean; w: World }> {
    const options = { config: { scaleDown: { maxConcurrentMoves: 2 } } };
    const w = store === 'dynalite' ? await world(options) : new World(new InMemoryStateStore(), options);
    await w.node('src.example.com', { gears: apps(2, 2) });
    await w.node('t1.example.com', { gears: [] });
    await w.node('t2.example.com', { gears: [] });
    const message = w.scaleDown('src.example.com');
    await w.leaseFor(message);
    const injector = new Injector(at, when);
    const faulty = w.mover(
      injector.wrap(w.checkedPlatform(), PLATFORM_ACTIONS) as Platform,
      injector.wrap(w.store, STORE_WRITES) as StateStore,
    );
    (faulty as unknown as { ports: { queue: Queue } }).ports.queue = injector.wrap(w.queue, SENDS) as Queue;
    let crashed = false;
    try {
      await faulty.handleScaleDown(message);
      await faulty.run(w.budget());
    } catch (error) {
      if (!(error instanceof Crash)) throw error;
      crashed = true;
    }
    crashed ||= injector.dead;
    // The scale-down message is redelivered (it failed), then the one-minute ticks resume whatever is left.
    w.clock.advance(60_000);
    const fresh = () => w.mover();
    await fresh().handleScaleDown(message);
    await w.tickUntilIdle(fresh, 30);
    return { steps: injector.steps, crashed, w };
  }

  // Every step on the in-memory store (it passes the same contract suite as DynamoDB), every ninth one on dynalite.
  it.each(['memory', 'dynalite'] as const)('for every step of a 4-gear drain, before and after the step takes effect (%s)', async (store) => {
    const clean = await scenario(Number.MAX_SAFE_INTEGER, 'after', store);
    const total = clean.steps;
    expect(total).toBeGreaterThan(20);
    let scenarios = 0;
    const stride = store === 'memory' ? 1 : 9;
    for (const when of ['after', 'before'] as const) {
      for (let at = 1; at <= total; at += stride) {
        const { crashed, w } = await scenario(at, when, store);
        expect(crashed, `step ${at} ${when}`).toBe(true);
        const label = `crash ${when} step ${at}`;
        const history = w.sim.moveHistory();
        // No duplicate move: each gear's move was started once, and succeeded.
        expect(history.map((m) => m.uuid).sort(), label).toEqual(['g0x0', 'g0x1', 'g1x0', 'g1x1']);
        expect(history.every((m) => m.outcome === 'succeeded'), label).toBe(true);
        w.checkGears();
        const drains = await w.store.listDrains(POOL, 'completed');
        expect(drains.map((d) => d.drainId), label).toEqual([drainIdFor(w.scaleDown('src.example.com', new Date('2026-03-01T12:00:00.000Z')).decisionId)]);
        expect((await w.store.getNode('src.example.com'))?.state, label).toBe('drained');
        const sent = w.queue.sent('decommission') as DrainCompleteMessage[];
        expect(sent.length, label).toBeGreaterThanOrEqual(1);
        expect(new Set(sent.map((m) => m.drainId)).size, label).toBe(1);
        expect((await w.store.getPool(POOL))?.lease, label).toBeUndefined();
        scenarios++;
      }
    }
    expect(scenarios).toBe(2 * Math.ceil(total / stride));
  });
});
