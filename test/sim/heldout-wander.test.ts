import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { heldoutShape } from '../../lib/sim/heldout.js';
import { wanderShape } from '../../lib/sim/heldout-wander.js';
import { demandsOf, expectValidMinuteTraces } from '../support/heldout-shapes.js';

const ROOT = resolve(import.meta.dirname, '../..');
const OPTIONS = { seed: 1, days: 7, peakGears: 2000 };
const shapes = (count: number, options = OPTIONS) => Array.from({ length: count }, (_, index) => wanderShape(index, options));
const demands = demandsOf;

function correlation(xs: number[], ys: number[]): number {
  const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
  const [mx, my] = [mean(xs), mean(ys)];
  let [sxy, sxx, syy] = [0, 0, 0];
  for (let i = 0; i < xs.length; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
    syy += (ys[i]! - my) ** 2;
  }
  return sxy / Math.sqrt(sxx * syy);
}

describe('held-out wandering shapes', () => {
  it('are the same for the same seed and index, and differ from shape to shape, seed to seed and from the mixed family', () => {
    expect(wanderShape(4, OPTIONS)).toEqual(wanderShape(4, OPTIONS));
    const all = [...shapes(8), ...shapes(8, { ...OPTIONS, seed: 2 })];
    expect(all.map((s) => s.name).slice(0, 3)).toEqual(['heldout:w1-1', 'heldout:w1-2', 'heldout:w1-3']);
    expect(new Set(all.map((s) => demands(s).join(','))).size).toBe(16);
    expect(demands(wanderShape(0, OPTIONS))).not.toEqual(demands(heldoutShape(0, OPTIONS)));
    const descriptions = shapes(60, { ...OPTIONS, days: 1 }).map((s) => s.description).join('\n');
    for (const component of ['wander', 'daily', 'varying by day', 'jobs every', 'spikes', 'dips', 'churn', 'sharp']) expect(descriptions).toContain(component);
  });

  it('are valid minute-by-minute traces: whole gears, never negative, peak exactly peakGears', () => {
    expectValidMinuteTraces(wanderShape);
  });

  it('wander: a shape with nothing else drawn moves little from one minute to the next, unlike the mixed family noise', () => {
    const plain = shapes(60).find((s) => /^wander [^,]*(, churn [^,]*)?$/.test(s.description) && Number(/wander (\d+) %/.exec(s.description)![1]) >= 15)!;
    expect(plain, 'a shape of seed 1 with only wander (and maybe churn)').toBeDefined();
    const values = demands(plain);
    expect(correlation(values.slice(0, -1), values.slice(1))).toBeGreaterThan(0.95);
    const noisy = Array.from({ length: 200 }, (_, i) => heldoutShape(i, OPTIONS)).find((s) => /^noise (1[5-9]|20) %(, churn [^,]*)?$/.test(s.description))!;
    expect(noisy, 'a mixed shape of seed 1 with only noise (and maybe churn)').toBeDefined();
    const steps = demands(noisy);
    expect(correlation(steps.slice(0, -1), steps.slice(1))).toBeLessThan(0.8);
  });

  it('jobs on a clock: the sharpest rises of a shape with jobs fall on one minute of its period', () => {
    const shape = shapes(60).find((s) => /jobs every \d+ h x(1\.[6-9]|[23]\.\d)/.test(s.description) && !/spikes|dips/.test(s.description))!;
    const period = Number(/jobs every (\d+) h/.exec(shape.description)![1]) * 60;
    const values = demands(shape);
    const rises = values.slice(1).map((v, i) => ({ minute: i + 1, rise: v - values[i]! })).sort((a, b) => b.rise - a.rise);
    const starts = Math.floor(values.length / period);
    const phases = rises.slice(0, starts).map((r) => r.minute % period);
    const mostCommon = Math.max(...[...new Set(phases)].map((p) => phases.filter((q) => q === p).length));
    expect(mostCommon / starts).toBeGreaterThanOrEqual(0.8);
  });

  it('npm run bench -- heldout --family wander replays them with the goal line, tune --family wander ranks on them; a family neither knows is refused', () => {
    const cache = mkdtempSync(join(tmpdir(), 'nodescaler-wander-'));
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'scripts/bench.ts', 'heldout', '--family', 'wander', '--count', '1', '--seed', '4', '--days', '0.25', '--peak-gears', '300', '--cache', cache],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^heldout: 1 wandering shapes of seed 4 \(0\.25 days, peak 300 gears/m);
    expect(run.stdout).toMatch(/^\[1\/1\] heldout:w4-1 \(0\.3 days, peak 300 gears\)\nshape: wander \d+ % over /m);
    expect(run.stdout).toMatch(/^goal \(\d\/8 met/m);
    expect(run.stdout).toMatch(/^heldout:w4-1\s+[\d.]+\s+([\d.]+|\d+ vs 0)\s+[\d.]+\s+\d\/8, \d of \d misses infeasible$/m);
    expect(run.stdout).toMatch(/wrote out\/heldout-wander-seed-4\.html/);
    const bad = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench.ts', 'heldout', '--family', 'spiky'], { cwd: ROOT, encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--family: expected mixed, wander, surge or shift, got spiky/);

    const tuneArgs = ['--import', 'tsx', 'scripts/bench.ts', 'tune', '{"f3":{"scaleDown":{"payoff":{"factor":3}}}}', '--heldout', '1', '--seed', '4', '--days', '0.25', '--peak-gears', '300', '--cache', cache];
    const tune = spawnSync(process.execPath, [...tuneArgs, '--family', 'wander'], { cwd: ROOT, encoding: 'utf8' });
    expect(tune.status, tune.stderr).toBe(0);
    // The same shape as the heldout run: its baselines come from the cache, and today's defaults score it the same.
    expect(tune.stdout).toMatch(/baselines 1 cached, 0 computed/);
    const row = run.stdout.split('\n').find((line) => line.startsWith('heldout:w4-1 '))!.replace(/ +/g, ' ');
    expect(tune.stdout.replace(/ +/g, ' ')).toContain(row);
    const badTune = spawnSync(process.execPath, [...tuneArgs, '--family', 'spiky'], { cwd: ROOT, encoding: 'utf8' });
    expect(badTune.status).toBe(2);
    expect(badTune.stderr).toMatch(/--family.*expected mixed, wander, surge or shift.*spiky/);
  });
});
