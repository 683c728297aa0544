/**
 * The operator CLI's pure parts: tables that fit a width, wrapping, the
 * environment it reads (through lib/config), which target it picks, and
 * the "why not now" checks of explain (lib/domain/explain.ts).
 */
import { describe, expect, it } from 'vitest';
import { resolveTarget, tableNameOf, queueNameOf, clockAt } from '../../lib/cli/target.js';
import { renderTable, wrap, cutTo, Style, visibleLength } from '../../lib/cli/render.js';
import { parseCliEnvironment } from '../../lib/config/index.js';
import { explainPool } from '../../lib/domain/explain.js';
import { decidePool } from '../../lib/domain/evaluate.js';
import { ValidationError } from '../../lib/errors.js';
import { CliError, EXIT } from '../../lib/cli/exit.js';
import { NOW, evaluation, minutesAgo, node, pool } from '../support/builders.js';

describe('renderTable', () => {
  it('cuts the NOTE column, then the others, and the NODE column (keep) only when nothing else can give', () => {
    const columns = [{ header: 'NODE', keep: true }, { header: 'STATE' }, { header: 'GEARS', align: 'right' as const }, { header: 'NOTE', flex: true }];
    const rows = [['d1-small-1.example.com', 'draining', '52/100', 'adopted: reported stats without having been provisioned by nodescaler']];
    const [, at80] = renderTable(columns, rows, 80);
    expect(at80).toMatch(/^d1-small-1\.example\.com {2}draining {2}52\/100 {2}adopted: reported stats without havin…$/);
    expect(at80!.length).toBe(80);
    // 50 columns: NOTE down to MIN_FLEX, STATE to its header, then NOTE to its header; NODE still whole.
    const [, at50] = renderTable(columns, rows, 50);
    expect(at50).toContain('d1-small-1.example.com');
    expect(at50!.length).toBeLessThanOrEqual(50);
    // Too narrow for all: NODE is cut last.
    const [, at30] = renderTable(columns, rows, 30);
    expect(at30!.startsWith('d1-small-…  drai…')).toBe(true);
    expect(at30).toContain('…');
  });

  const columns = [{ header: 'NODE' }, { header: 'GEARS', align: 'right' as const }, { header: 'NOTE', flex: true }];
  const rows = [
    ['d1-small-1.example.com', '30/100', 'adopted: reported stats without having been provisioned by nodescaler'],
    ['d1-small-22.example.com', '5/100', { text: 'draining', paint: (t: string) => new Style(true).yellow(t) }],
  ];

  it('pads columns, aligns right where asked, and leaves lines whole without a width', () => {
    const lines = renderTable(columns, rows);
    expect(lines[0]).toBe('NODE                      GEARS  NOTE');
    expect(lines[1]).toBe('d1-small-1.example.com   30/100  adopted: reported stats without having been provisioned by nodescaler');
    expect(lines[2]).toBe('d1-small-22.example.com   5/100  \u001b[33mdraining\u001b[39m');
  });

  it('shrinks the flexible column first (cut with …) so that every line fits the width', () => {
    const lines = renderTable(columns, rows, 60);
    for (const line of lines) expect(visibleLength(line)).toBeLessThanOrEqual(60);
    expect(lines[1]).toBe('d1-small-1.example.com   30/100  adopted: reported stats wi…');
    // Escapes take no room, and go on after a cut.
    expect(lines[2]!.endsWith('\u001b[33mdraining\u001b[39m')).toBe(true);
    // Narrower than the fixed columns: those shrink too, down to their header.
    const narrow = renderTable(columns, rows, 30);
    for (const line of narrow) expect(visibleLength(line)).toBeLessThanOrEqual(30);
    expect(narrow[1]).toBe('d1-small-1.…  30/100  adopted…');
  });

  it('cutTo and wrap', () => {
    expect(cutTo('abcdef', 4)).toBe('abc…');
    expect(cutTo('abc', 4)).toBe('abc');
    expect(wrap('one two three four five six', 24, '  - ')).toEqual(['  - one two three four', '    five six']);
    expect(wrap('one two', undefined, '> ')).toEqual(['> one two']);
  });

  it('Style adds escapes only when enabled', () => {
    expect(new Style(false).red('x')).toBe('x');
    expect(new Style(true).red('x')).toBe('\u001b[31mx\u001b[39m');
  });
});

describe('parseCliEnvironment (the CLI reads its environment through lib/config)', () => {
  it('has no AWS settings in an empty environment: the local state is the default', () => {
    const env = parseCliEnvironment({});
    expect(env.awsSettings).toEqual([]);
    expect(env.deployment).toMatchObject({ stage: 'local', region: 'us-east-1', tableName: 'nodescaler-local-state' });
    expect(env.noColor).toBe(false);
    expect(env.forceColor).toBe(false);
  });

  it('names the AWS settings present (NODESCALER_STAGE=local is none), NO_COLOR, FORCE_COLOR and COLUMNS', () => {
    expect(parseCliEnvironment({ NODESCALER_STAGE: 'local' }).awsSettings).toEqual([]);
    const env = parseCliEnvironment({ AWS_PROFILE: 'ops', NODESCALER_STAGE: 'prod', AWS_DEFAULT_REGION: 'eu-west-1', NO_COLOR: '1', FORCE_COLOR: '0', COLUMNS: '120' });
    expect(env.awsSettings).toEqual(['NODESCALER_STAGE', 'AWS_PROFILE']);
    expect(env.deployment).toMatchObject({ stage: 'prod', region: 'eu-west-1' });
    expect(env.set).toMatchObject({ stage: true, region: true, tableName: false });
    expect(env).toMatchObject({ noColor: true, forceColor: false, columns: 120 });
  });

  it('refuses a bad value with the variable named', () => {
    expect(() => parseCliEnvironment({ COLUMNS: 'wide' })).toThrow(/env\.COLUMNS/);
    expect(() => parseCliEnvironment({ AWS_REGION: 'moon' })).toThrow(ValidationError);
  });
});

describe('resolveTarget', () => {
  const root = '/repo';
  const cwd = '/work';

  it('local by default, in <root>/.nodescaler, or the directory named', () => {
    expect(resolveTarget({}, parseCliEnvironment({}), cwd, root)).toEqual({ kind: 'local', stateDir: '/repo/.nodescaler', tableName: 'nodescaler-local-state' });
    expect(resolveTarget({ stateDir: 'state' }, parseCliEnvironment({ AWS_PROFILE: 'ops' }), cwd, root)).toMatchObject({ kind: 'local', stateDir: '/work/state' });
    expect(resolveTarget({}, parseCliEnvironment({ NODESCALER_LOCAL_STATE_DIR: 's' }), cwd, root)).toMatchObject({ kind: 'local', stateDir: '/work/s' });
  });

  it('a deployed stage named as serverless.yml names its resources; AWS settings alone pick stage dev and say so', () => {
    expect(resolveTarget({ stage: 'prod', region: 'eu-west-1' }, parseCliEnvironment({}), cwd, root)).toEqual({
      kind: 'deployed',
      stage: 'prod',
      region: 'eu-west-1',
      tableName: 'nodescaler-prod-state',
    });
    const chosen = resolveTarget({}, parseCliEnvironment({ AWS_PROFILE: 'ops' }), cwd, root);
    expect(chosen).toMatchObject({ kind: 'deployed', stage: 'dev', tableName: 'nodescaler-dev-state', chosenBy: expect.stringContaining('AWS_PROFILE') });
    const env = parseCliEnvironment({ NODESCALER_TABLE: 'custom-table', NODESCALER_DRAIN_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/q.fifo' });
    expect(resolveTarget({ stage: 'qa' }, env, cwd, root)).toMatchObject({ tableName: 'custom-table', drainQueueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/q.fifo' });
    expect(tableNameOf('qa')).toBe('nodescaler-qa-state');
    expect(queueNameOf('qa', 'drain')).toBe('nodescaler-qa-drain.fifo');
    expect(queueNameOf('qa', 'decommission')).toBe('nodescaler-qa-decommission');
  });

  it('contradictions and bad names are usage errors (exit 2)', () => {
    const usage = (fn: () => unknown) => {
      try {
        fn();
      } catch (error) {
        return error instanceof CliError ? error.exitCode : error;
      }
      return 'no error';
    };
    expect(usage(() => resolveTarget({ local: true, stage: 'prod' }, parseCliEnvironment({}), cwd, root))).toBe(EXIT.usage);
    expect(usage(() => resolveTarget({ local: true, region: 'eu-west-1' }, parseCliEnvironment({}), cwd, root))).toBe(EXIT.usage);
    expect(usage(() => resolveTarget({ stage: 'no spaces' }, parseCliEnvironment({}), cwd, root))).toBe(EXIT.usage);
    expect(usage(() => clockAt('yesterday'))).toBe(EXIT.usage);
    const held = clockAt('2026-11-21T10:00:00Z');
    expect(held.now().toISOString()).toBe('2026-11-21T10:00:00.000Z');
    expect(held.now().toISOString()).toBe('2026-11-21T10:00:00.000Z');
  });
});

describe('explainPool: every condition of a scale-down, not only the first that holds it back', () => {
  it('lists each delay with its end, the lease, and the refused candidates; the decision is decidePool\'s', () => {
    const input = evaluation({
      nodes: [node('n-1', { gears: 10, protected: true }), node('n-2', { gears: 20 }), node('n-3', { gears: 20 })],
      pool: pool({
        lowSince: minutesAgo(20),
        lastScaleUpAt: minutesAgo(4),
        lastFailureAt: minutesAgo(0.25),
        lease: { holder: 'up:1', kind: 'scale-up', acquiredAt: minutesAgo(1), expiresAt: new Date(NOW.getTime() + 60_000).toISOString() },
      }),
    });
    const explained = explainPool(input);
    expect(explained.evaluation).toEqual(decidePool(input));
    const byName = Object.fromEntries(explained.scaleDown.map((check) => [check.name, check]));
    expect(byName['scaleDown.unneededTime']).toMatchObject({ ok: true });
    expect(byName['scaleDown.delayAfterAdd']).toMatchObject({ ok: false, until: new Date(NOW.getTime() + 6 * 60_000).toISOString() });
    expect(byName['scaleDown.delayAfterFailure']).toMatchObject({ ok: false, until: new Date(NOW.getTime() + 15_000).toISOString() });
    expect(byName.lease).toMatchObject({ ok: false, detail: expect.stringContaining('scale-up up:1') });
    expect(byName['scaleDown.delayAfterDelete']).toMatchObject({ ok: true });
    // Candidates as if every other condition held: the protected one refused, the next chosen.
    expect(explained.candidates.rejected).toEqual([{ nodeId: 'n-1', reason: 'protected' }]);
    expect(explained.candidates.nodeId).toBe('n-2');
    expect(explained.scaleUp.find((check) => check.name === 'failure backoff')).toMatchObject({ ok: false });
  });

  it('holds only the scale-down back after a failed drain, and says so on the scale-up side', () => {
    const input = evaluation({
      nodes: [node('n-1', { gears: 10 }), node('n-2', { gears: 20 }), node('n-3', { gears: 20 })],
      pool: pool({ lowSince: minutesAgo(20), lastDrainFailureAt: minutesAgo(0.25) }),
    });
    const explained = explainPool(input);
    expect(explained.scaleDown.find((check) => check.name === 'scaleDown.delayAfterFailure')).toMatchObject({ ok: false, until: new Date(NOW.getTime() + 15_000).toISOString() });
    expect(explained.scaleUp.find((check) => check.name === 'failure backoff')).toEqual({ name: 'failure backoff', ok: true, detail: 'no recent host failure (a failed drain holds only scale-down)' });
  });
});
