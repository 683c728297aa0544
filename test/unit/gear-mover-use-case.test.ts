/**
 * The gear mover's transitions, one by one, on the in-memory state store
 * (contract-tested against DynamoDB) and the simulated platform.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { alsoDrainIdFor, drainIdFor } from '../../lib/domain/drain.js';
import { POOL, World, apps } from '../support/gear-mover-world.js';

async function world(options: ConstructorParameters<typeof World>[1] = {}): Promise<World> {
  return new World(new InMemoryStateStore(), options);
}

/** A budget of a few steps: enough to start a drain without finishing it. */
const steps = (n: number) => {
  let left = n;
  return { timeLeft: () => (left-- > 0 ? 60_000 : 0) };
};

describe('GearMover: starting a drain', () => {
  it('refuses a protected node without touching it, releases the lease, logs the refusal', async () => {
    const w = await world();
    await w.node('src.example.com', { gears: apps(1, 2) });
    await w.node('t1.example.com');
    const node = (await w.store.getNode('src.example.com'))!;
    await w.store.updateNode(node.nodeId, node.version, { protected: true });
    const message = w.scaleDown('src.example.com');
    await w.leaseFor(message);
    const mover = w.mover();
    await mover.handleScaleDown(message);
    await mover.run(w.budget());

    const [drain] = await w.store.listDrains(POOL, 'aborted');
    expect(drain?.abortReason).toBe('node src.example.com is protected');
    expect(await w.store.getNode('src.example.com')).toMatchObject({ state: 'active', version: node.version + 1 });
    expect(w.sim.nodeFacts('src.example.com').active).toBe(true);
    expect((await w.store.getPool(POOL))?.lease).toBeUndefined();
    expect((await w.store.getPool(POOL))?.lastDrainFailureAt).toBeUndefined();
    expect(w.metrics.sum('DrainsAborted')).toBe(0);
    const [logged] = await w.store.listDecisions(POOL, 1);
    expect(logged).toMatchObject({ kind: 'refused', decisionId: message.decisionId });
  });

  it('refuses a drain beyond maxConcurrentDrains', async () => {
    const w = await world({ config: { scaleDown: { maxConcurrentDrains: 1 } } });
    await w.node('a.example.com', { gears: apps(1, 1, 'a') });
    await w.node('b.example.com', { gears: apps(1, 1, 'b') });
    await w.node('t1.example.com');
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('a.example.com'));
    await mover.run(steps(3));
    expect((await w.store.getNode('a.example.com'))?.state).toBe('draining');
    w.clock.advance(1000);
    await mover.handleScaleDown(await w.decideScaleDown('b.example.com'));
    await mover.run(steps(20));
    const refused = (await w.store.listDrains(POOL, 'aborted')).find((d) => d.nodeId === 'b.example.com');
    expect(refused?.abortReason).toBe('1 node(s) of pool d1/small already draining (scaleDown.maxConcurrentDrains=1)');
    expect((await w.store.getNode('b.example.com'))?.state).toBe('active');
  });

  it('drains every node a decision names (alsoNodeIds), each once, before releasing the lease', async () => {
    const w = await world({ config: { scaleDown: { budget: { maxDraining: 3 } } } });
    await w.node('a.example.com', { gears: apps(1, 1, 'a') });
    await w.node('b.example.com', { gears: apps(1, 1, 'b') });
    await w.node('c.example.com', { gears: apps(1, 1, 'c') });
    await w.node('t1.example.com');
    await w.node('t2.example.com');
    const message = { ...w.scaleDown('a.example.com'), alsoNodeIds: ['b.example.com', 'c.example.com'] };
    await w.leaseFor(message);
    const mover = w.mover();
    await mover.handleScaleDown(message);
    await mover.handleScaleDown(message); // redelivered: the same three drains
    const drains = await w.store.listDrains(POOL, 'active');
    expect(drains.map((d) => d.drainId).sort()).toEqual(
      [drainIdFor(message.decisionId), alsoDrainIdFor(message.decisionId, 'b.example.com'), alsoDrainIdFor(message.decisionId, 'c.example.com')].sort(),
    );
    expect((await w.store.getPool(POOL))?.lease).toBeUndefined();
    await w.tickUntilIdle(() => mover);
    for (const id of ['a.example.com', 'b.example.com', 'c.example.com']) expect((await w.store.getNode(id))?.state).not.toBe('active');
    expect((await w.store.listDrains(POOL, 'completed')).length).toBe(3);
  });

  it('still holds each further drain to the budget when it starts (maxDraining of the pool now)', async () => {
    const w = await world(); // maxDraining 10 % of 4 nodes = 1
    await w.node('a.example.com', { gears: apps(1, 1, 'a') });
    await w.node('b.example.com', { gears: apps(1, 1, 'b') });
    await w.node('t1.example.com');
    await w.node('t2.example.com');
    const message = { ...w.scaleDown('a.example.com'), alsoNodeIds: ['b.example.com'] };
    await w.leaseFor(message);
    const mover = w.mover();
    await mover.handleScaleDown(message);
    await w.tickUntilIdle(() => mover);
    const [refused] = await w.store.listDrains(POOL, 'aborted');
    expect(refused).toMatchObject({ nodeId: 'b.example.com', abortReason: '1 node(s) of pool d1/small already draining (scaleDown.budget.maxDraining=10% of 4 nodes = 1)' });
    expect((await w.store.getNode('b.example.com'))?.state).toBe('active');
  });

  it("drains only the named node of an operator's drain, whatever else its message names", async () => {
    const w = await world();
    await w.node('a.example.com', { gears: apps(1, 1, 'a') });
    await w.node('b.example.com', { gears: apps(1, 1, 'b') });
    await w.node('t1.example.com');
    const message = { ...w.scaleDown('a.example.com'), decisionId: 'manual:op-1', alsoNodeIds: ['b.example.com'] };
    await w.mover().handleScaleDown(message);
    expect((await w.store.listDrains(POOL, 'active')).map((d) => d.nodeId)).toEqual(['a.example.com']);
  });

  it('refuses a scale-down that no longer holds the pool lease: superseded, or its lease expired', async () => {
    const w = await world();
    await w.node('a.example.com', { gears: apps(1, 2) });
    await w.node('b.example.com', { gears: [] });
    const mover = w.mover();
    const late = w.scaleDown('a.example.com');
    w.clock.advance(16 * 60_000);
    const current = await w.decideScaleDown('b.example.com');
    expect(await mover.handleScaleDown(late)).toEqual({
      drainId: drainIdFor(late.decisionId),
      created: false,
      refused: `superseded: the pool's lease is held by scale-down ${current.decisionId}`,
    });
    await mover.handleScaleDown(current);
    expect(await mover.handleScaleDown(late)).toMatchObject({ created: false, refused: expect.stringMatching(/^stale: /) });
    expect((await w.store.listDrains(POOL, 'active')).map((d) => d.drainId)).toEqual([drainIdFor(current.decisionId)]);
    expect(await w.store.getDrain(drainIdFor(late.decisionId))).toBeUndefined();
  });

  it('refuses a node that is not active (a stale decision) and one of another pool', async () => {
    const w = await world();
    await w.node('gone.example.com', { state: 'provisioning' });
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('gone.example.com'));
    const ghost = { ...w.scaleDown('ghost.example.com'), decisionId: 'down:d1_small:1' };
    await w.leaseFor(ghost);
    await mover.handleScaleDown(ghost);
    await mover.run(w.budget());
    const reasons = (await w.store.listDrains(POOL, 'aborted')).map((d) => d.abortReason).sort();
    expect(reasons).toEqual(['node ghost.example.com has no record', 'node gone.example.com is provisioning']);
  });
});

describe('GearMover: stopping and finishing', () => {
  it('cancels a drain by hand: the moves in flight settle, then the node re-opens', async () => {
    const w = await world();
    // Six single-gear applications: three moves in flight at once (one per application).
    await w.node('src.example.com', { gears: apps(6, 1) });
    await w.node('t1.example.com');
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
    await mover.run(steps(8));
    expect(w.sim.movesInFlight()).toBe(3);
    const stopping = await mover.cancelDrain('src.example.com', 'operator request');
    expect(stopping?.abortRequestedAt).toBeDefined();
    await mover.run(w.budget());
    expect(w.sim.movesInFlight()).toBe(0);
    expect(w.sim.moveHistory()).toHaveLength(3);
    const [drain] = await w.store.listDrains(POOL, 'aborted');
    expect(drain?.abortReason).toBe('cancelled: operator request');
    expect(drain?.cancelledAt).toBe(stopping?.abortRequestedAt);
    expect(await w.store.getNode('src.example.com')).toMatchObject({ state: 'active' });
    expect(w.sim.nodeFacts('src.example.com')).toMatchObject({ active: true, activeGears: 3 });
    // The operator's own action: no page, no backoff, no count of a demand stop either.
    expect(w.metrics.sum('DrainsAborted')).toBe(0);
    expect(w.metrics.sum('DrainsOutgrown') + w.metrics.sum('DrainsCalledOff')).toBe(0);
    expect((await w.store.getPool(POOL))?.lastDrainFailureAt).toBeUndefined();
  });

  it('keeps a completed drain active until drain-complete is accepted, then sends it once more at most', async () => {
    const w = await world();
    await w.node('src.example.com', { gears: apps(1, 1) });
    await w.node('t1.example.com');
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
    // Every send is refused for a while: the drain waits at "node drained".
    w.queue.failNext(1000);
    await mover.run(w.budget(3 * 60_000));
    expect((await w.store.getNode('src.example.com'))?.state).toBe('drained');
    expect((await w.store.listDrains(POOL, 'active')).map((d) => d.drainId)).toEqual([drainIdFor(w.scaleDown('src.example.com', new Date('2026-03-01T12:00:00.000Z')).decisionId)]);
    w.queue.failNext(0);
    await mover.run(w.budget());
    expect(w.queue.sent('decommission')).toHaveLength(1);
    expect(await w.store.listDrains(POOL, 'active')).toEqual([]);
  });
});

describe('GearMover: EC2 events', () => {
  it('handles a batch EC2 events first: an interrupted node is drained ahead of a decision listed before it', async () => {
    const w = await world();
    await w.node('n1.example.com', { gears: apps(1, 2), instanceId: 'i-0aaaaaaaaaaaaaaa1' });
    await w.node('n2.example.com', { gears: apps(1, 2, 'h') });
    await w.node('t1.example.com');
    const time = w.clock.now().toISOString();
    const mover = w.mover();
    const order: string[] = [];
    const scaleDown = mover.handleScaleDown.bind(mover);
    const event = mover.handleEvent.bind(mover);
    mover.handleScaleDown = async (message) => (order.push(message.nodeId), scaleDown(message));
    mover.handleEvent = async (message) => (order.push(message.instanceId), event(message));
    const { failures } = await mover.handleBatch([
      { id: 'down', message: await w.decideScaleDown('n2.example.com') },
      { id: 'spot', message: { type: 'ec2-spot-interruption', eventId: 'e9', instanceId: 'i-0aaaaaaaaaaaaaaa1', action: 'terminate', time } },
    ]);
    expect(failures).toEqual([]);
    expect(order).toEqual(['i-0aaaaaaaaaaaaaaa1', 'n2.example.com']);
    expect((await w.store.listDrains(POOL)).map((d) => d.nodeId).sort()).toEqual(['n1.example.com', 'n2.example.com']);
  });

  it('ignores instances it does not know and states that need nothing', async () => {
    const w = await world();
    await w.node('n1.example.com', { instanceId: 'i-0aaaaaaaaaaaaaaa1' });
    const mover = w.mover();
    const time = w.clock.now().toISOString();
    expect(await mover.handleEvent({ type: 'ec2-rebalance', eventId: 'e1', instanceId: 'i-0bbbbbbbbbbbbbbb2', time })).toMatchObject({ action: 'ignored', reason: 'unknown instance' });
    expect(await mover.handleEvent({ type: 'ec2-state-change', eventId: 'e2', instanceId: 'i-0aaaaaaaaaaaaaaa1', state: 'running', time })).toMatchObject({ action: 'ignored' });
    expect(await w.store.listDrains(POOL)).toEqual([]);
  });

  it('drains a stopping instance at once', async () => {
    const w = await world();
    await w.node('n1.example.com', { gears: apps(1, 2), instanceId: 'i-0aaaaaaaaaaaaaaa1' });
    await w.node('t1.example.com');
    const mover = w.mover();
    const outcome = await mover.handleEvent({ type: 'ec2-state-change', eventId: 'e3', instanceId: 'i-0aaaaaaaaaaaaaaa1', state: 'stopping', time: w.clock.now().toISOString() });
    expect(outcome).toMatchObject({ action: 'drain', reason: 'instance stopping' });
    await mover.run(w.budget());
    expect((await w.store.getNode('n1.example.com'))?.state).toBe('drained');
  });

  it('makes a normal drain urgent on a rebalance recommendation, calling off its abort', async () => {
    const w = await world();
    await w.node('n1.example.com', { gears: apps(1, 4), instanceId: 'i-0aaaaaaaaaaaaaaa1' });
    await w.node('t1.example.com');
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('n1.example.com'));
    await mover.run(steps(6));
    await mover.cancelDrain('n1.example.com', 'operator changed their mind');
    const outcome = await mover.handleEvent({ type: 'ec2-rebalance', eventId: 'e4', instanceId: 'i-0aaaaaaaaaaaaaaa1', time: w.clock.now().toISOString() });
    expect(outcome).toMatchObject({ action: 'escalated', drainId: drainIdFor(w.scaleDown('n1.example.com', new Date('2026-03-01T12:00:00.000Z')).decisionId) });
    const drain = (await w.store.getDrain(outcome.drainId!))!;
    expect(drain).toMatchObject({ urgentCause: 'rebalance recommendation', state: 'active' });
    expect(drain.abortRequestedAt).toBeUndefined();
    await mover.run(w.budget());
    expect((await w.store.getNode('n1.example.com'))?.state).toBe('drained');
  });
});
