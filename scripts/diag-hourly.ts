/**
 * Diagnostic replay (not a benchmark): where nodescaler holds more nodes than
 * clairvoyant-4h on one held-out shape. Hour by hour: the highest demand, the
 * mean nodes each policy pays for, nodescaler's moves, the most gears
 * waiting at one sample, and the gear-minutes waited beside
 * cluster-autoscaler's (a wait shorter than the samples' spacing shows only
 * there); with FROM and TO
 * (hours), also every minute between them where gears waited under either
 * policy (demand, gear slots, nodes and waiting gears beside
 * cluster-autoscaler's) and nodescaler's decision log (every entry,
 * no-actions included), which says why it kept what it kept.
 *
 *   npx tsx scripts/diag-hourly.ts FAMILY SEED SHAPE PEAK_GEARS [FROM TO] [--idle-share F] [--app-sizes E]
 *   e.g. wander 3 4 2000 24 30   (held-out w3-4 at 2,000 gears, the log of hours 24-30)
 *   npx tsx scripts/diag-hourly.ts synthetic:NAME DAYS PEAK_GEARS [FROM TO]
 *   e.g. synthetic:step-change 2 2000 35 44   (the suite's step change, as `suite --days 2` replays it)
 *   npx tsx scripts/diag-hourly.ts suite:TEXT DAYS|all PEAK_GEARS [FROM TO]
 *   e.g. suite:cpu_usage all 20000 100 110   (the suite's trace whose name contains TEXT, as `suite --peak-gears 20000` replays it)
 */
import { runBaseline } from '../lib/sim/baselines.js';
import { baselineSetup } from '../lib/sim/baseline-cache.js';
import { familyShapes, isHeldoutFamily, type HeldoutFamily } from '../lib/sim/heldout-families.js';
import { SYNTHETIC_FAMILIES, syntheticTrace, type SyntheticFamily } from '../lib/sim/synthetic.js';
import { runNodescaler } from '../lib/sim/replay.js';
import { parseArgs } from 'node:util';
import { appMixText } from '../lib/sim/disruption.js';
import { WORLD_OPTIONS, worldFromFlags, type WorldFlags } from '../lib/sim/world-flags.js';
import { suiteTraces } from './bench-suite.js';
import type { SeriesPoint } from '../lib/sim/results.js';

// `--idle-share F`, `--app-sizes E`, `--placement RULE` and `--slots WHICH` anywhere: the applications' mix, where new gears go and which hold slots, as the benches take them.
const { values: mixFlags, positionals } = parseArgs({ args: process.argv.slice(2), allowPositionals: true, options: WORLD_OPTIONS });
let world: WorldFlags = {};
try {
  world = worldFromFlags(mixFlags);
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}
const { apps, placement, idleTakesNoSlot } = world;
const [family, ...rest] = positionals;
const synthetic = family?.startsWith('synthetic:') ? (family.slice('synthetic:'.length) as SyntheticFamily) : undefined;
const suiteName = family?.startsWith('suite:') ? family.slice('suite:'.length) : undefined;
// A held-out shape: SEED SHAPE PEAK over 7 days; a suite family: DAYS PEAK, replayed with the suite's seed 42, its trace
// drawn with 42 + the family's index (scripts/bench-suite.ts).
const byDays = synthetic !== undefined || suiteName !== undefined;
const [seed, shapeNumber, peak, from, to] = byDays ? [42, 0, ...rest.slice(1).map(Number)] : rest.map(Number);
const days = byDays ? (rest[0] === 'all' ? undefined : Number(rest[0])) : 7;
const suiteEntry = suiteName === undefined ? undefined : suiteTraces(days, peak!, seed!).find((t) => t.name.includes(suiteName));
const valid = suiteName !== undefined ? suiteEntry !== undefined && (days === undefined || days > 0) : synthetic ? SYNTHETIC_FAMILIES.includes(synthetic) && days! > 0 : isHeldoutFamily(family) && Number.isInteger(seed) && Number.isInteger(shapeNumber) && shapeNumber! >= 1;
if (!valid || !(peak! > 0)) {
  console.error('usage: npx tsx scripts/diag-hourly.ts FAMILY SEED SHAPE PEAK_GEARS [FROM TO]   (e.g. wander 3 4 2000 24 30)');
  console.error('       npx tsx scripts/diag-hourly.ts synthetic:NAME DAYS PEAK_GEARS [FROM TO]   (e.g. synthetic:step-change 2 2000 35 44)');
  console.error('       npx tsx scripts/diag-hourly.ts suite:TEXT DAYS|all PEAK_GEARS [FROM TO]   (e.g. suite:cpu_usage all 20000 100 110)');
  process.exit(2);
}
const drawn = suiteEntry
  ? { name: suiteEntry.name, description: days === undefined ? 'whole' : `${days} days`, trace: suiteEntry.load() }
  : synthetic
  ? { name: `synthetic:${synthetic}`, description: `${days} days`, trace: syntheticTrace(synthetic, { days: days!, peakGears: peak!, seed: seed! + SYNTHETIC_FAMILIES.indexOf(synthetic) }) }
  : familyShapes(family as HeldoutFamily, { seed: seed!, days: days!, peakGears: peak!, count: shapeNumber! })[shapeNumber! - 1]!;
const shape = apps ? { ...drawn, trace: { ...drawn.trace, apps } } : drawn;
const replay = { gearsPerNode: 100, bootDelaySeconds: 120, seed: seed!, ...(placement ? { placement } : {}), ...(idleTakesNoSlot ? { idleTakesNoSlot } : {}) };
// Every minute a point: the hour's means and the minutes around a wait read the same series.
const sampleEverySeconds = 60;
const outcome = await runNodescaler(shape.trace, { ...replay, store: 'memory', sampleEverySeconds });
const setup = baselineSetup(shape.trace, replay);
const { pools } = setup;
const options = { ...setup.options, sampleEverySeconds };
const clairvoyant = runBaseline('clairvoyant-4h', pools, options);
const clusterAutoscaler = runBaseline('cluster-autoscaler', pools, options);

const hourly = (series: SeriesPoint[]) => {
  const hours = new Map<number, { nodes: number; points: number; demand: number; moves: number; unplaced: number; waited: number }>();
  for (const point of series) {
    const hour = Math.floor(point.at / 3600);
    const h = hours.get(hour) ?? { nodes: 0, points: 0, demand: 0, moves: 0, unplaced: 0, waited: 0 };
    h.nodes += point.nodes;
    h.unplaced = Math.max(h.unplaced, point.unplaced);
    h.points++;
    h.demand = Math.max(h.demand, point.demand);
    h.moves += point.moves ?? 0;
    h.waited += point.waited ?? 0;
    hours.set(hour, h);
  }
  return hours;
};
const ours = hourly(outcome.result.series);
const theirs = hourly(clairvoyant.series);
const ca = hourly(clusterAutoscaler.series);
console.log(`${shape.name}: ${shape.description}${apps ? `; applications ${appMixText(apps)}` : ''}${placement ? `; placement ${placement}` : ''}${idleTakesNoSlot ? '; slots active gears only' : ''}`);
console.log(`node-hours ${outcome.result.nodeHours.toFixed(0)} vs clairvoyant-4h ${clairvoyant.nodeHours.toFixed(0)} (${(outcome.result.nodeHours / clairvoyant.nodeHours).toFixed(3)} x); moves ${outcome.result.gearMoves} vs ${clairvoyant.gearMoves}`);
console.log(`waiting ${outcome.result.unplacedGearMinutes.toFixed(0)} vs cluster-autoscaler ${clusterAutoscaler.unplacedGearMinutes.toFixed(0)} gear-minutes`);
console.log('hour  demand  nodescaler  c-4h  moves  most waiting  waited  c-a nodes  c-a waited');
for (const [hour, h] of ours) {
  const c = theirs.get(hour);
  const mark = c && h.nodes / h.points > c.nodes / c.points + 1 ? ' <' : '';
  const a = ca.get(hour);
  const caColumns = a ? `${(a.nodes / a.points).toFixed(1).padStart(9)}  ${String(a.waited).padStart(10)}` : `${'-'.padStart(9)}  ${'-'.padStart(10)}`;
  console.log(`${String(hour).padStart(4)}  ${String(h.demand).padStart(6)}  ${(h.nodes / h.points).toFixed(1).padStart(10)}  ${c ? (c.nodes / c.points).toFixed(1).padStart(4) : '   -'}  ${String(h.moves).padStart(5)}  ${String(h.unplaced).padStart(12)}  ${String(h.waited).padStart(6)}  ${caColumns}${mark}`);
}
if (from !== undefined && to !== undefined) {
  const caAt = new Map(clusterAutoscaler.series.map((point) => [point.at, point]));
  console.log('minute (h)  demand | nodescaler slots nodes waiting | cluster-autoscaler slots nodes waiting');
  for (const point of outcome.result.series) {
    if (point.at < from * 3600 || point.at > to * 3600) continue;
    const theirs = caAt.get(point.at);
    if (point.unplaced === 0 && !(theirs && theirs.unplaced > 0)) continue;
    const columns = (p: SeriesPoint | undefined) => (p ? `${String(p.capacity).padStart(6)} ${String(p.nodes).padStart(5)} ${String(p.unplaced).padStart(7)}` : '     -     -       -');
    console.log(`${(point.at / 3600).toFixed(3).padStart(10)}  ${String(point.demand).padStart(6)} | ${columns(point)} | ${columns(theirs)}`);
  }
  const start = Date.parse(shape.trace.startsAt ?? '2026-01-05T00:00:00.000Z');
  const log = await outcome.store.listDecisionsSince('sim/small', new Date(start + from * 3_600_000).toISOString());
  for (const entry of log) {
    const hours = (Date.parse(entry.at) - start) / 3_600_000;
    if (hours > to) break;
    console.log(`${hours.toFixed(2).padStart(7)}h ${entry.kind}: ${entry.reason}`);
  }
}
