import { describe, expect, it } from 'vitest';
import { addMoveCauses, emptyMoveCauses, formatMoveCauses, moveCauses, payoffBasis, type CauseDrain } from '../../lib/sim/move-causes.js';
import type { PolicyResult } from '../../lib/sim/results.js';
import { moveCausesLine } from '../../lib/sim/summary.js';

const HOUR = 3600;
const DAY = 86400;
const yesterdayReason = "pool sim/small at 0.50 <= 0.93 for 5m; drain n1 (3 gears, least-disruption); pays: 20.0h unneeded (yesterday's demand) saves $3.84 >= 2 x $0.03";
const recentReason = 'pool sim/small at 0.50 <= 0.93 for 5m; drain n2 (2 gears, least-disruption); pays: 6.0h unneeded (recent demand) saves $1.15 >= 2 x $0.02';

function drain(nodeId: string, startedAt: number, kind: CauseDrain['kind'] = 'scale-down', reason = yesterdayReason): CauseDrain {
  return { nodeId, startedAt, kind, reason };
}

describe('move causes', () => {
  it('reads the pays-off basis from a scale-down reason', () => {
    expect(payoffBasis(yesterdayReason)).toBe('yesterday');
    expect(payoffBasis(recentReason)).toBe('recent');
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
    const scaleUps = [2 * DAY, 3 * DAY];
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
    const scaleUps = [DAY - HOUR, DAY + 4 * HOUR - 60, 3 * DAY + 4 * HOUR + 60, 4 * DAY + 60];
    const causes = moveCauses(moves, drains, scaleUps, []);
    expect(causes.boughtBack).toBe(2);
    expect(formatMoveCauses(causes)).toContain('bought back <4h 2,');
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
