/**
 * `npm start`: the whole autoscaler running locally (the four real handlers,
 * in-process SQS, dynalite or the in-memory store, a simulated cloud and
 * platform, a virtual clock) replaying a workload trace, next to the
 * baselines, with a summary table and an HTML chart.
 *
 *   npm start -- --trace FILE.csv [--time-column NAME] [--demand-column NAME] [--step SECONDS]
 *     [--peak-gears N] [--gears-per-node N] [--boot-delay SECONDS]
 *     [--policy nodescaler|reactive|static-peak] [--json OUT.json] [--report OUT.html]
 *     [--store auto|dynalite|memory] [--days N] [--seed N] [--config FILE] [--price PER_NODE_HOUR]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ValidationError } from '../lib/errors.js';
import { runBaseline } from '../lib/sim/baselines.js';
import { parseConfig, readConfigFile } from '../lib/config/index.js';
import { formatDuration } from '../lib/domain/duration.js';
import { renderReport } from '../lib/sim/report.js';
import { runNodescaler, simulationConfig, type ReplayOptions } from '../lib/sim/replay.js';
import { sampleInterval, type PolicyResult } from '../lib/sim/results.js';
import { readTrace, type Trace } from '../lib/sim/trace.js';

const DEFAULT_TRACE = new URL('../data/traces/azure2019_vm_aggregate_300s.csv', import.meta.url);
const POLICIES = ['nodescaler', 'reactive', 'static-peak'] as const;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      trace: { type: 'string' },
      'time-column': { type: 'string' },
      'demand-column': { type: 'string' },
      step: { type: 'string', default: '300' },
      'peak-gears': { type: 'string', default: '2000' },
      'gears-per-node': { type: 'string', default: '100' },
      'boot-delay': { type: 'string', default: '120' },
      policy: { type: 'string', multiple: true },
      json: { type: 'string' },
      report: { type: 'string', default: 'out/report.html' },
      store: { type: 'string', default: 'auto' },
      days: { type: 'string' },
      seed: { type: 'string', default: '42' },
      config: { type: 'string' },
      price: { type: 'string', default: '0.192' },
    },
  });

  const number = (name: keyof typeof values, min: number) => {
    const text = values[name] as string;
    const value = Number(text);
    if (!Number.isFinite(value) || value < min) throw new ValidationError({ path: `--${name}`, message: `expected a number >= ${min}`, value: text });
    return value;
  };
  const policies = (values.policy ?? [...POLICIES]) as string[];
  for (const policy of policies) {
    if (!(POLICIES as readonly string[]).includes(policy)) {
      throw new ValidationError({ path: '--policy', message: `expected one of ${POLICIES.join(', ')}`, value: policy });
    }
  }
  const store = values.store!;
  if (!['auto', 'dynalite', 'memory'].includes(store)) throw new ValidationError({ path: '--store', message: 'expected auto, dynalite or memory', value: store });

  let tracePath = values.trace;
  if (tracePath === undefined) {
    tracePath = DEFAULT_TRACE.pathname;
    console.log(`no --trace given: replaying the Azure 2019 trace (${tracePath})`);
  }
  let trace = readTrace(tracePath, {
    ...(values['time-column'] ? { timeColumn: values['time-column'] } : {}),
    ...(values['demand-column'] ? { demandColumn: values['demand-column'] } : {}),
    stepSeconds: number('step', 1),
    peakGears: number('peak-gears', 1),
  });
  if (values.days !== undefined) trace = truncate(trace, number('days', 0.01) * 86400);

  const replay: ReplayOptions = {
    gearsPerNode: number('gears-per-node', 1),
    bootDelaySeconds: number('boot-delay', 0),
    store: store as ReplayOptions['store'],
    seed: number('seed', 0),
    ...(values.config ? { configFile: values.config } : {}),
  };
  console.log(
    `trace ${trace.source}: column ${trace.demandColumn}, ${trace.steps.length} steps of ${trace.stepSeconds} s ` +
      `(${(trace.durationSeconds / 86400).toFixed(1)} days), peak ${Math.max(...trace.steps.map((s) => s.demand))} gears, ` +
      `${replay.gearsPerNode} gears per node, boot delay ${replay.bootDelaySeconds} s`,
  );

  const results: PolicyResult[] = [];
  const started = Date.now();
  if (policies.includes('nodescaler')) {
    const progress = progressBar('nodescaler');
    const outcome = await runNodescaler(trace, { ...replay, onProgress: progress.update });
    progress.done();
    results.push(outcome.result);
    console.log(`nodescaler: ${outcome.storeKind} store, ${outcome.invocations} handler invocations, ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  const baselineOptions = { gearsPerNode: replay.gearsPerNode, bootDelaySeconds: replay.bootDelaySeconds, tickSeconds: 60, moveSeconds: 30, maxConcurrentMoves: 3, seed: replay.seed, sampleEverySeconds: sampleInterval(trace.durationSeconds) };
  for (const policy of ['reactive', 'static-peak'] as const) if (policies.includes(policy)) results.push(runBaseline(policy, trace, baselineOptions));

  printSummary(results);
  const goal = goalLine(results);
  if (goal) console.log(goal);

  if (values.json) {
    writeOut(values.json, JSON.stringify({ trace: { source: trace.source, demandColumn: trace.demandColumn, steps: trace.steps.length }, results: results.map(({ series: _s, events: _e, ...rest }) => rest) }, null, 2));
    console.log(`wrote ${values.json}`);
  }
  const config = values.config ? readConfigFile(values.config) : parseConfig(simulationConfig(trace, replay), 'simulation configuration');
  const pool = config.pools[0]!;
  writeOut(
    values.report!,
    renderReport({
      title: 'nodescaler replay',
      trace: { source: trace.source, demandColumn: trace.demandColumn, durationSeconds: trace.durationSeconds, ...(trace.startsAt ? { startsAt: trace.startsAt } : {}) },
      thresholds: { scaleUp: config.scaleUp.threshold, scaleDown: config.scaleDown.utilizationThreshold },
      pricePerNodeHour: number('price', 0),
      settings: [
        ['configuration', values.config ?? 'the simulation defaults (lib/sim/replay.ts simulationConfig: the product defaults, one pool, handler ec2 on the simulated cloud)'],
        ['pools', config.pools.map((p) => `${p.district}/${p.profile} (min ${p.min}, max ${p.max}, ${p.gearsPerNode ?? replay.gearsPerNode} gears per node)`).join('; ') + (config.pools.length > 1 ? ` (the replay simulates ${pool.district}/${pool.profile})` : '')],
        ['scale up', `at utilization >= ${config.scaleUp.threshold}, to ${config.scaleUp.target}; headroom ${config.scaleUp.headroomGears} gears`],
        ['scale down', `at utilization <= ${config.scaleDown.utilizationThreshold} for ${formatDuration(config.scaleDown.unneededTime)}; delay after add ${formatDuration(config.scaleDown.delayAfterAdd)}`],
        ['trace', `${trace.source}, column ${trace.demandColumn}, ${trace.steps.length} steps of ${trace.stepSeconds} s, peak scaled to ${values['peak-gears']} gears`],
        ['boot delay', `${replay.bootDelaySeconds} s`],
        ['seed', String(replay.seed)],
        ['store', replay.store],
        ['price', `$${values.price} per node-hour (--price)`],
      ],
      policies: results,
      notes: [
        'Capacity: gear slots of nodes that take gears. Nodes: hosts that cost money (booting, active, draining).',
        'Oracle: ceil(demand / gears per node) nodes at every step: perfect packing and instant boot.',
        'Cost: node-hours x the price per node-hour.',
        ...(goal ? [goal] : []),
      ],
    }),
  );
  console.log(`wrote ${values.report}`);
  if (results.some((r) => r.invariantViolations > 0)) process.exitCode = 1;
}

function truncate(trace: Trace, seconds: number): Trace {
  const steps = trace.steps.filter((s) => s.at < seconds);
  return { ...trace, steps, durationSeconds: Math.min(trace.durationSeconds, seconds) };
}

function printSummary(results: PolicyResult[]): void {
  const rows = results.map((r) => ({
    policy: r.policy,
    nodeHours: r.nodeHours.toFixed(1),
    oracleNodeHours: r.oracleNodeHours.toFixed(1),
    ratioToOracle: r.ratioToOracle.toFixed(3),
    unplacedGearMinutes: r.unplacedGearMinutes.toFixed(0),
    'unplaced %': (r.unplacedShare * 100).toFixed(3),
    scaleUps: r.scaleUps,
    scaleDowns: r.scaleDowns,
    gearMoves: r.gearMoves,
    maxNodes: r.maxNodes,
    deadLetters: r.deadLetters,
    invariantViolations: r.invariantViolations,
  }));
  const columns = Object.keys(rows[0] ?? {});
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c as keyof typeof r]).length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  console.log('');
  console.log(line(columns));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) console.log(line(columns.map((c) => String(row[c as keyof typeof row]))));
  console.log('');
}

function goalLine(results: PolicyResult[]): string | undefined {
  const ours = results.find((r) => r.policy === 'nodescaler');
  if (!ours) return undefined;
  const baselines = results.filter((r) => r.policy !== 'nodescaler');
  const checks = [
    [`node-hours ${ours.ratioToOracle.toFixed(3)} x oracle <= 1.10`, ours.ratioToOracle <= 1.1],
    ...baselines.map((b) => [`below ${b.policy} (${b.nodeHours.toFixed(1)})`, ours.nodeHours < b.nodeHours] as const),
    [`unplaced ${(ours.unplacedShare * 100).toFixed(3)} % <= 0.1 %`, ours.unplacedShare <= 0.001],
    [`invariant violations ${ours.invariantViolations} = 0`, ours.invariantViolations === 0],
  ] as const;
  return `goal: ${checks.map(([text, ok]) => `${text} ${ok ? 'MET' : 'MISSED'}`).join('; ')}`;
}

function progressBar(label: string) {
  const tty = process.stdout.isTTY;
  let last = -1;
  return {
    update: (fraction: number) => {
      const percent = Math.floor(fraction * 100);
      if (percent === last) return;
      last = percent;
      if (tty) {
        const width = 40;
        const filled = Math.round((width * percent) / 100);
        process.stdout.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${percent}%`);
      } else if (percent % 25 === 0) {
        console.log(`${label}: ${percent}%`);
      }
    },
    done: () => {
      if (tty) process.stdout.write('\n');
    },
  };
}

function writeOut(path: string, text: string): void {
  const full = resolve(path);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, text);
}

main().catch((error: unknown) => {
  if (error instanceof ValidationError) {
    console.error(error.message);
    process.exit(2);
  }
  console.error(error);
  process.exit(1);
});
