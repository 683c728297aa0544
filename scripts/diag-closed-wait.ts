/**
 * Diagnostic replay (not a benchmark): where nodescaler's waiting gears wait.
 * Each minute it counts the waiting gears the free slots of closed nodes could
 * have held, split by why the node was closed (draining, or closed for
 * attrition), and prints the one-minute runs beside attrition-closed nodes.
 * It reads the simulator's and the in-memory store's internals, so it lives
 * here, not in lib/sim.
 *
 *   npx tsx scripts/diag-closed-wait.ts heldout SEED SHAPE PEAK_GEARS   (the mixed family)
 *   npx tsx scripts/diag-closed-wait.ts FAMILY SEED SHAPE PEAK_GEARS    (e.g. surge 32 2 20000: held-out u32-2)
 *   DAYS=3 npx tsx scripts/diag-closed-wait.ts suite NAME_PART - PEAK_GEARS
 */
import { InMemoryStateStore } from '../lib/adapters/memory/state-store.js';
import type { NodeRecord } from '../lib/domain/model.js';
import { familyShapes, isHeldoutFamily } from '../lib/sim/heldout-families.js';
import { runNodescaler } from '../lib/sim/replay.js';
import { SimWorld } from '../lib/sim/world.js';
import { suiteTraces } from './bench-suite.js';

interface NodeFacts {
  active: boolean;
  activeGears: number;
  maxActiveGears: number;
}
interface WorldInternals {
  platform: { hasNode(id: string): boolean; nodeLoad(id: string): NodeFacts };
}

const [kind, a, b, peakArg] = process.argv.slice(2);
const peak = Number(peakArg);
const days = Number(process.env.DAYS ?? 7);
const family = kind === 'heldout' ? 'mixed' : kind;
const trace = isHeldoutFamily(family)
    ? familyShapes(family, { seed: Number(a), days, peakGears: peak, count: Number(b) })[Number(b) - 1]?.trace
    : suiteTraces(days, peak, 42).find((t) => t.name.includes(a ?? ''))?.load();
if (!trace) throw new Error(`no trace matches ${a}`);

let records: Map<string, NodeRecord> | undefined;
const listNodes = InMemoryStateStore.prototype.listNodes;
InMemoryStateStore.prototype.listNodes = function (this: InMemoryStateStore, pool) {
  records = (this as unknown as { nodes: Map<string, NodeRecord> }).nodes;
  return listNodes.call(this, pool);
};

const tally = { minutes: 0, waiting: 0, besideDraining: 0, besideAttrition: 0 };
const runs: Array<{ start: number; end: number; gearMinutes: number; closedFree: number }> = [];
const sample = SimWorld.prototype.sample;
SimWorld.prototype.sample = function (this: SimWorld, demand: number) {
  const point = sample.call(this, demand);
  const world = this as unknown as WorldInternals;
  // The world's sample already sums every closed node's free slots: only the draining ones' need the state table.
  let drainingFree = 0;
  for (const record of records?.values() ?? []) {
    const host = record.nodeId; // the platform knows a node by the record's id
    if (record.state !== 'draining' || !world.platform.hasNode(host)) continue;
    const facts = world.platform.nodeLoad(host);
    if (!facts.active) drainingFree += Math.max(0, facts.maxActiveGears - facts.activeGears);
  }
  const attritionFree = point.closedFree - drainingFree;
  const waiting = point.unplaced;
  const draining = Math.min(waiting, drainingFree);
  const attrition = Math.min(waiting - draining, attritionFree);
  tally.waiting += waiting;
  tally.besideDraining += draining;
  tally.besideAttrition += attrition;
  if (attrition > 0) {
    const last = runs.at(-1);
    if (last && last.end === tally.minutes - 1) {
      last.end = tally.minutes;
      last.gearMinutes += attrition;
    } else {
      runs.push({ start: tally.minutes, end: tally.minutes, gearMinutes: attrition, closedFree: attritionFree });
    }
  }
  tally.minutes++;
  return point;
};

const out = await runNodescaler(trace, { gearsPerNode: 100, bootDelaySeconds: 120, store: 'memory', seed: 42 });
console.log(
  `node-hours ${Math.round(out.result.nodeHours)}, moves ${out.result.gearMoves}; waiting ${tally.waiting} gear-min: ` +
    `${tally.besideDraining} beside draining nodes' free slots, ${tally.besideAttrition} beside attrition-closed nodes'`,
);
for (const run of runs) {
  console.log(`  minute ${run.start}: ${run.end - run.start + 1} min, ${run.gearMinutes} gear-min beside ${run.closedFree} closed free slots`);
}
