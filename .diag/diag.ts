import { readTrace } from '../lib/sim/trace.js';
import { windowOf } from '../lib/sim/window.js';
import { runNodescaler } from '../lib/sim/replay.js';
const peak = Number(process.argv[2] ?? 20000);
const days = Number(process.argv[3] ?? 1);
const overrides = process.argv[4] ? JSON.parse(process.argv[4]) : undefined;
const t0 = readTrace(new URL('../data/traces/azure2019_vm_aggregate_300s.csv', import.meta.url).pathname, { stepSeconds: 1, peakGears: peak });
const trace = windowOf(t0, days * 86400, peak);
const out = await runNodescaler(trace, { gearsPerNode: 100, bootDelaySeconds: 120, store: 'memory', seed: 0, ...(overrides ? { configOverrides: overrides } : {}) });
const r = out.result as any;
console.log('nodeHours', r.nodeHours, 'moves', r.gearMoves, 'drains', r.drainsStarted, 'aborted', r.drainsAborted);
const tally = new Map<string, number>();
for (const d of await out.store.listDrains('sim/small', 'aborted')) {
  const k = (d.abortReason ?? '').replace(/[0-9a-f]{6,}|\d+/g, 'N').slice(0, 110);
  tally.set(k, (tally.get(k) ?? 0) + 1);
}
console.log([...tally].sort((a, b) => b[1] - a[1]).slice(0, 12));
const why = new Map<string, number>();
for (const e of await out.store.listDecisionsSince('sim/small', '2000-01-01')) {
  if (e.kind !== 'no-action') continue;
  const m = /scale-down blocked[^;(]*|no node can be drained|unneeded time|within band|sustain|at min|action in flight/.exec(e.reason);
  const k = m ? m[0] : e.reason.slice(0, 60).replace(/\d+(\.\d+)?/g, 'N');
  why.set(k, (why.get(k) ?? 0) + 1);
}
console.log([...why].sort((a, b) => b[1] - a[1]).slice(0, 14));
