import { describe, expect, it } from 'vitest';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { CANDIDATE_READ_SHARE, MIN_CANDIDATE_READS, candidateReads, decideWithMoveHistory } from '../../lib/app/move-history.js';
import { GEAR_MOVE_WINDOW_MS } from '../../lib/domain/budget.js';
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
