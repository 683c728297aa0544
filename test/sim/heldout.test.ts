import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalSqs } from '../../lib/adapters/local/local-sqs.js';
import { SimulatedPlatform } from '../../lib/adapters/local/simulated-platform.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { traceHash } from '../../lib/sim/baseline-cache.js';
import { Churn } from '../../lib/sim/churn.js';
import { heldoutShape, heldoutShapes } from '../../lib/sim/heldout.js';
import { seededRandom } from '../../lib/sim/random.js';
import { LOCAL_QUEUES } from '../../lib/sim/runtime.js';
import { SimWorld } from '../../lib/sim/world.js';
import { expectValidTraces } from '../support/heldout-shapes.js';

const ROOT = resolve(import.meta.dirname, '../..');
const OPTIONS = { count: 8, seed: 1, days: 7, peakGears: 2000 };

describe('held-out shapes', () => {
  it('are the same for the same seed, and shape n does not depend on how many are drawn', () => {
    const first = heldoutShapes(OPTIONS);
    expect(heldoutShapes(OPTIONS)).toEqual(first);
    expect(heldoutShape(5, OPTIONS)).toEqual(first[5]);
    expect(heldoutShapes({ ...OPTIONS, count: 3 })).toEqual(first.slice(0, 3));
    expect(first.map((s) => s.name)).toEqual(Array.from({ length: 8 }, (_, i) => `heldout:s1-${i + 1}`));
  });

  it('differ from shape to shape and from seed to seed', () => {
    const demand = (steps: Array<{ demand: number }>) => steps.map((s) => s.demand).join(',');
    const shapes = [...heldoutShapes(OPTIONS), ...heldoutShapes({ ...OPTIONS, seed: 2 })];
    expect(new Set(shapes.map((s) => demand(s.trace.steps))).size).toBe(16);
    expect(new Set(shapes.map((s) => s.description)).size).toBe(16);
    // Between them, 60 shapes draw every component the generator has.
    const descriptions = heldoutShapes({ ...OPTIONS, count: 60, days: 1 }).map((s) => s.description).join('\n');
    for (const component of ['daily', 'weekly', 'trend', 'steps', 'bursts', 'noise', 'flat', 'churn', 'sharp']) expect(descriptions).toContain(component);
  });

  it('are valid traces: 5-minute rows over the days asked, whole gears, never negative, peak exactly peakGears', () => {
    for (const seed of [0, 1, 7, 12345]) {
      const shapes = heldoutShapes({ count: 12, seed, days: 2.5, peakGears: 700 });
      expectValidTraces(shapes, { stepSeconds: 300, rows: 720, peakGears: 700 });
      for (const { trace, description } of shapes) {
        if (trace.churnPerHour !== undefined) {
          expect(trace.churnPerHour).toBeGreaterThanOrEqual(0.01);
          expect(trace.churnPerHour).toBeLessThanOrEqual(0.3);
          expect(description).toMatch(/churn \d+ %\/h/);
        }
      }
    }
  });

  it('hold demand level during a flat period', () => {
    const flat = heldoutShapes({ ...OPTIONS, count: 60 }).find((s) => Number(/flat (\d+)h@/.exec(s.description)?.[1] ?? 0) >= 6)!;
    const [, hours, day] = /flat (\d+)h@([\d.]+)d/.exec(flat.description)!;
    // A whole hour inside the first flat period repeats one value.
    const start = Math.ceil((Number(day) * 86400) / 300) + 12;
    const inside = flat.trace.steps.slice(start, start + Math.min(24, Number(hours) * 12 - 36)).map((s) => s.demand);
    expect(inside.length).toBeGreaterThan(0);
    expect(new Set(inside).size).toBe(1);
  });
});

describe('app churn', () => {
  it('replaces demand x rate gears an hour, carrying fractions from tick to tick', () => {
    const churn = new Churn(0.05);
    let replaced = 0;
    for (let tick = 0; tick < 60; tick++) replaced += churn.next(100, 60);
    expect(replaced).toBe(5);
    expect(new Churn(0).next(1000, 3600)).toBe(0);
    expect(new Churn().next(1000, 3600)).toBe(0);
  });

  it('deletes that many placed gears in the world and creates as many new ones, demand unchanged', () => {
    const clock = new VirtualClock('2026-01-05T00:00:00.000Z');
    const platform = new SimulatedPlatform(clock, { moveDurationMs: 30_000, moveFailureRate: 0, random: seededRandom(1) });
    const cloud = { liveHostStates: () => [{ hostName: 'n1', pool: 'd/p', state: 'running' as const }] };
    const world = new SimWorld(clock, platform, cloud, new LocalSqs(clock, LOCAL_QUEUES), { district: 'd', profile: 'p', gearsPerNode: 100, heartbeatSeconds: 240, random: seededRandom(2) });
    world.joinBootedHosts();
    world.applyDemand(50);
    const before = new Set(platform.gearUuids('n1'));
    world.applyDemand(50, 10);
    const after = new Set(platform.gearUuids('n1'));
    expect(after.size).toBe(50);
    expect([...before].filter((g) => !after.has(g))).toHaveLength(10);
    expect(world.apps.created).toBe(60);
    expect(world.sample(50)).toMatchObject({ placed: 50, unplaced: 0 });
  });

  it('is part of the baselines cache key', () => {
    const { trace } = heldoutShape(0, OPTIONS);
    expect(traceHash({ ...trace, churnPerHour: 0.1 })).not.toBe(traceHash({ ...trace, churnPerHour: 0.2 }));
    const { churnPerHour: _none, ...without } = trace;
    expect(traceHash({ ...without, churnPerHour: 0.1 })).not.toBe(traceHash(without));
  });
});

describe('npm run bench -- heldout', () => {
  it('prints each shape with the suite goal checks and a total, with progress; refuses bad options with exit code 2', () => {
    const cache = mkdtempSync(join(tmpdir(), 'nodescaler-heldout-'));
    const args = ['--import', 'tsx', 'scripts/bench.ts', 'heldout', '--count', '2', '--seed', '3', '--days', '0.25', '--peak-gears', '300', '--cache', cache];
    const run = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^heldout: 2 shapes of seed 3 \(0\.25 days, peak 300 gears, 100 gears per node, boot delay 120 s\)$/m);
    for (const n of [1, 2]) {
      expect(run.stdout).toMatch(new RegExp(`^\\[${n}/2\\] heldout:s3-${n} \\(0\\.3 days, peak 300 gears\\): nodescaler 100%`, 'm'));
      expect(run.stdout).toMatch(new RegExp(`^\\[${n}/2\\] heldout:s3-${n} \\(0\\.3 days, peak 300 gears\\)\\nshape: .*noise \\d+ %`, 'm'));
    }
    const goals = run.stdout.match(/^goal \(\d\/8 met(?:; \d of the \d misses are infeasible here)?\): node-hours [\d.]+ x clairvoyant-4h <= 1\.05 (MET|MISSED); gear moves (?:[\d.]+ x clairvoyant-4h <= 1\.5|\d+ where clairvoyant-4h moves none \(<= 1\.5 x\)) (MET|MISSED); unplaced [\d.]+ % <= 0\.1 % (MET|MISSED); .*node-hours < karpenter's .*node-hours < cluster-autoscaler's/gm) ?? [];
    expect(goals).toHaveLength(2);
    expect(run.stdout.match(/^reactive floor \(learns of demand as it arrives, boots in 2 min\): at best [\d.]+ % unplaced .*; unplaced <= 0\.1 % takes .*; waiting <= cluster-autoscaler's and 0\.1 % takes /gm)).toHaveLength(2);
    // A policy's row, not the check-by-check row named after it ("karpenter node-hours").
    for (const policy of ['nodescaler', 'karpenter', 'cluster-autoscaler', 'clairvoyant-4h']) expect(run.stdout.match(new RegExp(`^${policy} +\\d`, 'gm'))).toHaveLength(2);
    expect(run.stdout).toMatch(/^check by check:\n/m);
    expect(run.stdout).toMatch(/^invariant violations\s+2 of 2\s+0\s+0\s*$/m);
    expect(run.stdout).toMatch(/baselines 0 cached, 2 computed/);
    expect(run.stdout).toMatch(/^heldout:s3-1\s+[\d.]+\s+([\d.]+|\d+ vs 0)\s+[\d.]+\s+\d\/8, \d of \d misses infeasible$/m);
    expect(run.stdout).toMatch(/^total \(mean; moves summed; worst\)\s+[\d.]+\s+([\d.]+|\d+ vs 0)\s+[\d.]+\s+\d+\/16, \d+ of \d+ misses infeasible$/m);
    const rerun = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
    expect(rerun.stdout).toMatch(/baselines 2 cached, 0 computed/);
    // The same shapes, the same figures, whether the baselines were computed or read back.
    const totals = (out: string) => out.split('\n').filter((l) => /^(heldout:s3-|total )/.test(l));
    expect(totals(rerun.stdout)).toEqual(totals(run.stdout));

    const bad = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench.ts', 'heldout', '--count', '0'], { cwd: ROOT, encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--count: expected an integer >= 1, got 0/);
    const noBoot = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench.ts', 'heldout', '--boot-delay', '0'], { cwd: ROOT, encoding: 'utf8' });
    expect(noBoot.status).toBe(2);
    expect(noBoot.stderr).toMatch(/--boot-delay: expected a number >= 1, got 0/);

    // tune --heldout ranks variants on the same shapes, with the baselines the heldout run cached.
    const tune = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench.ts', 'tune', '{"f3":{"scaleDown":{"payoff":{"factor":3}}}}', '--heldout', '2', '--seed', '3', '--days', '0.25', '--peak-gears', '300', '--cache', cache], { cwd: ROOT, encoding: 'utf8' });
    expect(tune.status, tune.stderr).toBe(0);
    expect(tune.stdout).toMatch(/tune: 2 variants x 2 traces/);
    expect(tune.stdout).toMatch(/baselines 2 cached, 0 computed/);
    expect(tune.stdout).toMatch(/^held-out \(mean; moves summed; worst\)\s+[\d.]+\s+([\d.]+|\d+ vs 0)\s+[\d.]+\s+\d+\/16, \d+ of \d+ misses infeasible$/m);
    // Today's defaults score the shapes as the heldout command did.
    const squeeze = (text: string) => text.replace(/ +/g, ' ');
    const defaults = squeeze(tune.stdout.slice(tune.stdout.indexOf('variant defaults'), tune.stdout.indexOf('variant f3')));
    for (const line of totals(run.stdout).filter((l) => l.startsWith('heldout:'))) expect(defaults).toContain(squeeze(line));
  });
});
