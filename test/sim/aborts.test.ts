import { describe, expect, it } from 'vitest';
import { gearRefusal, poolBudget } from '../../lib/domain/budget.js';
import { drainsToCallOff } from '../../lib/domain/call-off.js';
import { abortCause, timeoutCause } from '../../lib/domain/drain.js';
import { repricedReason } from '../../lib/domain/drain-price.js';
import { abortKind, abortLine, addTallies, tallyAborts } from '../../lib/sim/aborts.js';
import { NOW, config, drain, minutesAgo, move, node } from '../support/builders.js';

describe('aborted drains by reason', () => {
  // The texts the drain workflow stores, made by the code that makes them: a changed sentence fails here, not in a tally.
  const timedOut = timeoutCause(drain('node-1', [move('node-2', 'moved')], { startedAt: minutesAgo(45) }), NOW, 30 * 60_000)!;
  const budget = poolBudget(config(), undefined);
  const atLimit = gearRefusal(budget, { uuid: 'g1', app: 'a', size: 'small' }, [minutesAgo(60), minutesAgo(30)], NOW.getTime())!;
  const doNotMove = gearRefusal(budget, { uuid: 'g2', app: 'a', size: 'small', doNotMove: true }, [], NOW.getTime())!;

  it('names each kind of stored reason', () => {
    expect(abortKind(timedOut)).toBe('timeout');
    expect(abortKind(`disruption budget: ${atLimit}`)).toBe('budget: maxMovesPerGear');
    expect(abortKind(`disruption budget: ${doNotMove}`)).toBe('budget: do-not-move');
    expect(abortKind('cannot place 3 of 40 gear(s) of node-1: no node with room (e.g. g1 (a))')).toBe('no room');
    expect(abortKind('gear g1 (a) could not be moved to node-2 after 3 attempt(s): failed')).toBe('move failed');
    // A gear whose targets kept filling: the pool outgrew the drain, not a failed move.
    const full = drain('node-1', [{ ...move('node-2', 'failed'), replans: 5, noRoom: true, lastError: 'node node-2 has no room for gear g1' }]);
    expect(abortKind(abortCause(full, NOW, 30 * 60_000))).toBe('no room');
    expect(abortKind('1 node(s) of pool d1/small already draining (scaleDown.budget.maxDraining=1)')).toBe('budget: maxDraining');
    expect(abortKind('node node-1 was re-opened outside the drain')).toBe('node changed');
    expect(abortKind('cancelled: operator')).toBe('cancelled');
    const calledOff = drainsToCallOff([drain('node-1', [])], [{ ...node('node-1', { state: 'draining', gears: 5 }), drainId: 'drain-node-1' }], 1, 'pool d1/small at 0.99');
    expect(abortKind(calledOff.callOff[0]!.reason)).toBe('called off');
    expect(abortKind(repricedReason({ gears: 0, limit: 18, next: 'node-2', nextGears: 18 }, 'node-1', 80, 18))).toBe('repriced');
    expect(abortKind('something new')).toBe('other');
    expect(abortKind(undefined)).toBe('no reason');
  });

  it('tallies aborted drains by kind and the moves they made, and prints one line', () => {
    const drains = [
      drain('node-1', [move('node-2', 'moved'), move('node-3', 'moved'), move('node-3', 'planned')], { state: 'aborted', abortReason: timedOut }),
      drain('node-4', [], { state: 'aborted', abortReason: `disruption budget: ${atLimit}` }),
      drain('node-5', [], { state: 'aborted', abortReason: `disruption budget: ${atLimit}` }),
      drain('node-6', [move('node-2', 'moved')], { state: 'completed' }),
    ];
    const tally = tallyAborts(drains);
    expect(tally).toEqual({ byKind: { timeout: 1, 'budget: maxMovesPerGear': 2 }, moves: 2, afterMoves: 1 });
    expect(addTallies([tally, tally])).toEqual({ byKind: { timeout: 2, 'budget: maxMovesPerGear': 4 }, moves: 4, afterMoves: 2 });
    expect(abortLine(tally)).toBe('aborted drains: 2 budget: maxMovesPerGear, 1 timeout; 2 moves in them (1 aborted after moving a gear)');
    expect(abortLine(tallyAborts([]))).toBe('aborted drains: none');
  });
});
