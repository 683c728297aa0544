import { describe, expect, it } from 'vitest';
import { drainsPerDecision, withScaleDown } from '../../lib/domain/budget.js';
import { type CandidateCheck, type CandidateInput, chooseScaleDownCandidate, chooseScaleDownCandidates } from '../../lib/domain/candidates.js';
import { shadowKey, shadowSentence } from '../../lib/domain/controls.js';
import { decisionMessage } from '../../lib/domain/decision-message.js';
import { decidePool } from '../../lib/domain/evaluate.js';
import { computeUtilization } from '../../lib/domain/utilization.js';
import type { NodeRecord } from '../../lib/domain/model.js';
import { parseMessage } from '../../lib/messages/index.js';
import { seededRandom } from '../../lib/sim/random.js';
import { NOW, config, drain, evaluation, minutesAgo, node, nodes, pool, poolConfigOf } from '../support/builders.js';
import { quietDay } from '../support/decisions.js';

/** These test how many nodes one decision drains, not the pays-off check (test/unit/payoff.test.ts): it is off here. */
const noPayoff = config({ scaleDown: { payoff: { enabled: false } } });

function perDecision(poolNodes: number, fields: { drains?: number; cfg?: ReturnType<typeof config>; scaleDownsAt?: string[] } = {}): number {
  const cfg = fields.cfg ?? noPayoff;
  const all = nodes(poolNodes, 10);
  const drains = Array.from({ length: fields.drains ?? 0 }, (_, i) => drain(`node-${i + 1}`, []));
  return drainsPerDecision({ config: cfg, poolConfig: poolConfigOf(cfg), now: NOW, nodes: all, drains, pool: fields.scaleDownsAt ? { scaleDownsAt: fields.scaleDownsAt } : {} });
}

describe('drainsPerDecision: a big pool drains several nodes a decision', () => {
  it('is half the concurrent budget, so the budget fills in two decisions at any pool size', () => {
    // maxDraining defaults to 10 % of the pool: 1 node up to 10 nodes, 2 at 20, 3 at 30, 20 at 200.
    expect(perDecision(6)).toBe(1);
    expect(perDecision(20)).toBe(1);
    expect(perDecision(30)).toBe(2);
    expect(perDecision(200)).toBe(10);
    expect(perDecision(2000)).toBe(100);
  });

  it('never exceeds what maxDraining and maxDrainsPerHour have left, and is at least 1', () => {
    expect(perDecision(200, { drains: 15 })).toBe(5);
    expect(perDecision(200, { drains: 20 })).toBe(1); // the budget check refuses the decision itself
    const hourly = config({ scaleDown: { payoff: { enabled: false }, budget: { maxDrainsPerHour: 12 } } });
    expect(perDecision(200, { cfg: hourly })).toBe(10);
    expect(perDecision(200, { cfg: hourly, scaleDownsAt: Array.from({ length: 9 }, () => minutesAgo(10)) })).toBe(3);
    const one = config({ scaleDown: { payoff: { enabled: false }, budget: { maxDraining: 1 } } });
    expect(perDecision(200, { cfg: one })).toBe(1);
  });

  it('counts every drain of a decision against maxDrainsPerHour', () => {
    expect(withScaleDown([minutesAgo(90), minutesAgo(30)], NOW, 3)).toEqual([minutesAgo(30), NOW.toISOString(), NOW.toISOString(), NOW.toISOString()]);
  });
});

describe('chooseScaleDownCandidates', () => {
  it('chooses each further node with the ones before it gone: their slots and the room their gears take', () => {
    // Six nodes of 100 slots at 0.8: 60 free below it on each node (the 20-gear ones); the nodes of 20 gears go first.
    // Draining one moves 20 gears into 280 free slots, two 40, ... The pool must stay below 0.8: 200 gears need 250+ slots,
    // so at most three of six nodes (300 slots left) may go; `count` 5 stops at three.
    const pool6 = [...nodes(3, 20, 100, 'light'), ...nodes(3, 46, 100, 'heavy')];
    const cfg = noPayoff;
    const utilization = computeUtilization({ pool: 'd1/small', nodes: pool6, drains: [], now: NOW, statsMaxAge: cfg.statsMaxAge, expectedGearsPerNode: 100 });
    const input = { nodes: pool6, drains: [], poolConfig: poolConfigOf(cfg), config: cfg, now: NOW, utilization };
    const choice = chooseScaleDownCandidates(input, undefined, 5);
    expect(choice.nodeId).toBe('light-1');
    expect(choice.more.map((m) => m.nodeId)).toEqual(['light-2', 'light-3']);
    // 198 gears on the three heavy nodes' 300 slots would be 0.66: a fourth (heavy, 46 gears) would leave 200 slots.
    expect(chooseScaleDownCandidates(input, undefined, 1).more).toEqual([]);
  });

  it('prices every node of the decision against the node after the last one, not against each other', () => {
    // Three light nodes of 20 gears drain; heavy-1 (46 gears) comes next: each light node may take 26 more and still
    // come before every node the decision leaves. Priced against each other, the first new gear would call a drain off.
    const pool6 = [...nodes(3, 20, 100, 'light'), ...nodes(3, 46, 100, 'heavy')];
    const utilization = computeUtilization({ pool: 'd1/small', nodes: pool6, drains: [], now: NOW, statsMaxAge: noPayoff.statsMaxAge, expectedGearsPerNode: 100 });
    const input = { nodes: pool6, drains: [], poolConfig: poolConfigOf(noPayoff), config: noPayoff, now: NOW, utilization };
    const choice = chooseScaleDownCandidates(input, undefined, 5);
    const price = { gears: 20, limit: 46, next: 'heavy-1', nextGears: 46 };
    expect(choice.price).toEqual(price);
    expect(choice.more).toEqual([
      { nodeId: 'light-2', activeGears: 20, price },
      { nodeId: 'light-3', activeGears: 20, price },
    ]);
    // Alone, light-1 is priced against light-2, level with it.
    expect(chooseScaleDownCandidates(input, undefined, 1).price).toEqual({ gears: 20, limit: 20, next: 'light-2', nextGears: 20 });
  });

  it('refuses a further node whose gears no longer fit once the earlier ones took the free slots', () => {
    // Free slots below the 0.8 threshold: a 60, b 60, c 35; x is closed for attrition (its 125 free slots take no gear,
    // though its 200 slots count for the pool's utilization). Draining a puts its 20 gears into b's or c's room; b's 20
    // then have only c's 35 - 20 = 15 left. Counted as free, the 35 would take them and the pool (160 gears on 300
    // slots without a and b) would pass.
    const x = node('x', { gears: 75, max: 200 });
    x.attritionSince = minutesAgo(30);
    const tight = [node('a', { gears: 20 }), node('b', { gears: 20 }), node('c', { gears: 45 }), x];
    const utilization = computeUtilization({ pool: 'd1/small', nodes: tight, drains: [], now: NOW, statsMaxAge: noPayoff.statsMaxAge, expectedGearsPerNode: 100 });
    const input = { nodes: tight, drains: [], poolConfig: poolConfigOf(noPayoff), config: noPayoff, now: NOW, utilization };
    const choice = chooseScaleDownCandidates(input, undefined, 3);
    expect(choice.nodeId).toBe('a');
    expect(choice.more).toEqual([]);
    // Alone, b fits.
    const alone = chooseScaleDownCandidates({ ...input, nodes: tight.filter((n) => n.nodeId !== 'a') }, undefined, 1);
    expect(alone.nodeId).toBe('b');
  });
});

/** The decision's definition, choice by choice: a fresh single choice with the nodes chosen before it draining. */
function oneAtATime(input: CandidateInput, check: CandidateCheck, count: number): Array<{ nodeId: string; next?: string }> {
  const chosen: Array<{ nodeId: string; next?: string }> = [];
  let { nodes: poolNodes, utilization } = input;
  let committed = 0;
  for (let i = 0; i < count; i++) {
    const choice = chooseScaleDownCandidate({ ...input, nodes: poolNodes, utilization, committedGears: committed }, check);
    if (choice.nodeId === undefined) break;
    chosen.push({ nodeId: choice.nodeId, ...(choice.price ? { next: choice.price.next } : {}) });
    const node = poolNodes.find((n) => n.nodeId === choice.nodeId)!;
    const max = node.stats!.maxActiveGears;
    committed += choice.activeGears ?? 0;
    utilization = { ...utilization, capacity: utilization.capacity - max, freeSlots: utilization.freeSlots - max };
    poolNodes = poolNodes.map((n) => (n === node ? { ...n, state: 'draining' as const } : n));
  }
  return chosen;
}

describe('chooseScaleDownCandidates ranks the pool once', () => {
  it('chooses the same nodes, in the same order, as choosing one at a time (300 random pools, checks that change their mind)', () => {
    const random = seededRandom(19);
    const strategies = ['least-disruption', 'least-gears', 'least-utilized', 'oldest', 'newest'] as const;
    let further = 0;
    let retried = 0;
    for (let trial = 0; trial < 300; trial++) {
      const candidateStrategy = strategies[trial % strategies.length]!;
      const cfg = config({ scaleDown: { candidateStrategy, payoff: { enabled: false } } });
      const size = 3 + Math.floor(random() * 40);
      const poolNodes: NodeRecord[] = Array.from({ length: size }, (_, i) => {
        const max = random() < 0.8 ? 100 : 200;
        const n = node(`n-${i}`, { gears: Math.floor(random() * max * 0.7), max, createdMinutesAgo: 10 + Math.floor(random() * 500) });
        if (random() < 0.3) n.stats!.idleGears = Math.floor(random() * n.stats!.activeGears);
        if (random() < 0.05) n.protected = true;
        if (random() < 0.05) n.attritionSince = minutesAgo(20);
        return n;
      });
      const utilization = computeUtilization({ pool: 'd1/small', nodes: poolNodes, drains: [], now: NOW, statsMaxAge: cfg.statsMaxAge, expectedGearsPerNode: 100 });
      // A check that refuses some nodes at one capacity and takes them at another, as no real check does: the queue
      // must ask a refused node again, not assume a refusal lasts.
      const salt = Math.floor(random() * 1000);
      const refusedOnce = new Set<string>();
      const check: CandidateCheck = (n, capacityAfter) => {
        const refuse = (Number(n.nodeId.slice(2)) * 31 + capacityAfter * 7 + salt) % 3 === 0;
        if (refuse) refusedOnce.add(n.nodeId);
        return refuse ? { refused: 'not now' } : { accepted: 'pays' };
      };
      const input = { nodes: poolNodes, drains: [], poolConfig: poolConfigOf(cfg), config: cfg, now: NOW, utilization };
      const count = 1 + Math.floor(random() * 8);
      const expected = oneAtATime(input, check, count);
      refusedOnce.clear();
      const choice = chooseScaleDownCandidates(input, check, count);
      const got = choice.nodeId === undefined ? [] : [choice.nodeId, ...choice.more.map((m) => m.nodeId)];
      expect(got, `trial ${trial} (${candidateStrategy}, ${size} nodes, count ${count})`).toEqual(expected.map((c) => c.nodeId));
      // Every node of the decision is priced against the node after the last one.
      const last = expected[expected.length - 1];
      for (const price of [choice.price, ...choice.more.map((m) => m.price)]) expect(price?.next).toBe(last?.next);
      further += choice.more.length;
      retried += choice.more.filter((m) => refusedOnce.has(m.nodeId)).length;
      // The decision names the first choice's refusals, as a single choice does.
      expect(choice.rejected).toEqual(chooseScaleDownCandidate(input, check).rejected);
    }
    // The random pools reach what the test is for: several nodes a decision, and nodes the check refused first and took later.
    expect(further).toBeGreaterThan(300);
    expect(retried).toBeGreaterThan(10);
  });
});

describe('decidePool: one decision drains several nodes of a big pool', () => {
  const lowPool = pool({ demandHistory: quietDay, lowSince: minutesAgo(30) });

  it('drains half the budget at once in a 40-node pool, one node in a 20-node pool', () => {
    const big = decidePool(evaluation({ config: noPayoff, nodes: nodes(40, 10), pool: lowPool }));
    expect(big.decision).toMatchObject({ kind: 'scale-down', nodeId: 'node-1', alsoNodeIds: ['node-10'] });
    expect(big.decision.reason).toContain('drain node-1 (10 gears, least-disruption); and node-10 (10 gears)');
    // One time a decision (the pool record stays small), one a drain where maxDrainsPerHour counts them.
    expect(big.poolPatch.scaleDownsAt).toEqual([NOW.toISOString()]);
    const hourly = config({ scaleDown: { payoff: { enabled: false }, budget: { maxDrainsPerHour: 30 } } });
    const counted = decidePool(evaluation({ config: hourly, nodes: nodes(40, 10), pool: lowPool }));
    expect(counted.poolPatch.scaleDownsAt).toEqual([NOW.toISOString(), NOW.toISOString()]);
    const small = decidePool(evaluation({ config: noPayoff, nodes: nodes(20, 10), pool: lowPool }));
    expect(small.decision.kind).toBe('scale-down');
    expect(small.decision).not.toHaveProperty('alsoNodeIds');
  });

  it('sends every node in the message, and the message schema takes them (and refuses too many)', () => {
    const big = decidePool(evaluation({ config: noPayoff, nodes: nodes(40, 10), pool: lowPool }));
    const message = decisionMessage('d1/small', big.decision, NOW);
    expect(message).toMatchObject({ type: 'scale-down', nodeId: 'node-1', alsoNodeIds: ['node-10'] });
    expect(parseMessage(JSON.stringify(message))).toMatchObject({ ok: true, message: { alsoNodeIds: ['node-10'] } });
    const tooMany = parseMessage(JSON.stringify({ ...message, alsoNodeIds: Array.from({ length: 100 }, (_, i) => `node-${i}`) }));
    expect(tooMany.ok).toBe(false);
    if (!tooMany.ok) expect(tooMany.error.message).toMatch(/alsoNodeIds.*at most 99 more nodes/);
    const hostile = parseMessage(JSON.stringify({ ...message, alsoNodeIds: ['node 1; rm -rf /'] }));
    expect(hostile.ok).toBe(false);
    if (!hostile.ok) expect(hostile.error.message).toMatch(/alsoNodeIds/);
  });
});

describe('shadow mode of a decision that drains several nodes', () => {
  it('names every node it would drain, and two such decisions share a key only with the same nodes', () => {
    const decision = { kind: 'scale-down' as const, nodeId: 'a', alsoNodeIds: ['b', 'c'], reason: '', rejected: [] };
    expect(shadowSentence(decision, 4)).toBe('would drain a (4 gears, 4 moves, saving 1 node) and 2 more nodes (b, c)');
    expect(shadowKey(decision)).not.toBe(shadowKey({ ...decision, alsoNodeIds: ['b'] }));
    expect(shadowKey({ ...decision, alsoNodeIds: [] })).toBe('scale-down:a');
  });
});
