import { describe, expect, it } from 'vitest';
import { RENEWAL_DRAIN_PREFIX } from '../../lib/domain/controls.js';
import { drainCause, drainOutcome, summarizeDisruption } from '../../lib/domain/disruption-report.js';
import type { GearInfo, GearMove } from '../../lib/domain/model.js';
import { drain, minutesAgo, NOW } from '../support/builders.js';

const SINCE = new Date(NOW.getTime() - 7 * 24 * 3_600_000);

function moved(uuid: string, app: string, flags: Partial<GearInfo> = {}, finishedMinutesAgo = 10): GearMove {
  return { gear: { uuid, app, size: 'small', ...flags }, target: 'n9', state: 'moved', attempts: 1, finishedAt: minutesAgo(finishedMinutesAgo) };
}

describe('drainCause and drainOutcome', () => {
  it('tells an urgent drain, a renewal, an operator and a scale-down apart', () => {
    expect(drainCause({ kind: 'interruption', decisionId: 'x' })).toBe('urgent');
    expect(drainCause({ kind: 'scale-down', decisionId: 'down:1', urgentSince: minutesAgo(1) })).toBe('urgent');
    expect(drainCause({ kind: 'manual', decisionId: `${RENEWAL_DRAIN_PREFIX}n1` })).toBe('renewal');
    expect(drainCause({ kind: 'manual', decisionId: 'manual:20250310T100000Z:ab' })).toBe('operator');
    expect(drainCause({ kind: 'redrain', decisionId: 'down:1' })).toBe('scale-down');
    expect(drainCause({ decisionId: 'down:1' })).toBe('scale-down');
  });

  it('names why an aborted drain stopped, and a stop without a named cause is a failure', () => {
    expect(drainOutcome({ state: 'completed' })).toBe('emptied');
    expect(drainOutcome({ state: 'active' })).toBe('running');
    expect(drainOutcome({ state: 'aborted', calledOffAt: minutesAgo(1) })).toBe('called-off');
    expect(drainOutcome({ state: 'aborted', outgrownAt: minutesAgo(1) })).toBe('outgrown');
    expect(drainOutcome({ state: 'aborted', repricedAt: minutesAgo(1) })).toBe('repriced');
    expect(drainOutcome({ state: 'aborted', cancelledAt: minutesAgo(1) })).toBe('cancelled');
    expect(drainOutcome({ state: 'aborted' })).toBe('failed');
  });
});

describe('summarizeDisruption', () => {
  it('counts moves as the agents marked them: restarts, idle gears, unmarked ones and failed moves', () => {
    const report = summarizeDisruption(
      [
        drain('n1', [
          moved('g1', 'shop', { disruptive: true }),
          moved('g2', 'shop', { disruptive: false }),
          moved('g3', 'blog', { idle: true, disruptive: false }),
          moved('g4', 'wiki'),
          { gear: { uuid: 'g5', app: 'shop', size: 'small', disruptive: true }, target: 'n9', state: 'failed', attempts: 3 },
          { gear: { uuid: 'g6', app: 'shop', size: 'small', disruptive: true }, target: 'n9', state: 'planned', attempts: 0 },
        ], { state: 'completed' }),
      ],
      SINCE,
      NOW,
    );
    expect(report.totals).toMatchObject({ drains: 1, gearsMoved: 4, tenantRestarts: 1, idleMoved: 1, unknownMoved: 1, failedMoves: 1, gearsMovedAgain: 0 });
    expect(report.totals.byOutcome.emptied).toBe(1);
    expect(report.pools.map((p) => p.pool)).toEqual(['d1/small']);
  });

  it('keeps to the drains started in the period, by pool, with a gear moved by two drains counted once as moved again', () => {
    const report = summarizeDisruption(
      [
        drain('old', [moved('g1', 'shop', { disruptive: true })], { drainId: 'd-old', startedAt: new Date(SINCE.getTime() - 60_000).toISOString(), state: 'completed' }),
        drain('a', [moved('g1', 'shop', { disruptive: true }), moved('g2', 'shop')], { drainId: 'd-a', state: 'completed' }),
        drain('b', [moved('g1', 'shop', { disruptive: true }, 2)], { drainId: 'd-b', decisionId: `${RENEWAL_DRAIN_PREFIX}b`, kind: 'manual', state: 'aborted', calledOffAt: minutesAgo(1) }),
        drain('c', [moved('h1', 'api', { disruptive: true })], { drainId: 'd-c', pool: 'd2/large', kind: 'interruption' }),
        drain('future', [moved('g9', 'shop')], { drainId: 'd-future', startedAt: new Date(NOW.getTime() + 60_000).toISOString() }),
      ],
      SINCE,
      NOW,
    );
    expect(report.pools.map((p) => [p.pool, p.drains, p.gearsMoved, p.tenantRestarts, p.gearsMovedAgain])).toEqual([
      ['d1/small', 2, 3, 2, 1],
      ['d2/large', 1, 1, 1, 0],
    ]);
    expect(report.totals).toMatchObject({ drains: 3, gearsMoved: 4, tenantRestarts: 3, gearsMovedAgain: 1 });
    expect(report.totals.byCause).toEqual({ 'scale-down': 1, renewal: 1, operator: 0, urgent: 1 });
    expect(report.totals.byOutcome).toMatchObject({ emptied: 1, 'called-off': 1, running: 1 });
    expect(report.since).toBe(SINCE.toISOString());
  });

  it('ranks applications by restarts, then moves, with the last move, and shows only the top ones', () => {
    const report = summarizeDisruption(
      [
        drain('a', [moved('g1', 'shop', { disruptive: true }, 30), moved('g2', 'blog'), moved('g3', 'blog'), moved('g4', 'blog')], { drainId: 'd-a' }),
        drain('b', [moved('g5', 'shop', { disruptive: true }, 5), moved('g6', 'wiki', { disruptive: true })], { drainId: 'd-b' }),
      ],
      SINCE,
      NOW,
      { topApps: 2 },
    );
    expect(report.apps).toEqual([
      { app: 'shop', pool: 'd1/small', moves: 2, restarts: 2, lastMovedAt: minutesAgo(5) },
      { app: 'wiki', pool: 'd1/small', moves: 1, restarts: 1, lastMovedAt: minutesAgo(10) },
    ]);
  });

  it("lists every move of the application asked about, oldest first, with where it went, why, and whether it restarted it", () => {
    const report = summarizeDisruption(
      [
        drain('a', [moved('g1', 'shop', { disruptive: true }, 30), moved('g2', 'blog')], { drainId: 'd-a' }),
        drain('b', [moved('g3', 'shop', { idle: true }, 5), moved('g4', 'shop', {}, 6)], { drainId: 'd-b', decisionId: `${RENEWAL_DRAIN_PREFIX}b`, kind: 'manual' }),
      ],
      SINCE,
      NOW,
      { app: 'shop' },
    );
    expect(report.appMoves).toEqual([
      { at: minutesAgo(30), pool: 'd1/small', app: 'shop', gear: 'g1', from: 'a', to: 'n9', cause: 'scale-down', drainId: 'd-a', restart: true },
      { at: minutesAgo(6), pool: 'd1/small', app: 'shop', gear: 'g4', from: 'b', to: 'n9', cause: 'renewal', drainId: 'd-b', restart: null },
      { at: minutesAgo(5), pool: 'd1/small', app: 'shop', gear: 'g3', from: 'b', to: 'n9', cause: 'renewal', drainId: 'd-b', restart: false },
    ]);
    expect(summarizeDisruption([], SINCE, NOW, { app: 'shop' }).appMoves).toEqual([]);
    expect(summarizeDisruption([], SINCE, NOW).appMoves).toBeUndefined();
  });

  it('reports nothing for a period without drains', () => {
    const report = summarizeDisruption([], SINCE, NOW);
    expect(report.totals.drains).toBe(0);
    expect(report.pools).toEqual([]);
    expect(report.apps).toEqual([]);
  });
});
