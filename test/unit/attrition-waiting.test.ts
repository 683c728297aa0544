import { describe, expect, it } from 'vitest';
import { planAttrition } from '../../lib/domain/attrition.js';
import type { PoolDecision } from '../../lib/domain/decision.js';
import { decidePool } from '../../lib/domain/evaluate.js';
import type { NodeRecord } from '../../lib/domain/model.js';
import { computeUtilization } from '../../lib/domain/utilization.js';
import { NOW, POOL, config, evaluation, flatDemand, minutesAgo, node, pool, refusedReport } from '../support/builders.js';

// Gears the broker refused are demand for attrition too (lib/domain/attrition.ts): closed nodes are reopened in one
// evaluation until the open running nodes take every waiting gear with the headroom left, and none is closed while
// gears wait.

const cfg = (headroomGears: number) => config({ scaleUp: { headroomGears } });
const closed = (id: string, gears: number): NodeRecord => ({ ...node(id, { gears }), attritionSince: minutesAgo(30) });
const booting = (id: string): NodeRecord => node(id, { state: 'provisioning', gears: null });
const utilizationOf = (nodes: NodeRecord[]) =>
  computeUtilization({ pool: POOL, nodes, drains: [], now: NOW, statsMaxAge: config().statsMaxAge, expectedGearsPerNode: 100 });
const inBand: PoolDecision = { kind: 'no-action', reason: 'in band' };
const pending = (nodeId: string): PoolDecision => ({ kind: 'no-action', reason: 'low', rejected: [{ nodeId, reason: 'does not pay: …', pending: true }] });

describe('planAttrition with waiting gears: reopen', () => {
  // a: 90 of 100 (10 free, running, open). Closed, fullest first: b 40 gears (60 free), c 30 (70), d 10 (90).
  const base = [node('a', { gears: 90 }), closed('b', 40), closed('c', 30), closed('d', 10)];
  const cases: Array<{ name: string; nodes: NodeRecord[]; waiting?: number; headroom: number; reopened: string[] }> = [
    { name: 'no gear waits: only the headroom is kept open', nodes: base, headroom: 50, reopened: ['b'] },
    { name: 'gears wait: every closed node they need, in one evaluation', nodes: base, waiting: 150, headroom: 20, reopened: ['b', 'c', 'd'] },
    { name: 'as many as they need with the headroom, not more', nodes: base, waiting: 60, headroom: 20, reopened: ['b', 'c'] },
    { name: 'the open running nodes already take them with the headroom left: none', nodes: [node('a', { gears: 20 }), closed('b', 40)], waiting: 30, headroom: 20, reopened: [] },
    { name: 'a booting node does not take them now: reopened anyway', nodes: [...base, booting('p')], waiting: 60, headroom: 20, reopened: ['b'] },
  ];
  it.each(cases)('$name', ({ nodes, waiting, headroom, reopened }) => {
    const u = utilizationOf(nodes);
    const plan = planAttrition({ nodes, utilization: u, decision: inBand, config: cfg(headroom), ...(waiting ? { waiting: { unplaced: waiting, demand: u.demand + waiting } } : {}) });
    expect(plan.reopen.map((r) => r.nodeId)).toEqual(reopened);
    expect(plan.close).toEqual([]);
  });

  it('counts an open node\'s free slots only from stats reported since the refusal: the broker found it full', () => {
    // a reported 20 gears two minutes ago; the broker refused 30 creations in the minute that ended one minute ago.
    const refusedAt = minutesAgo(1);
    const cases = [
      { name: 'stats older than the refusal', a: node('a', { gears: 20, reportedMinutesAgo: 2 }), reopened: ['b'] },
      { name: 'stats since the refusal', a: node('a', { gears: 20, reportedMinutesAgo: 0 }), reopened: [] },
    ];
    for (const { name, a, reopened } of cases) {
      const nodes = [a, closed('b', 40)];
      const u = utilizationOf(nodes);
      const plan = planAttrition({ nodes, utilization: u, decision: inBand, config: cfg(20), waiting: { unplaced: 30, demand: u.demand + 30, refusedAt } });
      expect(plan.reopen.map((r) => r.nodeId), name).toEqual(reopened);
    }
  });

  it('says the waiting gears are why', () => {
    const u = utilizationOf(base);
    const plan = planAttrition({ nodes: base, utilization: u, decision: inBand, config: cfg(20), waiting: { unplaced: 150, demand: u.demand + 150 } });
    expect(plan.reopen[0]!.reason).toBe('reopen b to new gears: without it the running open nodes keep 10 free slots (+0 booting) for 150 waiting gears + headroomGears 20');
  });
});

describe('planAttrition with waiting gears: close', () => {
  it('closes nothing while gears wait that the node\'s free slots are needed for', () => {
    // 60 gears on 3 nodes (300 slots): c is the next candidate, and closing it leaves a and b 140 free slots.
    const nodes = [node('a', { gears: 30 }), node('b', { gears: 25 }), node('c', { gears: 5 })];
    const u = utilizationOf(nodes);
    const calm = planAttrition({ nodes, utilization: u, decision: pending('c'), config: cfg(0) });
    expect(calm.close.map((c) => c.nodeId)).toEqual(['c']);
    const waiting = planAttrition({ nodes, utilization: u, decision: pending('c'), config: cfg(0), waiting: { unplaced: 150, demand: 210 } });
    expect(waiting.close).toEqual([]);
  });
});

describe('the evaluator with a broker report and closed nodes', () => {
  it('reopens every closed node the refused gears need at once, instead of one an evaluation or a scale-up', () => {
    // A burst: 3 open nodes full (300 gears), 180 gear creations refused; 4 closed nodes hold 20 gears each (320 free).
    const nodes = [node('a', { gears: 100 }), node('b', { gears: 100 }), node('c', { gears: 100 }), ...['w', 'x', 'y', 'z'].map((id) => closed(id, 20))];
    const product = config({ scaleUp: { threshold: 0.98, target: 0.96, headroomGears: 30, forecast: { enabled: false } } });
    const result = decidePool(evaluation({ config: product, nodes, pool: pool({ demandHistory: flatDemand(380), refused: refusedReport(180) }) }));
    // The closed nodes hold them: no node is bought...
    expect(result.decision.kind).toBe('no-action');
    // ...and enough of them open now for all 180 and the headroom (80 free each: three), not one for the headroom.
    expect(result.attrition?.reopen.map((r) => r.nodeId)).toEqual(['w', 'x', 'y']);
    expect(result.attrition?.reopen[0]!.reason).toMatch(/for 180 waiting gears \+ headroomGears/);
  });
});
