/** `npm run invoke -- ... --at` is checked as the CLI's --at is, before serverless starts or any state is opened. */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

describe('npm run invoke --at', () => {
  it.each(['yesterday', '10:00:30', '2026-13-45T10:00:00Z', '1795255230'])('refuses --at %s with usage, exit 2, and no state', (at) => {
    const dir = mkdtempSync(join(tmpdir(), 'nodescaler-invoke-at-'));
    try {
      const run = spawnSync(process.execPath, ['scripts/invoke.mjs', 'thresholdEvaluator', 'events/tick.json', '--at', at, '--state-dir', join(dir, 'state')], { cwd: ROOT, encoding: 'utf8' });
      expect(run.status).toBe(2);
      expect(run.stderr).toContain(`--at ${JSON.stringify(at)}: expected an ISO 8601 time such as 2026-11-21T10:05:00Z`);
      expect(run.stderr).toContain('usage: npm run invoke --');
      expect(existsSync(join(dir, 'state'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
