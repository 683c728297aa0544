import { describe, expect, it } from 'vitest';
import { closedFreeSlots, planAttrition } from '../../lib/domain/attrition.js';
import { chooseScaleDownCandidate } from '../../lib/domain/candidates.js';
import type { PoolDecision } from '../../lib/domain/decision.js';
import { decidePool } from '../../lib/domain/evaluate.js';
import type { NodeRecord } from '../../lib/domain/model.js';
import { planDrain } from '../../lib/domain/drain-plan.js';
import { computeUtilization } from '../../lib/domain/utilization.js';
import { NOW, POOL, config, evaluation, minutesAgo, node, pool, poolConfigOf } from '../support/builders.js';
import { fiveMinuteHistory } from '../support/decisions.js';

const cfg = config();
const closed = (id: string, gears: number): NodeRecord => ({ ...node(id, { gears }), attritionSince: minutesAgo(30) });
const utilizationOf = (nodes: NodeRecord[]) =>
  computeUtilization({ pool: POOL, nodes, drains: [], now: NOW, statsMaxAge: cfg.statsMaxAge, expectedGearsPerNode: 100 });
const pending = (nodeId: string): PoolDecision => ({ kind: 'no-action', reason: 'low', rejected: [{ nodeId, reason: 'does not pay: …', pending: true }] });

describe('planAttrition: close', () => {
  it('closes the next likely candidate (fits, not paying yet) to new gears', () => {
    const nodes = [node('a', { gears: 50 }), node('b', { gears: 40 }), node('c', { gears: 10 })];
    const plan = planAttrition({ nodes, utilization: utilizationOf(nodes), decision: pending('c'), config: cfg });
    expect(plan.close).toEqual([{ nodeId: 'c', reason: 'close c to new gears (next to drain; does not pay: …): departing gears empty it for free' }]);
    expect(plan.reopen).toEqual([]);
  });

  it('closes nothing when the refusals are not "not paying yet" (needed now, needed within the horizon)', () => {
    const nodes = [node('a', { gears: 50 }), node('c', { gears: 10 })];
    const decision: PoolDecision = { kind: 'no-action', reason: 'low', rejected: [{ nodeId: 'c', reason: 'needed again in 1h …' }] };
    expect(planAttrition({ nodes, utilization: utilizationOf(nodes), decision, config: cfg }).close).toEqual([]);
  });

  it('closes nothing when the open nodes would run short of headroom or hold more than a scale-up sizes them to', () => {
    const nodes = [node('a', { gears: 75 }), node('c', { gears: 5 })]; // 80 of 200; without c's 95 free slots: 25 free
    const tight = config({ scaleUp: { headroomGears: 30 } });
    expect(planAttrition({ nodes, utilization: utilizationOf(nodes), decision: pending('c'), config: tight }).close).toEqual([]);
    // 80 gears in 105 open slots: below the 0.8 threshold, but above the 0.7 target a scale-up sizes to (a wiggle
    // would reopen it at once)
    const roomy = config({ scaleUp: { headroomGears: 0 } });
    expect(planAttrition({ nodes, utilization: utilizationOf(nodes), decision: pending('c'), config: roomy }).close).toEqual([]);
    const fewer = [node('a', { gears: 65 }), node('c', { gears: 5 })]; // 70 gears in 105 open slots: 0.67
    expect(planAttrition({ nodes: fewer, utilization: utilizationOf(fewer), decision: pending('c'), config: roomy }).close.map((c) => c.nodeId)).toEqual(['c']);
    // the forecast counts too: 150 gears expected in 105 open slots
    expect(planAttrition({ nodes: fewer, utilization: utilizationOf(fewer), decision: pending('c'), config: roomy, forecastDemand: 150 }).close).toEqual([]);
  });

  it('closes the next spare node while others stay closed, one an evaluation, so departing gears empty them all', () => {
    // 100 gears on 4 nodes; b is closed. c, then d, are the next candidates not paying yet.
    const nodes = [node('a', { gears: 70 }), closed('b', 20), node('c', { gears: 6 }), node('d', { gears: 4 })];
    const both: PoolDecision = { kind: 'no-action', reason: 'low', rejected: [{ nodeId: 'b', reason: 'wait', pending: true }, { nodeId: 'c', reason: 'wait', pending: true }, { nodeId: 'd', reason: 'wait', pending: true }] };
    const noHeadroom = config({ scaleUp: { headroomGears: 0 } });
    const plan = planAttrition({ nodes, utilization: utilizationOf(nodes), decision: both, config: noHeadroom });
    expect(plan.reopen).toEqual([]);
    expect(plan.close.map((c) => c.nodeId)).toEqual(['c']);
    // with c closed too, closing d would leave 130 slots (a's, and those its gears hold) for 100 gears (0.77, above the
    // 0.7 target): it stays open
    const next = [node('a', { gears: 70 }), closed('b', 20), closed('c', 6), node('d', { gears: 4 })];
    expect(planAttrition({ nodes: next, utilization: utilizationOf(next), decision: both, config: noHeadroom }).close).toEqual([]);
  });
});

describe('planAttrition: the reserve for a jump', () => {
  it('keeps the open nodes the reserve free when it is more than the headroom, and the headroom when it is less', () => {
    // 100 gears on 3 nodes; closing c leaves a and b 105 slots free.
    const nodes = [node('a', { gears: 60 }), node('b', { gears: 35 }), node('c', { gears: 5 })];
    const noHeadroom = config({ scaleUp: { headroomGears: 0 } });
    const close = (closeReserve: number, cfgUsed = noHeadroom) =>
      planAttrition({ nodes, utilization: utilizationOf(nodes), decision: pending('c'), config: cfgUsed, closeReserve }).close.map((c) => c.nodeId);
    expect(close(105)).toEqual(['c']);
    expect(close(106)).toEqual([]);
    // the headroom still holds under a smaller reserve
    expect(close(0, config({ scaleUp: { headroomGears: 106 } }))).toEqual([]);
  });

  it('reopens a closed node once the open nodes keep less than the reserve free, while the headroom still holds', () => {
    // 150 gears; c closed: a and b keep 50 free of their 200.
    const nodes = [node('a', { gears: 80 }), node('b', { gears: 70 }), closed('c', 5)];
    const noHeadroom = config({ scaleUp: { headroomGears: 0 } });
    const reopen = (closeReserve: number) =>
      planAttrition({ nodes, utilization: utilizationOf(nodes), decision: { kind: 'no-action', reason: 'low' }, config: noHeadroom, closeReserve }).reopen;
    expect(reopen(50)).toEqual([]);
    expect(reopen(51)).toEqual([{ nodeId: 'c', reason: 'reopen c to new gears: without it the pool keeps 50 free slots < the attrition reserve 51' }]);
  });

  it('reads the reserve from the rises the headroom measured: a pool that once jumped 150 gears in a boot delay keeps 150 open', () => {
    // Two days at 200 gears with one jump to 350 for an hour, 31 hours ago; now 200 gears on 4 nodes, c and d nearly
    // empty, bought 15 minutes ago: not paying yet, so the next to drain are closed.
    const history = fiveMinuteHistory(48, (i) => (i >= 200 && i < 212 ? 350 : 200));
    const nodes = [node('a', { gears: 100 }), node('b', { gears: 90 }), node('c', { gears: 6 }), node('d', { gears: 4 })];
    const input = (attritionReserve: number) =>
      evaluation({ nodes, config: config({ scaleDown: { payoff: { attritionReserve } } }), pool: pool({ lowSince: minutesAgo(60), demandHistory: history, lastDemandScaleUpAt: minutesAgo(15) }) });
    const closedBy = (attritionReserve: number) => decidePool(input(attritionReserve)).attrition?.close.map((c) => c.nodeId) ?? [];
    // The headroom alone (the 0.95 quantile of the rises: the jump is one of 575) lets d close: 104 slots stay free.
    expect(closedBy(0)).toEqual(['d']);
    // The largest rise is kept free: closing d would leave 104 of the 150.
    expect(closedBy(1)).toEqual([]);
  });
});

describe('planAttrition: a big pool closes several an evaluation', () => {
  it('closes up to closePerEvaluation candidates, each with the ones before it closed, and stops where the open nodes run short', () => {
    // 200 gears on 6 nodes of 100; c, d, e, f are the next candidates not paying yet. The slots that stay open (a closed
    // node's gears keep theirs): after closing c and d 405 (0.49), after e too 310 (0.65), after f too 220 (0.91, above
    // the 0.7 target a scale-up sizes to).
    const nodes = [node('a', { gears: 90 }), node('b', { gears: 90 }), node('c', { gears: 2 }), node('d', { gears: 3 }), node('e', { gears: 5 }), node('f', { gears: 10 })];
    const rejected = ['c', 'd', 'e', 'f'].map((nodeId) => ({ nodeId, reason: 'wait', pending: true }));
    const decision: PoolDecision = { kind: 'no-action', reason: 'low', rejected };
    const noHeadroom = config({ scaleUp: { headroomGears: 0 } });
    const two = planAttrition({ nodes, utilization: utilizationOf(nodes), decision, config: noHeadroom, closePerEvaluation: 2 });
    expect(two.close.map((c) => c.nodeId)).toEqual(['c', 'd']);
    const all = planAttrition({ nodes, utilization: utilizationOf(nodes), decision, config: noHeadroom, closePerEvaluation: 10 });
    expect(all.close.map((c) => c.nodeId)).toEqual(['c', 'd', 'e']);
    // One an evaluation by default (a pool of up to 20 nodes).
    const one = planAttrition({ nodes, utilization: utilizationOf(nodes), decision, config: noHeadroom });
    expect(one.close.map((c) => c.nodeId)).toEqual(['c']);
  });
});

describe('planAttrition: reopen', () => {
  it('reopens a closed node as soon as the pool without its free slots would scale up (before any scale-up)', () => {
    // 195 gears in 300 slots, but b's 90 free slots are closed: 15 open free slots < headroomGears 30
    const nodes = [node('a', { gears: 90 }), closed('b', 10), node('c', { gears: 95 })];
    const plan = planAttrition({ nodes, utilization: utilizationOf(nodes), decision: { kind: 'no-action', reason: 'in band' }, config: config({ scaleUp: { headroomGears: 30 } }) });
    expect(plan.reopen).toEqual([{ nodeId: 'b', reason: 'reopen b to new gears: without it the pool keeps 15 free slots < headroomGears 30' }]);
  });

  it('reopens when demand turns: the confident level or the forecast reaches the threshold of the open slots', () => {
    const nodes = [node('a', { gears: 40 }), closed('b', 10), node('c', { gears: 40 })];
    const noHeadroom = config({ scaleUp: { headroomGears: 0 } });
    const calm = planAttrition({ nodes, utilization: utilizationOf(nodes), decision: { kind: 'no-action', reason: '' }, config: noHeadroom, forecastDemand: 95 });
    expect(calm.reopen).toEqual([]);
    const turned = planAttrition({ nodes, utilization: utilizationOf(nodes), decision: { kind: 'no-action', reason: '' }, config: noHeadroom, confidentDemand: 180 });
    expect(turned.reopen.map((r) => r.nodeId)).toEqual(['b']);
    expect(turned.reopen[0]!.reason).toMatch(/without it the pool would be at 0\.86 >= 0\.80/);
  });

  it('reopens only as many closed nodes as the pool needs, the fullest (least emptied) first', () => {
    // 170 gears in 400 slots; b, c, d closed (40, 30, 10 gears): 30 open free slots < headroomGears 60
    const nodes = [node('a', { gears: 90 }), closed('b', 40), closed('c', 30), closed('d', 10)];
    const plan = planAttrition({ nodes, utilization: utilizationOf(nodes), decision: { kind: 'no-action', reason: '' }, config: config({ scaleUp: { headroomGears: 60 } }) });
    // b's 60 free slots are enough: c and d keep emptying
    expect(plan.reopen.map((r) => r.nodeId)).toEqual(['b']);
    expect(plan.close).toEqual([]);
  });

  it('reopens every closed node when the pool scales up', () => {
    const nodes = [node('a', { gears: 40 }), closed('b', 10), node('c', { gears: 5 }), closed('d', 20)];
    const up = planAttrition({ nodes, utilization: utilizationOf(nodes), decision: { kind: 'scale-up', count: 1, reason: '', wanted: 1, clampedBy: [], forecastNodes: 0 }, config: cfg });
    expect(up.reopen.map((r) => r.reason)).toEqual(['reopen d to new gears: the pool scales up', 'reopen b to new gears: the pool scales up']);
  });

  it('keeps closed nodes closed while another node drains, if the open nodes hold the pool without it', () => {
    // a and e open (40 + 10 gears), c open (5), b and d closed. Draining c: its 5 gears go to a or e, and the open
    // nodes keep 145 free slots: b and d keep emptying. Reopened, they would take new gears, and c's.
    const nodes = [node('a', { gears: 40 }), node('e', { gears: 10 }), closed('b', 10), node('c', { gears: 5 }), closed('d', 20)];
    const other = planAttrition({ nodes, utilization: utilizationOf(nodes), decision: { kind: 'scale-down', nodeId: 'c', reason: '', rejected: [] }, config: cfg });
    expect(other).toEqual({ close: [], reopen: [] });
    const itself = planAttrition({ nodes, utilization: utilizationOf(nodes), decision: { kind: 'scale-down', nodeId: 'b', reason: '', rejected: [] }, config: cfg });
    expect(itself.reopen).toEqual([]);
  });

  it('reopens, fullest first, what the open nodes lack once the drained nodes are gone', () => {
    // Open: a (80 gears) and c (5, drained); closed: b (10) and d (20). Without c the open nodes keep 20 free slots,
    // less than headroomGears 30: d (the fullest) reopens, and its 80 free slots are enough.
    const nodes = [node('a', { gears: 80 }), closed('b', 10), node('c', { gears: 5 }), closed('d', 20)];
    const tight = config({ scaleUp: { headroomGears: 30 } });
    const plan = planAttrition({ nodes, utilization: utilizationOf(nodes), decision: { kind: 'scale-down', nodeId: 'c', reason: '', rejected: [] }, config: tight });
    expect(plan.reopen).toEqual([{ nodeId: 'd', reason: 'reopen d to new gears: without it the pool keeps 15 free slots < headroomGears 30 once c is drained' }]);
    // Drained with c by one decision (alsoNodeIds), b stays closed: its drain closes it anyway.
    const together = planAttrition({ nodes, utilization: utilizationOf(nodes), decision: { kind: 'scale-down', nodeId: 'c', alsoNodeIds: ['b'], reason: '', rejected: [] }, config: tight });
    expect(together.reopen.map((r) => r.nodeId)).toEqual(['d']);
    // Two open nodes drained by one decision: both leave, and the reason names both.
    const two = [...nodes, node('e', { gears: 5 })];
    const both = planAttrition({ nodes: two, utilization: utilizationOf(two), decision: { kind: 'scale-down', nodeId: 'c', alsoNodeIds: ['e'], reason: '', rejected: [] }, config: tight });
    expect(both.reopen).toEqual([{ nodeId: 'd', reason: 'reopen d to new gears: without it the pool keeps 10 free slots < headroomGears 30 once c, e are drained' }]);
  });
});

describe('a closed node', () => {
  it('offers no room: its free slots count for neither scale-up headroom nor a drain\'s gears', () => {
    const nodes = [node('a', { gears: 70 }), { ...closed('b', 10), protected: true }, node('c', { gears: 20 })];
    expect(closedFreeSlots(nodes)).toBe(90);
    // c's 20 gears would fit in b's free slots, but b is closed and a has 10 below 80 %
    const choice = chooseScaleDownCandidate({ nodes, drains: [], poolConfig: poolConfigOf(cfg), config: cfg, now: NOW, utilization: utilizationOf(nodes) });
    expect(choice.rejected.find((r) => r.nodeId === 'c')?.reason).toMatch(/^gears do not fit below 80% on the other nodes \(20 gears, 10 free slots\)/);
  });

  it('is never a drain target: its gears would move twice', () => {
    const nodes = [node('src', { gears: 2 }), closed('b', 0), node('c', { gears: 60 })];
    nodes[0]!.state = 'draining';
    const plan = planDrain({
      sourceNodeId: 'src',
      pool: POOL,
      gears: [{ uuid: 'g1', app: 'x', size: 'small' }, { uuid: 'g2', app: 'y', size: 'small' }],
      nodes,
      reserved: new Map(),
      fillFraction: 0.8,
      antiAffinity: 'preferred',
      now: NOW,
      statsMaxAge: cfg.statsMaxAge,
    });
    expect(plan.placements.map((p) => p.target)).toEqual(['c', 'c']);
  });

  it('the evaluator plans the close and the reopen with its decision', () => {
    // Low for an hour, no day of history: nothing pays yet, the cheapest node is closed.
    const low = [node('a', { gears: 40 }), node('b', { gears: 30 }), node('c', { gears: 5 })];
    const quietHour = Array.from({ length: 60 }, (_, i): [number, number] => [Math.floor(NOW.getTime() / 60_000) - 60 + i, 75]);
    const first = decidePool(evaluation({ nodes: low, pool: pool({ lowSince: minutesAgo(60), demandHistory: quietHour }) }));
    expect(first.decision.kind).toBe('no-action');
    expect(first.attrition?.close.map((c) => c.nodeId)).toEqual(['c']);
    // Demand turns: 230 gears in 300 slots, c closed: 0.77 of all slots, but 0.97 of the open ones.
    const busy = [node('a', { gears: 100 }), node('b', { gears: 100 }), closed('c', 30)];
    const turned = decidePool(evaluation({ nodes: busy, pool: pool({ demandHistory: quietHour }) }));
    expect(turned.attrition?.reopen.map((r) => r.nodeId)).toEqual(['c']);
  });

  it('closes while a delay holds scale-down back: the nodes it would drain first, not only those that do not pay yet', () => {
    // Bought 3 minutes ago and low for only 2: a blip's nodes joined after it was over, and every new gear would land on them.
    const joinedEmpty = [node('a', { gears: 60 }), node('b', { gears: 55 }), node('c', { gears: 0 })];
    const quietHour = Array.from({ length: 60 }, (_, i): [number, number] => [Math.floor(NOW.getTime() / 60_000) - 60 + i, 115]);
    const delayed = (attritionWhileDelayed: boolean, fields: { lowSince: string }) =>
      decidePool(evaluation({ config: config({ scaleDown: { payoff: { attritionWhileDelayed } } }), nodes: joinedEmpty, pool: pool({ ...fields, lastScaleUpAt: minutesAgo(3), lastDemandScaleUpAt: minutesAgo(3), demandHistory: quietHour }) }));

    const afterAdd = delayed(true, { lowSince: minutesAgo(30) });
    expect(afterAdd.decision).toMatchObject({ kind: 'no-action', reason: expect.stringContaining('scale-down blocked: delayAfterAdd') });
    expect(afterAdd.attrition?.close.map((c) => c.nodeId)).toEqual(['c']);
    const unneeded = delayed(true, { lowSince: minutesAgo(2) });
    expect(unneeded.decision.reason).toContain('of 5m unneeded time');
    expect(unneeded.attrition?.close.map((c) => c.nodeId)).toEqual(['c']);
    // Without the setting a delay lists no candidate, so nothing closes until it ends.
    expect(delayed(false, { lowSince: minutesAgo(30) }).attrition?.close ?? []).toEqual([]);
  });
});
