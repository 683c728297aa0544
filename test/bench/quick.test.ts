/**
 * `npm run bench -- quick` as a process: every benchmark entry still runs and
 * prints its figures, so none rots between full runs. Figures are not judged
 * here (timings on a shared machine are noise); a full `npm run bench` checks
 * the targets.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

describe('npm run bench -- quick', () => {
  it('runs every entry to its end and prints a figure for each case', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench.ts', 'quick'], { cwd: ROOT, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const rows = run.stdout.split('\n').filter((line) => /^(ingest|decide|plan|cold-start) {2,}/.test(line));
    const entries = new Set(rows.map((line) => line.split(/\s{2,}/)[0]));
    expect([...entries].sort()).toEqual(['cold-start', 'decide', 'ingest', 'plan']);
    for (const line of rows) expect(line, line).toMatch(/\d[\d,]*(\.\d+)? (stats\/s|ms|KiB|%)/);
    // Both decision paths ran on pools of 10 and 1,000 nodes (each throws if the pool does not decide as its case says).
    for (const scenario of ['scale-down', 'scale-up']) {
      for (const size of ['10', '1,000']) expect(rows.some((line) => line.includes(`${scenario}, pool of ${size} nodes`))).toBe(true);
    }
    for (const fn of ['thresholdEvaluator', 'nodeProvisioner', 'gearMover', 'decommissioner']) {
      expect(rows.some((line) => line.includes(`${fn}: load added to bare`))).toBe(true);
    }
    expect(run.stdout).toMatch(/quick run: \d+ figures/);
  });
});
