#!/usr/bin/env node
// `npm run test:soak -- --runs N`: the reliability suite (test/reliability)
// with N generated scenarios instead of the default 60, and the malformed
// inputs scaled alike. Default N: 600, ten times the default suite.
// `--seed S` replays the scenarios of a fast-check seed a failure printed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printReliabilityTally } from './reliability-tally.mjs';

const args = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(`--${name}`);
  if (at < 0) return undefined;
  const value = Number(args[at + 1]);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`--${name} needs a positive integer, got ${JSON.stringify(args[at + 1] ?? '')}`);
    process.exit(2);
  }
  return value;
};
const runs = option('runs') ?? 600;
const seed = option('seed');
const reportDir = mkdtempSync(join(tmpdir(), 'nodescaler-soak-'));
console.log(`> vitest run test/reliability with ${runs} scenarios${seed === undefined ? '' : `, seed ${seed}`}`);
const status =
  spawnSync('npx', ['--no-install', 'vitest', 'run', 'test/reliability', '--testTimeout=0'], {
    stdio: 'inherit',
    env: {
      ...process.env,
      NODESCALER_SOAK_RUNS: String(runs),
      NODESCALER_RELIABILITY_REPORT_DIR: reportDir,
      ...(seed === undefined ? {} : { NODESCALER_CHAOS_SEED: String(seed) }),
    },
  }).status ?? 1;
printReliabilityTally(reportDir);
rmSync(reportDir, { recursive: true, force: true });
process.exit(status);
