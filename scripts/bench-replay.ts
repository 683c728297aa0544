/**
 * `npm run bench -- replay`: how fast the replay runs (the four real
 * handlers, in-memory store, simulated cloud and platform) as the cluster
 * grows, on the Azure 2019 trace scaled so the replayed window peaks at
 * 2,000 / 20,000 / 200,000 gears (20 / 200 / 2,000 nodes at 100 gears per
 * node).
 *
 *   npm run bench -- replay                  the three sizes at their target lengths
 *   npm run bench -- replay --days 1         each size at most 1 simulated day
 *   npm run bench -- replay --sizes 2000,20000
 *   npm run bench -- replay --profile DIR    each size's V8 CPU profile in DIR, and its 15 costliest functions
 *
 * Each size runs in its own Node process, so its peak memory (max RSS) is its
 * own and one size's garbage does not slow the next. Printed per size: wall
 * and CPU seconds, the set-up (handlers loaded, first nodes and gears placed,
 * first minute), simulated minutes per wall second, CPU microseconds after
 * set-up per simulated node-minute (it does not rise with size when the cost
 * is linear in simulated minutes x nodes; the ratio column compares it with
 * the smallest size, in this run) and peak memory. The machine may be shared:
 * CPU time is the steadier figure, and ratios within one run the fair
 * comparison.
 *
 * Targets (issue 16, on a 2-core machine): 30 days at 2,000 gears <= 45 s,
 * 30 days at 20,000 <= 5 min, 3 days at 200,000 <= 5 min. With `--days`
 * shorter than a case's length, its time after set-up is held to its target
 * scaled by the same fraction (that assumes linear cost, which the ratio
 * column checks).
 */
import { fork } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { profileLines, summarizeProfile, type CpuProfile } from '../lib/sim/cpu-profile.js';
import { runNodescaler } from '../lib/sim/replay.js';
import { peakDemand, readTrace, type Trace } from '../lib/sim/trace.js';

const TRACE = new URL('../data/traces/azure2019_vm_aggregate_300s.csv', import.meta.url).pathname;
const GEARS_PER_NODE = 100;

interface Case {
  peakGears: number;
  days: number;
  targetSeconds: number;
}

const CASES: Case[] = [
  { peakGears: 2_000, days: 30, targetSeconds: 45 },
  { peakGears: 20_000, days: 30, targetSeconds: 300 },
  { peakGears: 200_000, days: 3, targetSeconds: 300 },
];

interface Measured {
  peakGears: number;
  days: number;
  simulatedMinutes: number;
  nodeMinutes: number;
  invocations: number;
  wallSeconds: number;
  cpuSeconds: number;
  /** Loading the handlers, seeding the first nodes and gears, the first minute: paid once, whatever the length. */
  setupWallSeconds: number;
  setupCpuSeconds: number;
  maxRssMiB: number;
  violations: number;
}

/** The trace's first `days`, scaled so that window's peak is `peakGears` (rounded once, from a finely scaled copy). */
export function benchTrace(days: number, peakGears: number): Trace {
  const fine = readTrace(TRACE, { stepSeconds: 300, peakGears: 1e9 });
  const seconds = days * 86400;
  const window = fine.steps.filter((s) => s.at < seconds);
  const factor = peakGears / Math.max(1, peakDemand({ steps: window }));
  return {
    ...fine,
    steps: window.map((s) => ({ at: s.at, demand: Math.round(s.demand * factor) })),
    durationSeconds: Math.min(fine.durationSeconds, seconds),
  };
}

/** One size, in this process: the figures as JSON on the IPC channel, progress on stdout. */
async function child(peakGears: number, days: number): Promise<void> {
  const trace = benchTrace(days, peakGears);
  const label = `${peakGears.toLocaleString('en')} gears, ${days} d`;
  let lastTenth = -1;
  const cpu = process.cpuUsage();
  const started = performance.now();
  let setup: { wall: number; cpu: number } | undefined;
  const outcome = await runNodescaler(trace, {
    gearsPerNode: GEARS_PER_NODE,
    bootDelaySeconds: 120,
    store: 'memory',
    seed: 42,
    onProgress: (fraction) => {
      if (!setup) {
        const used = process.cpuUsage(cpu);
        setup = { wall: (performance.now() - started) / 1000, cpu: (used.user + used.system) / 1e6 };
      }
      const tenth = Math.floor(fraction * 10);
      if (tenth === lastTenth) return;
      lastTenth = tenth;
      const elapsed = (performance.now() - started) / 1000;
      console.log(`  ${label}: ${tenth * 10}% after ${elapsed.toFixed(1)} s`);
    },
  });
  const wallSeconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const measured: Measured = {
    peakGears,
    days,
    simulatedMinutes: trace.durationSeconds / 60,
    nodeMinutes: outcome.result.nodeHours * 60,
    invocations: outcome.invocations,
    wallSeconds,
    cpuSeconds: (used.user + used.system) / 1e6,
    setupWallSeconds: setup?.wall ?? 0,
    setupCpuSeconds: setup?.cpu ?? 0,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    violations: outcome.violations.length,
  };
  if (process.send) process.send(measured);
  else console.log(JSON.stringify(measured));
}

/** The CPU profile `--profile` has a size's process write. */
const profileName = (peakGears: number, days: number) => `replay-${peakGears}-gears-${days}-days.cpuprofile`;

/** One size in a process of its own; with `profileDir`, the process writes its CPU profile there (`profileName`). */
function runCase(peakGears: number, days: number, profileDir?: string): Promise<Measured> {
  return new Promise((resolveCase, reject) => {
    const profiling = profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${profileName(peakGears, days)}`];
    const worker = fork(new URL(import.meta.url).pathname, ['--child', String(peakGears), String(days)], { execArgv: [...process.execArgv, ...profiling] });
    let measured: Measured | undefined;
    worker.on('message', (message) => (measured = message as Measured));
    worker.on('error', reject);
    worker.on('exit', (code) => (measured ? resolveCase(measured) : reject(new Error(`replay of ${peakGears} gears exited with ${code} and no figures`))));
  });
}

/** The costliest functions of the profile `file`, written by a size's process. */
function printProfile(file: string): void {
  if (!existsSync(file)) {
    console.log(`  no CPU profile at ${file}`);
    return;
  }
  const summary = summarizeProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, new URL('..', import.meta.url).pathname);
  console.log(`  profile ${file} (${summary.seconds.toFixed(1)} s sampled); the 15 functions that took most of their own time:`);
  for (const line of profileLines(summary, 15)) console.log(`  ${line}`);
}

/** `npm run bench -- replay [--days N] [--sizes A,B]`; exit code 1 when a target is missed. */
export async function replayBench(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { days: { type: 'string' }, sizes: { type: 'string' }, profile: { type: 'string' } } });
  const profileDir = values.profile === undefined ? undefined : resolve(values.profile);
  const maxDays = values.days === undefined ? Infinity : Number(values.days);
  if (!(maxDays > 0)) throw new Error(`--days: expected a number > 0, got ${values.days}`);
  const sizes = values.sizes?.split(',').map(Number);
  const cases = CASES.filter((c) => !sizes || sizes.includes(c.peakGears));
  if (cases.length === 0) throw new Error(`--sizes: expected some of ${CASES.map((c) => c.peakGears).join(', ')}`);

  console.log(`replay: the nodescaler replay (memory store) on ${TRACE}, ${GEARS_PER_NODE} gears per node, each size in its own process`);
  const results: Array<{ bench: Case; days: number; measured: Measured }> = [];
  for (const bench of cases) {
    const days = Math.min(bench.days, maxDays);
    console.log(`- ${bench.peakGears.toLocaleString('en')} peak gears, ${days} simulated days`);
    const measured = await runCase(bench.peakGears, days, profileDir);
    console.log(`  done: ${measured.wallSeconds.toFixed(1)} s wall, ${measured.cpuSeconds.toFixed(1)} s CPU, ${Math.round(measured.nodeMinutes).toLocaleString('en')} node-minutes`);
    if (profileDir !== undefined) printProfile(join(profileDir, profileName(bench.peakGears, days)));
    results.push({ bench, days, measured });
  }

  // After set-up: the part that grows with simulated minutes x nodes.
  const perNodeMinute = (m: Measured) => ((m.cpuSeconds - m.setupCpuSeconds) * 1e6) / Math.max(1, m.nodeMinutes);
  const reference = perNodeMinute(results[0]!.measured);
  const header = ['peak gears', 'days', 'node-minutes', 'wall s', 'cpu s', 'set-up s', 'sim min/s', 'cpu µs/node-min', 'ratio', 'max RSS MiB', 'target', 'result'];
  const table: string[][] = [header];
  let missed = 0;
  for (const { bench, days, measured } of results) {
    // A shortened run keeps its whole set-up: only the rest is held to the shortened target.
    const shortened = days < bench.days;
    const target = (bench.targetSeconds * days) / bench.days;
    const timed = shortened ? measured.wallSeconds - measured.setupWallSeconds : measured.wallSeconds;
    const ok = timed <= target && measured.violations === 0;
    if (!ok) missed += 1;
    table.push([
      bench.peakGears.toLocaleString('en'),
      String(days),
      Math.round(measured.nodeMinutes).toLocaleString('en'),
      measured.wallSeconds.toFixed(1),
      measured.cpuSeconds.toFixed(1),
      measured.setupWallSeconds.toFixed(1),
      Math.round(measured.simulatedMinutes / measured.wallSeconds).toLocaleString('en'),
      perNodeMinute(measured).toFixed(1),
      (perNodeMinute(measured) / reference).toFixed(2),
      Math.round(measured.maxRssMiB).toLocaleString('en'),
      `<= ${target.toFixed(1)} s${shortened ? ` after set-up (${bench.targetSeconds} s x ${days}/${bench.days} d)` : ''}`,
      measured.violations > 0 ? `FAIL (${measured.violations} violations)` : ok ? 'PASS' : 'FAIL',
    ]);
  }
  const widths = header.map((_, col) => table.reduce((w, line) => Math.max(w, line[col]!.length), 0));
  console.log('');
  for (const [i, line] of table.entries()) {
    console.log(line.map((cell, col) => (col === 0 || col >= 10 ? cell.padEnd(widths[col]!) : cell.padStart(widths[col]!))).join('  ').trimEnd());
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
  console.log('');
  console.log('cpu µs/node-min: CPU time after set-up per simulated node-minute; ratio: against the first size, in this run.');
  console.log('Linear cost keeps the ratio from rising with size (below 1: the fixed work of every minute, four schedules, weighs most on small clusters).');
  console.log(missed === 0 ? 'all targets met' : `${missed} target(s) missed`);
  if (missed > 0) process.exitCode = 1;
}

if (process.argv[2] === '--child') {
  child(Number(process.argv[3]), Number(process.argv[4])).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
