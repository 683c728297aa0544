/**
 * `npm run bench -- heldout`: nodescaler and every baseline on random
 * workload shapes drawn from a seed (lib/sim/heldout.ts), shapes the defaults
 * were not chosen on; per shape the suite's table and goal line
 * (scripts/bench-suite.ts), then a total. The baselines are cached in
 * .cache/baselines/, as `tune` keeps them.
 *
 *   npm run bench -- heldout [--family F] [--count N] [--seed S] [--days D] [--peak-gears G] [--gears-per-node N] [--boot-delay S] [--idle-share F] [--app-sizes E] [--only I,J] [--cache DIR] [--no-cache] [--html FILE]
 *
 * It also writes the figures as a page to explore (lib/sim/suite-report.ts, default out/heldout-seed-S.html).
 */
import { parseArgs } from 'node:util';
import { BaselineCache } from '../lib/sim/baseline-cache.js';
import { familyShapes, familyShapesLabel, familySource, heldoutFamilyList, isHeldoutFamily } from '../lib/sim/heldout-families.js';
import { writeOut } from '../lib/sim/report.js';
import { goalChecks } from '../lib/sim/summary.js';
import { renderSuiteReport, suiteReportTrace, type SuiteReportTrace } from '../lib/sim/suite-report.js';
import { formatCheckTally, formatReachable, formatVariant, scoreTrace, scoreVariant, type TraceScore } from '../lib/sim/tune.js';
import { replaySuiteTrace, suiteSettings } from './bench-suite.js';
import { loadWithAppMix } from '../lib/sim/app-mix.js';
import { appMixText } from '../lib/sim/disruption.js';
import { WORLD_OPTIONS, WORLD_USAGE, worldFromFlags, type WorldFlags } from '../lib/sim/world-flags.js';

const DEFAULT_CACHE = new URL('../.cache/baselines/', import.meta.url).pathname;

const USAGE = `usage: npm run bench -- heldout [--family F] [--count N] [--seed S] [--days D] [--peak-gears G] [--gears-per-node N] [--boot-delay S] [--idle-share F] [--app-sizes E] [--only I,J] [--cache DIR] [--no-cache] [--html FILE]

Replays nodescaler and every baseline on N random workload shapes of seed S
(daily and weekly cycles, trends, steps, bursts, noise, flat periods, app
churn; lib/sim/heldout.ts), with the suite's table and goal line per shape
and a total.
  --family F          mixed (default: lib/sim/heldout.ts), wander (lib/sim/heldout-wander.ts: demand
                      that wanders for hours, days that differ, jobs on a clock, heavy-tailed spikes, dips;
                      minute by minute), surge (lib/sim/heldout-surge.ts: days of two crests, weekends of
                      another shape, flash crowds that fade, backlogs cleared at once, tenants leaving;
                      minute by minute) or shift (lib/sim/heldout-shift.ts: regions that grow apart,
                      tenants moving in and out, holidays and sales, a clock change, flapping, blips;
                      minute by minute); shapes are named s<seed>-<n>, w<seed>-<n>, u<seed>-<n> and f<seed>-<n>
  --count N           shapes (default 8)
  --seed S            which shapes, and the replay's seed (default 1); shape n of a seed is always the same
  --days D            days of each shape (default 7)
  --peak-gears G      each shape's peak (default 2000)
  --gears-per-node N  default 100
  --boot-delay S      seconds from a host's launch to its first gear, for every policy (default 120)
${WORLD_USAGE}
  --only I,J          only shapes I, J (1-based, as numbered in the output); the total covers them
  --cache DIR         where the baselines' results are kept (default .cache/baselines)
  --no-cache          compute the baselines again and keep nothing
  --html FILE         the page to explore the figures in (default out/heldout-seed-S.html)`;

export async function runHeldout(argv: string[]): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        family: { type: 'string', default: 'mixed' },
        count: { type: 'string', default: '8' },
        seed: { type: 'string', default: '1' },
        days: { type: 'string', default: '7' },
        'peak-gears': { type: 'string', default: '2000' },
        'gears-per-node': { type: 'string', default: '100' },
        'boot-delay': { type: 'string', default: '120' },
        ...WORLD_OPTIONS,
        only: { type: 'string' },
        cache: { type: 'string', default: DEFAULT_CACHE },
        'no-cache': { type: 'boolean', default: false },
        html: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    return fail((error as Error).message);
  }
  if (values.help) return console.log(USAGE);
  const figures: Record<string, number> = {};
  for (const [name, min, integer] of [['count', 1, true], ['seed', 0, true], ['days', 0.01, false], ['peak-gears', 1, true], ['gears-per-node', 1, true], ['boot-delay', 1, false]] as const) {
    const value = Number(values[name]);
    if (!Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) return fail(`--${name}: expected ${integer ? 'an integer' : 'a number'} >= ${min}, got ${values[name]}`);
    figures[name] = value;
  }
  const { count, seed, days } = figures as { count: number; seed: number; days: number };
  const peakGears = figures['peak-gears']!;
  const gearsPerNode = figures['gears-per-node']!;
  const bootDelaySeconds = figures['boot-delay']!;
  let world: WorldFlags;
  try {
    world = worldFromFlags(values);
  } catch (error) {
    return fail((error as Error).message);
  }
  const { apps, placement, idleTakesNoSlot } = world;
  const family = values.family;
  if (!isHeldoutFamily(family)) return fail(`--family: expected ${heldoutFamilyList()}, got ${family}`);
  const only = values.only === undefined ? undefined : [...new Set(values.only.split(',').map((part) => Number(part.trim())))];
  if (only && only.some((n) => !Number.isInteger(n) || n < 1 || n > count)) return fail(`--only: expected shape numbers from 1 to ${count} separated by commas, got ${values.only}`);
  const cache = new BaselineCache(values['no-cache'] ? undefined : values.cache);
  const started = Date.now();
  console.log(`heldout: ${count} ${familyShapesLabel(family)} of seed ${seed} (${days} days, peak ${peakGears} gears, ${gearsPerNode} gears per node, boot delay ${bootDelaySeconds} s${apps ? `, applications ${appMixText(apps)}` : ''}${placement ? `, placement ${placement}` : ''}${idleTakesNoSlot ? ', slots active gears only' : ''})`);
  const scores: TraceScore[] = [];
  const page: SuiteReportTrace[] = [];
  for (const [index, shape] of familyShapes(family, { count, seed, days, peakGears }).entries()) {
    if (only && !only.includes(index + 1)) continue;
    const entry = { name: shape.name, load: loadWithAppMix(() => shape.trace, apps) };
    const { results, floor } = await replaySuiteTrace(entry, `[${index + 1}/${count}] ${shape.name}`, {
      gearsPerNode,
      bootDelaySeconds,
      seed,
      started,
      ...(placement ? { placement } : {}),
      ...(idleTakesNoSlot ? { idleTakesNoSlot } : {}),
      cache: { store: cache, window: { days, peakGears } },
      note: `shape: ${shape.description}`,
    });
    scores.push(scoreTrace(shape.name, results, floor));
    page.push(suiteReportTrace(shape.name, results, goalChecks(results, floor) ?? [], shape.description));
  }
  console.log(`heldout: ${only ? only.length : count} shapes in ${((Date.now() - started) / 1000).toFixed(0)} s; baselines ${cache.hits} cached, ${cache.misses} computed; nodescaler (today's defaults) x clairvoyant-4h and goal checks met:`);
  console.log(formatVariant(scoreVariant('heldout', scores), 'total (mean; moves summed; worst)'));
  const reachable = formatReachable({ traces: scores });
  if (reachable.length > 0) console.log(`misses within reach (${reachable.length}):\n${reachable.join('\n')}`);
  const tally = formatCheckTally(scores);
  if (tally) console.log(`check by check:\n${tally}`);
  const settings = suiteSettings({ shapes: `${only ? only.join(', ') : `1-${count}`} of seed ${seed} (${familySource(family)})`, days: String(days), peakGears, gearsPerNode, bootDelaySeconds, seed, ...(apps ? { apps } : {}), ...(placement ? { placement } : {}), ...(idleTakesNoSlot ? { idleTakesNoSlot } : {}) });
  const html = values.html ?? `out/heldout-${family === 'mixed' ? '' : `${family}-`}seed-${seed}.html`;
  writeOut(html, renderSuiteReport({ title: `nodescaler: held-out ${familyShapesLabel(family)} of seed ${seed}`, settings, traces: page }));
  console.log(`wrote ${html}`);
}

function fail(message: string): void {
  console.error(`${message}\n\n${USAGE}`);
  process.exitCode = 2;
}
