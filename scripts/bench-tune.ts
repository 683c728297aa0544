/**
 * `npm run bench -- tune VARIANTS`: nodescaler under each variant of its
 * configuration on every trace of the suite (scripts/bench-suite.ts), a table
 * per variant and a ranking. The baselines are cached in .cache/baselines/.
 *
 *   npm run bench -- tune VARIANTS [--days N] [--peak-gears N] [--gears-per-node N] [--boot-delay S] [--idle-share F] [--app-sizes E] [--zones N] [--only TEXT] [--seed N] [--heldout N] [--family F] [--sets LIST] [--cache DIR] [--no-cache] [--no-defaults] [--html FILE]
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ValidationError } from '../lib/errors.js';
import { BaselineCache } from '../lib/sim/baseline-cache.js';
import { familyShapes, heldoutFamilyList, isHeldoutFamily, type HeldoutFamily } from '../lib/sim/heldout-families.js';
import { formatAgainst, formatBySet, formatCheckTally, formatRanking, formatReachable, formatVariant, infeasibleNote, parseVariants, tuneSuite, type TuneTrace, type Variants } from '../lib/sim/tune.js';
import { parseTuneSets, tuneSetName, type TuneSet } from '../lib/sim/tune-sets.js';
import { simInstanceText } from '../lib/sim/replay.js';
import { suiteSettings, suiteTraces } from './bench-suite.js';
import { renderSuiteReport, suiteReportTrace, type SuiteReportTrace } from '../lib/sim/suite-report.js';
import { writeOut } from '../lib/sim/report.js';
import { goalChecks } from '../lib/sim/summary.js';
import { loadWithAppMix } from '../lib/sim/app-mix.js';
import { appMixText, type AppMix } from '../lib/sim/disruption.js';
import { WORLD_OPTIONS, WORLD_USAGE, worldFromFlags } from '../lib/sim/world-flags.js';
import type { PlacementRule } from '../lib/adapters/local/sim-placement.js';

const DEFAULT_CACHE = new URL('../.cache/baselines/', import.meta.url).pathname;

const USAGE = `usage: npm run bench -- tune VARIANTS [--days N] [--peak-gears N] [--gears-per-node N] [--boot-delay S] [--idle-share F] [--app-sizes E] [--zones N] [--only TEXT] [--seed N] [--heldout N] [--family F] [--sets LIST] [--cache DIR] [--no-cache] [--html FILE]

Replays nodescaler under each variant on every trace of the suite and ranks the
variants by goal checks met, then node-hours, then moves (both x clairvoyant-4h).
  VARIANTS            a JSON file, or inline JSON, mapping a name to configuration
                      overrides (objects merge into the simulation's configuration,
                      arrays replace), e.g. '{"factor3":{"scaleDown":{"payoff":{"factor":3}}}}';
                      a "defaults" variant ({}) is added unless one has no overrides
                      or --no-defaults is given
  --days N            replay the first N days of each trace (default: all; synthetic: 30)
  --peak-gears N      each replayed window is scaled to this peak (default 2000)
  --gears-per-node N  default 100
  --boot-delay S      seconds from a host's launch to its first gear, for every policy (default 120)
${WORLD_USAGE}
  --zones N           nodescaler's nodes over N availability zones (its subnets in turn; default 1: no zone), so drains
                      meet nodes of several zones; the baselines do not place nodes in zones
  --only TEXT         only traces whose name contains TEXT
  --seed N            default 42
  --heldout N         instead of the suite, N held-out shapes of seed --seed
                      (npm run bench -- heldout; 7 days unless --days)
  --family F          with --heldout: mixed (default), wander, surge or shift, as heldout --family
  --sets LIST         instead of one set, several in one ranking: suite and FAMILY:SEED
                      items, e.g. suite,mixed:38,wander:6,surge:4 (each held-out set
                      --heldout shapes, default 8, replayed with its own seed; every
                      set --days long, default 7); not with --seed or --family
  --cache DIR         where the baselines' results are kept (default .cache/baselines)
  --no-cache          compute the baselines again and keep nothing
  --html FILE         also write the figures as a page to explore (as suite's): every trace's
                      marks, node-hours against moves x clairvoyant-4h, with the goal box and
                      each trace's goal checks; one page per variant (FILE-VARIANT.html when
                      there are several)`;

export async function runTune(argv: string[]): Promise<void> {
  let values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        days: { type: 'string' },
        'peak-gears': { type: 'string', default: '2000' },
        'gears-per-node': { type: 'string', default: '100' },
        'boot-delay': { type: 'string', default: '120' },
        ...WORLD_OPTIONS,
        zones: { type: 'string', default: '1' },
        only: { type: 'string' },
        seed: { type: 'string', default: '42' },
        heldout: { type: 'string' },
        family: { type: 'string', default: 'mixed' },
        sets: { type: 'string' },
        html: { type: 'string' },
        cache: { type: 'string', default: DEFAULT_CACHE },
        'no-cache': { type: 'boolean', default: false },
        'no-defaults': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    return fail((error as Error).message);
  }
  if (values.help) return console.log(USAGE);
  if (positionals.length !== 1) return fail(`expected one VARIANTS argument (a JSON file or inline JSON), got ${positionals.length}`);
  const number = (name: 'days' | 'peak-gears' | 'gears-per-node' | 'boot-delay' | 'seed' | 'heldout' | 'zones', min: number) => {
    const value = Number(values[name]);
    if (!Number.isFinite(value) || value < min) throw new ValidationError({ path: `--${name}`, message: `expected a number >= ${min}`, value: values[name] });
    return value;
  };
  let variants: Variants;
  let days: number | undefined;
  let peakGears: number, gearsPerNode: number, bootDelaySeconds: number, seed: number, zones: number;
  let heldout: number | undefined;
  let sets: TuneSet[] | undefined;
  let apps: AppMix | undefined;
  let placement: PlacementRule | undefined;
  let idleTakesNoSlot: true | undefined;
  try {
    ({ apps, placement, idleTakesNoSlot } = worldFromFlags(values));
    if (values.sets !== undefined) {
      for (const flag of ['seed', 'family'] as const) {
        if (argv.some((arg) => arg === `--${flag}` || arg.startsWith(`--${flag}=`))) throw new ValidationError({ path: `--${flag}`, message: '--sets names each set\'s seed and family', value: values[flag] });
      }
      sets = parseTuneSets(values.sets);
    }
    days = values.days === undefined ? undefined : number('days', 0.01);
    peakGears = number('peak-gears', 1);
    gearsPerNode = number('gears-per-node', 1);
    bootDelaySeconds = number('boot-delay', 1);
    seed = number('seed', 0);
    zones = number('zones', 1);
    if (!Number.isInteger(zones) || zones > 6) throw new ValidationError({ path: '--zones', message: 'expected a whole number of zones from 1 to 6', value: values.zones });
    heldout = values.heldout === undefined ? undefined : number('heldout', 1);
    if (heldout !== undefined && !Number.isInteger(heldout)) throw new ValidationError({ path: '--heldout', message: 'expected a whole number of shapes', value: values.heldout });
    // Held-out shapes are as long as `npm run bench -- heldout` makes them, so both share cached baselines.
    if (heldout !== undefined || sets !== undefined) days ??= 7;
    if (!isHeldoutFamily(values.family)) throw new ValidationError({ path: '--family', message: `expected ${heldoutFamilyList()}`, value: values.family });
    const argument = positionals[0]!;
    const inline = argument.trim().startsWith('{');
    if (!inline && !existsSync(argument)) throw new ValidationError({ path: 'VARIANTS', message: 'neither inline JSON nor an existing file', value: argument });
    variants = parseVariants(inline ? argument : readFileSync(argument, 'utf8'), inline ? 'inline variants' : argument);
  } catch (error) {
    return fail((error as Error).message);
  }
  const hasDefaults = Object.values(variants).some((overrides) => Object.keys(overrides).length === 0) || 'defaults' in variants;
  if (!hasDefaults && !values['no-defaults']) variants = { defaults: {}, ...variants };

  const notes = new Map<string, string>();
  const heldoutShapes = (family: HeldoutFamily, shapeSeed: number, withSeed: boolean): TuneTrace[] =>
    familyShapes(family, { count: heldout ?? 8, seed: shapeSeed, days: days!, peakGears }).map((shape) => {
      notes.set(shape.name, shape.description);
      return { name: shape.name, load: loadWithAppMix(() => shape.trace, apps), ...(withSeed ? { seed: shapeSeed } : {}) };
    });
  const setOfTrace = new Map<string, string>();
  const all: TuneTrace[] = sets
    ? sets.flatMap((set) => {
        const traces = set.kind === 'suite' ? suiteTraces(days, peakGears, seed, apps) : heldoutShapes(set.family, set.seed, true);
        for (const trace of traces) setOfTrace.set(trace.name, tuneSetName(set));
        return traces;
      })
    : heldout === undefined
      ? suiteTraces(days, peakGears, seed, apps)
      : heldoutShapes(values.family, seed, false);
  const traces = all.filter((t) => values.only === undefined || t.name.includes(values.only));
  if (traces.length === 0) return fail(`--only: no ${sets ? 'trace of the sets' : heldout === undefined ? 'suite trace' : 'held-out shape'} contains ${values.only}`);
  const cache = new BaselineCache(values['no-cache'] ? undefined : values.cache);
  const names = Object.keys(variants);
  const started = Date.now();
  let last = '';
  const setsText = sets ? `sets ${sets.map(tuneSetName).join(', ')}, each replayed with its own seed (the suite ${seed})` : `seed ${seed}`;
  console.log(`tune: ${names.length} variants x ${traces.length} traces (${days ?? 'all'} days, peak ${peakGears} gears, ${gearsPerNode} gears per node on ${simInstanceText()} unless a variant's pools name another, boot delay ${bootDelaySeconds} s${zones > 1 ? `, nodes over ${zones} zones` : ''}${apps ? `, applications ${appMixText(apps)}` : ''}${placement ? `, placement ${placement}` : ''}${idleTakesNoSlot ? ', slots active gears only' : ''}, ${setsText})`);
  const pages = new Map<string, SuiteReportTrace[]>();
  try {
    const scores = await tuneSuite({
      traces,
      variants,
      replay: { gearsPerNode, bootDelaySeconds, seed, ...(zones > 1 ? { zones } : {}), ...(placement ? { placement } : {}), ...(idleTakesNoSlot ? { idleTakesNoSlot } : {}) },
      window: { days, peakGears },
      cache,
      onProgress: ({ variant, variantIndex, traceIndex, trace, fraction, baselinesCached }) => {
        const percent = Math.floor(fraction * 10) * 10;
        const line = `[${variantIndex + 1}/${names.length} ${variant}] [${traceIndex + 1}/${traces.length}] ${trace}: nodescaler ${percent}% (baselines ${baselinesCached ? 'cached' : 'computed'}; ${((Date.now() - started) / 1000).toFixed(0)} s so far)`;
        const key = `${variantIndex}/${traceIndex}/${percent}`;
        if (key === last) return;
        last = key;
        if (process.stdout.isTTY) process.stdout.write(`\r${line}\x1b[K`);
        else if (percent % 50 === 0) console.log(line);
      },
      onTrace: ({ variant, trace, results, floor }) => {
        if (values.html === undefined) return;
        const page = pages.get(variant) ?? pages.set(variant, []).get(variant)!;
        page.push(suiteReportTrace(trace, results, goalChecks(results, floor) ?? [], notes.get(trace)));
      },
      onVariant: (score) => {
        if (process.stdout.isTTY) process.stdout.write('\n');
        console.log(`\nvariant ${score.variant} ${JSON.stringify(variants[score.variant])}: ${score.met}/${score.of} goal checks met${infeasibleNote(score)}`);
        console.log(formatVariant(score, sets ? 'sets (mean; moves summed; worst)' : heldout === undefined ? undefined : 'held-out (mean; moves summed; worst)'));
        const reachable = formatReachable(score);
        if (reachable.length > 0) console.log(`misses within reach (${reachable.length}):\n${reachable.join('\n')}`);
        const tally = formatCheckTally(score.traces);
        if (tally) console.log(`check by check:\n${tally}`);
        const bySet = formatBySet(score, (trace) => setOfTrace.get(trace));
        if (bySet) console.log(`by set:\n${bySet}`);
        console.log('');
      },
    });
    console.log(`tune: ${names.length} variants x ${traces.length} traces in ${((Date.now() - started) / 1000).toFixed(0)} s; baselines ${cache.hits} cached, ${cache.misses} computed${values['no-cache'] ? ' (not kept)' : ` (${values.cache})`}`);
    console.log('ranking (most goal checks met, then node-hours, then moves; x c-4h = x clairvoyant-4h):');
    console.log(formatRanking(scores));
    const base = Object.keys(variants).find((name) => Object.keys(variants[name]!).length === 0);
    if (base !== undefined) for (const line of formatAgainst(scores, base)) console.log(line);
    if (values.html !== undefined) {
      const what = sets ? `sets ${sets.map(tuneSetName).join(', ')}` : heldout === undefined ? `the suite, seed ${seed}` : `${heldout} held-out ${values.family} shapes of seed ${seed}`;
      const settings = suiteSettings({ shapes: what, days: String(days ?? 'all'), peakGears, gearsPerNode, bootDelaySeconds, seed, ...(apps ? { apps } : {}), ...(placement ? { placement } : {}), ...(idleTakesNoSlot ? { idleTakesNoSlot } : {}) });
      for (const [variant, page] of pages) {
        const file = pages.size === 1 ? values.html : values.html.replace(/(\.html?)?$/, (ext) => `-${variant}${ext || '.html'}`);
        writeOut(file, renderSuiteReport({ title: `nodescaler: tune, variant ${variant}, ${what}`, settings: [...settings.slice(0, -1), ['nodescaler', `variant ${variant}: ${JSON.stringify(variants[variant])} over today's defaults`]], traces: page }));
        console.log(`wrote ${file}`);
      }
    }
  } catch (error) {
    if (error instanceof ValidationError) return fail(error.message);
    throw error;
  }
}

function fail(message: string): void {
  console.error(`${message}\n\n${USAGE}`);
  process.exitCode = 2;
}
