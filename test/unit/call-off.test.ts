import { describe, expect, it } from 'vitest';
import { callOffText, callable, drainsToCallOff, nodesToBuy } from '../../lib/domain/call-off.js';
import type { DrainRecord, NodeRecord } from '../../lib/domain/model.js';
import { drain, move, node, minutesAgo } from '../support/builders.js';

/** A node draining for its drain `drain-<nodeId>` (the node record names the drain that holds it). */
function draining(nodeId: string, gears: number): NodeRecord {
  return { ...node(nodeId, { state: 'draining', gears }), drainId: `drain-${nodeId}` };
}

describe('callable: which drains a scale-up may call off', () => {
  it('only the evaluator’s scale-down drains that are still under way', () => {
    expect(callable(drain('a', []))).toBe(true);
    expect(callable(drain('a', [], { kind: 'scale-down' }))).toBe(true);
    expect(callable(drain('a', [], { kind: 'manual' }))).toBe(false);
    expect(callable(drain('a', [], { kind: 'interruption' }))).toBe(false);
    expect(callable(drain('a', [], { kind: 'redrain' }))).toBe(false);
    expect(callable(drain('a', [], { urgentSince: minutesAgo(1), urgentCause: 'spot interruption warning' }))).toBe(false);
    expect(callable(drain('a', [], { abortRequestedAt: minutesAgo(1) }))).toBe(false);
    expect(callable(drain('a', [], { completedAt: minutesAgo(1) }))).toBe(false);
    expect(callable(drain('a', [], { state: 'completed' }))).toBe(false);
  });
});

describe('drainsToCallOff', () => {
  const nodes = [draining('a', 10), draining('b', 60), draining('c', 35), node('x', { gears: 50 })];
  const drains: DrainRecord[] = [drain('a', []), drain('b', []), drain('c', [])];

  it('takes back as many draining nodes as the scale-up wanted, those with the most gears left first', () => {
    const plan = drainsToCallOff(drains, nodes, 2, 'pool d1/small at 0.85');
    expect(plan.nodesBack).toBe(2);
    expect(plan.callOff.map((c) => [c.nodeId, c.gearsLeft, c.returnsNode])).toEqual([
      ['b', 60, true],
      ['c', 35, true],
    ]);
    expect(plan.callOff[0]!.reason).toBe('the pool scales up (pool d1/small at 0.85): b re-opens with 60 gear(s) still on it');
  });

  it('takes back every draining node when the scale-up wants more, and never more than there are', () => {
    const plan = drainsToCallOff(drains, nodes, 5, 'why');
    expect(plan.nodesBack).toBe(3);
    expect(plan.callOff.map((c) => c.nodeId)).toEqual(['b', 'c', 'a']);
  });

  it('counts the moves still planned when the node has not reported its gears since', () => {
    const pending = drain('a', [move('x'), move('x', 'moving'), move('x', 'moved')]);
    const plan = drainsToCallOff([pending], [{ ...draining('a', 0), stats: undefined }], 1, 'why');
    expect(plan.callOff).toMatchObject([{ nodeId: 'a', gearsLeft: 2, returnsNode: true }]);
  });

  it('calls off a drain that has not closed its node yet whatever the count, giving no node back', () => {
    const notBegun = drain('x', []);
    const plan = drainsToCallOff([notBegun, ...drains], nodes, 1, 'why');
    expect(plan.nodesBack).toBe(1);
    expect(plan.callOff.map((c) => [c.nodeId, c.returnsNode])).toEqual([
      ['b', true],
      ['x', false],
    ]);
    expect(plan.callOff[1]!.reason).toBe('the pool scales up (why): x was not closed yet');
  });

  it('leaves operator, interruption and urgent drains, and a node another drain holds', () => {
    const manual = drain('a', [], { kind: 'manual' });
    const urgent = drain('b', [], { urgentSince: minutesAgo(2) });
    const stranger = drain('c', [], { drainId: 'drain-other' });
    expect(drainsToCallOff([manual, urgent, stranger], nodes, 3, 'why')).toEqual({ callOff: [], nodesBack: 0 });
  });

  it('wants nothing back when the scale-up wanted no node', () => {
    expect(drainsToCallOff(drains, nodes, 0, 'why').nodesBack).toBe(0);
  });

  it('says what it takes back, in one sentence', () => {
    const plan = drainsToCallOff([drain('x', []), ...drains], nodes, 2, 'why');
    expect(callOffText(plan)).toBe('calls off 2 scale-down drain(s) instead of buying their nodes (b: 60 gears left, c: 35 gears left); calls off 1 scale-down drain(s) not begun');
  });
});

describe('nodesToBuy: the call-offs stand in only for what waiting gears do not need', () => {
  it('with no gear waiting, buys what the call-offs do not give back', () => {
    expect(nodesToBuy(5, 2, 0)).toBe(3);
    expect(nodesToBuy(2, 3, 0)).toBe(0);
  });

  it('with gears waiting, buys at least what they need, whatever the call-offs give back', () => {
    expect(nodesToBuy(5, 3, 4)).toBe(4);
    expect(nodesToBuy(5, 5, 5)).toBe(5);
    expect(nodesToBuy(5, 1, 2)).toBe(4);
  });

  it('never more than the scale-up wanted', () => {
    expect(nodesToBuy(3, 3, 7)).toBe(3);
  });
});

describe('callOffText: says what the call-offs spared', () => {
  const plan = drainsToCallOff([drain('b', []), drain('c', [])], [draining('b', 60), draining('c', 35)], 2, 'pool at 0.99');

  it('instead of buying their nodes, some of them, or as well as buying for waiting gears', () => {
    expect(callOffText(plan, 2)).toBe('calls off 2 scale-down drain(s) instead of buying their nodes (b: 60 gears left, c: 35 gears left)');
    expect(callOffText(plan, 1)).toBe('calls off 2 scale-down drain(s) instead of buying 1 of their nodes (gears wait now) (b: 60 gears left, c: 35 gears left)');
    expect(callOffText(plan, 0)).toBe(
      'calls off 2 scale-down drain(s) as well as buying for the gears that wait now (a called-off node re-opens once its moves in flight settle) (b: 60 gears left, c: 35 gears left)',
    );
  });
});
