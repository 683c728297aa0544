/**
 * `npm run bench -- suite`: every trace of data/traces/ (each demand column)
 * and the seeded synthetic families (lib/sim/synthetic.ts), replayed under
 * nodescaler and every comparison policy on the same world; one table per
 * trace, the goal line of each, and a tally.
 *
 *   npm run bench -- suite [--days N] [--peak-gears N] [--gears-per-node N] [--boot-delay SECONDS] [--idle-share F] [--app-sizes E] [--only TEXT] [--seed N] [--html FILE]
 *
 * It also writes the figures as a page to explore (lib/sim/suite-report.ts, default out/suite.html).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { abortLine } from '../lib/sim/aborts.js';
import { pagesLine } from '../lib/sim/alarms.js';
import { baselineKeyParts, floorDemand, runBaselines, type BaselineCache } from '../lib/sim/baseline-cache.js';
import { loadWithAppMix } from '../lib/sim/app-mix.js';
import { appMixText, DEFAULT_APP_MIX, type AppMix } from '../lib/sim/disruption.js';
import { placementText } from '../lib/sim/placement-flag.js';
import { slotsText } from '../lib/sim/slots-flag.js';
import { WORLD_OPTIONS, WORLD_USAGE, worldFromFlags, type WorldFlags } from '../lib/sim/world-flags.js';
import type { PlacementRule } from '../lib/adapters/local/sim-placement.js';
import { floorForResults, floorLine, type ReactiveFloor } from '../lib/sim/floor.js';
import { peakDemand } from '../lib/sim/pools.js';
import { runNodescaler, simInstanceText } from '../lib/sim/replay.js';
import type { PolicyResult } from '../lib/sim/results.js';
import { writeOut } from '../lib/sim/report.js';
import { formatTable, goalChecks, goalLine, moveCausesLine, togglesLine, waitingLine, withSavings } from '../lib/sim/summary.js';
import { renderSuiteReport, suiteReportTrace, type SuiteReportTrace } from '../lib/sim/suite-report.js';
import { SYNTHETIC_FAMILIES, syntheticTrace } from '../lib/sim/synthetic.js';
import { readTrace, type Trace } from '../lib/sim/trace.js';
import { windowOf } from '../lib/sim/window.js';

const TRACES = new URL('../data/traces/', import.meta.url).pathname;
const TIME_COLUMNS = ['timestamp', 'time', 'seconds', 't'];

const USAGE = `usage: npm run bench -- suite [--days N] [--peak-gears N] [--gears-per-node N] [--boot-delay SECONDS] [--idle-share F] [--app-sizes E] [--only TEXT] [--seed N] [--html FILE]

Replays every trace column of data/traces/ and the synthetic families
(${SYNTHETIC_FAMILIES.join(', ')}) under every policy.
  --days N            replay the first N days of each trace (default: all; synthetic: 30)
  --peak-gears N      each replayed window is scaled to this peak (default 2000)
  --gears-per-node N  default 100
  --boot-delay S      seconds from a host's launch to its first gear, for every policy (default 120)
${WORLD_USAGE}
  --only TEXT         only traces whose name contains TEXT
  --seed N            default 42
  --html FILE         the page to explore the figures in (default out/suite.html)`;

/** Every (file, demand column) of the repository's traces, and the synthetic families; each given `apps` when set. */
export function suiteTraces(days: number | undefined, peakGears: number, seed: number, apps?: AppMix): Array<{ name: string; load: () => Trace }> {
  const out: Array<{ name: string; load: () => Trace }> = [];
  for (const file of readdirSync(TRACES).filter((f) => f.endsWith('.csv')).sort()) {
    const path = join(TRACES, file);
    const header = readFileSync(path, 'utf8').slice(0, 200).split(/\r?\n/)[0]!.split(',');
    for (const column of header.filter((c) => !TIME_COLUMNS.includes(c))) {
      out.push({ name: `${file.replace(/\.csv$/, '')}:${column}`, load: loadWithAppMix(() => windowOf(readTrace(path, { demandColumn: column, stepSeconds: 300, peakGears }), days === undefined ? undefined : days * 86400, peakGears), apps) });
    }
  }
  SYNTHETIC_FAMILIES.forEach((family, i) => out.push({ name: `synthetic:${family}`, load: loadWithAppMix(() => syntheticTrace(family, { days: days ?? 30, peakGears, seed: seed + i }), apps) }));
  return out;
}

export async function runSuite(argv: string[]): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: { days: { type: 'string' }, 'peak-gears': { type: 'string', default: '2000' }, 'gears-per-node': { type: 'string', default: '100' }, 'boot-delay': { type: 'string', default: '120' }, ...WORLD_OPTIONS, only: { type: 'string' }, seed: { type: 'string', default: '42' }, html: { type: 'string', default: 'out/suite.html' }, help: { type: 'boolean', short: 'h' } } }));
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (values.help) return console.log(USAGE);
  const number = (name: 'days' | 'peak-gears' | 'gears-per-node' | 'boot-delay' | 'seed', min: number) => {
    const value = Number(values[name]);
    if (!Number.isFinite(value) || value < min) {
      console.error(`--${name}: expected a number >= ${min}, got ${values[name]}\n\n${USAGE}`);
      process.exit(2);
    }
    return value;
  };
  const days = values.days === undefined ? undefined : number('days', 0.01);
  const peakGears = number('peak-gears', 1);
  const gearsPerNode = number('gears-per-node', 1);
  const bootDelaySeconds = number('boot-delay', 1);
  const seed = number('seed', 0);
  let world: WorldFlags = {};
  try {
    world = worldFromFlags(values);
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  const { apps, placement, idleTakesNoSlot } = world;
  if (apps) console.log(`suite: applications ${appMixText(apps)}`);
  if (placement) console.log(`suite: placement ${placement}`);
  if (idleTakesNoSlot) console.log('suite: slots held by active gears only');
  const traces = suiteTraces(days, peakGears, seed, apps).filter((t) => values.only === undefined || t.name.includes(values.only));
  const started = Date.now();
  const tally: Array<{ trace: string; met: number; of: number; infeasible: number }> = [];
  const page: SuiteReportTrace[] = [];

  for (const [index, entry] of traces.entries()) {
    const { results, floor } = await replaySuiteTrace(entry, `[${index + 1}/${traces.length}] ${entry.name}`, { gearsPerNode, bootDelaySeconds, seed, started, ...(placement ? { placement } : {}), ...(idleTakesNoSlot ? { idleTakesNoSlot } : {}) });
    const checks = goalChecks(results, floor) ?? [];
    tally.push({ trace: entry.name, met: checks.filter((c) => c.met).length, of: checks.length, infeasible: checks.filter((c) => c.infeasible).length });
    page.push(suiteReportTrace(entry.name, results, checks));
  }
  console.log(`suite: ${traces.length} traces in ${((Date.now() - started) / 1000).toFixed(0)} s; goal checks met by nodescaler (today's defaults), and misses the figures show infeasible:`);
  const sum = (pick: (t: (typeof tally)[number]) => number) => tally.reduce((total, t) => total + pick(t), 0);
  const rows = tally.map((t) => ({ trace: t.trace, met: `${t.met}/${t.of}`, 'infeasible misses': `${t.infeasible} of ${t.of - t.met}` }));
  rows.push({ trace: 'suite', met: `${sum((t) => t.met)}/${sum((t) => t.of)}`, 'infeasible misses': `${sum((t) => t.infeasible)} of ${sum((t) => t.of - t.met)}` });
  console.log(formatTable(rows));
  const settings = suiteSettings({ days: days === undefined ? 'each trace whole (synthetic: 30)' : String(days), peakGears, gearsPerNode, bootDelaySeconds, seed, ...(apps ? { apps } : {}), ...(placement ? { placement } : {}), ...(idleTakesNoSlot ? { idleTakesNoSlot } : {}) });
  writeOut(values.html!, renderSuiteReport({ title: 'nodescaler: the trace suite', settings, traces: page }));
  console.log(`wrote ${values.html}`);
}

/** The settings table of a suite or held-out page. */
export function suiteSettings(run: { days: string; peakGears: number; gearsPerNode: number; bootDelaySeconds: number; seed: number; shapes?: string; apps?: AppMix; placement?: PlacementRule; idleTakesNoSlot?: boolean }): Array<[string, string]> {
  return [
    ...(run.shapes ? [['shapes', run.shapes] as [string, string]] : []),
    ['days', run.days],
    ['peak gears', run.peakGears.toLocaleString('en')],
    ['gears per node', String(run.gearsPerNode)],
    ['node', `${simInstanceText()}: the bill's price and each drain's saving per node-hour`],
    ['boot delay', `${run.bootDelaySeconds} s`],
    ['applications', appMixText(run.apps ?? DEFAULT_APP_MIX)],
    ['placement', placementText(run.placement)],
    ['slots', slotsText(run.idleTakesNoSlot)],
    ['seed', String(run.seed)],
    ['nodescaler', "today's defaults (lib/sim/replay.ts simulationConfig)"],
  ];
}

export interface SuiteReplay {
  gearsPerNode: number;
  bootDelaySeconds: number;
  seed: number;
  /** Date.now() when the run started, for the progress line. */
  started: number;
  /** Where new gears go, for nodescaler and the baselines (default the least-loaded node). */
  placement?: PlacementRule;
  /** Idle gears hold no slot, for nodescaler and the baselines (default: every gear holds one). */
  idleTakesNoSlot?: boolean;
  /** Where the baselines' results are kept (`npm run bench -- tune`, `heldout`); none: they are computed. */
  cache?: { store: BaselineCache; window: { days: number | undefined; peakGears: number } };
  /** Printed under the trace's heading (a held-out shape's components). */
  note?: string;
}

/**
 * One trace of the suite under nodescaler (with a progress line) and every
 * baseline: prints its table, goal line, reactive floor (lib/sim/floor.ts),
 * drains and moves by cause; the results and the floor.
 */
export async function replaySuiteTrace(entry: { name: string; load: () => Trace }, heading: string, run: SuiteReplay): Promise<{ results: PolicyResult[]; floor?: ReactiveFloor }> {
  const trace = entry.load();
  const label = `${heading} (${(trace.durationSeconds / 86400).toFixed(1)} days, peak ${peakDemand(trace)} gears)`;
  const replay = { gearsPerNode: run.gearsPerNode, bootDelaySeconds: run.bootDelaySeconds, store: 'memory' as const, seed: run.seed, ...(run.placement ? { placement: run.placement } : {}), ...(run.idleTakesNoSlot ? { idleTakesNoSlot: true } : {}) };
  let last = -1;
  const outcome = await runNodescaler(trace, {
    ...replay,
    onProgress: (fraction) => {
      const percent = Math.floor(fraction * 10) * 10;
      if (percent === last) return;
      last = percent;
      const elapsed = ((Date.now() - run.started) / 1000).toFixed(0);
      if (process.stdout.isTTY) process.stdout.write(`\r${label}: nodescaler ${percent}% (${elapsed} s so far)`);
      else if (percent % 50 === 0) console.log(`${label}: nodescaler ${percent}% (${elapsed} s so far)`);
    },
  });
  if (process.stdout.isTTY) process.stdout.write('\n');
  const baselines = run.cache
    ? run.cache.store.get(baselineKeyParts(entry.name, trace, replay, run.cache.window), () => runBaselines(trace, replay)).results
    : runBaselines(trace, replay);
  const results = withSavings([outcome.result, ...baselines]);
  console.log(`\n${label}`);
  if (run.note) console.log(run.note);
  console.log(formatTable(suiteRows(results)));
  const floor = floorForResults(floorDemand(trace, replay), { gearsPerNode: run.gearsPerNode, bootDelaySeconds: replay.bootDelaySeconds }, results);
  const goal = goalLine(results, floor);
  if (goal) console.log(goal);
  const clairvoyant = results.find((r) => r.policy === 'clairvoyant-4h');
  if (floor && clairvoyant) console.log(floorLine(floor, clairvoyant.nodeHours, results.find((r) => r.policy === 'cluster-autoscaler')?.nodeHours));
  console.log(`nodescaler: ${outcome.result.drainsStarted} drains, ${abortLine(outcome.result.aborts)}; ${pagesLine(outcome.result.pages)}`);
  const causes = moveCausesLine(results);
  if (causes) console.log(causes);
  const waiting = waitingLine(results);
  if (waiting) console.log(waiting);
  const toggles = togglesLine(results);
  if (toggles) console.log(toggles);
  console.log('');
  return floor ? { results, floor } : { results };
}

function suiteRows(results: PolicyResult[]): Array<Record<string, string | number>> {
  const oracle = results[0]?.oracleNodeHours ?? 0;
  const clairvoyant = results.find((r) => r.policy === 'clairvoyant-4h');
  return results.map((r) => ({
    policy: r.policy,
    nodeHours: r.nodeHours.toFixed(0),
    'x oracle': oracle > 0 ? (r.nodeHours / oracle).toFixed(3) : '-',
    'x clairvoyant-4h': clairvoyant && clairvoyant.nodeHours > 0 ? (r.nodeHours / clairvoyant.nodeHours).toFixed(3) : '-',
    'moves/gear-day': r.movesPerGearDay.toFixed(3),
    'moves/gear p95': r.movesPerGearP95,
    'unplaced %': (r.unplacedShare * 100).toFixed(3),
    '$ saved/mo': r.savingsPerMonth === undefined ? '-' : r.savingsPerMonth.toFixed(0),
    'autoscaler $/mo': r.autoscalerCostPerMonth === undefined ? '-' : r.autoscalerCostPerMonth.toFixed(2),
  }));
}
