import { describe, expect, it } from 'vitest';
import { parseConfig, type ConfigInput } from '../../lib/config/index.js';
import { ValidationError } from '../../lib/errors.js';
import { candidateRefusal, maxDrainingNodes, maxNodesPerDecision, poolBudget, scaleDownBudgetChecks, windowCheck } from '../../lib/domain/budget.js';
import { decidePool } from '../../lib/domain/evaluate.js';
import { explainPool } from '../../lib/domain/explain.js';
import type { GearInfo, NodeRecord } from '../../lib/domain/model.js';
import { nextCronMatch } from '../../lib/domain/schedule.js';
import { parseMessage } from '../../lib/messages/index.js';
import { NOW, config as ruleConfig, drain, evaluation as ruleEvaluation, minutesAgo, move, node, pool, poolConfigOf } from '../support/builders.js';

/** These test the budget's rules, not the pays-off check (test/unit/payoff.test.ts): it is off here. */
const config: typeof ruleConfig = (overrides = {}, poolFields = {}) =>
  ruleConfig({ ...overrides, scaleDown: { payoff: { enabled: false }, ...overrides.scaleDown } }, poolFields);
const evaluation: typeof ruleEvaluation = (fields = {}) => ruleEvaluation({ config: config(), ...fields });

const DAY = 86_400_000;
const lowFor = pool({ lowSince: minutesAgo(30) });

/** Active nodes `n-1`..`n-count` holding `gears` gears each (listed in their stats as `g-<i>-<j>` of app `app-<i>-<j>`). */
function listed(count: number, gears: number, app: (i: number, j: number) => string = (i, j) => `app-${i}-${j}`): NodeRecord[] {
  return Array.from({ length: count }, (_, k) => {
    const i = k + 1;
    const record = node(`n-${String(i).padStart(2, '0')}`, { gears });
    record.stats!.gears = Array.from({ length: gears }, (_, j): GearInfo => ({ uuid: `g-${i}-${j}`, app: app(i, j), size: 'small' }));
    return record;
  });
}

function parse(scaleDown: Record<string, unknown>, poolFields: Record<string, unknown> = {}) {
  return parseConfig({ scaleDown, pools: [{ district: 'd1', profile: 'small', max: 50, ...poolFields }] } as ConfigInput);
}

function configError(scaleDown: Record<string, unknown>, poolFields: Record<string, unknown> = {}): string {
  try {
    parse(scaleDown, poolFields);
  } catch (error) {
    if (error instanceof ValidationError) return error.message;
    throw error;
  }
  throw new Error('expected a configuration error');
}

describe('configuration: scaleDown.budget', () => {
  it('defaults: 10 % of the pool draining at once, 2 moves per gear in 7 days, no hourly limit, no windows, no do-not-move apps', () => {
    const cfg = parse({});
    expect(cfg.scaleDown.budget).toEqual({ maxMovesPerGear: 2, windows: [], renewalWindows: [], doNotMoveApps: [] });
    expect(poolBudget(cfg, poolConfigOf(cfg))).toEqual({ maxDraining: { percent: 10 }, maxMovesPerGear: 2, windows: [], renewalWindows: [], doNotMoveApps: [] });
  });

  it('takes a count or a percentage for maxDraining, and windows as cron + duration', () => {
    const cfg = parse({ budget: { maxDraining: 3, maxDrainsPerHour: 4, windows: [{ cron: '0 22 * * *', for: '8h' }], doNotMoveApps: ['billing'] } });
    expect(cfg.scaleDown.budget).toEqual({ maxDraining: { nodes: 3 }, maxDrainsPerHour: 4, maxMovesPerGear: 2, windows: [{ cron: '0 22 * * *', for: 8 * 3_600_000 }], renewalWindows: [], doNotMoveApps: ['billing'] });
    expect(parse({ budget: { maxDraining: '25%' } }).scaleDown.budget.maxDraining).toEqual({ percent: 25 });
  });

  it('a pool overrides the global budget key by key', () => {
    const cfg = parse({ budget: { maxDraining: 2, doNotMoveApps: ['a'] } }, { budget: { maxDraining: '50%', maxMovesPerGear: 1 } });
    expect(poolBudget(cfg, poolConfigOf(cfg))).toEqual({ maxDraining: { percent: 50 }, maxMovesPerGear: 1, windows: [], renewalWindows: [], doNotMoveApps: ['a'] });
  });

  it('refuses a bad value naming the field and the value', () => {
    expect(configError({ budget: { maxDraining: 'ten' } })).toMatch(/scaleDown\.budget\.maxDraining.*"10%"/);
    expect(configError({ budget: { maxDraining: '0%' } })).toMatch(/scaleDown\.budget\.maxDraining/);
    expect(configError({ budget: { maxDraining: 0 } })).toMatch(/scaleDown\.budget\.maxDraining/);
    expect(configError({ budget: { windows: [{ cron: '0 25 * * *', for: '1h' }] } })).toMatch(/scaleDown\.budget\.windows\.0\.cron.*hour "25"/);
    expect(configError({ budget: { windows: [{ cron: '0 2 * * *', for: '9d' }] } })).toMatch(/scaleDown\.budget\.windows\.0\.for/);
    expect(configError({ budget: { maxMovesPerGear: 0 } })).toMatch(/scaleDown\.budget\.maxMovesPerGear/);
    expect(configError({ budget: { maxDrains: 1 } })).toMatch(/scaleDown\.budget.*maxDrains/);
    expect(configError({}, { budget: { doNotMoveApps: [''] } })).toMatch(/pools\.0\.budget\.doNotMoveApps\.0/);
  });

  it('keeps the old maxConcurrentDrains working alone, and refuses it next to the new key, naming the new one', () => {
    const cfg = parse({ maxConcurrentDrains: 3 });
    expect(poolBudget(cfg, poolConfigOf(cfg)).maxDraining).toEqual({ nodes: 3 });
    expect(configError({ maxConcurrentDrains: 3, budget: { maxDraining: 2 } })).toMatch(
      /scaleDown\.maxConcurrentDrains.*old name of scaleDown\.budget\.maxDraining: give only scaleDown\.budget\.maxDraining/,
    );
  });
});

describe('maxDraining', () => {
  it('a percentage of the pool is rounded up and at least 1; a count is itself', () => {
    expect(maxDrainingNodes({ maxDraining: { percent: 10 } }, 20)).toBe(2);
    expect(maxDrainingNodes({ maxDraining: { percent: 10 } }, 21)).toBe(3);
    expect(maxDrainingNodes({ maxDraining: { percent: 10 } }, 5)).toBe(1);
    expect(maxDrainingNodes({ maxDraining: { percent: 10 } }, 0)).toBe(1);
    expect(maxDrainingNodes({ maxDraining: { percent: 10 } }, 2000)).toBe(200);
    expect(maxDrainingNodes({ maxDraining: { nodes: 4 } }, 2000)).toBe(4);
  });

  it('blocks a scale-down when the pool has as many drains in progress as the budget allows, naming it and when it frees up', () => {
    const nodes = [...listed(9, 10), node('n-10', { state: 'draining', gears: 10 })];
    const drains = [drain('n-10', [move('n-01')], { startedAt: minutesAgo(10) })];
    const result = decidePool(evaluation({ nodes, drains, pool: lowFor }));
    expect(result.decision).toEqual({
      kind: 'no-action',
      reason:
        'pool d1/small at 0.11 <= 0.50 for 30m; scale-down blocked by scaleDown.budget.maxDraining: 1 of 1 drains in progress (scaleDown.budget.maxDraining=10% of 10 nodes = 1); frees up when a drain ends (or stalls for drainTimeout) (until 10:20:00Z)',
      budget: { name: 'scaleDown.budget.maxDraining', until: '2025-03-10T10:20:00.000Z' },
    });
  });

  it('starts another drain while the budget allows, never on a node receiving gears or already draining (concurrent drains)', () => {
    const nodes = [...listed(19, 10), node('n-20', { state: 'draining', gears: 10 })];
    const drains = [drain('n-20', [move('n-01'), move('n-02')])];
    const result = decidePool(evaluation({ nodes, drains, pool: lowFor }));
    expect(result.decision).toMatchObject({ kind: 'scale-down', nodeId: 'n-03' });
    expect(result.poolPatch.scaleDownsAt).toEqual([NOW.toISOString()]);
    // A third at once is over 10 % of 20.
    const two = decidePool(evaluation({ nodes: [...nodes.slice(0, 18), node('n-19', { state: 'draining', gears: 10 }), nodes[19]!], drains, pool: lowFor }));
    expect(two.decision).toMatchObject({ kind: 'no-action', budget: { name: 'scaleDown.budget.maxDraining' } });
  });

  it('counts an active drain whose node has not begun draining yet', () => {
    const nodes = listed(10, 10);
    const result = decidePool(evaluation({ nodes, drains: [drain('n-10', [])], pool: lowFor }));
    expect(result.decision).toMatchObject({ kind: 'no-action', budget: { name: 'scaleDown.budget.maxDraining' } });
  });
});

describe('maxDrainsPerHour', () => {
  const cfg = config({ scaleDown: { budget: { maxDrainsPerHour: 2, maxDraining: 5 } } });

  it('blocks once the last hour saw as many drains, until the oldest of them is an hour old', () => {
    const recent = pool({ lowSince: minutesAgo(30), scaleDownsAt: [minutesAgo(90), minutesAgo(50), minutesAgo(20)] });
    const result = decidePool(evaluation({ config: cfg, nodes: listed(10, 10), pool: recent }));
    expect(result.decision).toMatchObject({
      kind: 'no-action',
      reason: expect.stringContaining('scale-down blocked by scaleDown.budget.maxDrainsPerHour: 2 of 2 drains started in the last hour (until 10:10:00Z)'),
      budget: { name: 'scaleDown.budget.maxDrainsPerHour', until: '2025-03-10T10:10:00.000Z' },
    });
  });

  it('allows one more when fewer started in the last hour, and keeps only the last hour in the pool record', () => {
    const recent = pool({ lowSince: minutesAgo(30), scaleDownsAt: [minutesAgo(90), minutesAgo(20)] });
    const result = decidePool(evaluation({ config: cfg, nodes: listed(10, 10), pool: recent }));
    expect(result.decision.kind).toBe('scale-down');
    expect(result.poolPatch.scaleDownsAt).toEqual([minutesAgo(20), NOW.toISOString()]);
  });
});

describe('scale-down windows', () => {
  const windows = [{ cron: '0 22 * * *', for: '8h' }];

  it('blocks outside every window, saying when the next opens', () => {
    const cfg = config({ scaleDown: { budget: { windows } } });
    const result = decidePool(evaluation({ config: cfg, nodes: listed(10, 10), pool: lowFor }));
    expect(result.decision).toMatchObject({
      kind: 'no-action',
      reason: expect.stringContaining('scale-down blocked by scaleDown.budget.windows: outside every scale-down window ("0 22 * * *") (until 22:00:00Z)'),
      budget: { name: 'scaleDown.budget.windows', until: '2025-03-10T22:00:00.000Z' },
    });
  });

  it('scales down inside a window; a window opened the evening before holds past midnight', () => {
    const cfg = config({ scaleDown: { budget: { windows: [...windows, { cron: '0 8 * * 1-5', for: '4h' }] } } });
    const result = decidePool(evaluation({ config: cfg, nodes: listed(10, 10), pool: lowFor }));
    expect(result.decision.kind).toBe('scale-down');
    const night = new Date('2025-03-11T03:00:00.000Z');
    expect(windowCheck([{ cron: '0 22 * * *', for: 8 * 3_600_000 }], night)).toEqual({
      name: 'scaleDown.budget.windows',
      ok: true,
      detail: 'inside window "0 22 * * *" until 2025-03-11T06:00:00.000Z',
    });
  });

  it('a pool with its own windows overrides the global ones', () => {
    const cfg = config({ scaleDown: { budget: { windows } } }, { budget: { windows: [] } });
    expect(decidePool(evaluation({ config: cfg, nodes: listed(10, 10), pool: lowFor })).decision.kind).toBe('scale-down');
  });

  it('nextCronMatch finds the next start, skipping days that cannot match', () => {
    expect(new Date(nextCronMatch('30 7 * * 1-5', Date.parse('2025-03-08T12:00:00Z'))!).toISOString()).toBe('2025-03-10T07:30:00.000Z');
    expect(nextCronMatch('0 0 30 2 *', NOW.getTime())).toBeUndefined();
  });
});

describe('do-not-move', () => {
  it('a node holding a gear of a do-not-move application is not a candidate; the next one is', () => {
    const cfg = config({ scaleDown: { budget: { doNotMoveApps: ['app-1-3'] } } });
    const result = decidePool(evaluation({ config: cfg, nodes: listed(10, 10), pool: lowFor }));
    expect(result.decision).toMatchObject({
      kind: 'scale-down',
      nodeId: 'n-02',
      rejected: [{ nodeId: 'n-01', reason: 'gear g-1-3 belongs to app-1-3 (scaleDown.budget.doNotMoveApps)' }],
    });
  });

  it('a gear flagged do-not-move by its node keeps its node', () => {
    const nodes = listed(10, 10);
    nodes[0]!.stats!.gears![5] = { ...nodes[0]!.stats!.gears![5]!, doNotMove: true };
    const result = decidePool(evaluation({ nodes, pool: lowFor }));
    expect(result.decision).toMatchObject({ kind: 'scale-down', nodeId: 'n-02', rejected: [{ nodeId: 'n-01', reason: 'gear g-1-5 (app-1-5) is marked do-not-move' }] });
  });

  it('says so when every node holds such a gear', () => {
    const cfg = config({ scaleDown: { budget: { doNotMoveApps: ['db'] } } });
    const result = decidePool(evaluation({ config: cfg, nodes: listed(3, 10, () => 'db'), pool: lowFor }));
    expect(result.decision).toMatchObject({ kind: 'no-action', reason: expect.stringContaining('no node can be drained (n-01: gear g-1-0 belongs to db (scaleDown.budget.doNotMoveApps); n-02') });
  });
});

describe('maxMovesPerGear', () => {
  const nodes = listed(10, 10);

  it('refuses a node holding a gear moved as often as allowed in the last 7 days, saying until when', () => {
    const history = new Map([['g-1-4', [new Date(NOW.getTime() - 6 * DAY).toISOString(), minutesAgo(60)]]]);
    const result = decidePool(evaluation({ nodes, pool: lowFor, moveHistory: history }));
    expect(result.decision).toMatchObject({
      kind: 'scale-down',
      nodeId: 'n-02',
      rejected: [{ nodeId: 'n-01', reason: 'gear g-1-4 (app-1-4) moved 2 times in 7 d (maxMovesPerGear=2) until 2025-03-11T10:00:00.000Z' }],
    });
  });

  it('ignores moves older than 7 days', () => {
    const history = new Map([['g-1-4', [new Date(NOW.getTime() - 8 * DAY).toISOString(), minutesAgo(60)]]]);
    expect(decidePool(evaluation({ nodes, pool: lowFor, moveHistory: history })).decision).toMatchObject({ kind: 'scale-down', nodeId: 'n-01' });
  });

  it('on the last read round, refuses a candidate whose gears were not read', () => {
    const refusal = candidateRefusal(poolBudget(config(), undefined), nodes[0]!, new Map(), NOW, true);
    expect(refusal).toBe('move history of 10 of its gears not read in this evaluation (maxMovesPerGear)');
    expect(candidateRefusal(poolBudget(config(), undefined), nodes[0]!, new Map(), NOW, false)).toBeUndefined();
  });

  it('on the last read round, refuses a candidate whose gears were never listed (stats with counts only)', () => {
    const counted = node('n-09', { gears: 12 });
    expect(counted.stats!.gears).toBeUndefined();
    expect(candidateRefusal(poolBudget(config(), undefined), counted, new Map(), NOW, true)).toBe('its 12 gears not listed in this evaluation (maxMovesPerGear, do-not-move)');
    expect(candidateRefusal(poolBudget(config(), undefined), counted, new Map(), NOW, false)).toBeUndefined();
    // An empty node has nothing to check; without a move history at all (no reader), the gear mover is left to check.
    expect(candidateRefusal(poolBudget(config(), undefined), node('n-10', { gears: 0 }), new Map(), NOW, true)).toBeUndefined();
    expect(candidateRefusal(poolBudget(config(), undefined), counted, undefined, NOW, true)).toBeUndefined();
  });
});

describe('explain names the budget that blocks and when it frees up', () => {
  it('lists every budget check, failing ones with their time', () => {
    const cfg = config({ scaleDown: { budget: { maxDrainsPerHour: 1, windows: [{ cron: '0 22 * * *', for: '8h' }] } } });
    const nodes = [...listed(9, 10), node('n-10', { state: 'draining', gears: 10 })];
    const drains = [drain('n-10', [move('n-01')], { startedAt: minutesAgo(10) })];
    const explanation = explainPool(evaluation({ config: cfg, nodes, drains, pool: pool({ lowSince: minutesAgo(30), scaleDownsAt: [minutesAgo(15)] }) }));
    const budget = explanation.scaleDown.filter((check) => check.name.startsWith('scaleDown.budget.'));
    expect(budget).toEqual([
      expect.objectContaining({ name: 'scaleDown.budget.maxDraining', ok: false, until: '2025-03-10T10:20:00.000Z' }),
      expect.objectContaining({ name: 'scaleDown.budget.maxDrainsPerHour', ok: false, until: '2025-03-10T10:45:00.000Z' }),
      expect.objectContaining({ name: 'scaleDown.budget.windows', ok: false, until: '2025-03-10T22:00:00.000Z' }),
    ]);
  });

  it('the checks pass when the budget allows', () => {
    const checks = scaleDownBudgetChecks({ config: config(), poolConfig: undefined, now: NOW, nodes: listed(10, 10), drains: [], pool: pool() });
    expect(checks).toEqual([{ name: 'scaleDown.budget.maxDraining', ok: true, detail: '0 of 1 drains in progress (scaleDown.budget.maxDraining=10% of 10 nodes = 1)' }]);
  });
});

describe('scale-up sized in one decision for big pools', () => {
  it('maxNodesPerDecision is 10 by default; a count or a percentage of the pool when set', () => {
    expect(maxNodesPerDecision(undefined, 2000)).toBe(10);
    expect(maxNodesPerDecision({ nodes: 3 }, 2000)).toBe(3);
    expect(maxNodesPerDecision({ percent: 10 }, 2000)).toBe(200);
    expect(maxNodesPerDecision({ percent: 10 }, 5)).toBe(1);
    expect(parse({}).scaleUp.maxNodesPerDecision).toBeUndefined();
    expect(parseConfig({ scaleUp: { maxNodesPerDecision: '5%' }, pools: [{ district: 'd1', profile: 'small', max: 5 }] } as ConfigInput).scaleUp.maxNodesPerDecision).toEqual({ percent: 5 });
  });

  it('a pool of 1,000 nodes at its threshold with maxNodesPerDecision "10%" adds 100 nodes in one decision', () => {
    const full = Array.from({ length: 1000 }, (_, i) => node(`n-${i}`, { gears: 90 }));
    const cfg = config({ limits: { maxNodesTotal: 5000 }, scaleUp: { maxNodesPerDecision: '10%' } }, { max: 3000 });
    const result = decidePool(evaluation({ config: cfg, nodes: full, pool: pool({ highSince: minutesAgo(5) }) }));
    // 90 000 gears to 0.70 of 100 slots: 1,286 nodes, 286 more; 10 % of 1,000 = 100 per decision.
    expect(result.decision).toMatchObject({ kind: 'scale-up', count: 100, wanted: 286, clampedBy: [{ limit: 'maxNodesPerDecision', value: 100 }] });
  });
});

describe('node-stats: a gear\u2019s doNotMove flag', () => {
  const report = (gear: Record<string, unknown>) =>
    JSON.stringify({ type: 'node-stats', v: 1, nodeId: 'n-1.example.com', district: 'd1', profile: 'small', activeGears: 1, maxActiveGears: 10, gears: [gear], reportedAt: NOW.toISOString() });

  it('is kept when true or false, and refused naming the field when it is anything else', () => {
    const ok = parseMessage(report({ uuid: 'g1', app: 'db', size: 'small', doNotMove: true }), { now: NOW });
    expect(ok.ok && ok.message.type === 'node-stats' && ok.message.gears).toEqual([{ uuid: 'g1', app: 'db', size: 'small', doNotMove: true }]);
    const bad = parseMessage(report({ uuid: 'g1', app: 'db', size: 'small', doNotMove: 'yes' }), { now: NOW });
    expect(bad.ok).toBe(false);
    expect(JSON.stringify(bad)).toContain('gears.0.doNotMove');
  });
});
