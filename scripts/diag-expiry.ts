/**
 * Diagnostic replay (not a benchmark): how late nodes are renewed past `expireAfter`. Replays one suite trace with
 * `scaleDown.expireAfter` set (and, if given, `scaleDown.budget.maxMovesPerGear`, `-` for its default, and
 * `scaleDown.expireGrace`), then reads every node the pool ever
 * had from the state table: of those that lived to their expiry, how many hours past it each lived (to its release,
 * or the replay's end), and why the decision log says renewals waited, minute by minute.
 *
 *   npx tsx scripts/diag-expiry.ts SUITE_TEXT DAYS|all PEAK_GEARS EXPIRE_AFTER [MAX_MOVES_PER_GEAR|-] [EXPIRE_GRACE]
 *   e.g. cpu_usage 7 2000 2d 50   (a week of Azure's cpu column, nodes expiring after 2 days, the gear cap lifted)
 *        cpu_usage all 2000 10d - 1d   (30 days, the default cap, lifted for a node a day past its expiry)
 */
import { parseDuration } from '../lib/domain/duration.js';
import { runNodescaler } from '../lib/sim/replay.js';
import { suiteTraces } from './bench-suite.js';
import { everyNode, goneAt, hoursSummary, printRenewalWaits } from './renewal-diag.js';

const [text, daysText, peakText, expireAfter, capText, expireGrace] = process.argv.slice(2);
const movesCap = capText === '-' ? undefined : capText;
const days = daysText === 'all' ? undefined : Number(daysText);
const peak = Number(peakText);
const entry = text === undefined ? undefined : suiteTraces(days, peak, 42).find((t) => t.name.includes(text));
if (!entry || !(peak > 0) || !expireAfter || (days !== undefined && !(days > 0))) {
  console.error('usage: npx tsx scripts/diag-expiry.ts SUITE_TEXT DAYS|all PEAK_GEARS EXPIRE_AFTER [MAX_MOVES_PER_GEAR|-] [EXPIRE_GRACE]   (e.g. cpu_usage 7 2000 2d 50)');
  process.exit(2);
}
const trace = entry.load();
const budget = movesCap === undefined ? {} : { budget: { maxMovesPerGear: Number(movesCap) } };
const outcome = await runNodescaler(trace, { gearsPerNode: 100, bootDelaySeconds: 120, seed: 42, store: 'memory', configOverrides: { scaleDown: { expireAfter, ...budget, ...(expireGrace ? { expireGrace } : {}) } } as never });
const expireMs = parseDuration(expireAfter)!;
const pool = 'sim/small';
// The replay's last evaluation: where a node still there at the end stops counting.
const endMs = Date.parse((await outcome.store.getPool(pool))!.lastEvaluatedAt!);
const nodes = await everyNode(outcome.store, pool);
const late: number[] = [];
for (const node of nodes.values()) {
  if (node.origin !== 'provisioned') continue;
  const over = goneAt(node, endMs) - Date.parse(node.createdAt) - expireMs;
  if (over >= 0) late.push(over / 3_600_000);
}
const r = outcome.result;
console.log(`${entry.name}, ${days ?? 'all'} days, peak ${peak} gears, expireAfter ${expireAfter}${movesCap ? `, maxMovesPerGear ${movesCap}` : ''}${expireGrace ? `, expireGrace ${expireGrace}` : ''}`);
console.log(`nodes ${nodes.size}, of them lived to expiry ${late.length}; hours past expiry: ${hoursSummary(late)}`);
console.log(`node-hours ${r.nodeHours.toFixed(1)}, gear moves ${r.gearMoves}, unplaced ${(r.unplacedShare * 100).toFixed(3)} %, invariant violations ${r.invariantViolations}`);
await printRenewalWaits(outcome.store, pool);
