import { describe, expect, it } from 'vitest';
import {
  abortCause,
  lastProgressAt,
  stopsForRoom,
  timeoutCause,
  beginAttempt,
  drainIdFor,
  drainOrder,
  isOrphanedAttempt,
  movesToStart,
  operationId,
  reconcile,
  redrainIdFor,
  replacementCount,
  reservationsExcept,
  retargeted,
  retryDelay,
  settleAttempt,
  urgentDrainIdFor,
} from '../../lib/domain/drain.js';
import type { GearMove } from '../../lib/domain/model.js';
import { operationIdProblem } from '../../lib/messages/fields.js';
import { NOW, config, drain, minutesAgo, move, node, poolConfigOf } from '../support/builders.js';

const policy = { attempts: 3, delayMs: 30_000 };
const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
const planned = (uuid: string, target = 't', fields: Partial<GearMove> = {}): GearMove => ({ ...move(target, 'planned', uuid), ...fields });

describe('drain identifiers', () => {
  it('derives the drainId from the decisionId, so a duplicate decision finds the same drain', () => {
    expect(drainIdFor('down:d1_small:1741600800000')).toBe('drain:down:d1_small:1741600800000');
    expect(drainIdFor('down:d1_small:1741600800000')).toBe(drainIdFor('down:d1_small:1741600800000'));
    expect(urgentDrainIdFor('12345678-1234-1234-1234-123456789012')).toBe('drain:event:12345678-1234-1234-1234-123456789012');
  });

  it('keeps every id valid for the messages (<= 128 allowed characters), hashing long ones apart', () => {
    const long = `down:${'x'.repeat(200)}`;
    const id = drainIdFor(long);
    expect(id.length).toBeLessThanOrEqual(128);
    expect(operationIdProblem(id)).toBeUndefined();
    expect(drainIdFor(`${long}y`)).not.toBe(id);
    expect(operationId('a b/c')).toBe('a_b_c');
    const again = redrainIdFor({ nodeId: `${'n'.repeat(240)}.example.com`, stateChangedAt: NOW.toISOString() });
    expect(operationIdProblem(again)).toBeUndefined();
  });

  it('orders urgent drains first, then the oldest', () => {
    const a = drain('a', [], { startedAt: minutesAgo(10) });
    const b = drain('b', [], { startedAt: minutesAgo(20) });
    const u = drain('u', [], { startedAt: minutesAgo(1), urgentSince: minutesAgo(1) });
    expect([a, b, u].sort(drainOrder).map((d) => d.nodeId)).toEqual(['u', 'b', 'a']);
  });
});

describe('move transitions', () => {
  it('planned -> moving: one more attempt, a start time, no stale handle', () => {
    const next = beginAttempt(planned('g1', 't', { commandId: 'old', nextAttemptAt: NOW.toISOString(), attempts: 1 }), NOW);
    expect(next).toMatchObject({ state: 'moving', attempts: 2, startedAt: NOW.toISOString() });
    expect(next.commandId).toBeUndefined();
    expect(next.nextAttemptAt).toBeUndefined();
  });

  it('moving -> moved on success', () => {
    const next = settleAttempt({ ...planned('g1'), state: 'moving', attempts: 1, commandId: 'c1', lastError: 'x' }, { kind: 'succeeded' }, NOW, policy);
    expect(next).toMatchObject({ state: 'moved', attempts: 1, finishedAt: NOW.toISOString() });
    expect(next.lastError).toBeUndefined();
    expect(next.commandId).toBeUndefined();
  });

  it('moving -> planned with doubling backoff while attempts remain, then failed', () => {
    const first = settleAttempt({ ...planned('g1'), state: 'moving', attempts: 1 }, { kind: 'failed', error: 'boom' }, NOW, policy);
    expect(first).toMatchObject({ state: 'planned', attempts: 1, lastError: 'boom', nextAttemptAt: at(30).toISOString() });
    const second = settleAttempt({ ...first, state: 'moving', attempts: 2 }, { kind: 'failed', error: 'boom' }, NOW, policy);
    expect(second.nextAttemptAt).toBe(at(60).toISOString());
    const third = settleAttempt({ ...second, state: 'moving', attempts: 3 }, { kind: 'failed', error: 'boom' }, NOW, policy);
    expect(third).toMatchObject({ state: 'failed', attempts: 3, finishedAt: NOW.toISOString() });
    expect(retryDelay(10, policy)).toBe(300_000);
  });

  it('a full target sends the gear to be re-planned without spending an attempt', () => {
    const next = settleAttempt({ ...planned('g1'), state: 'moving', attempts: 1 }, { kind: 'target-full', error: 'no room' }, NOW, policy);
    expect(next).toMatchObject({ state: 'planned', attempts: 0, retarget: true });
    const moved = retargeted(next, 'other');
    expect(moved).toMatchObject({ state: 'planned', target: 'other', replans: 1 });
    expect(moved.retarget).toBeUndefined();
  });

  it('starts at most maxConcurrent moves, skipping backoff and moves waiting for a target', () => {
    const ownApp = (uuid: string, fields: Partial<GearMove> = {}) => planned(uuid, 't', { gear: { uuid, app: `app-${uuid}`, size: 'small' }, ...fields });
    const moves = [
      { ...ownApp('m1'), state: 'moving' as const },
      ownApp('p1', { nextAttemptAt: at(10).toISOString() }),
      ownApp('p2', { retarget: true }),
      ownApp('p3'),
      ownApp('p4'),
      ownApp('p5'),
    ];
    expect(movesToStart(moves, NOW, 3).map((m) => m.gear.uuid)).toEqual(['p3', 'p4']);
    expect(movesToStart(moves, at(10), 3).map((m) => m.gear.uuid)).toEqual(['p1', 'p3']);
    expect(movesToStart(moves, NOW, 1)).toEqual([]);
  });

  it("starts one move per application at a time: the broker runs each in the application's lock, and a second would fail waiting on it", () => {
    const gear = (uuid: string, app: string) => ({ uuid, app, size: 'small' });
    const moves = [
      { ...planned('m1', 't', { gear: gear('m1', 'shop') }), state: 'moving' as const },
      planned('s2', 't', { gear: gear('s2', 'shop') }),
      planned('b1', 't', { gear: gear('b1', 'blog') }),
      planned('b2', 't', { gear: gear('b2', 'blog') }),
      planned('w1', 't', { gear: gear('w1', 'wiki') }),
    ];
    expect(movesToStart(moves, NOW, 3).map((m) => m.gear.uuid)).toEqual(['b1', 'w1']);
    // Once the shop's move has landed, its next gear may go.
    expect(movesToStart([{ ...moves[0]!, state: 'moved' as const }, ...moves.slice(1)], NOW, 3).map((m) => m.gear.uuid)).toEqual(['s2', 'b1', 'w1']);
  });

  it("a move the application's lock kept back is tried again after the retry delay, without spending an attempt", () => {
    const next = settleAttempt({ ...planned('g1'), state: 'moving', attempts: 3 }, { kind: 'busy', error: 'Unable to perform action on app object. Another operation is already running.' }, NOW, policy);
    expect(next).toMatchObject({ state: 'planned', attempts: 2, nextAttemptAt: at(30).toISOString(), lastError: expect.stringContaining('Another operation') });
    expect(next.retarget).toBeUndefined();
  });

  it('treats a moving attempt without a handle as orphaned only after the grace time', () => {
    const orphan = { ...planned('g1'), state: 'moving' as const, attempts: 1, startedAt: NOW.toISOString() };
    expect(isOrphanedAttempt(orphan, at(30), 60_000)).toBe(false);
    expect(isOrphanedAttempt(orphan, at(60), 60_000)).toBe(true);
    expect(isOrphanedAttempt({ ...orphan, commandId: 'c' }, at(600), 60_000)).toBe(false);
  });
});

describe('reconcile with the platform', () => {
  const gear = (uuid: string) => ({ uuid, app: 'app', size: 'small' });

  it('plans gears without a move, drops planned moves whose gear left, re-plans a moved gear still listed', () => {
    const moves = [planned('gone'), { ...planned('done'), state: 'moved' as const }, { ...planned('back'), state: 'moved' as const }, { ...planned('fly'), state: 'moving' as const }];
    const rec = reconcile(moves, [gear('back'), gear('fly'), gear('new')]);
    expect(rec.dropped.map((m) => m.gear.uuid)).toEqual(['gone']);
    expect(rec.returned.map((m) => m.gear.uuid)).toEqual(['back']);
    expect(rec.toPlan.map((g) => g.uuid).sort()).toEqual(['back', 'new']);
    expect(rec.moves.map((m) => [m.gear.uuid, m.state])).toEqual([
      ['done', 'moved'],
      ['back', 'planned'],
      ['fly', 'moving'],
    ]);
  });

  it('reserves slots for every pending move except the ones being re-planned', () => {
    const mine = drain('src', [move('a', 'planned', 'g1'), move('a', 'moving', 'g2'), move('b', 'moved', 'g3')]);
    const other = drain('x', [move('a', 'planned', 'h1')]);
    const { reserved, incomingApps } = reservationsExcept([mine, other], mine.drainId, new Set(['g1']));
    expect(reserved).toEqual(new Map([['a', 2]]));
    expect(incomingApps.get('a')).toEqual(new Map([['app', 2]]));
  });

  it('also reserves the slot of a gear that landed after its target last reported, and counts its application there', () => {
    const nodes = [node('a', { reportedMinutesAgo: 2 }), node('b', { reportedMinutesAgo: 0 })];
    const landedOnA = { ...move('a', 'moved', 'g3'), finishedAt: minutesAgo(1) };
    const landedOnB = { ...move('b', 'moved', 'g4'), finishedAt: minutesAgo(1) };
    const mine = drain('src', [move('a', 'planned', 'g1'), landedOnA, landedOnB]);
    const { reserved, incomingApps } = reservationsExcept([mine], mine.drainId, new Set(['g1']), nodes);
    expect(reserved).toEqual(new Map([['a', 1]]));
    expect(incomingApps.get('a')).toEqual(new Map([['app', 1]]));
  });
});

describe('when a drain stops', () => {
  it('stops a normal drain on a gear that failed for good, and any drain on the timeout', () => {
    const failed = drain('src', [{ ...planned('g1', 'a'), state: 'failed', attempts: 3, lastError: 'boom' }], { startedAt: minutesAgo(1) });
    expect(abortCause(failed, NOW, 30 * 60_000)).toBe('gear g1 (app) could not be moved to a after 3 attempt(s): boom');
    expect(abortCause({ ...failed, urgentSince: minutesAgo(1) }, NOW, 30 * 60_000)).toBeUndefined();
    const slow = drain('src', [{ ...planned('g1'), state: 'moved' }, planned('g2')], { startedAt: minutesAgo(30) });
    expect(abortCause(slow, NOW, 30 * 60_000)).toBe('drain timed out: no gear moved for 30m (1 of 2 gear(s) moved)');
    expect(abortCause(slow, NOW, 31 * 60_000)).toBeUndefined();
  });

  it('tells a gear the pool had no room for (its targets kept filling) from a move that failed, and says which', () => {
    const full = drain('src', [{ ...planned('g1', 'c'), state: 'failed', replans: 5, noRoom: true, lastError: 'node c has no room for gear g1' }], { startedAt: minutesAgo(1) });
    expect(abortCause(full, NOW, 30 * 60_000)).toBe('no room for gear g1 (app): 5 target(s) in a row filled or left before it could land (last c: node c has no room for gear g1)');
    expect(stopsForRoom(full)).toBe(true);
    const broken = drain('src', [{ ...planned('g1', 'a'), state: 'failed', attempts: 3, lastError: 'boom' }], { startedAt: minutesAgo(1) });
    expect(stopsForRoom(broken)).toBe(false);
    // The failed move abortCause names decides: the first one.
    expect(stopsForRoom({ ...full, moves: [...broken.moves, ...full.moves] })).toBe(false);
    // An urgent drain is not stopped by a failed gear, so not for room either.
    expect(stopsForRoom({ ...full, urgentSince: minutesAgo(1) })).toBe(false);
    const timedOut = drain('src', [planned('g2')], { startedAt: minutesAgo(31) });
    expect(stopsForRoom(timedOut)).toBe(false);
  });

  it('times a drain out when it stops moving gears, not while it keeps moving them', () => {
    // Started 45 minutes ago, the node closed at once, a gear moved 10 minutes ago: progress, so no timeout at 30m.
    const moving = drain('src', [{ ...planned('g1'), state: 'moved', finishedAt: minutesAgo(10) }, planned('g2')], { startedAt: minutesAgo(45), closedAt: minutesAgo(44) });
    expect(timeoutCause(moving, NOW, 30 * 60_000)).toBeUndefined();
    expect(lastProgressAt(moving)).toBe(Date.parse(minutesAgo(10)));
    // No gear moved since the node closed 31 minutes ago: stalled.
    const stalled = { ...moving, moves: [{ ...planned('g1'), state: 'moved' as const, finishedAt: minutesAgo(40) }, planned('g2')], closedAt: minutesAgo(31) };
    expect(timeoutCause(stalled, NOW, 30 * 60_000)).toBe('drain timed out: no gear moved for 30m (1 of 2 gear(s) moved)');
    // A failed move is no progress.
    const failing = { ...stalled, moves: [{ ...planned('g1'), state: 'failed' as const, finishedAt: minutesAgo(1) }] };
    expect(timeoutCause(failing, NOW, 30 * 60_000)).toMatch(/^drain timed out: no gear moved for 30m/);
  });
});

describe('replacement of an interrupted node', () => {
  const limits = (fields: { poolMax?: number; maxNodesTotal?: number; maxCores?: number; maxMemoryGiB?: number } = {}) => {
    const cfg = config(
      { limits: { maxNodesTotal: fields.maxNodesTotal ?? 100, maxCores: fields.maxCores, maxMemoryGiB: fields.maxMemoryGiB } },
      { max: fields.poolMax ?? 10, template: { instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }] } },
    );
    return { config: cfg, poolConfig: poolConfigOf(cfg) };
  };
  const nodes = [node('spot', { gears: 90, state: 'draining' }), node('a', { gears: 80 }), node('b', { gears: 80 })];
  const base = { nodeId: 'spot', gearsPerNode: 100, nodes, allNodes: nodes, ...limits() };

  it('asks for enough nodes for the gears without room, less what is provisioning', () => {
    expect(replacementCount({ ...base, unplaced: 0 })).toEqual({ count: 0, wanted: 0 });
    expect(replacementCount({ ...base, unplaced: 150 })).toEqual({ count: 2, wanted: 2 });
    const booting = [...nodes, node('new', { state: 'provisioning' })];
    expect(replacementCount({ ...base, unplaced: 150, nodes: booting, allNodes: booting })).toEqual({ count: 1, wanted: 1 });
  });

  it('stays within pool.max and maxNodesTotal, the interrupted node counted (it holds an instance until released)', () => {
    expect(replacementCount({ ...base, unplaced: 300, ...limits({ poolMax: 4 }) })).toEqual({ count: 1, wanted: 3, clampedBy: 'pool.max=4' });
    expect(replacementCount({ ...base, unplaced: 300, ...limits({ poolMax: 3 }) })).toEqual({ count: 0, wanted: 3, clampedBy: 'pool.max=3' });
    expect(replacementCount({ ...base, unplaced: 300, ...limits({ maxNodesTotal: 4 }) })).toEqual({ count: 1, wanted: 3, clampedBy: 'maxNodesTotal=4' });
    const elsewhere = [...nodes, node('other', { pool: 'd2/small' })];
    expect(replacementCount({ ...base, allNodes: elsewhere, unplaced: 300, ...limits({ maxNodesTotal: 4 }) })).toEqual({ count: 0, wanted: 3, clampedBy: 'maxNodesTotal=4' });
  });

  it('keeps the pool at its min when the interrupted node leaves, even empty (a reliability-suite counterexample)', () => {
    const atMin = limits();
    const min2 = { ...atMin, poolConfig: { ...atMin.poolConfig, min: 3 } };
    expect(replacementCount({ ...base, ...min2, unplaced: 0 })).toEqual({ count: 1, wanted: 1 });
    const booting = [...nodes, node('new', { state: 'provisioning' })];
    expect(replacementCount({ ...base, ...min2, nodes: booting, allNodes: booting, unplaced: 0 })).toEqual({ count: 0, wanted: 0 });
  });

  it('stays within the core and memory limits, as the evaluator does (a reliability-suite counterexample)', () => {
    // Three 4-vCPU, 16 GiB nodes in use.
    expect(replacementCount({ ...base, unplaced: 300, ...limits({ maxCores: 12 }) })).toEqual({ count: 0, wanted: 3, clampedBy: 'maxCores=12' });
    expect(replacementCount({ ...base, unplaced: 300, ...limits({ maxCores: 16 }) })).toEqual({ count: 1, wanted: 3, clampedBy: 'maxCores=16' });
    expect(replacementCount({ ...base, unplaced: 300, ...limits({ maxMemoryGiB: 64 }) })).toEqual({ count: 1, wanted: 3, clampedBy: 'maxMemoryGiB=64' });
  });
});
