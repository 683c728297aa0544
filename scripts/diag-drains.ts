/**
 * Diagnostic replay (not a benchmark): every scale-down drain nodescaler
 * started on one held-out shape, in order, with the demand then, the highest
 * demand of the 4 hours before and after it (a drain whose next 4 hours reach
 * the level it left was bought back), and the pays-off verdict it was decided
 * on. It reads the in-memory store's drains, so it lives here, not in lib/sim.
 *
 *   npx tsx scripts/diag-drains.ts [FAMILY] SEED SHAPE PEAK_GEARS   (FAMILY mixed, wander, surge or shift; mixed when left out)
 */
import { familyShapes, isHeldoutFamily } from '../lib/sim/heldout-families.js';
import { runNodescaler } from '../lib/sim/replay.js';
import { demandAt } from '../lib/sim/trace.js';

const args = process.argv.slice(2);
const family = isHeldoutFamily(args[0]) ? args.shift()! : 'mixed';
const [seed, shapeNumber, peak] = args.map(Number);
if (!isHeldoutFamily(family) || !Number.isInteger(seed) || !Number.isInteger(shapeNumber) || shapeNumber! < 1 || !(peak! > 0)) {
  console.error('usage: npx tsx scripts/diag-drains.ts [FAMILY] SEED SHAPE PEAK_GEARS   (e.g. 16 8 2000: held-out s16-8 at 2,000 gears; surge 11 2 2000: u11-2)');
  process.exit(2);
}
const shape = familyShapes(family, { seed: seed!, days: 7, peakGears: peak!, count: shapeNumber! })[shapeNumber! - 1]!;
const trace = shape.trace;
const outcome = await runNodescaler(trace, { gearsPerNode: 100, bootDelaySeconds: 120, store: 'memory', seed: seed! });
const pool = 'sim/small';
const drains = [...(await outcome.store.listDrains(pool, 'completed')), ...(await outcome.store.listDrains(pool, 'aborted'))];
const start = Date.parse(trace.startsAt ?? '2026-01-05T00:00:00.000Z');
const highest = (from: number, to: number) => {
  let top = 0;
  for (let t = Math.max(0, from); t <= Math.min(to, trace.durationSeconds); t += 300) top = Math.max(top, demandAt(trace, t).demand);
  return top;
};
console.log(`${shape.name}: ${shape.description}`);
console.log(`node-hours ${outcome.result.nodeHours.toFixed(0)}, moves ${outcome.result.gearMoves}, drains ${drains.length}`);
for (const drain of drains.sort((x, y) => x.startedAt.localeCompare(y.startedAt))) {
  const at = (Date.parse(drain.startedAt) - start) / 1000;
  const moved = drain.moves.filter((m) => m.state === 'moved').length;
  const how = drain.outgrownAt ? 'outgrown' : drain.calledOffAt ? 'called off' : drain.state;
  const pays = /pays: ([^;]*)/.exec(drain.reason)?.[1] ?? drain.reason.slice(0, 80);
  console.log(
    `${(at / 3600).toFixed(2).padStart(7)}h ${drain.nodeId} ${how}, ${moved} moved; demand ${demandAt(trace, at).demand}, 4 h before ${highest(at - 14_400, at)}, 4 h after ${highest(at, at + 14_400)}; pays: ${pays}`,
  );
}
