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
import type { NodeRecord } from '../lib/domain/model.js';
import { parseDuration } from '../lib/domain/duration.js';
import { runNodescaler } from '../lib/sim/replay.js';
import { suiteTraces } from './bench-suite.js';

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
const live = await outcome.store.listNodes(pool);
// The replay's last evaluation: where a node still there at the end stops counting.
const endMs = Date.parse((await outcome.store.getPool(pool))!.lastEvaluatedAt!);

// Released nodes leave the pool's listing; the table still has them by name (`<base>-<n>.<domain>`, n counting up).
const nodes = new Map<string, NodeRecord>(live.map((node) => [node.nodeId, node]));
const sample = live[0]?.nodeId ?? '';
for (let n = 1, misses = 0; misses < 50; n++) {
  const nodeId = sample.replace(/-\d+\./, `-${n}.`);
  const found = nodes.get(nodeId) ?? (await outcome.store.getNode(nodeId));
  if (found) nodes.set(nodeId, found);
  misses = found ? 0 : misses + 1;
}
const late: number[] = [];
for (const node of nodes.values()) {
  if (node.origin !== 'provisioned') continue;
  const gone = node.state === 'terminated' ? Date.parse(node.stateChangedAt) : endMs;
  const over = gone - Date.parse(node.createdAt) - expireMs;
  if (over >= 0) late.push(over / 3_600_000);
}
late.sort((a, b) => a - b);
const at = (q: number) => (late.length === 0 ? '-' : late[Math.min(late.length - 1, Math.floor(q * late.length))]!.toFixed(2));
const r = outcome.result;
console.log(`${entry.name}, ${days ?? 'all'} days, peak ${peak} gears, expireAfter ${expireAfter}${movesCap ? `, maxMovesPerGear ${movesCap}` : ''}${expireGrace ? `, expireGrace ${expireGrace}` : ''}`);
console.log(`nodes ${nodes.size}, of them lived to expiry ${late.length}; hours past expiry: median ${at(0.5)}, p90 ${at(0.9)}, max ${late.length ? late.at(-1)!.toFixed(2) : '-'}; more than 1 h past: ${late.filter((h) => h > 1).length}`);
console.log(`node-hours ${r.nodeHours.toFixed(1)}, gear moves ${r.gearMoves}, unplaced ${(r.unplacedShare * 100).toFixed(3)} %, invariant violations ${r.invariantViolations}`);

const decisions = await outcome.store.listDecisionsSince(pool, '2000-01-01T00:00:00.000Z');
const waits = new Map<string, number>();
for (const decision of decisions) {
  const why = /renewal of \d+ [a-z ]+ node\(s\) waits: (.*)$/.exec(decision.reason)?.[1];
  if (why === undefined) continue;
  // Grouped by kind: node, gear and time named apart.
  const kind = why
    .replace(/[\w.-]+\.sim\.local/g, 'NODE')
    .replace(/gear \S+ \([^)]*\)/g, 'gear G')
    .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'T')
    .replace(/ until \d\d:\d\d/g, ' until T')
    .slice(0, 140);
  waits.set(kind, (waits.get(kind) ?? 0) + 1);
}
console.log(`decisions ${decisions.length}; minutes a renewal waited, by why:`);
for (const [kind, minutes] of [...waits].sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(`${String(minutes).padStart(7)}  ${kind}`);
