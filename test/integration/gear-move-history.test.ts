import { afterAll, describe, expect, it } from 'vitest';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { decideWithMoveHistory } from '../../lib/app/move-history.js';
import { GEAR_MOVE_WINDOW_MS } from '../../lib/domain/budget.js';
import type { PoolEvaluationInput } from '../../lib/domain/decision.js';
import { decidePool } from '../../lib/domain/evaluate.js';
import type { GearInfo, NodeRecord } from '../../lib/domain/model.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { NOW, config as ruleConfig, evaluation as ruleEvaluation, minutesAgo, node, pool } from '../support/builders.js';
import { dynaliteHarness } from '../support/dynalite.js';

/** These test the budget's rules, not the pays-off check (test/unit/payoff.test.ts): it is off here. */
const config: typeof ruleConfig = (overrides = {}, poolFields = {}) =>
  ruleConfig({ ...overrides, scaleDown: { payoff: { enabled: false }, ...overrides.scaleDown } }, poolFields);
const evaluation: typeof ruleEvaluation = (fields = {}) => ruleEvaluation({ config: config(), ...fields });

const DAY = 86_400_000;
const daysAgo = (days: number) => new Date(NOW.getTime() - days * DAY).toISOString();

function gearMovesContract(name: string, harness: { create(): Promise<StateStore>; close?(): Promise<void> }) {
  describe(`gear move history: ${name}`, () => {
    afterAll(() => harness.close?.());

    it('keeps each gear its move times, oldest first; a gear never moved is absent', async () => {
      const store = await harness.create();
      await store.recordGearMoves(
        [
          { uuid: 'g1', at: daysAgo(2), key: 'drain-b#1' },
          { uuid: 'g1', at: daysAgo(5), key: 'drain-a#1' },
          { uuid: 'g2', at: daysAgo(1), key: 'drain-b#1' },
        ],
        GEAR_MOVE_WINDOW_MS,
      );
      const read = await store.getGearMoves(['g1', 'g2', 'g3']);
      expect(Object.fromEntries(read)).toEqual({ g1: [daysAgo(5), daysAgo(2)], g2: [daysAgo(1)] });
    });

    it('records one move once however often it is recorded (a retried step)', async () => {
      const store = await harness.create();
      const move = { uuid: 'g1', at: daysAgo(1), key: 'drain-a#2' };
      await store.recordGearMoves([move], GEAR_MOVE_WINDOW_MS);
      await store.recordGearMoves([move], GEAR_MOVE_WINDOW_MS);
      expect(await store.getGearMoves(['g1'])).toEqual(new Map([['g1', [daysAgo(1)]]]));
    });

    it('reads more gears than one batch holds', async () => {
      const store = await harness.create();
      const uuids = Array.from({ length: 230 }, (_, i) => `gear-${i}`);
      await store.recordGearMoves(uuids.filter((_, i) => i % 3 === 0).map((uuid) => ({ uuid, at: daysAgo(1), key: 'd#1' })), GEAR_MOVE_WINDOW_MS);
      const read = await store.getGearMoves(uuids);
      expect(read.size).toBe(77);
      expect(read.get('gear-228')).toEqual([daysAgo(1)]);
      expect(read.has('gear-229')).toBe(false);
    });
  });
}

gearMovesContract('in-memory', { create: async () => new InMemoryStateStore() });
const dynalite = dynaliteHarness();
gearMovesContract('DynamoDB (dynalite)', dynalite);

describe('gear move history items in the table', () => {
  const own = dynaliteHarness();
  afterAll(() => own.close());

  it('one small item per gear, outside the pool index, expiring 7 days after its latest move', async () => {
    const store = await own.create(); // the harness's first table: state-1
    await store.recordGearMoves([{ uuid: 'g9', at: daysAgo(1), key: 'drain-x#1' }], GEAR_MOVE_WINDOW_MS);
    const got = await own.local!.client.send(new GetItemCommand({ TableName: 'state-1', Key: { pk: { S: 'GEAR#g9' }, sk: { S: 'MOVES' } } }));
    const item = unmarshall(got.Item!);
    expect(item).toEqual({ pk: 'GEAR#g9', sk: 'MOVES', uuid: 'g9', moves: new Set([`${daysAgo(1)}|drain-x#1`]), expiresAt: Math.floor((NOW.getTime() - DAY + GEAR_MOVE_WINDOW_MS) / 1000) });
    expect(item.gsi1pk).toBeUndefined();
  });
});

/** Nodes `n-01`.. with `gears` listed gears each (`g-<i>-<j>`). */
function listed(count: number, gears: number): NodeRecord[] {
  return Array.from({ length: count }, (_, k) => {
    const record = node(`n-${String(k + 1).padStart(2, '0')}`, { gears });
    record.stats!.gears = Array.from({ length: gears }, (_, j): GearInfo => ({ uuid: `g-${k + 1}-${j}`, app: `app-${k + 1}-${j}`, size: 'small' }));
    return record;
  });
}

describe('decideWithMoveHistory: reads only the chosen candidates\u2019 gears', () => {
  function counting(store: StateStore) {
    const reads: string[][] = [];
    return {
      reads,
      store: { store: { getGearMoves: (uuids: readonly string[]) => (reads.push([...uuids]), store.getGearMoves(uuids)) } },
    };
  }
  const input = (): PoolEvaluationInput => evaluation({ nodes: listed(6, 4), pool: pool({ lowSince: minutesAgo(30) }) });

  it('drains the first candidate when none of its gears is at its limit, after reading its gears alone', async () => {
    const memory = new InMemoryStateStore();
    await memory.recordGearMoves([{ uuid: 'g-1-0', at: daysAgo(3), key: 'd#1' }], GEAR_MOVE_WINDOW_MS);
    const { store, reads } = counting(memory);
    const result = await decideWithMoveHistory(store, input());
    expect(result.decision).toMatchObject({ kind: 'scale-down', nodeId: 'n-01' });
    expect(reads).toEqual([['g-1-0', 'g-1-1', 'g-1-2', 'g-1-3']]);
  });

  it('gives way to the next candidate when a gear is at its limit, reading that one in turn', async () => {
    const memory = new InMemoryStateStore();
    await memory.recordGearMoves(
      [
        { uuid: 'g-1-2', at: daysAgo(3), key: 'd#1' },
        { uuid: 'g-1-2', at: daysAgo(1), key: 'e#1' },
        // Two moves, but one of them more than 7 days ago: not at the limit.
        { uuid: 'g-2-0', at: daysAgo(9), key: 'c#1' },
        { uuid: 'g-2-0', at: daysAgo(1), key: 'e#1' },
      ],
      GEAR_MOVE_WINDOW_MS,
    );
    const { store, reads } = counting(memory);
    const result = await decideWithMoveHistory(store, input());
    expect(result.decision).toMatchObject({
      kind: 'scale-down',
      nodeId: 'n-02',
      rejected: [{ nodeId: 'n-01', reason: `gear g-1-2 (app-1-2) moved 2 times in 7 d (maxMovesPerGear=2) until ${new Date(NOW.getTime() + 4 * DAY).toISOString()}` }],
    });
    expect(reads.map((uuids) => uuids[0])).toEqual(['g-1-0', 'g-2-0']);
  });

  it('after a few candidates refused, refuses the ones whose gears it did not read instead of draining unchecked gears', async () => {
    const memory = new InMemoryStateStore();
    for (let i = 1; i <= 6; i++) await memory.recordGearMoves([1, 2].map((d) => ({ uuid: `g-${i}-0`, at: daysAgo(d), key: `d${d}#1` })), GEAR_MOVE_WINDOW_MS);
    const { store, reads } = counting(memory);
    const result = await decideWithMoveHistory(store, input());
    expect(reads).toHaveLength(4);
    expect(result.decision).toMatchObject({ kind: 'no-action', reason: expect.stringContaining('no node can be drained') });
    const reasons = result.decision.kind === 'no-action' ? (result.decision.rejected ?? []).map((r) => r.reason) : [];
    expect(reasons.slice(0, 4)).toEqual(Array(4).fill(expect.stringMatching(/^gear g-\d-0 \(app-\d-0\) moved 2 times in 7 d/)));
    expect(reasons.slice(4)).toEqual(Array(2).fill('move history of 4 of its gears not read in this evaluation (maxMovesPerGear)'));
  });

  it('asks the platform for the gears of a candidate whose stats list none, and only of the candidates', async () => {
    const counted = Array.from({ length: 6 }, (_, i) => node(`n-${String(i + 1).padStart(2, '0')}`, { gears: 4 }));
    const asked: string[] = [];
    const listGears = async (nodeId: string): Promise<GearInfo[]> => {
      asked.push(nodeId);
      const i = Number(nodeId.slice(2));
      return Array.from({ length: 4 }, (_, j) => ({ uuid: `g-${i}-${j}`, app: i === 1 && j === 2 ? 'billing' : `app-${i}-${j}`, size: 'small' }));
    };
    const memory = new InMemoryStateStore();
    const cfg = config({ scaleDown: { budget: { doNotMoveApps: ['billing'] } } });
    const result = await decideWithMoveHistory({ store: memory, listGears }, evaluation({ config: cfg, nodes: counted, pool: pool({ lowSince: minutesAgo(30) }) }));
    expect(result.decision).toMatchObject({ kind: 'scale-down', nodeId: 'n-02', rejected: [{ nodeId: 'n-01', reason: 'gear g-1-2 belongs to billing (scaleDown.budget.doNotMoveApps)' }] });
    expect(asked).toEqual(['n-01', 'n-02']);
  });

  it('after a few candidates refused, never drains a node whose gears it did not list (stats with counts only)', async () => {
    // The shipped agent reports counts: each candidate's gears come from the platform, one node a round. With the
    // first four candidates each holding a gear at its limit, the fifth (never listed) must not be drained unchecked:
    // the gear mover would find its gear at the limit too, after closing the node (the aborts of issue 19).
    const counted = Array.from({ length: 6 }, (_, i) => node(`n-${String(i + 1).padStart(2, '0')}`, { gears: 4 }));
    const asked: string[] = [];
    const listGears = async (nodeId: string): Promise<GearInfo[]> => {
      asked.push(nodeId);
      const i = Number(nodeId.slice(2));
      return Array.from({ length: 4 }, (_, j) => ({ uuid: `g-${i}-${j}`, app: `app-${i}-${j}`, size: 'small' }));
    };
    const memory = new InMemoryStateStore();
    for (let i = 1; i <= 6; i++) await memory.recordGearMoves([1, 2].map((d) => ({ uuid: `g-${i}-0`, at: daysAgo(d), key: `d${d}#1` })), GEAR_MOVE_WINDOW_MS);
    const result = await decideWithMoveHistory({ store: memory, listGears }, evaluation({ nodes: counted, pool: pool({ lowSince: minutesAgo(30) }) }));
    expect(asked).toEqual(['n-01', 'n-02', 'n-03', 'n-04']);
    expect(result.decision).toMatchObject({ kind: 'no-action', reason: expect.stringContaining('no node can be drained') });
    const reasons = result.decision.kind === 'no-action' ? (result.decision.rejected ?? []).map((r) => r.reason) : [];
    expect(reasons.slice(4)).toEqual(Array(2).fill('its 4 gears not listed in this evaluation (maxMovesPerGear, do-not-move)'));
  });

  it('decides exactly as decidePool when the decision is not a scale-down (nothing read)', async () => {
    const { store, reads } = counting(new InMemoryStateStore());
    const quiet = evaluation({ nodes: listed(2, 40) });
    expect(await decideWithMoveHistory(store, quiet)).toEqual(decidePool({ ...quiet, moveHistory: new Map(), moveHistoryFinal: false }));
    expect(reads).toEqual([]);
  });
});
