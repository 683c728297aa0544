/**
 * `nodescaler disruption` on a local state where a drain really ran
 * (test/support/cli-world.ts): the evaluator decides a scale-down of
 * d1-small-4 at 10:05, the gear mover moves its 10 gears, 30 s each, three at
 * a time, and the report counts what the drain's records say it did.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliWorld, runCli, type CliResult } from '../support/cli-world.js';

const START = '2026-11-21T10:00:00.000Z';
let dir: string;
let world: CliWorld;

function cli(args: readonly string[]): Promise<CliResult> {
  return runCli([...args, '--state-dir', dir, '--config', world.configFile, '--at', world.at], { env: { COLUMNS: '120' } });
}
const flat = (text: string) => text.replace(/\s+/g, ' ');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'nodescaler-disruption-'));
  world = new CliWorld(dir, START);
  await world.reportUntil('2026-11-21T10:05:00.000Z');
  await world.runGearMover({ deliverDrainQueue: true });
  // Until the drain has ended: each pass settles the moves whose 30 s have run and starts the next ones.
  for (let pass = 0; pass < 20; pass++) {
    world.nowMs += 30_000;
    await world.runGearMover({ deliverDrainQueue: false });
    const ended = await world.withState(async (state) => (await state.ports.store.listDrains('d1/small', 'active')).length === 0);
    if (ended) break;
  }
}, 60_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('nodescaler disruption', () => {
  it('counts the scale-down that emptied d1-small-4: its 10 gears moved, by application', async () => {
    const result = await cli(['disruption', '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.pools).toHaveLength(1);
    expect(report.pools[0]).toMatchObject({ pool: 'd1/small', drains: 1, gearsMoved: 10, failedMoves: 0, gearsMovedAgain: 0 });
    expect(report.pools[0].byCause['scale-down']).toBe(1);
    expect(report.pools[0].byOutcome.emptied).toBe(1);
    // The world's agent marks no gear either way: every move is counted as unmarked, none as a restart.
    expect(report.totals).toMatchObject({ tenantRestarts: 0, unknownMoved: 10 });
    // Ten gears of apps app-0..app-3 in turn: 3, 3, 2, 2.
    expect(report.apps.map((a: { app: string; moves: number }) => [a.app, a.moves])).toEqual([
      ['app-0', 3],
      ['app-1', 3],
      ['app-2', 2],
      ['app-3', 2],
    ]);
  });

  it('prints the table and the sentences an operator reads, and --limit keeps the top applications', async () => {
    const result = await cli(['disruption', 'd1/small', '--limit', '2']);
    expect(result.code).toBe(0);
    const out = flat(result.stdout);
    expect(out).toMatch(/drains started since 2026-11-14T10:\d\d:\d\d\.\d{3}Z/);
    expect(out).not.toContain('have expired');
    expect(out).toMatch(/d1\/small 1 1 scale-down 1 10 0 0 0/);
    expect(out).toContain('Drains: 1 emptied their node.');
    expect(out).toContain('Of the 10 gears moved, 0 restarted a tenant\'s application (0.0 per node emptied), 0 were idle, 10 unmarked by their agent; 0 were moved more than once.');
    expect(out).toContain('applications moved most (2 shown)');
    expect(out).toMatch(/app-0 d1\/small 0 3 2026-11-21T10:0\d/);
    expect(out).not.toContain('app-2');
  });

  it('says when the period reaches past drainHistoryTtl (90 days by default): older ended drains have expired', async () => {
    const within = JSON.parse((await cli(['disruption', '--since', '90d', '--json'])).stdout);
    expect(within.expiredBefore).toBeUndefined();
    const beyond = JSON.parse((await cli(['disruption', '--since', '120d', '--json'])).stdout);
    expect(beyond.expiredBefore).toMatch(/^2026-08-2\dT10:\d\d:\d\d\.\d{3}Z$/);
    expect(beyond.pools[0]).toMatchObject({ drains: 1, gearsMoved: 10 });
    expect(flat((await cli(['disruption', '--since', '120d'])).stdout)).toContain(`(drains that ended before ${beyond.expiredBefore} have expired: drainHistoryTtl keeps an ended drain that long)`);
  });

  it('--app lists every move of one application: when, from and to which node, why, whether it restarted it', async () => {
    const report = JSON.parse((await cli(['disruption', '--app', 'app-2', '--json'])).stdout);
    expect(report.appMoves).toHaveLength(2);
    for (const move of report.appMoves) expect(move).toMatchObject({ app: 'app-2', pool: 'd1/small', from: 'd1-small-4.example.com', cause: 'scale-down', restart: null });
    expect(report.appMoves.map((m: { to: string }) => m.to).every((to: string) => /^d1-small-[123]\.example\.com$/.test(to))).toBe(true);
    const text = flat((await cli(['disruption', '--app', 'app-2'])).stdout);
    expect(text).toContain('moves of application app-2 (2)');
    expect(text).toMatch(/2026-11-21T10:0\d:\d\d\.000Z d1-small-4-g\d\d d1-small-4\.example\.com d1-small-[123]\.example\.com scale-down not marked/);
    const none = flat((await cli(['disruption', '--app', 'nobody'])).stdout);
    expect(none).toContain('that application: no gear of it was moved by a drain started in this period');
  });

  it('reports no drain before the drain began, and refuses a pool it does not know', async () => {
    const before = await cli(['disruption', '--since', '2026-11-21T10:30:00.000Z']);
    expect(before.code).toBe(0);
    expect(flat(before.stdout)).toContain('none: no drain started in this period, so no gear was moved');
    const unknown = await cli(['disruption', 'd7/huge']);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain('unknown pool "d7/huge"');
    const bad = await cli(['disruption', '--since', 'yesterday']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--since "yesterday"');
  });
});
