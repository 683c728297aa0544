/**
 * Diagnostic replay (not a benchmark): the demand a pool records from its
 * nodes' reports beside the demand the replay applied, hour by hour, for the
 * kept days before hour HOURS of one held-out shape. The evaluator records a
 * sample once per evaluation from each node's latest report, and reports of
 * one minute reach it in batches: until session 51 a crest that lasted a
 * minute showed cut (docs/BENCHMARKS.md, "Three more unseen seeds (session
 * 50)"); now the minute before is recorded again as the nodes measured it
 * (lib/domain/settled-demand.ts), and what still runs short is demand that
 * never found a place. The kept days a drain reads, and the headroom, are
 * measured on that record. It reads the
 * in-memory store's pool item, so it lives here, not in lib/sim.
 *
 *   npx tsx scripts/diag-recorded.ts FAMILY SEED SHAPE PEAK_GEARS HOURS   (e.g. surge 18 5 2000 32: u18-5 up to hour 32)
 */
import { familyShapes, isHeldoutFamily } from '../lib/sim/heldout-families.js';
import { runNodescaler } from '../lib/sim/replay.js';

const [family, ...rest] = process.argv.slice(2);
const [seed, shapeNumber, peak, hours] = rest.map(Number);
if (!isHeldoutFamily(family) || !Number.isInteger(seed) || !Number.isInteger(shapeNumber) || shapeNumber! < 1 || !(peak! > 0) || !(hours! >= 1 && hours! <= 7 * 24)) {
  console.error('usage: npx tsx scripts/diag-recorded.ts FAMILY SEED SHAPE PEAK_GEARS HOURS   (e.g. surge 18 5 2000 32: held-out u18-5 at 2,000 gears, up to hour 32)');
  process.exit(2);
}
const shape = familyShapes(family, { seed: seed!, days: 7, peakGears: peak!, count: shapeNumber! })[shapeNumber! - 1]!;
const trace = { ...shape.trace, durationSeconds: Math.min(shape.trace.durationSeconds, hours! * 3600 + 60) };
const outcome = await runNodescaler(trace, { gearsPerNode: 100, bootDelaySeconds: 120, store: 'memory', seed: seed!, sampleEverySeconds: 60 });
const history = (await outcome.store.getPool('sim/small'))?.demandHistory ?? [];
const startMinute = Date.parse(trace.startsAt ?? '2026-01-05T00:00:00.000Z') / 60_000;

const applied = new Map<number, number>();
for (const point of outcome.result.series) {
  const hour = Math.floor(point.at / 3600);
  applied.set(hour, Math.max(applied.get(hour) ?? 0, point.demand));
}
const recorded = new Map<number, number>();
for (const { 0: minute, 1: gears } of history) {
  const hour = Math.floor((minute - startMinute) / 60);
  recorded.set(hour, Math.max(recorded.get(hour) ?? 0, gears));
}
console.log(`${shape.name}: ${shape.description}`);
console.log('hour  applied highest  recorded highest  short by');
const gaps: number[] = [];
for (const [hour, gears] of [...recorded].sort((a, b) => a[0] - b[0])) {
  const truth = applied.get(hour);
  // The last hour is a minute long: the record's sample of it still counts half the nodes at the minute before.
  if (truth === undefined || hour >= hours!) continue;
  gaps.push(truth - gears);
  console.log(`${String(hour).padStart(4)}  ${String(truth).padStart(15)}  ${String(gears).padStart(16)}  ${String(truth - gears).padStart(8)}`);
}
gaps.sort((a, b) => a - b);
if (gaps.length > 0) console.log(`over ${gaps.length} hours the record's highest ran short of the applied highest by ${gaps[0]} to ${gaps.at(-1)} gears (median ${gaps[Math.floor(gaps.length / 2)]})`);
