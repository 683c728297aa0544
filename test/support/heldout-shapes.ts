/**
 * What every held-out family (lib/sim/heldout.ts, heldout-wander.ts, heldout-surge.ts) promises of its traces,
 * checked the same way for each.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';
import type { HeldoutShape } from '../../lib/sim/heldout.js';

const ROOT = resolve(import.meta.dirname, '../..');

export const demandsOf = (shape: Pick<HeldoutShape, 'trace'>) => shape.trace.steps.map((s) => s.demand);

/** `shapes` are `rows` rows of `stepSeconds` each, whole gears, never negative, peaking at exactly `peakGears`. */
export function expectValidTraces(shapes: readonly HeldoutShape[], expected: { stepSeconds: number; rows: number; peakGears: number }): void {
  const { stepSeconds, rows, peakGears } = expected;
  for (const shape of shapes) {
    const { trace } = shape;
    expect(trace.stepSeconds).toBe(stepSeconds);
    expect(trace.steps).toHaveLength(rows);
    expect(trace.durationSeconds).toBe(rows * stepSeconds);
    trace.steps.forEach((step, i) => {
      expect(step.at).toBe(i * stepSeconds);
      expect(Number.isInteger(step.demand) && step.demand >= 0 && step.demand <= peakGears, `${shape.name} step ${i}: ${step.demand}`).toBe(true);
    });
    expect(Math.max(...demandsOf(shape))).toBe(peakGears);
  }
}

/** A minute-by-minute family's shapes of seeds 0, 5 and 99 over 1.5 days at a 700-gear peak are valid traces. */
export function expectValidMinuteTraces(draw: (index: number, options: { seed: number; days: number; peakGears: number }) => HeldoutShape): void {
  for (const seed of [0, 5, 99]) {
    expectValidTraces(
      Array.from({ length: 10 }, (_, index) => draw(index, { seed, days: 1.5, peakGears: 700 })),
      { stepSeconds: 60, rows: 2160, peakGears: 700 },
    );
  }
}

/**
 * `npm run bench -- heldout --family FAMILY` on one shape of seed 4 for a quarter of a day at a 300-gear peak, with a
 * fresh baseline cache and page: a run the test asserts on, and the shape's row (`heldout:<prefix>4-1 ...`) expected.
 */
export function runHeldoutBench(family: string): SpawnSyncReturns<string> {
  const cache = mkdtempSync(join(tmpdir(), `nodescaler-${family}-`));
  return spawnSync(
    process.execPath,
    ['--import', 'tsx', 'scripts/bench.ts', 'heldout', '--family', family, '--count', '1', '--seed', '4', '--days', '0.25', '--peak-gears', '300', '--cache', cache, '--html', join(cache, `${family}.html`)],
    { cwd: ROOT, encoding: 'utf8' },
  );
}

/** The header, shape line, goal line and table row every family's one-shape run prints, for shapes named `<prefix>4-1`. */
export function expectHeldoutBenchOutput(run: SpawnSyncReturns<string>, expected: { label: string; prefix: string }): void {
  const { label, prefix } = expected;
  expect(run.status, run.stderr).toBe(0);
  expect(run.stdout).toMatch(new RegExp(`^heldout: 1 ${label} of seed 4 \\(0\\.25 days, peak 300 gears`, 'm'));
  expect(run.stdout).toMatch(new RegExp(`^\\[1/1\\] heldout:${prefix}4-1 \\(0\\.3 days, peak 300 gears\\)\\nshape: .*noise \\d+ %`, 'm'));
  expect(run.stdout).toMatch(/^goal \(\d\/8 met/m);
  expect(run.stdout).toMatch(new RegExp(`^heldout:${prefix}4-1\\s+[\\d.]+\\s+([\\d.]+|\\d+ vs 0)\\s+[\\d.]+\\s+\\d/8, \\d of \\d misses infeasible$`, 'm'));
}
