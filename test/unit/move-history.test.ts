import { describe, expect, it } from 'vitest';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { BlockedGears, NODE_RELIST_MS } from '../../lib/app/blocked-gears.js';
import { CANDIDATE_READ_SHARE, CHECKS_CUT_SHORT, MIN_CANDIDATE_READS, candidateReads, decideWithMoveHistory, type GearSources } from '../../lib/app/move-history.js';
import { TransientError, ValidationError } from '../../lib/errors.js';
import { GEAR_MOVE_WINDOW_MS } from '../../lib/domain/budget.js';
import { launchedFromTemplate } from '../../lib/domain/drift.js';
import type { GearInfo, NodeRecord } from '../../lib/domain/model.js';
import { NOW, config as ruleConfig, evaluation, minutesAgo, node, pool } from '../support/builders.js';

const DAY = 86_400_000;
const daysAgo = (days: number) => new Date(NOW.getTime() - days * DAY).toISOString();
/** The budget's rules, not the pays-off check (test/unit/payoff.test.ts): it is off here. */
const config = () => ruleConfig({ scaleDown: { payoff: { enabled: false } } }, { max: 500 });

describe('candidateReads: a share of the pool, never fewer than a small pool reads', () => {
  it.each([
    { poolNodes: 0, reads: MIN_CANDIDATE_READS },
    { poolNodes: 1, reads: MIN_CANDIDATE_READS },
    { poolNodes: 20, reads: 4 },
    { poolNodes: 21, reads: 5 },
    { poolNodes: 40, reads: 8 },
    { poolNodes: 200, reads: 40 },
    { poolNodes: 2000, reads: 400 },
  ])('$poolNodes nodes: $reads candidates', ({ poolNodes, reads }) => {
    expect(candidateReads(poolNodes)).toBe(reads);
  });

  it('reads as many of a 20-node pool as before the share (four)', () => {
    expect(Math.ceil(CANDIDATE_READ_SHARE * 20)).toBe(MIN_CANDIDATE_READS);
  });
});

/** `count` nodes `n-001`.. with four listed gears each (`g-<i>-<j>`). */
function listed(count: number): NodeRecord[] {
  return Array.from({ length: count }, (_, k) => {
    const record = node(`n-${String(k + 1).padStart(3, '0')}`, { gears: 4 });
    record.stats!.gears = Array.from({ length: 4 }, (_, j): GearInfo => ({ uuid: `g-${k + 1}-${j}`, app: `app-${k + 1}-${j}`, size: 'small' }));
    return record;
  });
}

describe('decideWithMoveHistory: a big pool looks past candidates whose gears are at their limit', () => {
  // Candidates in order n-001, n-002, ... (same gears each); the first `atLimit` hold a gear moved twice this week.
  it.each([
    { poolNodes: 6, atLimit: 3, drained: 'n-004', reads: 4 },
    { poolNodes: 6, atLimit: 4, drained: undefined, reads: 4 },
    { poolNodes: 20, atLimit: 4, drained: undefined, reads: 4 },
    // A pool over 20 nodes drains several nodes a decision (budget.ts drainsPerDecision: 2 of 30, 10 of 200), read together.
    { poolNodes: 30, atLimit: 4, drained: 'n-005', reads: 6, also: ['n-006'] },
    { poolNodes: 30, atLimit: 6, drained: undefined, reads: 6 },
    { poolNodes: 200, atLimit: 25, drained: 'n-026', reads: 35, also: ['n-027', 'n-028', 'n-029', 'n-030', 'n-031', 'n-032', 'n-033', 'n-034', 'n-035'] },
    { poolNodes: 200, atLimit: 40, drained: undefined, reads: 40 },
  ])('$poolNodes nodes, first $atLimit at the limit: drains $drained after reading $reads', async ({ poolNodes, atLimit, drained, reads, also }) => {
    const store = new InMemoryStateStore();
    for (let i = 1; i <= atLimit; i++) await store.recordGearMoves([1, 2].map((d) => ({ uuid: `g-${i}-0`, at: daysAgo(d), key: `d${d}#${i}` })), GEAR_MOVE_WINDOW_MS);
    const batches: string[][] = [];
    const counting = { getGearMoves: (uuids: readonly string[]) => (batches.push([...uuids]), store.getGearMoves(uuids)) };
    const result = await decideWithMoveHistory({ store: counting }, evaluation({ config: config(), nodes: listed(poolNodes), pool: pool({ lowSince: minutesAgo(30) }) }));
    // Nodes whose gears were read (a decision draining several nodes reads them in one batch).
    expect(new Set(batches.flat().map((uuid) => uuid.split('-')[1])).size).toBe(reads);
    if (drained) {
      expect(result.decision).toMatchObject({ kind: 'scale-down', nodeId: drained });
      expect(result.decision.kind === 'scale-down' ? result.decision.alsoNodeIds : undefined).toEqual(also);
    } else {
      expect(result.decision).toMatchObject({ kind: 'no-action', reason: expect.stringContaining('no node can be drained') });
      const reasons = result.decision.kind === 'no-action' ? (result.decision.rejected ?? []).map((r) => r.reason) : [];
      // Never drained unchecked: every candidate past the reads is refused for it.
      expect(reasons.slice(reads)).toEqual(Array(poolNodes - reads).fill('move history of 4 of its gears not read in this evaluation (maxMovesPerGear)'));
    }
  });
});

describe('decideWithMoveHistory with remembered gears: a blocked big pool is not read every minute', () => {
  it('200 nodes all holding a gear at its limit: each evaluation reads new candidates until all are known, then none', async () => {
    const store = new InMemoryStateStore();
    for (let i = 1; i <= 200; i++) await store.recordGearMoves([1, 2].map((d) => ({ uuid: `g-${i}-0`, at: daysAgo(d), key: `d${d}#${i}` })), GEAR_MOVE_WINDOW_MS);
    const blocked = new BlockedGears();
    const readsPerEvaluation: number[] = [];
    let reasons: string[] = [];
    for (let evaluationNo = 0; evaluationNo < 7; evaluationNo++) {
      let keys = 0;
      const counting = { getGearMoves: (uuids: readonly string[]) => ((keys += uuids.length), store.getGearMoves(uuids)) };
      const result = await decideWithMoveHistory({ store: counting, blocked }, evaluation({ config: config(), nodes: listed(200), pool: pool({ lowSince: minutesAgo(30) }) }));
      expect(result.decision.kind).toBe('no-action');
      reasons = result.decision.kind === 'no-action' ? (result.decision.rejected ?? []).map((r) => r.reason) : [];
      readsPerEvaluation.push(keys);
    }
    // 40 candidates (4 gears each) a minute until the 200 are known; the old evaluator read 160 keys every minute.
    expect(readsPerEvaluation).toEqual([160, 160, 160, 160, 160, 0, 0]);
    expect(blocked.size).toBe(200);
    expect(reasons).toHaveLength(200);
    for (const reason of reasons) expect(reason).toMatch(/moved 2 times in 7 d \(maxMovesPerGear=2\)/);
  });

  it('a remembered gear costs no candidate round: the first free node past the reads is found and drained', async () => {
    const store = new InMemoryStateStore();
    for (let i = 1; i <= 50; i++) await store.recordGearMoves([1, 2].map((d) => ({ uuid: `g-${i}-0`, at: daysAgo(d), key: `d${d}#${i}` })), GEAR_MOVE_WINDOW_MS);
    const blocked = new BlockedGears();
    const input = () => evaluation({ config: config(), nodes: listed(200), pool: pool({ lowSince: minutesAgo(30) }) });
    const first = await decideWithMoveHistory({ store, blocked }, input());
    expect(first.decision.kind).toBe('no-action');
    const second = await decideWithMoveHistory({ store, blocked }, input());
    expect(second.decision).toMatchObject({ kind: 'scale-down', nodeId: 'n-051' });
  });

  it('gears whose moves aged out are read again, and their node drained', async () => {
    const store = new InMemoryStateStore();
    for (let i = 1; i <= 6; i++) await store.recordGearMoves([1, 6.99].map((d) => ({ uuid: `g-${i}-0`, at: daysAgo(d), key: `d${d}#${i}` })), GEAR_MOVE_WINDOW_MS);
    const blocked = new BlockedGears();
    const nodes = listed(6);
    const before = await decideWithMoveHistory({ store, blocked }, evaluation({ config: config(), nodes, pool: pool({ lowSince: minutesAgo(30) }) }));
    expect(before.decision.kind).toBe('no-action');
    expect(blocked.size).toBe(4);
    const afterNow = new Date(NOW.getTime() + 60 * 60_000);
    let keys = 0;
    const counting = { getGearMoves: (uuids: readonly string[]) => ((keys += uuids.length), store.getGearMoves(uuids)) };
    const after = await decideWithMoveHistory(
      { store: counting, blocked },
      evaluation({ config: config(), nodes: nodes.map((n) => ({ ...n, stats: { ...n.stats!, reportedAt: afterNow.toISOString() } })), now: afterNow, pool: pool({ lowSince: new Date(afterNow.getTime() - 30 * 60_000).toISOString() }) }),
    );
    expect(keys).toBe(4);
    expect(after.decision).toMatchObject({ kind: 'scale-down', nodeId: 'n-001' });
  });
});

describe('decideWithMoveHistory at the evaluation deadline', () => {
  it('reads stop once out of time: the decision is taken with what was read, no unread node drained, and the reason says so', async () => {
    const store = new InMemoryStateStore();
    // n-001's gear is at its limit: the first round reads it and refuses n-001; the deadline comes before n-002 is read.
    await store.recordGearMoves([1, 2].map((d) => ({ uuid: 'g-1-0', at: daysAgo(d), key: `d${d}#1` })), GEAR_MOVE_WINDOW_MS);
    const batches: string[][] = [];
    const counting = { getGearMoves: (uuids: readonly string[]) => (batches.push([...uuids]), store.getGearMoves(uuids)) };
    const outOfTime = () => batches.length >= 1;
    const result = await decideWithMoveHistory({ store: counting, outOfTime }, evaluation({ config: config(), nodes: listed(6), pool: pool({ lowSince: minutesAgo(30) }) }));
    expect(batches).toEqual([['g-1-0', 'g-1-1', 'g-1-2', 'g-1-3']]);
    expect(result.decision).toMatchObject({ kind: 'no-action', reason: expect.stringMatching(new RegExp(`no node can be drained.*; ${CHECKS_CUT_SHORT}$`)) });
    const reasons = result.decision.kind === 'no-action' ? (result.decision.rejected ?? []).map((r) => r.reason) : [];
    expect(reasons[0]).toMatch(/maxMovesPerGear=2/);
    expect(reasons.slice(1)).toEqual(Array(5).fill('move history of 4 of its gears not read in this evaluation (maxMovesPerGear)'));
  });

  it('a decision that needs no read is not cut short', async () => {
    const store = new InMemoryStateStore();
    const result = await decideWithMoveHistory({ store, outOfTime: () => true }, evaluation({ config: config(), nodes: listed(6), pool: pool() }));
    expect(result.decision.reason).not.toContain(CHECKS_CUT_SHORT);
  });
});

describe('decideWithMoveHistory with remembered gears, on nodes whose stats list no gears (the shipped agent)', () => {
  /** `count` nodes as the shipped agent reports them (counts only), the first `atLimit` holding a gear moved twice this week. */
  async function shippedAgentPool(count: number, atLimit: number) {
    const store = new InMemoryStateStore();
    for (let i = 1; i <= atLimit; i++) await store.recordGearMoves([1, 2].map((d) => ({ uuid: `g-${i}-0`, at: daysAgo(d), key: `d${d}#${i}` })), GEAR_MOVE_WINDOW_MS);
    const withGears = listed(count);
    const nodes = withGears.map((n) => ({ ...n, stats: { ...n.stats!, gears: undefined } }));
    const listings: string[] = [];
    const listGears = async (nodeId: string) => (listings.push(nodeId), withGears.find((n) => n.nodeId === nodeId)!.stats!.gears!);
    const blocked = new BlockedGears();
    const run = async (now = NOW, sources: Partial<GearSources> = {}) => {
      let keys = 0;
      listings.length = 0;
      const counting = { getGearMoves: (uuids: readonly string[]) => ((keys += uuids.length), store.getGearMoves(uuids)) };
      const fresh = nodes.map((n) => ({ ...n, stats: { ...n.stats!, reportedAt: now.toISOString() } }));
      const input = evaluation({ config: config(), nodes: fresh, now, pool: pool({ lowSince: new Date(now.getTime() - 30 * 60_000).toISOString() }) });
      const result = await decideWithMoveHistory({ store: counting, listGears, blocked, ...sources }, input);
      return { result, keys, listed: [...listings] };
    };
    return { run, blocked };
  }

  it('a refused node is not listed again, nor its gears read, within the hour', async () => {
    const pool6 = await shippedAgentPool(6, 3);
    const first = await pool6.run();
    expect(first.result.decision).toMatchObject({ kind: 'scale-down', nodeId: 'n-004' });
    expect(first.listed).toEqual(['n-001', 'n-002', 'n-003', 'n-004']);
    expect(first.keys).toBe(16);
    const second = await pool6.run(new Date(NOW.getTime() + 60_000));
    expect(second.result.decision).toMatchObject({ kind: 'scale-down', nodeId: 'n-004' });
    expect(second.listed).toEqual(['n-004']);
    expect(second.keys).toBe(4);
  });

  it('a remembered node is listed again after NODE_RELIST_MS', async () => {
    const pool6 = await shippedAgentPool(6, 3);
    await pool6.run();
    const later = await pool6.run(new Date(NOW.getTime() + NODE_RELIST_MS));
    expect(later.listed).toEqual(['n-001', 'n-002', 'n-003', 'n-004']);
    // Their gears' moves are still remembered: listed, not read again.
    expect(later.keys).toBe(4);
  });

  it('200 nodes all refused: each evaluation lists new candidates until all are known, then none', async () => {
    const big = await shippedAgentPool(200, 200);
    const listedPerEvaluation: number[] = [];
    let last: Awaited<ReturnType<typeof big.run>> | undefined;
    for (let minute = 0; minute < 7; minute++) {
      last = await big.run(new Date(NOW.getTime() + minute * 60_000));
      expect(last.result.decision.kind).toBe('no-action');
      listedPerEvaluation.push(last.listed.length);
    }
    expect(listedPerEvaluation).toEqual([40, 40, 40, 40, 40, 0, 0]);
    expect(big.blocked.nodeCount).toBe(200);
    const reasons = last!.result.decision.kind === 'no-action' ? (last!.result.decision.rejected ?? []).map((r) => r.reason) : [];
    expect(reasons).toHaveLength(200);
    for (const reason of reasons) expect(reason).toMatch(/maxMovesPerGear=2\) until .* \(as listed at /);
  });

  it('a listing the broker cannot give now ends the reads: no drain, and the evaluation stands', async () => {
    const pool6 = await shippedAgentPool(6, 0);
    const busy = async () => {
      throw new TransientError('broker command list-gears n-001 not sent: the invocation has 900 ms left; tried again next time');
    };
    const result = await pool6.run(NOW, { listGears: busy });
    expect(result.result.decision).toMatchObject({ kind: 'no-action', reason: expect.stringContaining('no node can be drained') });
  });

  it('a listing that fails for good is not hidden', async () => {
    const pool6 = await shippedAgentPool(6, 0);
    const broken = async () => {
      throw new ValidationError({ path: 'nodeId', message: 'not a node name', value: 'n-001' });
    };
    await expect(pool6.run(NOW, { listGears: broken })).rejects.toThrow(ValidationError);
  });
});

describe('decideWithMoveHistory: a renewal reads its drifted node\'s gears as a drain does', () => {
  it('renews past a drifted node holding a gear at maxMovesPerGear, and not at all when every drifted node holds one', async () => {
    const renewing = ruleConfig({ scaleUp: { forecast: { enabled: false } }, scaleDown: { payoff: { enabled: false }, renewDrifted: true } }, { max: 10, template: { imageId: 'ami-0new' } } as never);
    const launchedFrom = { ...launchedFromTemplate(renewing.pools[0]!.template), image: 'ami-0old' };
    // Four nodes at 0.60, neither high nor low: n-001 and n-002 drifted, n-001 first (fewer gears restarted: idle ones).
    const nodes = listed(4).map((n, k) => ({ ...n, stats: { ...n.stats!, activeGears: 60, idleGears: k === 0 ? 60 : 0 }, ...(k < 2 ? { launchedFrom } : {}) }));
    const store = new InMemoryStateStore();
    await store.recordGearMoves([1, 2].map((d) => ({ uuid: 'g-1-0', at: daysAgo(d), key: `d${d}#1` })), GEAR_MOVE_WINDOW_MS);
    const read: string[][] = [];
    const sources = { store: { getGearMoves: (uuids: readonly string[]) => (read.push([...uuids]), store.getGearMoves(uuids)) } };
    const result = await decideWithMoveHistory(sources, evaluation({ config: renewing, nodes }));
    expect(result.decision).toMatchObject({ kind: 'scale-up', renews: ['n-002'] });
    expect(read).toEqual([['g-1-0', 'g-1-1', 'g-1-2', 'g-1-3'], ['g-2-0', 'g-2-1', 'g-2-2', 'g-2-3']]);
    await store.recordGearMoves([1, 2].map((d) => ({ uuid: 'g-2-3', at: daysAgo(d), key: `d${d}#2` })), GEAR_MOVE_WINDOW_MS);
    const none = await decideWithMoveHistory({ store }, evaluation({ config: renewing, nodes }));
    expect(none.decision).toMatchObject({ kind: 'no-action', reason: expect.stringContaining('renewal of 2 drifted node(s) waits: no drifted node may be drained now (n-001: gear g-1-0 (app-1-0) moved 2 times in 7 d') });
  });
});
