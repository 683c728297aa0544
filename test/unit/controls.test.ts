import { describe, expect, it } from 'vitest';
import {
  effectiveConfig,
  gateDecision,
  NO_CONTROLS,
  pauseFor,
  isSent,
  nodesAsDecided,
  pendingDrainStep,
  sentDrainStep,
  summarizeShadow,
  type Controls,
  type PauseRecord,
  type PendingDrain,
} from '../../lib/domain/controls.js';
import { manualDrainFit } from '../../lib/domain/manual-drain.js';
import { cronMatches, parseCron, scheduleActiveAt } from '../../lib/domain/schedule.js';
import { config, node, NOW as BUILT_AT, poolConfigOf, POOL } from '../support/builders.js';

const NOW = new Date('2026-11-23T10:00:00.000Z'); // a Monday
const pause = (fields: Partial<PauseRecord>): PauseRecord => ({ pool: POOL, actions: 'all', reason: 'incident', by: 'local user alice', at: '2026-11-23T09:00:00.000Z', ...fields });
const controls = (fields: Partial<Controls>): Controls => ({ ...NO_CONTROLS, ...fields });

describe('pauseFor', () => {
  it("applies the pool's own pause, then the stage's, for the action paused, until its end", () => {
    expect(pauseFor([pause({ actions: 'scale-down' })], POOL, 'scale-down', NOW)?.actions).toBe('scale-down');
    expect(pauseFor([pause({ actions: 'scale-down' })], POOL, 'scale-up', NOW)).toBeUndefined();
    expect(pauseFor([pause({ pool: 'd1/large' })], POOL, 'scale-up', NOW)).toBeUndefined();
    expect(pauseFor([pause({ pool: '*', reason: 'stage' })], POOL, 'scale-up', NOW)?.reason).toBe('stage');
    const both = [pause({ pool: '*', reason: 'stage' }), pause({ reason: 'own' })];
    expect(pauseFor(both, POOL, 'scale-up', NOW)?.reason).toBe('own');
    expect(pauseFor([pause({ until: '2026-11-23T10:00:00.000Z' })], POOL, 'scale-up', NOW)).toBeUndefined();
    expect(pauseFor([pause({ until: '2026-11-23T10:00:00.001Z' })], POOL, 'scale-up', NOW)).toBeDefined();
  });
});

describe('gateDecision', () => {
  const down = { kind: 'scale-down' as const, nodeId: 'n-4', reason: 'pool low', rejected: [] };
  const up = { kind: 'scale-up' as const, count: 2, reason: 'pool full', wanted: 2, clampedBy: [], forecastNodes: 0 };

  it('acts unless paused or in shadow mode; a pause wins over shadow; no-action always passes', () => {
    expect(gateDecision(down, POOL, 'active', [], NOW)).toEqual({ act: true });
    expect(gateDecision({ kind: 'no-action', reason: 'x' }, POOL, 'shadow', [pause({})], NOW)).toEqual({ act: true });
    const paused = gateDecision(down, POOL, 'shadow', [pause({ actions: 'scale-down' })], NOW);
    expect(paused).toMatchObject({ act: false, paused: { actions: 'scale-down' } });
    expect(paused.act === false && paused.reason).toBe('pool low; not carried out: scale-down paused by local user alice since 2026-11-23T09:00:00.000Z until resumed: incident');
    expect(gateDecision(up, POOL, 'shadow', [], NOW)).toEqual({ act: false, shadow: true, reason: 'shadow mode: would add 2 nodes; pool full' });
    expect(gateDecision(down, POOL, 'shadow', [], NOW, 12)).toEqual({ act: false, shadow: true, reason: 'shadow mode: would drain n-4 (12 gears, 12 moves, saving 1 node); pool low' });
  });
});

describe('effectiveConfig', () => {
  const cfg = config({ scaleUp: { threshold: 0.8, target: 0.7 }, scaleDown: { utilizationThreshold: 0.5 } }, { min: 1, max: 10 });
  const poolCfg = poolConfigOf(cfg);
  const override = (values: Record<string, unknown>) => controls({ overrides: [{ pool: POOL, values: values as never, version: 1, updatedAt: NOW.toISOString(), updatedBy: 'x', reason: 'y' }] });

  it('applies the pool overrides, thresholds for that pool only, and ignores values of the wrong type', () => {
    const e = effectiveConfig(cfg, poolCfg, override({ min: 3, 'scaleUp.threshold': 0.9, mode: 'shadow', protectedNodes: ['n-1'], max: 'lots' }), POOL, NOW);
    expect(e.poolConfig).toMatchObject({ min: 3, max: 10, protectedNodes: ['n-1'] });
    expect(e.config.scaleUp.threshold).toBe(0.9);
    expect(cfg.scaleUp.threshold).toBe(0.8);
    expect(e.mode).toBe('shadow');
    expect(e.overridden).toEqual({ min: 3, 'scaleUp.threshold': 0.9, mode: 'shadow', protectedNodes: ['n-1'] });
    expect(effectiveConfig(cfg, poolCfg, override({ min: 3 }), 'd1/other', NOW).poolConfig.min).toBe(1);
  });

  it('takes the mode from the pool, else the file', () => {
    expect(effectiveConfig(cfg, poolCfg, NO_CONTROLS, POOL, NOW).mode).toBe('active');
    const shadowStage = config({ mode: 'shadow' });
    expect(effectiveConfig(shadowStage, poolConfigOf(shadowStage), NO_CONTROLS, POOL, NOW).mode).toBe('shadow');
  });

  it('raises min while a schedule holds, never above max, and says which schedule until when', () => {
    const scheduled = config({}, { min: 1, max: 6, schedules: [{ cron: '30 7 * * 1-5', min: 4, for: '11h' }, { cron: '0 9 * * *', min: 9, for: '2h' }] });
    const e = effectiveConfig(scheduled, poolConfigOf(scheduled), NO_CONTROLS, POOL, NOW);
    expect(e.poolConfig.min).toBe(6);
    expect(e.schedule).toEqual({ min: 6, cron: '0 9 * * *', until: '2026-11-23T11:00:00.000Z' });
    const evening = new Date('2026-11-23T19:00:00.000Z');
    expect(effectiveConfig(scheduled, poolConfigOf(scheduled), NO_CONTROLS, POOL, evening).poolConfig.min).toBe(1);
  });
});

describe('schedules', () => {
  it('parses five UTC fields with lists, ranges and steps, and names what is wrong', () => {
    const cron = parseCron('*/15 8-17 * * 1-5');
    expect(typeof cron).toBe('object');
    expect(cronMatches(cron as never, new Date('2026-11-23T08:45:00Z'))).toBe(true);
    expect(cronMatches(cron as never, new Date('2026-11-22T08:45:00Z'))).toBe(false); // Sunday
    expect(cronMatches(cron as never, new Date('2026-11-23T08:50:00Z'))).toBe(false);
    expect(parseCron('0 8 * *')).toBe('expected 5 fields (minute hour day-of-month month day-of-week), got 4');
    expect(parseCron('0 25 * * *')).toBe('hour "25": out of range 0-23');
    expect(parseCron('0 8 * * mon')).toMatch(/^day of week "mon": expected/);
    expect(cronMatches(parseCron('0 8 * * 7') as never, new Date('2026-11-22T08:00:00Z'))).toBe(true);
  });

  it('holds for its duration from each start, the latest start counting', () => {
    const peak = { cron: '30 7 * * 1-5', min: 4, for: 11 * 3_600_000 };
    expect(scheduleActiveAt(peak, new Date('2026-11-23T07:29:00Z'))).toBeUndefined();
    expect(scheduleActiveAt(peak, new Date('2026-11-23T07:30:00Z'))).toBe('2026-11-23T18:30:00.000Z');
    expect(scheduleActiveAt(peak, new Date('2026-11-23T18:29:59Z'))).toBe('2026-11-23T18:30:00.000Z');
    expect(scheduleActiveAt(peak, new Date('2026-11-23T18:30:00Z'))).toBeUndefined();
    expect(scheduleActiveAt(peak, new Date('2026-11-22T10:00:00Z'))).toBeUndefined(); // Sunday
    const weekend = { cron: '0 0 * * 6', min: 2, for: 48 * 3_600_000 };
    expect(scheduleActiveAt(weekend, new Date('2026-11-22T23:00:00Z'))).toBe('2026-11-23T00:00:00.000Z');
  });

  it('is checked by the configuration schema', () => {
    expect(() => config({}, { schedules: [{ cron: '0 8 * *', min: 2, for: '1h' }] })).toThrow(/pools\.0\.schedules\.0\.cron: invalid cron .*expected 5 fields/);
    expect(() => config({}, { schedules: [{ cron: '0 8 * * *', min: 2, for: '8d' }] })).toThrow(/pools\.0\.schedules\.0\.for: must be at most 7d/);
  });
});

describe('summarizeShadow', () => {
  const entry = (at: string, shadow: Record<string, unknown>, pool = POOL) => ({ pool, at, details: { shadow } });

  it('counts what would have been done since a time, a drain saving its node until the next would-add', () => {
    const since = new Date('2026-11-23T00:00:00Z');
    const summary = summarizeShadow(
      [
        entry('2026-11-22T23:00:00.000Z', { action: 'scale-up', nodes: 5 }),
        entry('2026-11-23T01:00:00.000Z', { action: 'scale-down', nodeId: 'n-4', gears: 12 }),
        entry('2026-11-23T04:00:00.000Z', { action: 'scale-up', nodes: 2 }),
        entry('2026-11-23T06:00:00.000Z', { action: 'scale-down', nodeId: 'n-3', gears: 8 }),
        entry('2026-11-23T02:00:00.000Z', { action: 'scale-down', nodeId: 'm-1', gears: 1 }, 'd1/medium'),
        { pool: POOL, at: '2026-11-23T05:00:00.000Z', details: {} },
      ],
      since,
      NOW,
    );
    expect(summary.pools).toEqual([
      { pool: 'd1/medium', scaleUps: 0, nodesAdded: 0, drains: 1, nodesRemoved: 1, gearMoves: 1, nodeHoursSaved: 8 },
      { pool: POOL, scaleUps: 1, nodesAdded: 2, drains: 2, nodesRemoved: 2, gearMoves: 20, nodeHoursSaved: 7 },
    ]);
    expect(summary.totals).toEqual({ scaleUps: 1, nodesAdded: 2, drains: 3, nodesRemoved: 3, gearMoves: 21, nodeHoursSaved: 15 });
  });
});

describe('pendingDrainStep', () => {
  const pending: PendingDrain = { nodeId: 'n-1', pool: POOL, replacementDecisionId: 'up:1', reason: 'kernel', by: 'alice', at: '2026-11-23T09:50:00.000Z' };
  const claim = { slots: [{ nodeId: 'n-9' }] };
  const HOUR = 3_600_000;

  it('waits for the claim and the join, starts once every replacement is active, gives up when it cannot come', () => {
    expect(pendingDrainStep(pending, undefined, [], NOW, HOUR).step).toBe('wait');
    expect(pendingDrainStep(pending, undefined, [], NOW, 60_000)).toEqual({ step: 'give-up', reason: 'replacement up:1 was never taken up' });
    expect(pendingDrainStep(pending, claim, [{ nodeId: 'n-9', state: 'provisioning' }], NOW, HOUR).step).toBe('wait');
    expect(pendingDrainStep(pending, claim, [{ nodeId: 'n-9', state: 'active' }], NOW, HOUR)).toEqual({ step: 'start', reason: 'replacement n-9 joined' });
    expect(pendingDrainStep(pending, claim, [{ nodeId: 'n-9', state: 'failed' }], NOW, HOUR)).toEqual({ step: 'give-up', reason: 'replacement node n-9 is failed' });
    expect(pendingDrainStep(pending, { slots: [], reason: 'pool.max=10 reached' }, [], NOW, HOUR)).toEqual({ step: 'give-up', reason: 'replacement up:1 refused: pool.max=10 reached' });
  });
});

describe('sentDrainStep', () => {
  const sent = { nodeId: 'n-1', pool: POOL, replacementDecisionId: 'up:1', reason: 'kernel', by: 'alice', at: '2026-11-23T09:50:00.000Z', sentAt: '2026-11-23T09:55:00.000Z' };
  const FIFTEEN_MINUTES = 900_000;

  const active = { state: 'active' as const };

  it('is done once the gear mover has begun the drain, waits until then, and gives up on a message older than decisionMaxAge', () => {
    expect(sentDrainStep(sent.sentAt, active, false, NOW, FIFTEEN_MINUTES)).toEqual({ step: 'begun' });
    expect(sentDrainStep(sent.sentAt, undefined, false, NOW, FIFTEEN_MINUTES)).toEqual({ step: 'wait' });
    expect(sentDrainStep(sent.sentAt, undefined, false, NOW, 240_000)).toEqual({ step: 'expired', reason: 'its message, sent at 2026-11-23T09:55:00.000Z, was not taken up within decisionMaxAge (4m)' });
    // Begun wins over late: the drain exists, whatever its age.
    expect(sentDrainStep(sent.sentAt, active, false, NOW, 240_000)).toEqual({ step: 'begun' });
  });

  it("keeps a cancelled one while its drain is active, whatever its age (the drain's first step refuses it by the item), and ends it once that drain ended", () => {
    expect(sentDrainStep(sent.sentAt, active, true, NOW, 240_000)).toEqual({ step: 'wait' });
    expect(sentDrainStep(sent.sentAt, { state: 'aborted' }, true, NOW, FIFTEEN_MINUTES)).toEqual({ step: 'begun' });
    expect(sentDrainStep(sent.sentAt, undefined, true, NOW, FIFTEEN_MINUTES)).toEqual({ step: 'wait' });
    expect(sentDrainStep(sent.sentAt, undefined, true, NOW, 240_000)).toMatchObject({ step: 'expired' });
  });
});

describe('nodesAsDecided', () => {
  const waiting: PendingDrain = { nodeId: 'n-1', pool: POOL, replacementDecisionId: 'up:1', reason: 'kernel', by: 'alice', at: '2026-11-23T09:50:00.000Z' };
  const nodes = [node('n-1', { gears: 30 }), node('n-2', { gears: 10 }), node('n-3', { state: 'provisioning' })];

  it('counts an active node whose drain was sent as draining, and nothing else', () => {
    expect(nodesAsDecided(nodes, [waiting], POOL)).toEqual(nodes);
    const sent = { ...waiting, sentAt: '2026-11-23T09:55:00.000Z' };
    expect(nodesAsDecided(nodes, [sent], POOL).map((n) => [n.nodeId, n.state])).toEqual([['n-1', 'draining'], ['n-2', 'active'], ['n-3', 'provisioning']]);
    // Another pool's pending drain, or a node no longer active, is left as it is.
    expect(nodesAsDecided(nodes, [{ ...sent, pool: 'd2/small' }], POOL)).toEqual(nodes);
    expect(nodesAsDecided(nodes, [{ ...sent, nodeId: 'n-3' }], POOL)).toEqual(nodes);
    // A copy: the stored records are not touched.
    expect(nodes[0]!.state).toBe('active');
  });

  it("counts an operator's plain drain (no replacement) as sent from the start: the CLI records it as it sends it", () => {
    const plain: PendingDrain = { nodeId: 'n-2', pool: POOL, decisionId: 'manual:20261123T095000Z:0a1b2c3d', reason: 'kernel', by: 'alice', at: '2026-11-23T09:50:00.000Z' };
    expect(isSent(plain)).toBe(true);
    expect(isSent(waiting)).toBe(false);
    expect(nodesAsDecided(nodes, [plain], POOL).map((n) => n.state)).toEqual(['active', 'draining', 'provisioning']);
  });
});

describe('manualDrainFit', () => {
  const cfg = config();

  it("runs the gear mover's planner: gears fit below the threshold on the other nodes, or the refusal says how many do not", () => {
    const source = node('n-1', { gears: 30 });
    const fits = manualDrainFit({ node: source, nodes: [source, node('n-2', { gears: 40 })], drains: [], config: cfg, now: BUILT_AT });
    expect(fits).toEqual({ fits: true, gears: 30, freeSlots: 40, unplaced: 0, line: '30 gears fit below 80% on 1 other node(s) (40 free slots)' });
    const full = manualDrainFit({ node: source, nodes: [source, node('n-2', { gears: 60 }), node('n-3', { gears: 10, reportedMinutesAgo: 30 })], drains: [], config: cfg, now: BUILT_AT });
    expect(full).toMatchObject({ fits: false, gears: 30, freeSlots: 20, unplaced: 10 });
    expect(full.line).toMatch(/^gears do not fit below 80% on the other nodes \(30 gears, 20 free slots\): 10 could not be placed/);
  });
});
