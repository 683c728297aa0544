/**
 * `npm run bench -- bill`: nodescaler's own AWS bill (lib/sim/bill.ts), metered
 * from what the replay's handlers called, on the Azure 2019 trace at 20 and
 * 200 nodes (2,000 and 20,000 peak gears, 100 gears per node). Prints the bill
 * line by line, the DynamoDB request units by state-store method and the
 * metric series, and holds the bill at 200 nodes to issue 16's target of
 * $0.05 per node-month.
 *
 *   npm run bench -- bill                  2 simulated days at each size
 *   npm run bench -- bill --days 1 --sizes 20000
 *   npm run bench -- bill --max-moves-per-gear 1   most candidates hold a gear at its limit: what reading their gears costs
 *   npm run bench -- bill --slots active   agents report as the shipped one does, gear list included (idle gears hold no slot)
 */
import { parseArgs } from 'node:util';
import { runNodescaler } from '../lib/sim/replay.js';
import { benchTrace } from './bench-replay.js';
import { idleTakesNoSlotFromFlags, SLOTS_OPTIONS } from '../lib/sim/slots-flag.js';

const TARGET_PER_NODE_MONTH = 0.05;
const TARGET_AT_PEAK_GEARS = 20_000;

export async function billBench(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { days: { type: 'string', default: '2' }, sizes: { type: 'string', default: '2000,20000' }, 'max-moves-per-gear': { type: 'string' }, ...SLOTS_OPTIONS } });
  const idleTakesNoSlot = idleTakesNoSlotFromFlags(values);
  const days = Number(values.days);
  if (!(days > 0)) throw new Error(`--days: expected a number > 0, got ${values.days}`);
  const sizes = values.sizes.split(',').map(Number);
  const limit = values['max-moves-per-gear'];
  if (limit !== undefined && !(Number.isInteger(Number(limit)) && Number(limit) >= 1)) throw new Error(`--max-moves-per-gear: expected a whole number >= 1, got ${limit}`);
  const configOverrides = limit === undefined ? {} : { scaleDown: { budget: { maxMovesPerGear: Number(limit) } } };
  let missed = 0;
  for (const peakGears of sizes) {
    if (!(peakGears > 0)) throw new Error(`--sizes: expected peak gear counts, got ${values.sizes}`);
    const outcome = await runNodescaler(benchTrace(days, peakGears), { gearsPerNode: 100, bootDelaySeconds: 120, store: 'memory', seed: 42, configOverrides, ...(idleTakesNoSlot ? { idleTakesNoSlot } : {}) });
    const { result, bill, meter } = outcome;
    const perNodeMonth = result.autoscalerCostPerNodeMonth ?? 0;
    console.log(`\nbill: ${peakGears.toLocaleString('en')} peak gears, ${days} d: ${result.nodeHours.toFixed(0)} node-hours, ${outcome.invocations} invocations`);
    for (const line of bill.lines) console.log(`  ${line.item.padEnd(20)} ${line.quantity.toFixed(line.quantity < 10 ? 3 : 0).padStart(12)} ${line.unit.padEnd(11)} $${line.cost.toFixed(3)}/month`);
    console.log(`  ${'total'.padEnd(20)} ${''.padStart(12)} ${''.padEnd(11)} $${bill.total.toFixed(2)}/month, $${perNodeMonth.toFixed(4)} per node-month`);
    console.log('  DynamoDB request units by state-store method (in the run, not scaled to a month):');
    const methods = [...meter.dynamoByMethod.entries()].sort((a, b) => b[1].units - a[1].units);
    for (const [method, { calls, units }] of methods) console.log(`    ${method.padEnd(22)} ${String(calls).padStart(9)} calls ${units.toFixed(0).padStart(10)} units`);
    const listings = [...meter.gearListings.entries()].map(([service, count]) => `${service} ${count.toLocaleString('en')}`).join(', ');
    console.log(`  gear listings asked of the broker (in the run): ${listings || 'none'}`);
    console.log(`  metric series (${meter.metricSeries().length}): ${meter.metricSeries().join(', ')}`);
    if (peakGears === TARGET_AT_PEAK_GEARS) {
      const ok = perNodeMonth <= TARGET_PER_NODE_MONTH && outcome.violations.length === 0;
      if (!ok) missed += 1;
      console.log(`  target: <= $${TARGET_PER_NODE_MONTH} per node-month at 200 nodes: ${ok ? 'PASS' : 'FAIL'}`);
    }
  }
  console.log(missed === 0 ? '\nall targets met' : `\n${missed} target(s) missed`);
  if (missed > 0) process.exitCode = 1;
}
