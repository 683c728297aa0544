/**
 * Diagnostic replay (not a benchmark): how long a rollout of a new image takes. Replays one suite trace with
 * `scaleDown.renewDrifted` on and the configuration deployed again after REDEPLOY_DAYS with a new image in the pool's
 * template (lib/sim/replay.ts `redeploy`): every node launched before it drifts. Then reads every node the pool ever
 * had from the state table: of those drifted at the redeploy, how many hours each lived after it (to its release, or
 * the replay's end), and why the decision log says renewals waited. Optionally `scaleDown.budget.maxMovesPerGear`
 * (`-` for its default) and `scaleDown.driftGrace`.
 *
 *   npx tsx scripts/diag-drift.ts SUITE_TEXT DAYS|all PEAK_GEARS REDEPLOY_DAYS [MAX_MOVES_PER_GEAR|-] [DRIFT_GRACE]
 *   e.g. cpu_usage all 2000 10        (30 days of Azure's cpu column, a new image on day 10, the default cap)
 *        cpu_usage all 2000 10 - 12h  (the same, the cap lifted for a node drifted 12 hours)
 */
import type { ConfigInput } from '../lib/config/index.js';
import { REPLAY_START_MS, runNodescaler } from '../lib/sim/replay.js';
import { suiteTraces } from './bench-suite.js';
import { everyNode, goneAt, hoursSummary, printRenewalWaits } from './renewal-diag.js';

const [text, daysText, peakText, redeployText, capText, driftGrace] = process.argv.slice(2);
const movesCap = capText === '-' ? undefined : capText;
const days = daysText === 'all' ? undefined : Number(daysText);
const peak = Number(peakText);
const redeployDays = Number(redeployText);
const entry = text === undefined ? undefined : suiteTraces(days, peak, 42).find((t) => t.name.includes(text));
if (!entry || !(peak > 0) || !(redeployDays > 0) || (days !== undefined && !(days > 0))) {
  console.error('usage: npx tsx scripts/diag-drift.ts SUITE_TEXT DAYS|all PEAK_GEARS REDEPLOY_DAYS [MAX_MOVES_PER_GEAR|-] [DRIFT_GRACE]   (e.g. cpu_usage all 2000 10 - 12h)');
  process.exit(2);
}
const trace = entry.load();
const budget = movesCap === undefined ? {} : { budget: { maxMovesPerGear: Number(movesCap) } };
const NEW_IMAGE = 'ami-sim-patched';
const withNewImage = (input: ConfigInput): ConfigInput => ({ ...input, pools: input.pools.map((pool) => ({ ...pool, template: { ...pool.template, imageId: NEW_IMAGE } })) }) as ConfigInput;
const redeployMs = redeployDays * 86_400_000;
const outcome = await runNodescaler(trace, {
  gearsPerNode: 100,
  bootDelaySeconds: 120,
  seed: 42,
  store: 'memory',
  configOverrides: { scaleDown: { renewDrifted: true, ...budget, ...(driftGrace ? { driftGrace } : {}) } } as never,
  redeploy: { atSeconds: redeployMs / 1000, config: withNewImage },
});
const pool = 'sim/small';
const endMs = Date.parse((await outcome.store.getPool(pool))!.lastEvaluatedAt!);
const nodes = await everyNode(outcome.store, pool);
const redeployAt = REPLAY_START_MS + redeployMs;
const lived: number[] = [];
for (const node of nodes.values()) {
  if (node.launchedFrom === undefined || node.launchedFrom.image === NEW_IMAGE) continue;
  const gone = goneAt(node, endMs);
  if (gone > redeployAt) lived.push((gone - redeployAt) / 3_600_000);
}
const r = outcome.result;
console.log(`${entry.name}, ${days ?? 'all'} days, peak ${peak} gears, a new image on day ${redeployDays}${movesCap ? `, maxMovesPerGear ${movesCap}` : ''}${driftGrace ? `, driftGrace ${driftGrace}` : ''}`);
console.log(`nodes ${nodes.size}, of them drifted at the redeploy ${lived.length}; hours each lived after it: ${hoursSummary(lived)}`);
console.log(`node-hours ${r.nodeHours.toFixed(1)}, gear moves ${r.gearMoves}, unplaced ${(r.unplacedShare * 100).toFixed(3)} %, invariant violations ${r.invariantViolations}`);
await printRenewalWaits(outcome.store, pool);
