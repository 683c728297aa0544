import { describe, expect, it } from 'vitest';
import { gateDecision } from '../../lib/domain/controls.js';
import type { PoolEvaluationInput } from '../../lib/domain/decision.js';
import { launchedFromTemplate, templateIdentity } from '../../lib/domain/drift.js';
import { decidePool } from '../../lib/domain/evaluate.js';
import { explainPool } from '../../lib/domain/explain.js';
import type { NodeRecord } from '../../lib/domain/model.js';
import { nodesDueForRenewal, renewalRetryMs } from '../../lib/domain/renewal.js';
import { NOW, POOL, config, drain, evaluation, minutesAgo, move, node, pool } from '../support/builders.js';
import { history, noForecast, quietDay } from '../support/decisions.js';

const IMAGE = 'ami-0bbbbbbbbbbbbbbbb';
const OLD = 'ami-0aaaaaaaaaaaaaaaa';
const settings = (overrides: Parameters<typeof config>[0] = {}, poolFields: Record<string, unknown> = {}) =>
  config({ ...noForecast, ...overrides, scaleDown: { renewDrifted: true, ...overrides.scaleDown } }, { template: { imageId: IMAGE }, max: 10, ...poolFields } as never);
const current = launchedFromTemplate(settings().pools[0]!.template);

/** An active node of 100 slots with `gears`, `disruptive` of them restarting a tenant, launched from `image`. */
function host(id: string, gears: number, image = IMAGE, disruptive = gears): NodeRecord {
  const n = node(id, { gears, launchedFrom: { ...current, image } });
  n.stats = { ...n.stats!, idleGears: gears - disruptive, disruptiveGears: disruptive };
  return n;
}

/** 4 nodes at 0.60: neither high nor low (rule thresholds 0.80 / 0.50), so the pool does nothing. */
const steady = () => [host('n-1', 60), host('n-2', 60, OLD, 10), host('n-3', 60, OLD, 5), host('n-4', 60)];

function decide(fields: Partial<PoolEvaluationInput> & { cfg?: ReturnType<typeof settings>; otherNodes?: NodeRecord[] } = {}) {
  const { cfg, renewing, ...rest } = fields;
  const input = { ...evaluation({ config: cfg ?? settings(), nodes: steady(), ...rest }), ...(renewing === undefined ? {} : { renewing }) };
  return { input, result: decidePool(input) };
}

describe('renewal of drifted nodes (scaleDown.renewDrifted)', () => {
  it('a steady pool of up to 20 nodes renews the drifted node that restarts the fewest tenants: one node first, its drain once it joined', () => {
    const { result } = decide();
    expect(result.decision).toEqual({
      kind: 'scale-up',
      count: 1,
      wanted: 1,
      clampedBy: [],
      forecastNodes: 0,
      renews: ['n-3'],
      reason: `renew n-3 (60 gears, 5 restart a tenant; drifted: image ${OLD} -> ${IMAGE}): a replacement first, its drain once the replacement joined (scaleDown.renewDrifted)`,
    });
    // delayAfterAdd then keeps the replacement, empty, from being the next scale-down.
    expect(result.poolPatch.lastScaleUpAt).toBe(NOW.toISOString());
  });

  it('a bigger pool renews a batch: as many as one decision may drain (half of maxDraining), each with its replacement', () => {
    // 40 nodes at 0.60, maxDraining 10 % = 4: batches of 2; five drifted, those restarting the fewest tenants first.
    const nodes = Array.from({ length: 40 }, (_, i) => host(`n-${String(i + 1).padStart(2, '0')}`, 60, i < 5 ? OLD : IMAGE, 10 + i));
    const { result } = decide({ cfg: settings({}, { max: 50 }), nodes });
    expect(result.decision).toMatchObject({ kind: 'scale-up', count: 2, wanted: 2, renews: ['n-01', 'n-02'] });
    expect(result.decision.reason).toMatch(/^renew 2 drifted nodes, n-01 \(60 gears, 10 restart a tenant; drifted: image .*\), n-02 \(60 gears, 11 restart .*: replacements first, their drains once the replacements joined \(scaleDown.renewDrifted\)$/);
    expect(result.poolPatch.lastRenewals?.map((ask) => ask.nodeId)).toEqual(['n-01', 'n-02']);
    // Room for one more node only: a batch of one.
    expect(decide({ cfg: settings({}, { max: 41 }), nodes }).result.decision).toMatchObject({ kind: 'scale-up', count: 1, renews: ['n-01'] });
  });

  it('is off by default, and does nothing where no node is drifted', () => {
    const off = decidePool(evaluation({ config: config(noForecast, { template: { imageId: IMAGE } } as never), nodes: steady() }));
    expect(off.decision.kind).toBe('no-action');
    expect(off.decision.reason).not.toContain('renew');
    const current = decidePool(evaluation({ config: settings(), nodes: [host('n-1', 60), host('n-2', 60)] }));
    expect(current.decision.kind).toBe('no-action');
    expect(current.decision.reason).not.toContain('renew');
  });

  it('one batch at a time a pool: waits while a node provisions, drains or waits for its replacement', () => {
    const held = (fields: Partial<PoolEvaluationInput>) => {
      const { result } = decide(fields);
      expect(result.decision.kind).toBe('no-action');
      return result.decision.reason;
    };
    const waiting = 'renewal of 2 drifted node(s) waits: one batch at a time: a node provisioning, draining or waiting for its replacement';
    expect(held({ renewing: 1 })).toContain(waiting);
    expect(held({ nodes: [...steady(), node('n-5', { state: 'provisioning' })] })).toContain('renewal of 2 drifted node(s) waits');
    expect(held({ nodes: [...steady(), node('n-5', { state: 'draining', gears: 10 })], drains: [drain('n-5', [move('n-1')])] })).toContain(waiting);
  });

  it('waits out delayAfterAdd, a failed action, exhausted capacity and an action in flight', () => {
    const reason = (record: Parameters<typeof pool>[0]) => decide({ pool: pool(record) }).result.decision.reason;
    expect(reason({ lastScaleUpAt: minutesAgo(2) })).toMatch(/renewal of 2 drifted node\(s\) waits: scaleDown.delayAfterAdd until /);
    expect(reason({ lastDrainFailureAt: minutesAgo(0.1) })).toMatch(/waits: scaleDown.delayAfterFailure until /);
    expect(reason({ exhaustedUntil: new Date(NOW.getTime() + 60_000).toISOString() })).toContain('waits: capacity exhausted until');
    const lease = { holder: 'up:1', kind: 'scale-up' as const, acquiredAt: minutesAgo(1), expiresAt: new Date(NOW.getTime() + 60_000).toISOString() };
    expect(decide({ pool: pool({ lease }) }).result.decision.kind).toBe('no-action');
  });

  it('leaves a pool low enough to shrink to its scale-downs, which drain drifted nodes first', () => {
    const low = [host('n-1', 20), host('n-2', 20, OLD), host('n-3', 20), host('n-4', 20)];
    // Without attrition: an evaluation that closes a node renews nothing, and a low pool's first ones close its next drains.
    const noAttrition = settings({ scaleDown: { payoff: { attrition: false } } });
    const { result } = decide({ cfg: noAttrition, nodes: low, pool: pool({ lowSince: minutesAgo(1) }) });
    expect(result.decision.kind).toBe('no-action');
    expect(result.decision.reason).toContain('renewal of 1 drifted node(s) waits: the pool is low and its scale-down drains drifted nodes first, once the 5m unneeded time is over');
    const closing = decide({ nodes: low, pool: pool({ lowSince: minutesAgo(1) }) }).result;
    expect(closing.attrition?.close.length).toBeGreaterThan(0);
    expect(closing.decision.reason).not.toContain('renewal');
    // At min it cannot shrink: renewal is its only way to a new image.
    const atMin = decide({ cfg: settings({}, { min: 4 }), nodes: low, pool: pool({ lowSince: minutesAgo(1) }) });
    expect(atMin.result.decision).toMatchObject({ kind: 'scale-up', renews: ['n-2'] });
    // Within its unneeded time too: no drain will follow it.
    const noAttritionAtMin = settings({ scaleDown: { payoff: { attrition: false } } }, { min: 4 });
    expect(decide({ cfg: noAttritionAtMin, nodes: low, pool: pool({ lowSince: minutesAgo(1) }) }).result.decision).toMatchObject({ kind: 'scale-up', renews: ['n-2'] });
  });

  it('renews in a low pool whose scale-down has no drain to make: a pool kept for tomorrow would keep its due nodes all night', () => {
    // 124 gears on 400 slots, low for 7 minutes; yesterday the pool held 300 gears from 11:00, so every node is needed
    // again within the horizon and the scale-down drains none. Waiting for it kept nodes days past expireAfter.
    const low = [host('n-1', 40), host('n-2', 40), host('n-3', 32, OLD), host('n-4', 12)];
    const busyLater = history(-25 * 60, -1, (m) => (m >= -23 * 60 && m < -20 * 60 ? 300 : 0));
    const { input, result } = decide({ nodes: low, pool: pool({ demandHistory: busyLater, lowSince: minutesAgo(7) }) });
    expect(result.decision).toMatchObject({ kind: 'scale-up', count: 1, renews: ['n-3'] });
    expect(explainPool(input).scaleDown.find((check) => check.name === 'renewal')).toMatchObject({ ok: true, detail: expect.stringMatching(/^renew n-3 \(32 gears/) });
    // The same pool with a drain to make once its unneeded time is over renews nothing meanwhile (here it closes the
    // drain's node early; without attrition the reason says it waits, above).
    const soon = decide({ nodes: low, pool: pool({ demandHistory: quietDay, lowSince: minutesAgo(2) }) }).result;
    expect(soon.decision).toMatchObject({ kind: 'no-action', scaleDownWaits: 'the 5m unneeded time' });
    const noAttrition = settings({ scaleDown: { payoff: { attrition: false } } });
    expect(decide({ cfg: noAttrition, nodes: low, pool: pool({ demandHistory: quietDay, lowSince: minutesAgo(2) }) }).result.decision.reason).toContain(
      'renewal of 1 drifted node(s) waits: the pool is low and its scale-down drains drifted nodes first, once the 5m unneeded time is over',
    );
    const drains = decide({ nodes: low, pool: pool({ demandHistory: quietDay, lowSince: minutesAgo(7) }) }).result;
    expect(drains.decision).toMatchObject({ kind: 'scale-down', nodeId: 'n-4' });
  });

  it('counts against maxDrainsPerHour as a scale-down does, and waits for it', () => {
    const limited = settings({ scaleDown: { budget: { maxDrainsPerHour: 1 } } });
    expect(decide({ cfg: limited }).result.poolPatch.scaleDownsAt).toEqual([NOW.toISOString()]);
    expect(decide().result.poolPatch.scaleDownsAt).toBeUndefined();
    const spent = decide({ cfg: limited, pool: pool({ scaleDownsAt: [minutesAgo(20)] }) });
    expect(spent.result.decision.reason).toContain('renewal of 2 drifted node(s) waits: scaleDown.budget.maxDrainsPerHour: 1 of 1 drains started in the last hour (until 2025-03-10T10:40:00.000Z)');
  });

  it('within the disruption budget: its windows, and the gears the budget will not move', () => {
    const closed = decide({ cfg: settings({ scaleDown: { budget: { windows: [{ cron: '0 2 * * *', for: '2h' }] } } }) });
    expect(closed.result.decision.kind).toBe('no-action');
    expect(closed.result.decision.reason).toMatch(/waits: scaleDown.budget.windows: outside every scale-down window \("0 2 \* \* \*"\) \(until .*T02:00:00.000Z\)/);
    const kept = steady().map((n) => (n.nodeId === 'n-3' ? { ...n, protected: true } : n));
    const doNotMove = kept.map((n) => (n.nodeId === 'n-2' ? { ...n, stats: { ...n.stats!, gears: [{ uuid: 'g1', app: 'billing', size: 'small', doNotMove: true }] } } : n));
    const refused = decide({ nodes: doNotMove });
    expect(refused.result.decision.kind).toBe('no-action');
    expect(refused.result.decision.reason).toContain('waits: no drifted node may be drained now (n-2: gear g1 (billing) is marked do-not-move)');
    expect(decide({ nodes: kept }).result.decision).toMatchObject({ kind: 'scale-up', renews: ['n-2'] });
  });

  it('within renewalWindows too, when given (a rollout on Sunday nights while scale-down runs every night); a pool\'s own replace them', () => {
    // NOW is Monday 2025-03-10 10:00 UTC.
    const sundays = { scaleDown: { budget: { renewalWindows: [{ cron: '0 2 * * 0', for: '4h' }] } } };
    const closed = decide({ cfg: settings(sundays) }).result.decision;
    expect(closed.kind).toBe('no-action');
    expect(closed.reason).toContain('renewal of 2 drifted node(s) waits: scaleDown.budget.renewalWindows: outside every renewal window ("0 2 * * 0") (until 2025-03-16T02:00:00.000Z)');
    expect(decide({ cfg: settings(sundays, { budget: { renewalWindows: [{ cron: '0 9 * * 1', for: '2h' }] } }) }).result.decision).toMatchObject({ kind: 'scale-up', renews: ['n-3'] });
    // Scale-down's own windows still hold: a renewal window outside them opens nothing.
    const both = settings({ scaleDown: { budget: { windows: [{ cron: '0 2 * * *', for: '2h' }], renewalWindows: [{ cron: '0 9 * * 1', for: '2h' }] } } });
    expect(decide({ cfg: both }).result.decision.reason).toContain('waits: scaleDown.budget.windows: outside every scale-down window');
  });

  it('past driftGrace from when the pool first saw its template, a gear at its move limit no longer holds a drifted node; before it, the wait says when', () => {
    const HOUR = 60;
    // n-3 launched 10 days ago from the old image, holding g1, moved twice this week (maxMovesPerGear 2).
    const drifted = { ...host('n-3', 60, OLD, 5), createdAt: minutesAgo(240 * HOUR) };
    drifted.stats = { ...drifted.stats!, gears: [{ uuid: 'g1', app: 'shop', size: 'small' as const }] };
    const nodes = [host('n-1', 60), drifted, host('n-4', 60)];
    const moveHistory = new Map([['g1', [minutesAgo(72 * HOUR), minutesAgo(24 * HOUR)]]]);
    const graced = settings({ scaleDown: { driftGrace: '1d' } });
    const identity = templateIdentity(graced.pools[0]!.template);
    const seen = (minutes: number, which = identity) => pool({ templateSeen: { identity: which, since: minutesAgo(minutes) } });
    const run = (cfg: ReturnType<typeof settings>, record = seen(72 * HOUR), list = nodes) => decide({ cfg, nodes: list, pool: record, moveHistory, moveHistoryFinal: true }).result.decision;

    const held = run(settings());
    expect(held.kind).toBe('no-action');
    expect(held.reason).toContain('waits: no drifted node may be drained now (n-3: gear g1 (shop) moved 2 times in 7 d (maxMovesPerGear=2) until ');
    expect(held.reason).not.toContain('driftGrace');
    const renewed = run(graced);
    expect(renewed).toMatchObject({ kind: 'scale-up', renews: ['n-3'] });
    expect(renewed.reason).toContain(`drifted: image ${OLD} -> ${IMAGE}, past scaleDown.driftGrace 1d: gears at their move limit move too`);
    // The template seen 2 hours ago: the grace ends 22 hours from now, and the wait names when.
    const early = run(graced, seen(2 * HOUR));
    expect(early.kind).toBe('no-action');
    expect(early.reason).toContain(`moved 2 times in 7 d (maxMovesPerGear=2) until ${minutesAgo(-4 * 24 * HOUR)}; past scaleDown.driftGrace from ${minutesAgo(-22 * HOUR)}, its gears' move limit no longer holds it`);
    // A node launched from the old image after the template changed has drifted only since its launch.
    const lateLaunch = nodes.map((n) => (n === drifted ? { ...n, createdAt: minutesAgo(3 * HOUR) } : n));
    expect(run(graced, seen(72 * HOUR), lateLaunch).reason).toContain(`past scaleDown.driftGrace from ${minutesAgo(-21 * HOUR)}`);
    // No record of when the pool's template was first seen, or one of another template: no clock to count from, the cap holds.
    for (const record of [pool(), seen(72 * HOUR, 'ami-other|digest|')]) {
      const unknown = run(graced, record);
      expect(unknown.kind).toBe('no-action');
      expect(unknown.reason).not.toContain('driftGrace');
    }
    // expireGrace does not lift it for a node that is not expired, and a do-not-move gear still holds it.
    expect(run(settings({ scaleDown: { expireGrace: '1h' } })).kind).toBe('no-action');
    const doNotMove = nodes.map((n) => (n === drifted ? { ...n, stats: { ...n.stats!, gears: [{ ...n.stats!.gears![0]!, doNotMove: true }] } } : n));
    expect(run(graced, seen(72 * HOUR), doNotMove).reason).toContain('(n-3: gear g1 (shop) is marked do-not-move)');
  });

  it('does not ask again for a node whose renewal was asked for and which is still active: each ask buys a node', () => {
    const { result } = decide();
    expect(result.poolPatch.lastRenewals).toEqual([{ nodeId: 'n-3', at: NOW.toISOString(), asks: 1 }]);
    // Its drain never started (refused, say): after delayAfterAdd the next drifted node is renewed, not n-3 again.
    const earlier = [{ nodeId: 'n-3', at: minutesAgo(15) }];
    expect(decide({ pool: pool({ lastRenewals: earlier, lastScaleUpAt: minutesAgo(15) }) }).result.decision).toMatchObject({ kind: 'scale-up', renews: ['n-2'] });
    const alone = decide({ nodes: steady().filter((n) => n.nodeId !== 'n-2'), pool: pool({ lastRenewals: earlier, lastScaleUpAt: minutesAgo(15) }) });
    expect(alone.result.decision.reason).toContain('waits: no drifted node may be drained now (n-3: its renewal was asked for at 2025-03-10T09:45:00.000Z; asked again from 2025-03-10T10:45:00.000Z)');
    // Once that renewal could have ended (provision time, lease, drainTimeout), n-3 is asked for again.
    const long = [{ nodeId: 'n-3', at: minutesAgo(66) }, { nodeId: 'gone', at: minutesAgo(66) }];
    const again = decide({ nodes: steady().filter((n) => n.nodeId !== 'n-2'), pool: pool({ lastRenewals: long, lastScaleUpAt: minutesAgo(66) }) });
    expect(again.result.decision).toMatchObject({ kind: 'scale-up', renews: ['n-3'] });
    // Its asks counted on; a node no longer in the pool forgotten.
    expect(again.result.poolPatch.lastRenewals).toEqual([{ nodeId: 'n-3', at: NOW.toISOString(), asks: 2 }]);
    // Asked twice already: twice as late (2 h), and at most a day however often.
    const twice = [{ nodeId: 'n-3', at: minutesAgo(66), asks: 2 }];
    expect(decide({ nodes: steady().filter((n) => n.nodeId !== 'n-2'), pool: pool({ lastRenewals: twice, lastScaleUpAt: minutesAgo(66) }) }).result.decision.reason).toContain(
      '(n-3: its renewal was asked for at 2025-03-10T08:54:00.000Z (2 times); asked again from 2025-03-10T10:54:00.000Z)',
    );
    const cfg = settings();
    expect([1, 2, 3, 6, 40].map((asks) => renewalRetryMs(cfg, asks) / 60_000)).toEqual([60, 120, 240, 1440, 1440]);
  });

  it('only with room for the replacement under every limit', () => {
    const full = decide({ cfg: settings({}, { max: 4 }) });
    expect(full.result.decision.kind).toBe('no-action');
    expect(full.result.decision.reason).toContain('waits: no room for a replacement (pool.max=4');
    const total = decide({ cfg: settings({ limits: { maxNodesTotal: 5 } }), otherNodes: [node('other-1', { pool: 'd2/small', gears: 10 })] });
    expect(total.result.decision.reason).toContain('waits: no room for a replacement (maxNodesTotal=5');
  });

  it('a pause of scale-up or of scale-down holds it; explain shows it beside the scale-down conditions', () => {
    const { input, result } = decide();
    const pause = (actions: 'scale-up' | 'scale-down') => [{ pool: POOL, actions, by: 'alice', reason: 'incident', at: minutesAgo(1) }];
    expect(gateDecision(result.decision, POOL, 'active', pause('scale-down'), NOW)).toMatchObject({ act: false });
    expect(gateDecision(result.decision, POOL, 'active', pause('scale-up'), NOW)).toMatchObject({ act: false });
    expect(gateDecision(result.decision, POOL, 'active', [], NOW)).toEqual({ act: true });
    expect(gateDecision(result.decision, POOL, 'shadow', [], NOW)).toMatchObject({ act: false, shadow: true, reason: expect.stringContaining('shadow mode: would add 1 node, then drain n-3 (renewal)') });
    expect(explainPool(input).scaleDown.find((check) => check.name === 'renewal')).toMatchObject({ ok: true, detail: expect.stringContaining('renew n-3') });
  });
});

describe('renewal of expired nodes (scaleDown.expireAfter)', () => {
  const DAY = 1440;
  /** expireAfter 30d, drift renewal off: only age makes a node due. */
  const expiring = (overrides: Parameters<typeof config>[0] = {}, poolFields: Record<string, unknown> = {}) =>
    settings({ ...overrides, scaleDown: { renewDrifted: false, expireAfter: '30d', ...overrides.scaleDown } }, poolFields);
  const aged = (id: string, days: number, disruptive: number, image = IMAGE, origin: NodeRecord['origin'] = 'provisioned') => {
    const n = host(id, 60, image, disruptive);
    return { ...n, origin, createdAt: minutesAgo(days * DAY), stateChangedAt: minutesAgo(days * DAY) };
  };

  it('renews a steady pool\'s node launched more than expireAfter ago, fewest restarts first, and names the setting', () => {
    const nodes = [aged('n-1', 31, 20), aged('n-2', 45, 8), aged('n-3', 29, 1), aged('n-4', 2, 0)];
    const { result } = decide({ cfg: expiring(), nodes });
    expect(result.decision).toMatchObject({ kind: 'scale-up', count: 1, renews: ['n-2'] });
    expect(result.decision.reason).toBe(
      'renew n-2 (60 gears, 8 restart a tenant; expired: launched 45d ago (expireAfter 30d)): a replacement first, its drain once the replacement joined (expireAfter)',
    );
    expect(result.poolPatch.lastRenewals).toEqual([{ nodeId: 'n-2', at: NOW.toISOString(), asks: 1 }]);
  });

  it('expires only nodes nodescaler launched: an adopted node\'s record says when it was found, not launched', () => {
    const nodes = [aged('n-1', 90, 0, IMAGE, 'adopted'), aged('n-2', 3, 0), aged('n-3', 3, 0), aged('n-4', 3, 0)];
    const { result } = decide({ cfg: expiring(), nodes });
    expect(result.decision.kind).toBe('no-action');
    expect(result.decision.reason).not.toContain('renew');
  });

  it('with expiry alone a drifted node is not renewed; with both, one batch names both kinds and both settings', () => {
    const nodes = [aged('n-1', 40, 10), aged('n-2', 1, 5, OLD), aged('n-3', 1, 30), aged('n-4', 1, 30)];
    expect(decide({ cfg: expiring(), nodes }).result.decision).toMatchObject({ kind: 'scale-up', renews: ['n-1'] });
    // 40 nodes at 0.60: batches of two.
    const many = [...nodes, ...Array.from({ length: 36 }, (_, i) => aged(`m-${i + 10}`, 1, 40))];
    const both = decide({ cfg: expiring({ scaleDown: { renewDrifted: true } }, { max: 50 }), nodes: many }).result.decision;
    expect(both).toMatchObject({ kind: 'scale-up', count: 2, renews: ['n-2', 'n-1'] });
    expect(both.reason).toMatch(/^renew 2 drifted or expired nodes, n-2 .*drifted: image .*, n-1 .*expired: launched 40d ago .*\(scaleDown.renewDrifted, expireAfter\)$/);
  });

  it('counts the nodes due for renewal (metric NodesDueForRenewal) only where the pool renews', () => {
    const nodes = [aged('n-1', 40, 10), aged('n-2', 31, 5, OLD), aged('n-3', 1, 10, OLD), aged('n-4', 1, 10)];
    const count = (cfg: ReturnType<typeof settings>) => nodesDueForRenewal({ config: cfg, poolConfig: cfg.pools[0]!, nodes, now: NOW });
    expect(count(expiring())).toBe(2);
    expect(count(expiring({ scaleDown: { renewDrifted: true } }))).toBe(3);
    expect(count(settings())).toBe(2);
    expect(count(settings({ scaleDown: { renewDrifted: false } }))).toBeUndefined();
    expect(count(expiring({}, { expireAfter: 'never' }))).toBeUndefined();
  });

  it('a pool\'s own expireAfter wins: never opts it out, a shorter one renews sooner', () => {
    const nodes = [aged('n-1', 20, 10), aged('n-2', 1, 10), aged('n-3', 1, 10), aged('n-4', 1, 10)];
    expect(decide({ cfg: expiring(), nodes }).result.decision.kind).toBe('no-action');
    expect(decide({ cfg: expiring({}, { expireAfter: '14d' }), nodes }).result.decision).toMatchObject({ kind: 'scale-up', renews: ['n-1'] });
    const old = nodes.map((n) => ({ ...n, createdAt: minutesAgo(90 * DAY) }));
    const optedOut = decide({ cfg: expiring({}, { expireAfter: 'never' }), nodes: old }).result.decision;
    expect(optedOut.kind).toBe('no-action');
    expect(optedOut.reason).not.toContain('renew');
  });

  it('past expireGrace a gear at its move limit no longer holds an expired node; before it, the wait says when; do-not-move still holds it', () => {
    // n-4 expired 10 days ago (launched 40d, expireAfter 30d) and holds g1, moved twice this week (maxMovesPerGear 2).
    const capped = { ...aged('n-4', 40, 10), stats: { ...aged('n-4', 40, 10).stats!, gears: [{ uuid: 'g1', app: 'shop', size: 'small' as const }] } };
    const nodes = [aged('n-1', 1, 10), aged('n-2', 1, 10), aged('n-3', 1, 10), capped];
    const moveHistory = new Map([['g1', [minutesAgo(3 * DAY), minutesAgo(DAY)]]]);
    const held = decide({ cfg: expiring(), nodes, moveHistory, moveHistoryFinal: true }).result.decision;
    expect(held.kind).toBe('no-action');
    expect(held.reason).toContain('waits: no expired node may be drained now (n-4: gear g1 (shop) moved 2 times in 7 d (maxMovesPerGear=2) until ');
    expect(held.reason).not.toContain('expireGrace');
    // A grace of 12 days from the expiry: not over yet, and the wait names when it is.
    const early = decide({ cfg: expiring({ scaleDown: { expireGrace: '12d' } }), nodes, moveHistory, moveHistoryFinal: true }).result.decision;
    expect(early.kind).toBe('no-action');
    expect(early.reason).toContain(`moved 2 times in 7 d (maxMovesPerGear=2) until ${minutesAgo(-4 * DAY)}; past scaleDown.expireGrace from ${minutesAgo(-2 * DAY)}, its gears' move limit no longer holds it`);
    const renewed = decide({ cfg: expiring({ scaleDown: { expireGrace: '1d' } }), nodes, moveHistory, moveHistoryFinal: true }).result.decision;
    expect(renewed).toMatchObject({ kind: 'scale-up', renews: ['n-4'] });
    expect(renewed.reason).toContain('expired: launched 40d ago (expireAfter 30d), past scaleDown.expireGrace 1d: gears at their move limit move too');
    // Its gears' move history unread does not hold it either: the limit is lifted.
    expect(decide({ cfg: expiring({ scaleDown: { expireGrace: '1d' } }), nodes, moveHistory: new Map(), moveHistoryFinal: true }).result.decision).toMatchObject({ renews: ['n-4'] });
    const doNotMove = nodes.map((n) => (n === capped ? { ...n, stats: { ...n.stats!, gears: [{ ...n.stats!.gears![0]!, doNotMove: true }] } } : n));
    const kept = decide({ cfg: expiring({ scaleDown: { expireGrace: '1d' } }), nodes: doNotMove, moveHistory, moveHistoryFinal: true }).result.decision;
    expect(kept.kind).toBe('no-action');
    expect(kept.reason).toContain('(n-4: gear g1 (shop) is marked do-not-move)');
    expect(kept.reason).not.toContain('expireGrace');
  });

  it('waits as a drifted node\'s renewal does, and leaves a low pool to scale-down, which drains the expired node first', () => {
    const nodes = [aged('n-1', 1, 10), aged('n-2', 1, 10), aged('n-3', 1, 10), aged('n-4', 40, 10)];
    const waiting = decide({ cfg: expiring(), nodes, pool: pool({ lastScaleUpAt: minutesAgo(2) }) }).result.decision;
    expect(waiting.reason).toMatch(/renewal of 1 expired node\(s\) waits: scaleDown.delayAfterAdd until /);
    const low = nodes.map((n) => ({ ...n, stats: { ...n.stats!, activeGears: 20, idleGears: 10, disruptiveGears: 10 } }));
    const shrink = decide({ cfg: expiring({ scaleDown: { unneededTime: '0s', payoff: { enabled: false } } }), nodes: low, pool: pool({ lowSince: minutesAgo(30) }) }).result.decision;
    // Level on restarts and gears with n-1 to n-3: being expired puts n-4 first.
    expect(shrink).toMatchObject({ kind: 'scale-down', nodeId: 'n-4' });
    expect(shrink.reason).toContain('expired: launched 40d ago (expireAfter 30d)');
  });
});
