/**
 * Compares evaluator settings on the Azure replay: `npx tsx scripts/tune.ts DAYS COLUMN JSON`, where JSON maps a
 * name to configuration overrides, e.g. {"tight":{"scaleUp":{"threshold":0.95}}}. How the defaults were chosen.
 */
import { runNodescaler } from '../lib/sim/replay.js';
import { readTrace } from '../lib/sim/trace.js';
const days = Number(process.argv[2] ?? 3);
const column = process.argv[3] ?? 'cpu_usage';
const trace = readTrace(new URL('../data/traces/azure2019_vm_aggregate_300s.csv', import.meta.url).pathname, { stepSeconds: 300, peakGears: 2000, demandColumn: column });
const steps = trace.steps.slice(0, days * 288);
const short = { ...trace, steps, durationSeconds: steps.length * 300 };
const variants: Record<string, object> = JSON.parse(process.argv[4] ?? '{}');
for (const [name, overrides] of Object.entries(variants)) {
  const t = Date.now();
  const out = await runNodescaler(short, { gearsPerNode: 100, bootDelaySeconds: 120, store: 'memory', seed: 1, configOverrides: overrides as never });
  const r = out.result;
  console.log(name.padEnd(10), 'ratio', r.ratioToOracle.toFixed(3), 'unplaced%', (r.unplacedShare * 100).toFixed(3), 'ups', r.scaleUps, 'downs', r.scaleDowns, 'moves', r.gearMoves, 'max', r.maxNodes, 'dead', r.deadLetters, 'viol', r.invariantViolations, 's', ((Date.now() - t) / 1000).toFixed(1));
}
