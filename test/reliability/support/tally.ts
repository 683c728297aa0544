/**
 * How much the reliability suite tried: each file states its count of
 * generated scenarios or malformed inputs, printed in the test output and
 * gathered by `npm test` / `npm run test:soak` into one summary line.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Scenario runs by default; `npm run test:soak -- --runs N` sets N (default 10x). */
export const DEFAULT_SCENARIO_RUNS = 60;

export function soakRuns(): number | undefined {
  const value = Number(process.env.NODESCALER_SOAK_RUNS);
  return Number.isInteger(value) && value > 0 ? value : undefined;
}

/** The default count, scaled by how many times more the soak mode runs. */
export function scaled(defaultCount: number): number {
  const runs = soakRuns();
  return runs === undefined ? defaultCount : Math.max(1, Math.round((defaultCount * runs) / DEFAULT_SCENARIO_RUNS));
}

export interface Tally {
  name: string;
  /** The platform the scenarios drove: `simulated`, or `broker` (the broker adapter over the broker emulator). */
  platform?: 'simulated' | 'broker';
  /** Valid-but-hostile messages sent by compromised node hosts (test/reliability/support/hostile.ts). */
  hostileMessages?: number;
  scenarios?: number;
  malformedInputs?: number;
  violations: number;
  details?: Record<string, number>;
}

export function reportTally(tally: Tally): void {
  console.log(`reliability ${tally.name}: ${JSON.stringify({ ...tally, name: undefined })}`);
  const dir = process.env.NODESCALER_RELIABILITY_REPORT_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${tally.name}.json`), JSON.stringify(tally));
}

/**
 * The first failing scenario of a check, printed when it fails, before fast-check starts shrinking it: a soak's
 * shrink replays many hour-long workloads and may run for hours (docs/RELIABILITY.md, finding 16). Once per check.
 */
export function firstFailureReporter(name: string): (scenario: unknown, problems: readonly unknown[]) => void {
  let reported = false;
  return (scenario, problems) => {
    if (reported) return;
    reported = true;
    console.error(`reliability ${name}: a scenario failed (${problems.length} problem(s), e.g. ${JSON.stringify(problems[0])}); fast-check shrinks it next. Replay it as a regressions.test.ts entry:\n${JSON.stringify(scenario)}`);
  };
}
