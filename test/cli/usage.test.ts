/**
 * `nodescaler` commands that need no state (validate-config) and its usage
 * errors, as child processes: exit codes and messages a script relies on.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli-world.js';

describe('nodescaler without state: configuration check and usage', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'nodescaler-config-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('validate-config lists every problem of an invalid file (exit 2) and passes a valid one (exit 0)', async () => {
    const bad = join(scratch, 'bad.yml');
    writeFileSync(
      bad,
      ['handler: ec3', 'scaleUp:', '  threshold: 1.5', 'scaledown:', '  enabled: false', 'pools:', '  - district: d1', '    profile: small', '    min: 3', ''].join('\n'),
    );
    const [invalid, json, valid, missing] = await Promise.all([
      runCli(['validate-config', bad]),
      runCli(['validate-config', bad, '--json']),
      runCli(['validate-config', 'infra/nodescaler.example.yml']),
      runCli(['validate-config', join(scratch, 'none.yml')]),
    ]);
    expect(invalid.code).toBe(2);
    expect(invalid.stdout).toBe('');
    expect(invalid.stderr).toMatch(/^invalid: .*bad\.yml: \d+ problems$/m);
    expect(invalid.stderr).toMatch(/- handler: .*\(got "ec3"\)/);
    expect(invalid.stderr).toMatch(/- scaleUp\.threshold: .*\(got 1\.5\)/);
    expect(invalid.stderr).toContain('- scaledown: unknown key (did you mean "scaleDown"?)');
    expect(invalid.stderr).toContain('- pools.0.max: required');
    const report = JSON.parse(json.stdout) as { valid: boolean; issues: Array<{ path: string }> };
    expect(json.code).toBe(2);
    expect(report.valid).toBe(false);
    expect(report.issues.map((issue) => issue.path)).toEqual(expect.arrayContaining(['handler', 'scaleUp.threshold', 'scaledown', 'pools.0.max']));
    expect(valid.code).toBe(0);
    expect(valid.stdout).toMatch(/^valid: infra\/nodescaler\.example\.yml · handler \w+ · platform [\w-]+ · \d+ pools?: d1\/small/);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('file not found');
  });

  it('validate-config passes a valid file that may still mislead, and says how on stderr (in --json, as warnings)', async () => {
    const spot = join(scratch, 'spot.yml');
    writeFileSync(
      spot,
      ['pools:', '  - district: d1', '    profile: small', '    max: 5', '    template:', '      instanceTypes: [{ name: m5.2xlarge, vcpus: 8, memoryGiB: 32 }]', '      spot: true', ''].join('\n'),
    );
    const [text, json] = await Promise.all([runCli(['validate-config', spot]), runCli(['validate-config', spot, '--json'])]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^valid: .*spot\.yml · handler log/);
    expect(text.stderr.replace(/\s+/g, ' ')).toContain('warning: pools[0] (d1/small) launches spot instances and names no nodeHourPrice: its drains are credited $0.384/h (m5.2xlarge on demand, us-east-1)');
    const report = JSON.parse(json.stdout) as { valid: boolean; warnings: string[] };
    expect(json.code).toBe(0);
    expect(report.valid).toBe(true);
    expect(report.warnings).toEqual([expect.stringContaining('Set pools[0].nodeHourPrice to what its nodes cost.')]);
  });

  it('offers the command or option a typo most likely meant', async () => {
    const [command, swapped, option, notHere] = await Promise.all([
      runCli(['statsu']),
      runCli(['explian', 'd1/small']),
      runCli(['status', '--wacth']),
      runCli(['drain', 'node-1', '--whatch']),
    ]);
    expect(command.code).toBe(2);
    expect(command.stderr).toContain('unknown command "statsu"\ndid you mean status?');
    expect(swapped.stderr).toContain('did you mean explain?');
    expect(option.code).toBe(2);
    expect(option.stderr).toContain('unknown option --wacth\ndid you mean --watch?');
    // Only the command's own options are offered: drain has no --watch.
    expect(notHere.code).toBe(2);
    expect(notHere.stderr).toContain('unknown option --whatch');
    expect(notHere.stderr).not.toContain('did you mean --watch');
    expect(notHere.stderr).toContain('usage: nodescaler drain');
  });

  it('usage errors are exit 2; a missing local state is exit 3', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'nodescaler-empty-'));
    try {
      const [none, unknown, option, noNode, noDryRun, noState, help] = await Promise.all([
        runCli([]),
        runCli(['frobnicate']),
        runCli(['status', '--bogus']),
        runCli(['drain']),
        runCli(['evaluate', '--state-dir', empty]),
        runCli(['status', '--state-dir', empty]),
        runCli(['help']),
      ]);
      expect(none.code).toBe(2);
      expect(none.stderr).toContain('no command given');
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('unknown command "frobnicate"');
      expect(unknown.stderr).not.toContain('did you mean');
      expect(unknown.stderr).toContain('validate-config FILE');
      expect(option.code).toBe(2);
      expect(option.stderr).toContain('unknown option --bogus');
      // Usage, not a stack: the command's own lines.
      expect(option.stderr).toContain('usage: nodescaler status');
      expect(option.stderr).toContain('--watch [--interval 5s]');
      expect(option.stderr).not.toMatch(/\n\s+at /);
      expect(noNode.code).toBe(2);
      expect(noNode.stderr).toContain('drain needs NODE');
      expect(noDryRun.code).toBe(2);
      expect(noDryRun.stderr).toContain('evaluate runs only as --dry-run');
      expect(noState.code).toBe(3);
      expect(noState.stderr).toContain(`no local state in ${empty}`);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain('exit codes');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
