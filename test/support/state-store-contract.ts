import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { legalTransitions } from '../../lib/domain/lifecycle.js';
import { NODE_STATES, type NodeRecord, type NodeState } from '../../lib/domain/model.js';
import { gearListSummary } from '../../lib/domain/node-stats.js';
import { ConflictError, NotFoundError, ValidationError } from '../../lib/errors.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { storeActionsContract } from './state-store-contract-actions.js';
import { T0, at, newNode, rejection, stats, type ContractBed } from './state-store-records.js';

export { newNode };

export interface StoreHarness {
  /** A fresh, empty store for one test. */
  create(): Promise<StateStore>;
  close?(): Promise<void>;
}

/**
 * The one contract both `StateStore` adapters must pass. Each adapter's test
 * file calls this with its own harness; the assertions live only here (and in
 * state-store-contract-actions.ts, its second half).
 */
export function stateStoreContract(name: string, harness: StoreHarness): void {
  describe(`StateStore contract: ${name}`, () => {
    let store: StateStore;
    const bed: ContractBed = {
      get store() {
        return store;
      },
      fresh: async () => {
        store = await harness.create();
        return store;
      },
    };
    const fresh = bed.fresh;

    beforeAll(fresh);
    afterAll(async () => harness.close?.());

    describe('nodes', () => {
      it('creates a node at version 1 and reads it back', async () => {
        const node = newNode({ state: 'provisioning', cloudName: 'node_7', decisionId: 'dec-1' });
        const created = await store.createNode(node, T0);
        expect(created).toMatchObject({ ...node, version: 1, stateChangedAt: T0.toISOString() });
        expect(await store.getNode(node.nodeId)).toEqual(created);
        expect(await store.getNode('nobody.example.com')).toBeUndefined();
      });

      it('refuses to create a node twice, returning the existing one', async () => {
        const node = newNode();
        await store.createNode(node, T0);
        const error = await rejection(store.createNode({ ...node, state: 'provisioning' }, at(1)));
        expect(error).toBeInstanceOf(ConflictError);
        expect((error as ConflictError<NodeRecord>).current).toMatchObject({ nodeId: node.nodeId, state: 'active', version: 1 });
      });

      it('lists the nodes of one pool only, ordered by id', async () => {
        const s = await fresh();
        await s.createNode(newNode({ nodeId: 'b.example.com' }), T0);
        await s.createNode(newNode({ nodeId: 'a.example.com' }), T0);
        await s.createNode(newNode({ nodeId: 'c.example.com', pool: 'd2/small', district: 'd2' }), T0);
        expect((await s.listNodes('d1/small')).map((n) => n.nodeId)).toEqual(['a.example.com', 'b.example.com']);
        expect((await s.listNodes('d2/small')).map((n) => n.nodeId)).toEqual(['c.example.com']);
        expect(await s.listNodes('d9/none')).toEqual([]);
      });

      it('drops terminated nodes from the pool list, while getNode still finds them', async () => {
        const s = await fresh();
        await s.createNode(newNode({ nodeId: 'live.example.com', pool: 'd5/small', district: 'd5' }), T0);
        await s.createNode(newNode({ nodeId: 'gone.example.com', pool: 'd5/small', district: 'd5', state: 'terminating' }), T0);
        expect((await s.listNodes('d5/small')).map((n) => n.nodeId)).toEqual(['gone.example.com', 'live.example.com']);
        await s.transitionNode('gone.example.com', { from: 'terminating', to: 'terminated' }, at(60));
        expect((await s.listNodes('d5/small')).map((n) => n.nodeId)).toEqual(['live.example.com']);
        expect((await s.getNode('gone.example.com'))?.state).toBe('terminated');
      });

      it.each(legalTransitions())('allows %s -> %s', async (from, to) => {
        const node = await store.createNode(newNode({ state: from }), T0);
        const moved = await store.transitionNode(node.nodeId, { from, to, patch: { reason: `test ${from}->${to}` } }, at(60));
        expect(moved).toMatchObject({ state: to, version: 2, stateChangedAt: at(60).toISOString(), reason: `test ${from}->${to}` });
        expect(await store.getNode(node.nodeId)).toEqual(moved);
      });

      const legal = new Set(legalTransitions().map(([from, to]) => `${from}>${to}`));
      const illegal = NODE_STATES.flatMap((from) => NODE_STATES.map((to): [NodeState, NodeState] => [from, to])).filter(
        ([from, to]) => !legal.has(`${from}>${to}`),
      );

      it('has a sample of illegal transitions to check', () => {
        expect(illegal.length).toBeGreaterThan(40);
        expect(illegal).toContainEqual(['active', 'terminated']);
        expect(illegal).toContainEqual(['draining', 'terminating']);
        expect(illegal).toContainEqual(['terminated', 'active']);
      });

      it.each(illegal.filter((_, i) => i % 3 === 0).concat([['active', 'terminated'], ['draining', 'terminating'], ['provisioning', 'draining']]))(
        'rejects %s -> %s without writing',
        async (from, to) => {
          const node = await store.createNode(newNode({ state: from }), T0);
          const error = await rejection(store.transitionNode(node.nodeId, { from, to }, at(60)));
          expect(error).toBeInstanceOf(ValidationError);
          expect((error as ValidationError).message).toContain(`${from} -> ${to}`);
          expect(await store.getNode(node.nodeId)).toEqual(node);
        },
      );

      it('rejects a transition from a state the node is not in, with the current node', async () => {
        const node = await store.createNode(newNode({ state: 'draining' }), T0);
        const error = await rejection(store.transitionNode(node.nodeId, { from: 'active', to: 'draining' }, at(1)));
        expect(error).toBeInstanceOf(ConflictError);
        expect((error as ConflictError<NodeRecord>).current).toMatchObject({ state: 'draining', version: 1 });
      });

      it('accepts any of several source states', async () => {
        const node = await store.createNode(newNode({ state: 'lost' }), T0);
        const moved = await store.transitionNode(node.nodeId, { from: ['failed', 'lost'], to: 'terminated' }, at(1));
        expect(moved.state).toBe('terminated');
      });

      it('honours an expected version in a transition', async () => {
        const node = await store.createNode(newNode(), T0);
        await store.updateNode(node.nodeId, 1, { protected: true });
        const error = await rejection(store.transitionNode(node.nodeId, { from: 'active', to: 'draining', expectedVersion: 1 }, at(1)));
        expect(error).toBeInstanceOf(ConflictError);
        const moved = await store.transitionNode(node.nodeId, { from: 'active', to: 'draining', expectedVersion: 2 }, at(1));
        expect(moved).toMatchObject({ state: 'draining', version: 3, protected: true });
      });

      it('reports an unknown node as not found', async () => {
        const error = await rejection(store.transitionNode('ghost.example.com', { from: 'active', to: 'draining' }, at(1)));
        expect(error).toBeInstanceOf(NotFoundError);
        expect(await rejection(store.updateNode('ghost.example.com', 1, { protected: true }))).toBeInstanceOf(NotFoundError);
        expect(await rejection(store.putNodeStats('ghost.example.com', stats(T0)))).toBeInstanceOf(NotFoundError);
      });

      it('updates fields by version and removes fields set to undefined', async () => {
        const node = await store.createNode(newNode({ instanceId: 'i-0123456789abcdef0', reason: 'provisioned' }), T0);
        const updated = await store.updateNode(node.nodeId, 1, { reason: undefined, privateIp: '10.0.0.5', steps: { dns: 'done' } });
        expect(updated.version).toBe(2);
        expect(updated.privateIp).toBe('10.0.0.5');
        expect(updated.steps).toEqual({ dns: 'done' });
        expect('reason' in updated).toBe(false);
        expect(updated.instanceId).toBe('i-0123456789abcdef0');
        const stale = await rejection(store.updateNode(node.nodeId, 1, { protected: true }));
        expect(stale).toBeInstanceOf(ConflictError);
        expect((stale as ConflictError<NodeRecord>).current?.version).toBe(2);
      });

      it('lets exactly one of two concurrent conflicting transitions win', async () => {
        for (let round = 0; round < 5; round++) {
          const node = await store.createNode(newNode(), T0);
          const results = await Promise.allSettled([
            store.transitionNode(node.nodeId, { from: 'active', to: 'draining', patch: { reason: 'writer A' } }, at(1)),
            store.transitionNode(node.nodeId, { from: 'active', to: 'draining', patch: { reason: 'writer B' } }, at(1)),
          ]);
          const won = results.filter((r) => r.status === 'fulfilled');
          const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
          expect(won).toHaveLength(1);
          expect(lost).toHaveLength(1);
          expect(lost[0]!.reason).toBeInstanceOf(ConflictError);
          const final = await store.getNode(node.nodeId);
          expect(final?.version).toBe(2);
          expect(final?.reason).toBe((won[0] as PromiseFulfilledResult<NodeRecord>).value.reason);
        }
      });

      it('lets exactly one of two concurrent versioned updates win', async () => {
        const node = await store.createNode(newNode(), T0);
        const results = await Promise.allSettled([
          store.updateNode(node.nodeId, 1, { protected: true }),
          store.updateNode(node.nodeId, 1, { reason: 'other writer' }),
        ]);
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        expect((await store.getNode(node.nodeId))?.version).toBe(2);
      });
    });

    describe('stats', () => {
      it('stores newer stats and never lets older ones overwrite them', async () => {
        const node = await store.createNode(newNode(), T0);
        const first = await store.putNodeStats(node.nodeId, stats(at(60), 10));
        expect(first.applied).toBe(true);
        expect(first.node.stats?.activeGears).toBe(10);

        const older = await store.putNodeStats(node.nodeId, stats(at(30), 99));
        expect(older.applied).toBe(false);
        expect(older.node.stats).toMatchObject({ activeGears: 10, reportedAt: at(60).toISOString() });

        const duplicate = await store.putNodeStats(node.nodeId, stats(at(60), 55));
        expect(duplicate.applied).toBe(false);

        // The agent's flags on its gears come back as written: a drain plans by them (idle gears take no slot).
        const listed = [{ uuid: 'g1', app: 'shop', size: 'small' }, { uuid: 'g2', app: 'shop', size: 'small', disruptive: true, doNotMove: true }, { uuid: 'g3', app: 'blog', size: 'small', idle: true }];
        const newer = await store.putNodeStats(node.nodeId, { ...stats(at(120), 12), gears: listed });
        expect(newer.applied).toBe(true);
        expect((await store.getNode(node.nodeId))?.stats).toEqual({ ...stats(at(120), 12), gears: listed, listed: gearListSummary(listed), prior: { activeGears: 10, reportedAt: at(60).toISOString() } });
      });

      it("reads a node's gear list with the node alone: a pool's listing carries its counts, and a report without a list drops it", async () => {
        const node = await store.createNode(newNode({ pool: 'd1/lists', instanceId: 'i-0aaaaaaaaaaaaaaa1' }), T0);
        const listed = [{ uuid: 'g1', app: 'shop', size: 'small' }, { uuid: 'g2', app: 'blog', size: 'small', idle: true }];
        await store.putNodeStats(node.nodeId, { ...stats(at(60), 1), gears: listed });
        const summary = { gears: 2, idle: 1, digest: gearListSummary(listed).digest };
        const [inPool] = await store.listNodes('d1/lists');
        expect(inPool!.stats).toEqual({ ...stats(at(60), 1), listed: summary });
        expect((await store.findNodeByInstance(node.instanceId!))?.stats?.gears).toEqual(listed);

        // The same list again (a heartbeat), then an older report with another list: the newest list stands.
        await store.putNodeStats(node.nodeId, { ...stats(at(120), 1), gears: listed });
        expect(await store.putNodeStats(node.nodeId, { ...stats(at(90), 1), gears: [listed[0]!] })).toMatchObject({ applied: false });
        expect((await store.getNode(node.nodeId))?.stats).toEqual({ ...stats(at(120), 1), gears: listed, listed: summary, prior: { activeGears: 1, reportedAt: at(60).toISOString() } });

        const grown = [...listed, { uuid: 'g3', app: 'shop', size: 'small', disruptive: true }];
        await store.putNodeStats(node.nodeId, { ...stats(at(180), 2), gears: grown });
        expect((await store.getNode(node.nodeId))?.stats?.gears).toEqual(grown);
        // Many nodes' lists at once, each under its digest; a node without one is absent.
        const other = await store.createNode(newNode({ pool: 'd1/lists' }), T0);
        expect(await store.getGearLists([node.nodeId, other.nodeId, 'nobody.example.com'])).toEqual(new Map([[node.nodeId, { digest: gearListSummary(grown).digest, gears: grown }]]));
        await store.putNodeStats(node.nodeId, stats(at(240), 2));
        const unlisted = (await store.getNode(node.nodeId))!.stats!;
        expect(unlisted.gears).toBeUndefined();
        expect(unlisted.listed).toBeUndefined();
      });

      it('keeps the report each newer one replaces as its prior, never one a report brings or an older one', async () => {
        const node = await store.createNode(newNode({ pool: 'd1/prior' }), T0);
        await store.putNodeStats(node.nodeId, stats(at(60), 10));
        expect((await store.getNode(node.nodeId))?.stats?.prior).toBeUndefined();
        const second = await store.putNodeStats(node.nodeId, { ...stats(at(120), 12), prior: { activeGears: 99, reportedAt: at(119).toISOString() } });
        expect(second.node.stats?.prior).toBeUndefined();
        const kept = { activeGears: 10, reportedAt: at(60).toISOString() };
        expect((await store.getNode(node.nodeId))?.stats).toEqual({ ...stats(at(120), 12), prior: kept });
        // An older report changes neither; a listing carries the prior too.
        expect(await store.putNodeStats(node.nodeId, stats(at(90), 50))).toMatchObject({ applied: false });
        const listed = [{ uuid: 'g1', app: 'shop', size: 'small' }];
        await store.putNodeStats(node.nodeId, { ...stats(at(180), 1), gears: listed });
        const [inPool] = await store.listNodes('d1/prior');
        expect(inPool!.stats).toEqual({ ...stats(at(180), 1), listed: gearListSummary(listed), prior: { activeGears: 12, reportedAt: at(120).toISOString() } });
      });

      it('keeps the newest of many stats delivered concurrently in random order', async () => {
        const node = await store.createNode(newNode(), T0);
        const seconds = Array.from({ length: 30 }, (_, i) => i + 1).sort(() => Math.random() - 0.5);
        await Promise.all(seconds.map((s) => store.putNodeStats(node.nodeId, stats(at(s), s))));
        expect((await store.getNode(node.nodeId))?.stats).toMatchObject({ activeGears: 30, reportedAt: at(30).toISOString() });
      });

      it('does not change the lifecycle state when stats arrive', async () => {
        const node = await store.createNode(newNode({ state: 'draining' }), T0);
        await store.putNodeStats(node.nodeId, stats(at(5)));
        expect((await store.getNode(node.nodeId))?.state).toBe('draining');
      });

      it('keeps stats apart from the node: a report leaves its version, writes of the node return it without stats, lists carry them', async () => {
        const node = await store.createNode(newNode({ pool: 'd1/stats', stats: stats(at(1), 3) }), T0);
        expect(node.stats?.activeGears).toBe(3);
        await store.putNodeStats(node.nodeId, stats(at(5), 7));
        const read = (await store.getNode(node.nodeId))!;
        expect(read.version).toBe(1);
        expect(read.stats?.activeGears).toBe(7);
        // A report does not make a write of the node's own fields conflict.
        const updated = await store.updateNode(node.nodeId, 1, { reason: 'kept' });
        expect(updated).toMatchObject({ version: 2, reason: 'kept' });
        expect(updated.stats).toBeUndefined();
        const other = await store.createNode(newNode({ pool: 'd1/stats' }), T0);
        expect((await store.listNodes('d1/stats')).map((n) => [n.nodeId, n.stats?.activeGears])).toEqual(
          [[node.nodeId, 7], [other.nodeId, undefined]].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
        );
        const gone = await store.transitionNode(node.nodeId, { from: 'active', to: 'draining' }, at(10));
        expect(gone.stats).toBeUndefined();
        await store.transitionNode(node.nodeId, { from: 'draining', to: 'drained' }, at(10));
        await store.transitionNode(node.nodeId, { from: 'drained', to: 'terminating' }, at(10));
        await store.transitionNode(node.nodeId, { from: 'terminating', to: 'terminated' }, at(11));
        expect((await store.getNode(node.nodeId))?.stats).toBeUndefined();
      });
    });

    storeActionsContract(bed);
  });
}
