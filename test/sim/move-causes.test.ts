import { describe, expect, it } from 'vitest';
import { decisionMessage } from '../../lib/domain/decision-message.js';
import { scaleDownReason } from '../../lib/domain/evaluate.js';
import { addMoveCauses, emptyMoveCauses, formatMoveCauses, moveCauses, payoffBasis, type CauseDrain, type CauseScaleUp } from '../../lib/sim/move-causes.js';
import type { PolicyResult } from '../../lib/sim/results.js';
import { moveCausesLine } from '../../lib/sim/summary.js';

const HOUR = 3600;
const DAY = 86400;
const yesterdayReason = "pool sim/small at 0.50 <= 0.93 for 5m; drain n1 (3 gears, least-disruption); pays: 20.0h unneeded (yesterday's demand) saves $3.84 >= 2 x $0.03";
const recentReason = 'pool sim/small at 0.50 <= 0.93 for 5m; drain n2 (2 gears, least-disruption); pays: 6.0h unneeded (recent demand) saves $1.15 >= 2 x $0.02';

function drain(nodeId: string, startedAt: number, kind: CauseDrain['kind'] = 'scale-down', reason = yesterdayReason): CauseDrain {
  return { nodeId, startedAt, kind, reason };
}

/** Scale-ups of one node each, at `times`. */
function ups(...times: number[]): CauseScaleUp[] {
  return times.map((at) => ({ at, count: 1 }));
}

/** One move off each of `drains`' nodes, 10 s after its drain began. */
function oneMoveEach(drains: readonly CauseDrain[]) {
  return drains.map((d, i) => ({ gear: i + 1, from: d.nodeId, at: d.startedAt + 10 }));
}

describe('move causes', () => {
  it('reads the pays-off basis from a scale-down reason', () => {
    expect(payoffBasis(yesterdayReason)).toBe('yesterday');
    expect(payoffBasis(recentReason)).toBe('recent');
    expect(payoffBasis(yesterdayReason.replace("(yesterday's demand)", "(yesterday's demand at today's 85 % of it)"))).toBe('yesterday');
    expect(payoffBasis('pool sim/small at 0.50 <= 0.93 for 5m; drain n3 (1 gear, least-disruption)')).toBeUndefined();
  });

  it('charges each move to the latest drain of its source node started at or before it', () => {
    const drains = [
      drain('n1', 2 * DAY, 'scale-down', yesterdayReason),
      drain('n1', 3 * DAY, 'scale-down', recentReason),
      drain('n2', 2 * DAY, 'interruption', 'spot interruption'),
      drain('n3', 2 * DAY, 'manual', 'operator'),
      drain('n4', 2 * DAY, 'scale-down', 'no verdict'),
    ];
    const moves = [
      { gear: 1, from: 'n1', at: 2 * DAY + 60 },
      { gear: 2, from: 'n1', at: 3 * DAY + 60 },
      { gear: 3, from: 'n2', at: 2 * DAY + 60 },
      { gear: 4, from: 'n3', at: 2 * DAY + 60 },
      { gear: 5, from: 'n4', at: 2 * DAY + 60 },
      // Before any drain of its node: nothing explains it.
      { gear: 6, from: 'n4', at: DAY },
    ];
    const causes = moveCauses(moves, drains, [], []);
    expect(causes).toMatchObject({ total: 6, yesterday: 1, recent: 1, interruption: 1, manual: 1, unchecked: 1, unattributed: 1, drainsWithMoves: 5 });
  });

  it('flags moves of first-day drains, drains soon after a scale-up, drains of attrition-closed nodes, and a gear moved again within 7 days', () => {
    const drains = [drain('early', 2 * HOUR), drain('afterUp', 2 * DAY + 30 * 60), drain('lateUp', 3 * DAY + 2 * HOUR), drain('closed', 4 * DAY)];
    const moves = [
      { gear: 1, from: 'early', at: 2 * HOUR + 10 },
      { gear: 2, from: 'afterUp', at: 2 * DAY + 30 * 60 + 10 },
      { gear: 3, from: 'lateUp', at: 3 * DAY + 2 * HOUR + 10 },
      { gear: 1, from: 'closed', at: 4 * DAY + 10 },
      // The same gear again, more than 7 days after its last move: not a repeat.
      { gear: 2, from: 'closed', at: 9 * DAY + 31 * 60 + 10 },
    ];
    const scaleUps = ups(2 * DAY, 3 * DAY);
    const toggles = [
      { nodeId: 'closed', at: 3 * DAY, closed: true },
      // Reopened and closed again before the drain of 'lateUp': the last toggle decides.
      { nodeId: 'lateUp', at: 3 * DAY, closed: true },
      { nodeId: 'lateUp', at: 3 * DAY + HOUR, closed: false },
      // Closed by the drain itself, at its start: not attrition.
      { nodeId: 'afterUp', at: 2 * DAY + 30 * 60, closed: true },
    ];
    const causes = moveCauses(moves, drains, scaleUps, toggles);
    expect(causes.firstDay).toBe(1);
    expect(causes.afterScaleUp).toBe(1);
    expect(causes.afterAttrition).toBe(2);
    expect(causes.repeatWithin7d).toBe(1);
    expect(causes.yesterday).toBe(5);
  });

  it('flags moves of scale-down drains the pool bought back within 4 hours, and no other drain', () => {
    const drains = [
      drain('rebought', DAY),
      drain('kept', 2 * DAY),
      drain('lateRebuy', 3 * DAY),
      drain('spot', 4 * DAY, 'interruption', 'spot interruption'),
    ];
    const moves = [
      { gear: 1, from: 'rebought', at: DAY + 10 },
      { gear: 2, from: 'rebought', at: DAY + 20 },
      { gear: 3, from: 'kept', at: 2 * DAY + 10 },
      { gear: 4, from: 'lateRebuy', at: 3 * DAY + 10 },
      { gear: 5, from: 'spot', at: 4 * DAY + 10 },
    ];
    // 'rebought' is bought back 3h59m after it began; 'lateRebuy' 4h01m after; the interruption's replacement is not a rebuy.
    const scaleUps = ups(DAY - HOUR, DAY + 4 * HOUR - 60, 3 * DAY + 4 * HOUR + 60, 4 * DAY + 60);
    const causes = moveCauses(moves, drains, scaleUps, []);
    expect(causes.boughtBack).toBe(2);
    expect(formatMoveCauses(causes)).toContain('bought back <4h 2,');
  });

  it('reads bought back per node: a scale-up buys back one drained node, the last one drained first', () => {
    // A small pool drains twice, then buys one node: the pool is back where it stood before the second drain only.
    const small = [drain('first', DAY), drain('second', DAY + HOUR)];
    expect(moveCauses(oneMoveEach(small), small, ups(DAY + 2 * HOUR), []).boughtBack).toBe(1);
    // Bought with two nodes in one scale-up: both.
    expect(moveCauses(oneMoveEach(small), small, [{ at: DAY + 2 * HOUR, count: 2 }], []).boughtBack).toBe(2);
    // A big pool: one decision drains five nodes at once, and the pool buys one node an hour later, another 5 h later.
    // Read as "any scale-up within 4 h", all five were bought back; one was (the last drained), the late one is no rebuy.
    const big = ['a', 'b', 'c', 'd', 'e'].map((id) => drain(id, DAY));
    expect(moveCauses(oneMoveEach(big), big, ups(DAY + HOUR, DAY + 5 * HOUR), []).boughtBack).toBe(1);
    // Scale-ups before the drain do not buy it back, however many.
    expect(moveCauses(oneMoveEach(big), big, [{ at: DAY - 60, count: 10 }], []).boughtBack).toBe(0);
  });

  it('counts a node an aborted drain re-opened as back in the pool, but not for the aborted drain itself', () => {
    // 'kept' drains at DAY, 'aborted' at DAY + 1h and re-opens its node at DAY + 2h; no scale-up.
    const drains = [drain('kept', DAY), { ...drain('aborted', DAY + HOUR), reopenedAt: DAY + 2 * HOUR }];
    const causes = moveCauses(oneMoveEach(drains), drains, [], []);
    // The level after the re-open is one below where it stood before 'kept' (and before 'aborted', without its own node).
    expect(causes.boughtBack).toBe(0);
    // One scale-up at DAY + 3h: back to where it stood before 'kept' (with the re-opened node), and before 'aborted'
    // (without it); without the re-open, only 'aborted' would be bought back.
    expect(moveCauses(oneMoveEach(drains), drains, ups(DAY + 3 * HOUR), []).boughtBack).toBe(2);
    expect(moveCauses(oneMoveEach(drains), drains.map(({ reopenedAt: _r, ...d }) => d), ups(DAY + 3 * HOUR), []).boughtBack).toBe(1);
  });

  it('reads the basis of every drain of a big decision, whose reason names a hundred further nodes and is cut', () => {
    const lowText = 'pool sim/small at 0.50 <= 0.93 for 5m';
    const more = Array.from({ length: 100 }, (_, i) => ({ nodeId: `node-${1000 + i}.sim.local`, activeGears: 20 }));
    const accepted = "pays: 20.0h unneeded (yesterday's demand) saves $3.84 >= 2 x $0.03";
    const decision = {
      kind: 'scale-down' as const,
      nodeId: 'node-999.sim.local',
      alsoNodeIds: more.map((m) => m.nodeId),
      reason: scaleDownReason(lowText, { nodeId: 'node-999.sim.local', activeGears: 20, strategy: 'least-disruption', accepted, more }, 'stale stats from 1 node (node-5.sim.local)'),
      rejected: [],
    };
    const message = decisionMessage('sim/small', decision, new Date(0))!;
    // The message cuts the reason (it names every further node); the verdict comes before the cut.
    expect(decision.reason.length).toBeGreaterThan(1024);
    expect(message.reason).toHaveLength(1024);
    expect(message.reason).toContain(accepted);
    // The drain use case gives the decision's further drains the same reason (lib/app/drain.ts).
    const drains = [decision.nodeId, ...decision.alsoNodeIds].map((nodeId) => drain(nodeId, DAY, 'scale-down', message.reason));
    const causes = moveCauses(oneMoveEach(drains), drains, [], []);
    expect(causes).toMatchObject({ total: 101, yesterday: 101, unchecked: 0 });
  });

  it('sums pools and prints one line for the suite', () => {
    const a = { ...emptyMoveCauses(), total: 3, yesterday: 2, recent: 1, firstDay: 1, drainsWithMoves: 1 };
    const b = { ...emptyMoveCauses(), total: 2, interruption: 2, drainsWithMoves: 1 };
    const sum = addMoveCauses([a, b]);
    expect(sum).toMatchObject({ total: 5, yesterday: 2, recent: 1, interruption: 2, firstDay: 1, drainsWithMoves: 2 });
    const line = formatMoveCauses(sum);
    expect(line).toBe(
      'moves 5 by cause: yesterday-basis drains 2, recent-basis drains 1, interruptions 2; of them first day 1, <1h after a scale-up 0, bought back <4h 0, from attrition-closed nodes 0, gear moved again within 7d 0; 2 drains moved gears',
    );
    expect(moveCausesLine([{ policy: 'nodescaler', moveCauses: sum } as PolicyResult])).toBe(line);
    expect(moveCausesLine([{ policy: 'karpenter' } as PolicyResult])).toBeUndefined();
  });
});
