#!/usr/bin/env node
// `npm test`: type check, then the whole vitest suite, then one plain summary
// line (`N passed, M failed`) so that a run with zero tests is visible.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printReliabilityTally } from './reliability-tally.mjs';

const extra = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), 'nodescaler-test-'));
const env = { ...process.env, NODESCALER_RELIABILITY_REPORT_DIR: join(dir, 'reliability') };
const run = (command, args) => spawnSync(command, args, { stdio: 'inherit', env }).status ?? 1;

console.log('> tsc --noEmit');
const typecheckFailed = run('npx', ['--no-install', 'tsc', '--noEmit', '-p', '.']) !== 0;
if (typecheckFailed) console.log('type check failed');

const report = join(dir, 'vitest.json');
console.log('> vitest run');
const vitestStatus = run('npx', ['--no-install', 'vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...extra]);

let passed = 0;
let failed = 0;
try {
  const result = JSON.parse(readFileSync(report, 'utf8'));
  passed = result.numPassedTests;
  // A file that fails to load has no failed tests of its own; count it once.
  const brokenFiles = result.testResults.filter(
    (file) => file.status === 'failed' && !file.assertionResults.some((test) => test.status === 'failed'),
  ).length;
  failed = result.numFailedTests + brokenFiles;
} catch {
  failed += 1; // vitest died before writing its report
}
printReliabilityTally(join(dir, 'reliability'));
rmSync(dir, { recursive: true, force: true });
if (typecheckFailed) failed += 1;
if (vitestStatus !== 0 && failed === 0) failed = 1;

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
