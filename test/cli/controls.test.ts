/**
 * The operator controls as an operator uses them: `nodescaler` child
 * processes against a local embedded state, between runs of the real
 * threshold evaluator on a virtual clock (test/support/cli-world.ts). Pool
 * d1/small sits at about 0.2 from 10:00, so from 10:05 (5m unneeded time)
 * the evaluator wants to drain d1-small-4; d1/medium is one node whose gears
 * fit nowhere. The tests run in order on that one state.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliWorld, runCli, type CliResult } from '../support/cli-world.js';

const START = '2026-11-21T10:00:00.000Z';
const ME = `local user ${userInfo().username}`;

let dir: string;
let world: CliWorld;

function cli(args: readonly string[]): Promise<CliResult> {
  return runCli([...args, '--state-dir', dir, '--config', world.configFile, '--at', world.at], { env: { COLUMNS: '120' } });
}

function flat(text: string): string {
  return text.replace(/\s+/g, ' ');
}

function json<T = Record<string, any>>(result: CliResult): T {
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as T;
}

function queued(queue: 'drain' | 'scale'): Array<Record<string, unknown>> {
  try {
    return (JSON.parse(readFileSync(join(dir, `queues/${queue}.json`), 'utf8')) as SQSEvent).Records.map((r) => JSON.parse(r.body) as Record<string, unknown>);
  } catch {
    return [];
  }
}

async function decisions(pool: string, limit = 50) {
  return world.withState((state) => state.ports.store.listDecisions(pool, limit));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'nodescaler-controls-'));
  world = new CliWorld(dir, START);
  await world.reportUntil('2026-11-21T10:04:30.000Z');
}, 30_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('runtime overrides', () => {
  it('refuses a bad value with exit 2, naming the field, the value and the rule; nothing is written', async () => {
    const tooHigh = await cli(['set', 'd1/small', 'min', '50', '--reason', 'peak']);
    expect(tooHigh.code).toBe(2);
    expect(flat(tooHigh.stderr)).toContain('pools.0.min: must not exceed max (10)');
    const notNumber = await cli(['set', 'd1/small', 'max', 'lots', '--reason', 'peak']);
    expect(notNumber.code).toBe(2);
    expect(flat(notNumber.stderr)).toMatch(/pools\.0\.max: .*expected (int|number)/i);
    const hysteresis = await cli(['set', 'd1/small', 'scaleUp.target', '0.9', '--reason', 'peak']);
    expect(hysteresis.code).toBe(2);
    expect(flat(hysteresis.stderr)).toContain('scaleUp.target: must be below scaleUp.threshold (0.8)');
    const unknown = await cli(['set', 'd1/small', 'minimum', '2', '--reason', 'peak']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown key "minimum"');
    const noReason = await cli(['set', 'd1/small', 'min', '2']);
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toContain('set needs --reason TEXT');
    expect(json(await cli(['overrides', '--json'])).overrides).toEqual([]);
  });

  it('set stores a versioned override the evaluator and status use; overrides lists it next to the file value', async () => {
    const set = json(await cli(['set', 'd1/small', 'min', '2', '--reason', 'black friday', '--json']));
    expect(set).toMatchObject({ action: 'set', pool: 'd1/small', key: 'min', value: 2, version: 1 });
    const again = json(await cli(['set', 'd1/small', 'protectedNodes', 'd1-small-1.example.com', '--reason', 'canary', '--json']));
    expect(again).toMatchObject({ version: 2, record: { values: { min: 2, protectedNodes: ['d1-small-1.example.com'] }, updatedBy: ME } });
    const list = await cli(['overrides']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/d1\/small +min +2 +1 +2 /);
    expect(list.stdout).toMatch(/d1\/small +protectedNodes +d1-small-1\.example\.com +\[\] +2 /);
    const status = json(await cli(['status', 'd1/small', '--json']));
    expect(status.pools[0]).toMatchObject({ min: 2, controls: { mode: 'active', overrides: { min: 2, protectedNodes: ['d1-small-1.example.com'] } } });
    const explain = json(await cli(['explain', 'd1/small', '--json']));
    expect(explain.pools[0].now.candidates.rejected).toContainEqual({ nodeId: 'd1-small-1.example.com', reason: 'protected (pool protectedNodes)' });
    // An operator's drain is refused with the same list the evaluator reads: the override, not only the file.
    const drain = await cli(['drain', 'd1-small-1.example.com', '--reason', 'kernel update']);
    expect(drain.code).not.toBe(0);
    expect(flat(drain.stderr)).toContain('node d1-small-1.example.com is protected: the gear mover refuses to drain it');
    expect(queued('drain')).toEqual([]);
  });
});

describe('shadow mode', () => {
  it('decides as usual and logs what it would do, once, without acting', async () => {
    json(await cli(['set', 'd1/small', 'mode', 'shadow', '--reason', 'trust trial', '--json']));
    await world.reportUntil('2026-11-21T10:06:00.000Z');
    expect(queued('drain')).toEqual([]);
    const nodes = await world.withState((state) => state.ports.store.listNodes('d1/small'));
    expect(nodes.map((n) => n.state)).toEqual(['active', 'active', 'active', 'active']);
    const pool = await world.withState((state) => state.ports.store.getPool('d1/small'));
    expect(pool?.lease).toBeUndefined();
    const log = await decisions('d1/small', 3);
    expect(log[2]).toMatchObject({ at: '2026-11-21T10:05:00.000Z', kind: 'shadow', details: { shadow: { action: 'scale-down', nodeId: 'd1-small-4.example.com', gears: 10 } } });
    expect(log[2]!.reason).toMatch(/^shadow mode: would drain d1-small-4\.example\.com \(10 gears, 10 moves, saving 1 node\); pool d1\/small at 0\.21 <= 0\.50 for 5m/);
    // The same decision again is not a second one.
    expect(log[0]).toMatchObject({ kind: 'no-action', reason: expect.stringContaining('(as recorded at 2026-11-21T10:05:00.000Z)') });

    const status = await cli(['status', 'd1/small']);
    expect(flat(status.stdout)).toContain('shadow mode: decisions are logged as what they would do, nothing acts');
  });

  it('shadow-report sums what it would have done and saved', async () => {
    const report = json(await cli(['shadow-report', '--since', '1h', '--json']));
    expect(report.pools).toEqual([{ pool: 'd1/small', scaleUps: 0, nodesAdded: 0, drains: 1, nodesRemoved: 1, gearMoves: 10, nodeHoursSaved: 0 }]);
    const text = await cli(['shadow-report']);
    expect(flat(text.stdout)).toContain('It would have added 0 node(s), drained 1 (moving 10 gear(s): each a tenant restart)');
    expect(text.stdout).toMatch(/d1\/small +0 +0 +1 +10 +0\.0/);
  });
});

describe('pause and resume', () => {
  it('a paused pool takes no action: the decision is logged as held back, with who, why and until when', async () => {
    json(await cli(['unset', 'd1/small', 'mode', '--reason', 'trial over', '--json']));
    const paused = await cli(['pause', 'd1/small', '--scale-down', '--reason', 'incident 42', '--until', '1h']);
    expect(paused.code).toBe(0);
    expect(flat(paused.stdout)).toContain(`scale-down paused by ${ME} since 2026-11-21T10:06:00`);
    expect(flat(paused.stdout)).toContain('until 2026-11-21T11:06:00');

    await world.reportUntil('2026-11-21T10:07:00.000Z');
    expect(queued('drain')).toEqual([]);
    expect((await world.withState((state) => state.ports.store.getPool('d1/small')))?.lease).toBeUndefined();
    const [latest] = await decisions('d1/small', 1);
    expect(latest).toMatchObject({ kind: 'no-action', details: { paused: { pool: 'd1/small', actions: 'scale-down', by: ME, reason: 'incident 42' } } });
    expect(latest!.reason).toMatch(/drain d1-small-4\.example\.com \(10 gears, least-gears\); not carried out: scale-down paused by .* until 2026-11-21T11:06:00\.\d{3}Z: incident 42$/);

    const status = await cli(['status', 'd1/small']);
    expect(flat(status.stdout)).toMatch(/paused: scale-down paused by .* until 2026-11-21T11:06:00\.\d{3}Z: incident 42/);
    const explain = json(await cli(['explain', 'd1/small', '--json']));
    expect(explain.pools[0].controls.paused).toMatchObject([{ actions: 'scale-down', by: ME, reason: 'incident 42' }]);
    expect(explain.pools[0].now.decision).toMatchObject({ kind: 'scale-down', heldBack: expect.stringContaining('not carried out: scale-down paused by') });
    const dryRun = await cli(['evaluate', '--dry-run', 'd1/small']);
    expect(flat(dryRun.stdout)).toContain('held back, nothing sent: pool d1/small at');
  });

  it('a stage-wide pause holds every pool; resume of one pool names the pause that still holds', async () => {
    json(await cli(['pause', '--reason', 'region failover', '--json']));
    const resumed = await cli(['resume', 'd1/small', '--reason', 'incident 42 over']);
    expect(resumed.code).toBe(0);
    expect(flat(resumed.stdout)).toContain('resumed d1/small: scale-down pause removed');
    expect(flat(resumed.stdout)).toContain('still scale-up and scale-down paused (every pool) by');
    await world.reportUntil('2026-11-21T10:07:30.000Z');
    expect(queued('drain')).toEqual([]);
    const [latest] = await decisions('d1/small', 1);
    expect(latest!.reason).toContain('not carried out: scale-up and scale-down paused (every pool)');
  });

  it('resume restores it: the next evaluation drains', async () => {
    const resumed = json(await cli(['resume', '--reason', 'failover done', '--json']));
    expect(resumed.removed).toMatchObject([{ pool: '*', actions: 'all' }]);
    expect(resumed.stillPaused).toEqual([]);
    await world.reportUntil('2026-11-21T10:08:00.000Z');
    expect(queued('drain')).toMatchObject([{ type: 'scale-down', pool: 'd1/small', nodeId: 'd1-small-4.example.com' }]);
    const [latest] = await decisions('d1/small', 1);
    expect(latest).toMatchObject({ kind: 'scale-down', details: { nodeId: 'd1-small-4.example.com' } });
  });
});

describe('audit and safe manual drains', () => {
  it('refuses a manual drain whose gears do not fit, with the explain line and exit 4; nothing is sent', async () => {
    const refused = await cli(['drain', 'd1-medium-1.example.com', '--reason', 'kernel update']);
    expect(refused.code).toBe(4);
    expect(flat(refused.stderr)).toContain('drain of d1-medium-1.example.com refused: gears do not fit below 80% on the other nodes (20 gears, 0 free slots)');
    expect(flat(refused.stderr)).toContain('--replace');
    expect(queued('drain')).toHaveLength(1);
    const noReason = await cli(['drain', 'd1-medium-1.example.com']);
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toContain('drain needs --reason TEXT');
  });

  it('drain --replace asks for a replacement node through the pool lease and waits for it to join', async () => {
    const view = json(await cli(['drain', 'd1-medium-1.example.com', '--replace', '--reason', 'kernel update', '--json']));
    expect(view).toMatchObject({ action: 'drain --replace', nodeId: 'd1-medium-1.example.com', pool: 'd1/medium', fit: { fits: false, gears: 20 } });
    expect(queued('scale')).toMatchObject([{ type: 'scale-up', pool: 'd1/medium', count: 1, decisionId: view.replacementDecisionId }]);
    const pool = await world.withState((state) => state.ports.store.getPool('d1/medium'));
    expect(pool?.lease).toMatchObject({ holder: view.replacementDecisionId, kind: 'scale-up' });
    const status = await cli(['status', 'd1/medium']);
    expect(flat(status.stdout)).toContain(`waiting: drain of d1-medium-1.example.com after replacement ${view.replacementDecisionId} joins (by ${ME}`);

    // Cancelled before it began: it never starts; the replacement asked for it still joins.
    const cancel = await cli(['cancel-drain', 'd1-medium-1.example.com', '--reason', 'change of plan']);
    expect(cancel.code).toBe(0);
    expect(flat(cancel.stdout)).toContain(
      `d1-medium-1.example.com cancelled before it began (operator (nodescaler CLI): change of plan): it will not start; replacement ${view.replacementDecisionId} still joins`,
    );
    const after = await cli(['status', 'd1/medium']);
    expect(flat(after.stdout)).toContain(`waiting: drain of d1-medium-1.example.com cancelled by ${ME} at `);
    expect(flat(after.stdout)).toContain('before it began; it will not start');
  });

  it('every operator action is in the decision log with who, when and why', async () => {
    json(await cli(['protect', 'd1-small-2.example.com', '--reason', 'hosts the canary', '--json']));
    const trail = json(await cli(['audit', '--json']));
    const actions = trail.entries.map((e: { details: { action: string }; pool: string }) => `${e.details.action} ${e.pool}`);
    // Commands run at the same virtual time (--at) are ordered by the milliseconds each process took: compare as a set.
    expect([...actions].sort()).toEqual([
      'set d1/small',
      'set d1/small',
      'set d1/small',
      'unset d1/small',
      'pause d1/small',
      'pause *',
      'resume d1/small',
      'resume *',
      'drain --replace d1/medium',
      'cancel-drain d1/medium',
      'protect d1/small',
    ].sort());
    for (const entry of trail.entries) {
      expect(entry).toMatchObject({ kind: 'operator', by: ME });
      expect(Date.parse(entry.at)).toBeGreaterThanOrEqual(Date.parse(START));
    }
    expect(trail.entries.find((e: { reason: string }) => e.reason.startsWith('pause scale-down'))).toMatchObject({ reason: 'pause scale-down of d1/small: incident 42', details: { reason: 'incident 42', until: expect.stringMatching(/^2026-11-21T11:06:00/) } });
    expect(trail.entries.find((e: { details: { action: string } }) => e.details.action === 'protect')).toMatchObject({ reason: 'protect d1-small-2.example.com: hosts the canary', details: { nodeId: 'd1-small-2.example.com' } });
    const text = await cli(['audit', 'd1/medium']);
    expect(text.stdout).toContain('drain --replace d1-medium-1.example.com: kernel update');
    expect(text.stdout).toContain('resume scale-up and scale-down of every pool: failover done');
    expect(text.stdout).not.toContain('incident 42');
    expect(text.stdout).toContain(userInfo().username);
  });
});
