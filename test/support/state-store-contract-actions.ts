import { beforeEach, describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError } from '../../lib/errors.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { T0, at, rejection, type ContractBed } from './state-store-records.js';

/**
 * The state store contract's second half: pools and the action lease, drains, name counters, scale-up claims, the
 * capacity record, the decision log and operator controls. Called by `stateStoreContract`, inside its describe, with the store it made.
 */
export function storeActionsContract(bed: ContractBed): void {
  let store: StateStore;
  const fresh = bed.fresh;
  beforeEach(() => {
    store = bed.store;
  });

  describe('pools and the action lease', () => {
    it('creates a pool once and lists pools', async () => {
      const s = await fresh();
      const first = await s.ensurePool('d1/small');
      expect(first).toMatchObject({ pool: 'd1/small', district: 'd1', profile: 'small', version: 1 });
      expect(await s.ensurePool('d1/small')).toEqual(first);
      await s.ensurePool('d2/large');
      expect((await s.listPools()).map((p) => p.pool)).toEqual(['d1/small', 'd2/large']);
    });

    it('acquires a lease on a pool it has never seen', async () => {
      const pool = await store.acquireLease('d7/new', { holder: 'dec-a', kind: 'scale-up', ttlMs: 60_000 }, T0);
      expect(pool).toMatchObject({ pool: 'd7/new', district: 'd7', profile: 'new' });
      expect(pool.lease).toEqual({ holder: 'dec-a', kind: 'scale-up', acquiredAt: T0.toISOString(), expiresAt: at(60).toISOString() });
    });

    it('refuses a second holder while the lease is live, lets the holder retry, and lets anyone steal it once expired', async () => {
      await store.acquireLease('d1/lease', { holder: 'dec-a', kind: 'scale-up', ttlMs: 60_000 }, T0);
      const busy = await rejection(store.acquireLease('d1/lease', { holder: 'dec-b', kind: 'scale-down', ttlMs: 60_000 }, at(30)));
      expect(busy).toBeInstanceOf(ConflictError);
      expect((busy as ConflictError<{ lease?: { holder: string } }>).current?.lease?.holder).toBe('dec-a');

      const retried = await store.acquireLease('d1/lease', { holder: 'dec-a', kind: 'scale-up', ttlMs: 60_000 }, at(30));
      expect(retried.lease?.holder).toBe('dec-a');

      const stolen = await store.acquireLease('d1/lease', { holder: 'dec-b', kind: 'scale-down', ttlMs: 60_000 }, at(90));
      expect(stolen.lease).toMatchObject({ holder: 'dec-b', kind: 'scale-down', acquiredAt: at(90).toISOString() });
    });

    it('releases only the holder’s lease', async () => {
      await store.acquireLease('d1/release', { holder: 'dec-a', kind: 'scale-up', ttlMs: 60_000 }, T0);
      const notMine = await store.releaseLease('d1/release', 'dec-b');
      expect(notMine.lease?.holder).toBe('dec-a');
      const released = await store.releaseLease('d1/release', 'dec-a');
      expect(released.lease).toBeUndefined();
      expect((await store.getPool('d1/release'))?.lease).toBeUndefined();
      const again = await store.releaseLease('d1/release', 'dec-a');
      expect(again.lease).toBeUndefined();
      const next = await store.acquireLease('d1/release', { holder: 'dec-c', kind: 'scale-up', ttlMs: 60_000 }, at(1));
      expect(next.lease?.holder).toBe('dec-c');
    });

    it('keeps the decision message with the lease until it is marked sent', async () => {
      const message = { type: 'scale-up', v: 1, decisionId: 'up:d1_msg:1', pool: 'd1/msg', count: 2, reason: 'full', decidedAt: T0.toISOString() };
      const held = await store.acquireLease('d1/msg', { holder: 'up:d1_msg:1', kind: 'scale-up', ttlMs: 60_000, message }, T0);
      expect(held.lease?.message).toEqual(message);
      expect(held.lease?.sentAt).toBeUndefined();
      const sent = await store.markLeaseSent('d1/msg', 'up:d1_msg:1', at(2));
      expect(sent.lease).toMatchObject({ holder: 'up:d1_msg:1', message, sentAt: at(2).toISOString() });
      expect(sent.version).toBe(held.version + 1);
      const notHolder = await rejection(store.markLeaseSent('d1/msg', 'someone-else', at(3)));
      expect(notHolder).toBeInstanceOf(ConflictError);
      expect(await rejection(store.markLeaseSent('d9/unknown', 'x', at(3)))).toBeInstanceOf(NotFoundError);
    });

    it('grants a contested lease to exactly one of many concurrent callers', async () => {
      const holders = Array.from({ length: 10 }, (_, i) => `dec-${i}`);
      const results = await Promise.allSettled(
        holders.map((holder) => store.acquireLease('d1/race', { holder, kind: 'scale-up', ttlMs: 60_000 }, T0)),
      );
      const winners = results.filter((r): r is PromiseFulfilledResult<Awaited<ReturnType<StateStore['acquireLease']>>> => r.status === 'fulfilled');
      expect(winners).toHaveLength(1);
      expect(results.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason instanceof ConflictError)).toBe(true);
      expect((await store.getPool('d1/race'))?.lease?.holder).toBe(winners[0]!.value.lease?.holder);
    });

    it('updates pool timestamps by version', async () => {
      const pool = await store.ensurePool('d1/times');
      const updated = await store.updatePool('d1/times', pool.version, { lastScaleUpAt: T0.toISOString(), exhaustedBackoffMs: 300_000 });
      expect(updated).toMatchObject({ lastScaleUpAt: T0.toISOString(), exhaustedBackoffMs: 300_000, version: pool.version + 1 });
      const cleared = await store.updatePool('d1/times', updated.version, { exhaustedBackoffMs: undefined });
      expect('exhaustedBackoffMs' in cleared).toBe(false);
      const stale = await rejection(store.updatePool('d1/times', pool.version, { lastFailureAt: T0.toISOString() }));
      expect(stale).toBeInstanceOf(ConflictError);
      expect(await rejection(store.updatePool('d9/none', 1, {}))).toBeInstanceOf(NotFoundError);
    });

    it('keeps the last full-pool scale-up (outran) until a scale-up with free slots clears it', async () => {
      const pool = await store.ensurePool('d1/outran');
      const outran = { at: T0.toISOString(), rounds: 2, count: 21 };
      const set = await store.updatePool('d1/outran', pool.version, { outran, lastScaleUpAt: T0.toISOString() });
      expect((await store.getPool('d1/outran'))?.outran).toEqual(outran);
      const kept = await store.updatePool('d1/outran', set.version, { lastEvaluatedAt: T0.toISOString() });
      expect(kept.outran).toEqual(outran);
      const cleared = await store.updatePool('d1/outran', kept.version, { outran: undefined });
      expect('outran' in cleared).toBe(false);
      expect((await store.getPool('d1/outran'))?.outran).toBeUndefined();
    });
  });

  describe('drains', () => {
    const drain = (drainId: string, pool = 'd1/drain', startedAt = T0) => ({
      drainId,
      decisionId: `dec-${drainId}`,
      nodeId: `${drainId}.example.com`,
      pool,
      startedAt: startedAt.toISOString(),
      reason: 'pool under-used',
      moves: [{ gear: { uuid: 'g1', app: 'shop', size: 'small' }, target: 'node-2.example.com', state: 'planned' as const, attempts: 0 }],
    });

    it('creates a drain once; a duplicate returns the existing drain', async () => {
      const created = await store.createDrain(drain('dr-1'), T0);
      expect(created).toMatchObject({ state: 'active', version: 1, updatedAt: T0.toISOString() });
      const duplicate = await rejection(store.createDrain({ ...drain('dr-1'), reason: 'again' }, at(1)));
      expect(duplicate).toBeInstanceOf(ConflictError);
      expect((duplicate as ConflictError<{ reason: string }>).current?.reason).toBe('pool under-used');
      expect(await store.getDrain('dr-1')).toEqual(created);
    });

    it('lists drains by pool and state, oldest first, and moves them between lists', async () => {
      await store.createDrain(drain('dr-b', 'd1/list', at(20)), at(20));
      await store.createDrain(drain('dr-a', 'd1/list', at(10)), at(10));
      await store.createDrain(drain('dr-c', 'd2/list', at(5)), at(5));
      expect((await store.listDrains('d1/list')).map((d) => d.drainId)).toEqual(['dr-a', 'dr-b']);

      const current = (await store.getDrain('dr-a'))!;
      const done = await store.updateDrain('dr-a', current.version, { state: 'completed' }, at(100));
      expect(done).toMatchObject({ state: 'completed', version: 2, updatedAt: at(100).toISOString() });
      expect(done).not.toHaveProperty('moves');
      expect((await store.getDrain('dr-a'))?.moves).toEqual(current.moves);
      expect((await store.listDrains('d1/list')).map((d) => d.drainId)).toEqual(['dr-b']);
      expect((await store.listDrains('d1/list', 'completed')).map((d) => d.drainId)).toEqual(['dr-a']);
      expect((await store.listDrains('d1/list', 'completed'))[0]?.moves).toEqual(current.moves);

      const stale = await rejection(store.updateDrain('dr-a', 1, { state: 'aborted' }, at(101)));
      expect(stale).toBeInstanceOf(ConflictError);
      expect((stale as ConflictError<{ state: string }>).current?.state).toBe('completed');
    });

    it('lists only the drains started at or after a time, with their moves, when asked', async () => {
      await store.createDrain(drain('dr-early', 'd1/since', at(10)), at(10));
      await store.createDrain(drain('dr-edge', 'd1/since', at(20)), at(20));
      await store.createDrain(drain('dr-late', 'd1/since', at(30)), at(30));
      const early = (await store.getDrain('dr-early'))!;
      await store.updateDrain('dr-early', early.version, { state: 'completed' }, at(40));
      const edge = (await store.getDrain('dr-edge'))!;
      await store.updateDrain('dr-edge', edge.version, { state: 'completed' }, at(40));

      const since = at(20).toISOString();
      const completed = await store.listDrains('d1/since', 'completed', since);
      expect(completed.map((d) => d.drainId)).toEqual(['dr-edge']);
      expect(completed[0]?.moves).toEqual(edge.moves);
      expect((await store.listDrains('d1/since', 'active', since)).map((d) => d.drainId)).toEqual(['dr-late']);
      expect((await store.listDrains('d1/since', 'completed')).map((d) => d.drainId)).toEqual(['dr-early', 'dr-edge']);
    });

    const gear = (uuid: string) => ({ uuid, app: `app-${uuid}`, size: 'small' });
    const planned = (uuid: string, target = 'node-2.example.com') => ({ gear: gear(uuid), target, state: 'planned' as const, attempts: 0 });

    it('keeps each move apart, at its own version, in gear order: a move write leaves the drain and the other moves as they are', async () => {
      const created = await store.createDrain({ ...drain('dr-m'), moves: [planned('g2'), planned('g1')] }, T0);
      expect(created.moves.map((m) => [m.gear.uuid, m.version])).toEqual(expect.arrayContaining([['g1', 1], ['g2', 1]]));
      const read = (await store.getDrain('dr-m'))!;
      expect(read.moves.map((m) => m.gear.uuid)).toEqual(['g1', 'g2']);
      expect(read.movesInline).toBeUndefined();

      const g1 = read.moves[0]!;
      const [moving] = await store.writeMoves('dr-m', [{ kind: 'update', move: { ...g1, state: 'moving', attempts: 1 }, expectedVersion: 1 }]);
      expect(moving).toMatchObject({ state: 'moving', attempts: 1, version: 2 });
      const after = (await store.getDrain('dr-m'))!;
      expect(after.version).toBe(read.version);
      expect(after.moves).toEqual([moving, read.moves[1]]);

      // A stale writer of the same move loses, with the move as it is; another move is not in its way.
      const stale = await rejection(store.writeMoves('dr-m', [{ kind: 'update', move: { ...g1, target: 'node-9.example.com' }, expectedVersion: 1 }]));
      expect(stale).toBeInstanceOf(ConflictError);
      expect((stale as ConflictError<{ state: string; version: number }>).current).toMatchObject({ state: 'moving', version: 2 });
      const twice = await rejection(store.writeMoves('dr-m', [{ kind: 'create', move: planned('g2') }]));
      expect(twice).toBeInstanceOf(ConflictError);

      const written = await store.writeMoves('dr-m', [
        { kind: 'create', move: planned('g3') },
        { kind: 'delete', uuid: 'g2', expectedVersion: 1 },
      ]);
      expect(written.map((m) => m.gear.uuid)).toEqual(['g3']);
      expect((await store.getDrain('dr-m'))!.moves.map((m) => [m.gear.uuid, m.version])).toEqual([['g1', 2], ['g3', 1]]);
      expect(await rejection(store.writeMoves('dr-m', [{ kind: 'delete', uuid: 'g3', expectedVersion: 7 }]))).toBeInstanceOf(ConflictError);
    });

    it('lets exactly one of two concurrent writers of one move win', async () => {
      const created = await store.createDrain({ ...drain('dr-race'), moves: [planned('g1')] }, T0);
      const move = created.moves[0]!;
      const results = await Promise.allSettled([
        store.writeMoves('dr-race', [{ kind: 'update', move: { ...move, state: 'moving', attempts: 1 }, expectedVersion: move.version! }]),
        store.writeMoves('dr-race', [{ kind: 'update', move: { ...move, target: 'node-7.example.com' }, expectedVersion: move.version! }]),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toBeInstanceOf(ConflictError);
    });

    it('splits a drain that holds no inline moves by checking its version only', async () => {
      const created = await store.createDrain({ ...drain('dr-s'), moves: [planned('g1')] }, T0);
      expect(await rejection(store.splitDrainMoves('dr-s', 9))).toBeInstanceOf(ConflictError);
      expect(await store.splitDrainMoves('dr-s', created.version)).toEqual(await store.getDrain('dr-s'));
      expect(await rejection(store.splitDrainMoves('dr-none', 1))).toBeInstanceOf(NotFoundError);
    });
  });

  describe('name counters', () => {
    it('allocates distinct consecutive numbers under 20 concurrent allocations', async () => {
      const numbers = await Promise.all(Array.from({ length: 20 }, () => store.allocateNameNumber('race-node')));
      expect(new Set(numbers).size).toBe(20);
      expect([...numbers].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    });

    it('keeps one counter per naming base', async () => {
      expect(await store.allocateNameNumber('base-a')).toBe(1);
      expect(await store.allocateNameNumber('base-b')).toBe(1);
      expect(await store.allocateNameNumber('base-a')).toBe(2);
    });
  });

  describe('scale-up claims', () => {
    const claim = (decisionId: string, names: number[]) => ({
      decisionId,
      pool: 'd1/small',
      requested: names.length,
      slots: names.map((n) => ({ nodeId: `claim-${n}.example.com`, cloudName: `claim_${n}` })),
      createdAt: T0.toISOString(),
    });

    it('records the first claim of a decision and hands every later caller that one', async () => {
      expect(await store.getScaleUp('up:claim-1')).toBeUndefined();
      const first = await store.claimScaleUp(claim('up:claim-1', [1, 2]), 86_400_000);
      expect(first).toEqual({ record: claim('up:claim-1', [1, 2]), created: true });
      const second = await store.claimScaleUp(claim('up:claim-1', [3, 4]), 86_400_000);
      expect(second).toEqual({ record: claim('up:claim-1', [1, 2]), created: false });
      expect(await store.getScaleUp('up:claim-1')).toEqual(claim('up:claim-1', [1, 2]));
    });

    it('lets exactly one of many concurrent claims of one decision win', async () => {
      const results = await Promise.all([10, 20, 30, 40, 50].map((n) => store.claimScaleUp(claim('up:claim-race', [n, n + 1]), 86_400_000)));
      expect(results.filter((r) => r.created)).toHaveLength(1);
      const winner = results.find((r) => r.created)!.record;
      expect(results.every((r) => JSON.stringify(r.record) === JSON.stringify(winner))).toBe(true);
      expect(await store.getScaleUp('up:claim-race')).toEqual(winner);
    });

    it('keeps a refused claim with no slots and its reason', async () => {
      const refused = { ...claim('up:claim-none', []), requested: 3, reason: 'pool.max=5 reached' };
      await store.claimScaleUp(refused, 86_400_000);
      expect(await store.getScaleUp('up:claim-none')).toEqual(refused);
    });
  });

  describe('the capacity record (claims of room under the global limits)', () => {
    const reservation = (pool: string, names: number[]) => ({
      pool,
      slots: names.map((n) => ({ nodeId: `cap-${n}.example.com`, cloudName: `cap_${n}` })),
      at: T0.toISOString(),
    });

    it('starts at version 0 with no reservations, and a write at the version read moves it on by one', async () => {
      const s = await fresh();
      expect(await s.getCapacity()).toEqual({ version: 0, reservations: {} });
      const first = await s.putCapacity({ 'up:a': reservation('d1/a', [1]) }, 0);
      expect(first).toEqual({ version: 1, reservations: { 'up:a': reservation('d1/a', [1]) } });
      expect(await s.getCapacity()).toEqual(first);
      const second = await s.putCapacity({ 'up:b': { ...reservation('d1/b', [2, 3]), reason: '2 of 4 nodes fit: maxNodesTotal=5' } }, 1);
      expect(second.version).toBe(2);
      expect(await s.getCapacity()).toEqual({ version: 2, reservations: { 'up:b': { ...reservation('d1/b', [2, 3]), reason: '2 of 4 nodes fit: maxNodesTotal=5' } } });
    });

    it('refuses a write at a version other than the stored one, with the record as it is, and changes nothing', async () => {
      const s = await fresh();
      const stored = await s.putCapacity({ 'up:a': reservation('d1/a', [1]) }, 0);
      for (const stale of [0, 2]) {
        const error = await rejection(s.putCapacity({ 'up:x': reservation('d1/b', [9]) }, stale));
        expect(error).toBeInstanceOf(ConflictError);
        expect(error).toMatchObject({ retryable: true });
        expect((error as ConflictError).current).toEqual(stored);
      }
      expect(await s.getCapacity()).toEqual(stored);
    });

    it('lets exactly one of two claims that read the same version write; the other gets the winner\'s record', async () => {
      const s = await fresh();
      const read = await s.putCapacity({}, 0);
      const results = await Promise.allSettled([
        s.putCapacity({ 'up:a': reservation('d1/a', [1]) }, read.version),
        s.putCapacity({ 'up:b': reservation('d1/b', [2]) }, read.version),
      ]);
      const won = results.filter((r): r is PromiseFulfilledResult<Awaited<ReturnType<StateStore['putCapacity']>>> => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(lost[0]!.reason).toBeInstanceOf(ConflictError);
      expect((lost[0]!.reason as ConflictError).current).toEqual(won[0]!.value);
      expect(await s.getCapacity()).toEqual(won[0]!.value);
    });
  });

  describe('decision log', () => {
    it('returns the latest decisions first, up to a limit, per pool', async () => {
      for (let i = 0; i < 4; i++) {
        await store.appendDecision({ pool: 'd1/log', at: at(i).toISOString(), kind: 'no-action', reason: `tick ${i}` }, 86_400_000);
      }
      await store.appendDecision(
        { pool: 'd2/log', at: at(9).toISOString(), kind: 'scale-up', reason: 'full', decisionId: 'dec-9', details: { count: 2 } },
        86_400_000,
      );
      const latest = await store.listDecisions('d1/log', 3);
      expect(latest.map((d) => d.reason)).toEqual(['tick 3', 'tick 2', 'tick 1']);
      expect(await store.listDecisions('d2/log', 10)).toEqual([
        { pool: 'd2/log', at: at(9).toISOString(), kind: 'scale-up', reason: 'full', decisionId: 'dec-9', details: { count: 2 } },
      ]);
    });
  });

  describe('decision log since a time', () => {
    it('returns every entry at or after the time, oldest first, past one page', async () => {
      for (let i = 0; i < 30; i++) {
        await store.appendDecision({ pool: 'd1/range', at: at(i * 60).toISOString(), kind: 'shadow', reason: `r${i}`, details: { pad: 'x'.repeat(40_000) } }, 86_400_000);
      }
      const since = await store.listDecisionsSince('d1/range', at(5 * 60).toISOString());
      expect(since.map((d) => d.reason)).toEqual(Array.from({ length: 25 }, (_, i) => `r${i + 5}`));
      expect(await store.listDecisionsSince('d1/none', at(0).toISOString())).toEqual([]);
    });
  });

  describe('operator controls', () => {
    const pause = (pool: string, actions: 'all' | 'scale-up' | 'scale-down', extra: Record<string, string> = {}) => ({
      pool,
      actions,
      reason: 'incident 42',
      by: 'arn:aws:sts::123456789012:assumed-role/oncall/alice',
      at: T0.toISOString(),
      ...extra,
    });

    it('starts with no pause and no override', async () => {
      expect(await store.listControls()).toEqual({ pauses: [], overrides: [], pendingDrains: [] });
    });

    it('keeps one pause per pool and actions: pausing again replaces it, resume removes it and says what it removed', async () => {
      await store.putPause(pause('d1/small', 'scale-down'));
      await store.putPause(pause('*', 'all', { until: at(3600).toISOString() }));
      await store.putPause(pause('d1/small', 'scale-down', { reason: 'still investigating' }));
      const { pauses } = await store.listControls();
      expect(pauses).toHaveLength(2);
      expect(pauses).toContainEqual(pause('d1/small', 'scale-down', { reason: 'still investigating' }));
      expect(pauses).toContainEqual(pause('*', 'all', { until: at(3600).toISOString() }));
      expect(await store.deletePause('d1/small', 'scale-down')).toEqual(pause('d1/small', 'scale-down', { reason: 'still investigating' }));
      expect(await store.deletePause('d1/small', 'scale-down')).toBeUndefined();
      expect((await store.listControls()).pauses).toEqual([pause('*', 'all', { until: at(3600).toISOString() })]);
      await store.putPause(pause('d1/small', 'scale-down', { reason: 'again' }));
      expect((await store.listControls()).pauses).toContainEqual(pause('d1/small', 'scale-down', { reason: 'again' }));
    });

    it('versions overrides: a write at a stale version is a ConflictError carrying the record as it is', async () => {
      const base = { pool: 'd1/small', updatedAt: T0.toISOString(), updatedBy: 'local user alice', reason: 'peak' };
      const first = await store.putOverrides({ ...base, values: { min: 3 } }, 0);
      expect(first.version).toBe(1);
      const second = await store.putOverrides({ ...base, values: { min: 3, 'scaleUp.threshold': 0.9 } }, 1);
      expect(second).toMatchObject({ version: 2, values: { min: 3, 'scaleUp.threshold': 0.9 } });
      const stale = await rejection(store.putOverrides({ ...base, values: { min: 9 } }, 1));
      expect(stale).toBeInstanceOf(ConflictError);
      expect((stale as ConflictError).current).toEqual(second);
      const again = await rejection(store.putOverrides({ ...base, values: { min: 9 } }, 0));
      expect((again as ConflictError).current).toEqual(second);
      expect((await store.listControls()).overrides).toEqual([second]);
    });

    it('keeps one pending drain per node; of concurrent deletes exactly one removes it', async () => {
      const pending = { nodeId: 'n-1.example.com', pool: 'd1/small', replacementDecisionId: 'up:d1_small:1', reason: 'kernel update', by: 'local user alice', at: T0.toISOString() };
      await store.createPendingDrain(pending);
      const twice = await rejection(store.createPendingDrain({ ...pending, reason: 'again' }));
      expect(twice).toBeInstanceOf(ConflictError);
      expect((twice as ConflictError).current).toEqual(pending);
      expect((await store.listControls()).pendingDrains).toEqual([pending]);
      const removed = await Promise.all([store.deletePendingDrain(pending.nodeId), store.deletePendingDrain(pending.nodeId)]);
      expect(removed.filter(Boolean)).toHaveLength(1);
      expect((await store.listControls()).pendingDrains).toEqual([]);
      // Done: the node may wait for a replacement again.
      await store.createPendingDrain({ ...pending, replacementDecisionId: 'up:d1_small:2' });
      expect((await store.listControls()).pendingDrains).toEqual([{ ...pending, replacementDecisionId: 'up:d1_small:2' }]);
    });

    it('marks a pending drain sent once: of concurrent marks exactly one marks it, the first sentAt kept; a removed one is gone', async () => {
      const pending = { nodeId: 'n-2.example.com', pool: 'd1/small', replacementDecisionId: 'up:d1_small:3', reason: 'renew', by: 'nodescaler (renewal)', at: T0.toISOString() };
      expect(await store.markPendingDrainSent(pending.nodeId, T0.toISOString())).toBe('gone');
      await store.createPendingDrain(pending);
      const sentAt = new Date(T0.getTime() + 60_000).toISOString();
      const marks = await Promise.all([store.markPendingDrainSent(pending.nodeId, sentAt), store.markPendingDrainSent(pending.nodeId, sentAt)]);
      expect(marks.sort()).toEqual(['already', 'marked']);
      expect(await store.markPendingDrainSent(pending.nodeId, new Date(T0.getTime() + 120_000).toISOString())).toBe('already');
      const mine = async () => (await store.listControls()).pendingDrains.filter((p) => p.nodeId === pending.nodeId);
      expect(await mine()).toEqual([{ ...pending, sentAt }]);
      expect(await store.deletePendingDrain(pending.nodeId)).toBe(true);
      expect(await store.markPendingDrainSent(pending.nodeId, sentAt)).toBe('gone');
      expect(await mine()).toEqual([]);
    });

    it("cancels an operator's pending drain once: of concurrent cancels exactly one records it, the first kept; a removed one is gone", async () => {
      const pending = { nodeId: 'n-3.example.com', pool: 'd1/small', decisionId: 'manual:20261121T100000Z:0a1b2c3d', reason: 'kernel update', by: 'local user alice', at: T0.toISOString(), sentAt: T0.toISOString() };
      const cancel = { at: new Date(T0.getTime() + 30_000).toISOString(), by: 'local user bob', reason: 'wrong node' };
      expect(await store.cancelPendingDrain(pending.nodeId, cancel)).toBe('gone');
      await store.createPendingDrain(pending);
      const cancels = await Promise.all([store.cancelPendingDrain(pending.nodeId, cancel), store.cancelPendingDrain(pending.nodeId, { ...cancel, by: 'local user carol' })]);
      expect(cancels.sort()).toEqual(['already', 'cancelled']);
      const [stored] = (await store.listControls()).pendingDrains.filter((p) => p.nodeId === pending.nodeId);
      expect(stored).toMatchObject({ ...pending, cancelledAt: cancel.at, cancelReason: 'wrong node' });
      expect(['local user bob', 'local user carol']).toContain(stored!.cancelledBy);
      // Marking it sent keeps the cancel: the gear mover refuses the drain by it.
      expect(await store.markPendingDrainSent(pending.nodeId, cancel.at)).toBe('already');
      expect(await store.deletePendingDrain(pending.nodeId)).toBe(true);
      expect(await store.cancelPendingDrain(pending.nodeId, cancel)).toBe('gone');
    });
  });
}
