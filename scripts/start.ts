/**
 * `npm start`: the whole autoscaler running locally (the four real handlers,
 * in-process SQS, dynalite or the in-memory store, a simulated cloud and
 * platform, a virtual clock) replaying a workload trace, next to the
 * baselines and the clairvoyant references, with a summary table, the goal
 * line and an HTML chart. `npm start -- --help` lists the options.
 */
import { parseArgs } from 'node:util';
import { ValidationError } from '../lib/errors.js';
import { activeDemand } from '../lib/sim/active-demand.js';
import { baselineOptions } from '../lib/sim/baseline-cache.js';
import { BASELINES, runBaseline } from '../lib/sim/baselines.js';
import { parsePoolApps } from '../lib/sim/app-mix.js';
import { placementText } from '../lib/sim/placement-flag.js';
import { slotsText } from '../lib/sim/slots-flag.js';
import { WORLD_OPTIONS, worldFromFlags } from '../lib/sim/world-flags.js';
import { configPools, parsePoolDemand } from '../lib/sim/config-pools.js';
import { appMixText } from '../lib/sim/disruption.js';
import { peakDemand } from '../lib/sim/pools.js';
import { PRICES_AS_OF, PRICE_REGION } from '../lib/sim/prices.js';
import { renderReport, writeOut } from '../lib/sim/report.js';
import { abortLine } from '../lib/sim/aborts.js';
import { pagesLine } from '../lib/sim/alarms.js';
import { floorForResults, floorLine } from '../lib/sim/floor.js';
import { replayPools, runNodescaler, type ReplayOptions } from '../lib/sim/replay.js';
import { POLICIES, type PolicyResult } from '../lib/sim/results.js';
import { formatTable, goalLine, summaryRows, withSavings } from '../lib/sim/summary.js';
import { parseConfig } from '../lib/config/index.js';
import { formatDuration } from '../lib/domain/duration.js';
import { readTrace, type Trace } from '../lib/sim/trace.js';
import { windowOf } from '../lib/sim/window.js';

const DEFAULT_TRACE = new URL('../data/traces/azure2019_vm_aggregate_300s.csv', import.meta.url);

const USAGE = `usage: npm start -- [options]

Replays a workload trace through nodescaler's four real handlers and the
comparison policies (${POLICIES.join(', ')}).

  --trace FILE.csv          workload trace (default: data/traces/azure2019_vm_aggregate_300s.csv)
  --time-column NAME        time column (default: found by name, else rows --step apart)
  --demand-column NAME      demand column (default: the first other column)
  --step SECONDS            seconds between rows without a time column (default 300)
  --days N                  replay only the first N days
  --peak-gears N            demand is scaled so the replayed window's peak is N gears (default 2000)
  --gears-per-node N        gear slots per node (default 100; a --config pool's own value wins)
  --boot-delay SECONDS      time from launch to a node taking gears (default 120)
  --idle-share F            share of applications that are idle, whose gears move without a restart (default 0.3)
  --app-sizes E             application sizes 1..10 drawn with weight size^-E (default 2.5: 76 % single-gear)
  --placement RULE          where the broker puts a new gear: least-loaded (default) or broker (origin-server's
                              weighted draw among the emptier nodes, away from the application's other gears)
  --slots WHICH             which gears hold a node's slots: all (default) or active (origin-server's count: idle
                              gears hold none, drains still move them)
  --policy NAME             run only this policy (repeatable; default: all)
  --config FILE             replay every pool of this nodescaler configuration
  --pool-demand POOL=COL    with --config: pool DISTRICT/PROFILE gets CSV column COL,
  --pool-demand POOL=W        or weight W of the demand column (default weights: max x gearsPerNode)
  --pool-apps POOL=F[:E]    with --config: pool DISTRICT/PROFILE's own idle share F (and size exponent E)
  --store auto|dynalite|memory  state store (default auto: dynalite up to 3 hours)
  --seed N                  random seed (default 42)
  --json OUT.json           write the results (every field, per pool) as JSON
  --report OUT.html         write the HTML report (default out/report.html)
  -h, --help                this text
`;

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      options: {
        help: { type: 'boolean', short: 'h' },
        trace: { type: 'string' },
        'time-column': { type: 'string' },
        'demand-column': { type: 'string' },
        step: { type: 'string', default: '300' },
        'peak-gears': { type: 'string', default: '2000' },
        'gears-per-node': { type: 'string', default: '100' },
        'boot-delay': { type: 'string', default: '120' },
        policy: { type: 'string', multiple: true },
        json: { type: 'string' },
        report: { type: 'string', default: 'out/report.html' },
        store: { type: 'string', default: 'auto' },
        days: { type: 'string' },
        seed: { type: 'string', default: '42' },
        config: { type: 'string' },
        'pool-demand': { type: 'string', multiple: true },
        ...WORLD_OPTIONS,
        'pool-apps': { type: 'string', multiple: true },
      },
    });
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  const { values } = parsed;
  if (values.help) {
    console.log(USAGE);
    return;
  }

  const number = (name: keyof typeof values, min: number) => {
    const text = values[name] as string;
    const value = Number(text);
    if (!Number.isFinite(value) || value < min) throw new ValidationError({ path: `--${name}`, message: `expected a number >= ${min}`, value: text });
    return value;
  };
  const policies = (values.policy ?? [...POLICIES]) as string[];
  for (const policy of policies) {
    if (!(POLICIES as readonly string[]).includes(policy)) {
      throw new ValidationError({ path: '--policy', message: `expected one of ${POLICIES.join(', ')}`, value: policy });
    }
  }
  const store = values.store!;
  if (!['auto', 'dynalite', 'memory'].includes(store)) throw new ValidationError({ path: '--store', message: 'expected auto, dynalite or memory', value: store });

  let tracePath = values.trace;
  if (tracePath === undefined) {
    tracePath = DEFAULT_TRACE.pathname;
    console.log(`no --trace given: replaying the Azure 2019 trace (${tracePath})`);
  }
  const peakGears = number('peak-gears', 1);
  const traceOptions = {
    ...(values['time-column'] ? { timeColumn: values['time-column'] } : {}),
    ...(values['demand-column'] ? { demandColumn: values['demand-column'] } : {}),
    stepSeconds: number('step', 1),
    peakGears,
  };
  const days = values.days === undefined ? undefined : number('days', 0.01);
  const window = (t: Trace) => windowOf(t, days === undefined ? undefined : days * 86400, t === trace0 ? peakGears : peakDemand(t));
  const trace0 = readTrace(tracePath, traceOptions);
  const { apps, placement, idleTakesNoSlot } = worldFromFlags(values);
  const trace = apps ? { ...window(trace0), apps } : window(trace0);

  const replay: ReplayOptions = {
    gearsPerNode: number('gears-per-node', 1),
    bootDelaySeconds: number('boot-delay', 0),
    store: store as ReplayOptions['store'],
    seed: number('seed', 0),
  };
  if (placement) replay.placement = placement;
  if (idleTakesNoSlot) replay.idleTakesNoSlot = idleTakesNoSlot;
  if (values.config) {
    replay.config = configPools({
      configFile: values.config,
      tracePath,
      trace,
      traceOptions,
      peakGears,
      fallbackGearsPerNode: replay.gearsPerNode,
      bootDelaySeconds: replay.bootDelaySeconds,
      demands: (values['pool-demand'] ?? []).map(parsePoolDemand),
      window: (t) => windowOf(t, days === undefined ? undefined : days * 86400, peakDemand(t)),
      ...(apps ? { apps } : {}),
      poolApps: (values['pool-apps'] ?? []).map(parsePoolApps),
    });
  } else {
    for (const flag of ['pool-demand', 'pool-apps'] as const) {
      const given = values[flag];
      if (given) throw new ValidationError({ path: `--${flag}`, message: 'needs --config (the pools come from a configuration file)', value: given.join(' ') });
    }
  }
  const { input, pools } = replayPools(trace, replay);
  console.log(
    `trace ${trace.source}: column ${trace.demandColumn}, ${trace.steps.length} steps of ${trace.stepSeconds} s ` +
      `(${(trace.durationSeconds / 86400).toFixed(1)} days), peak ${peakDemand(trace)} gears in the replayed window, boot delay ${replay.bootDelaySeconds} s`,
  );
  console.log(
    `${values.config ? `config ${values.config}` : 'simulation defaults'}: ${pools.length} pool(s), limits.maxNodesTotal ${input.limits?.maxNodesTotal ?? 100}; ` +
      pools.map((p) => `${p.id} (${p.gearsPerNode} gears/node, ${p.min}..${p.max} nodes, ${p.instanceType} $${p.pricePerHour}/h, peak ${peakDemand(p.trace)} gears${p.trace.apps ? `, applications ${appMixText(p.trace.apps)}` : ''})`).join('; '),
  );
  console.log(`prices: on-demand ${PRICE_REGION} as of ${PRICES_AS_OF} (lib/domain/node-price.ts, lib/sim/prices.ts)`);
  for (const pool of pools) {
    const room = pool.max * pool.gearsPerNode;
    if (peakDemand(pool.trace) > room) console.log(`note: ${pool.id} peaks at ${peakDemand(pool.trace)} gears, more than its max x gearsPerNode = ${room}: gears will wait whatever the policy`);
    if (pool.pricePerHour === 0) console.log(`note: no price for ${pool.instanceType} in lib/domain/node-price.ts and none in the configuration: its node cost counts as 0`);
  }

  const results: PolicyResult[] = [];
  const started = Date.now();
  if (policies.includes('nodescaler')) {
    const progress = progressBar('nodescaler');
    const outcome = await runNodescaler(trace, { ...replay, onProgress: progress.update });
    progress.done();
    results.push(outcome.result);
    console.log(`nodescaler: ${outcome.storeKind} store, ${outcome.invocations} handler invocations, ${((Date.now() - started) / 1000).toFixed(1)} s`);
    for (const line of outcome.bill.lines) console.log(`  autoscaler bill: ${line.item.padEnd(20)} ${line.quantity.toFixed(line.quantity < 10 ? 3 : 0).padStart(12)} ${line.unit.padEnd(11)} $${line.cost.toFixed(3)}/month`);
    for (const violation of outcome.violations.slice(0, 10)) console.log(`  violation: ${violation}`);
    console.log(`nodescaler ${abortLine(outcome.result.aborts)}; ${pagesLine(outcome.result.pages)}`);
  }
  const options = baselineOptions(trace, replay, input.limits?.maxNodesTotal ?? 100);
  for (const policy of BASELINES) if (policies.includes(policy)) results.push(runBaseline(policy, pools, options));

  const rows = withSavings(results);
  console.log('');
  console.log(formatTable(summaryRows(rows)));
  console.log('');
  if (pools.length > 1) {
    for (const result of rows) {
      console.log(`${result.policy} by pool:`);
      console.log(formatTable(result.pools.map((p) => ({ pool: p.pool, ...summaryRows([{ ...result, ...p }])[0]! }))));
      console.log('');
    }
  }
  // The reactive floor is one pool's demand against one node size: a run of several pools has no single floor.
  const onlyPool = pools.length === 1 ? pools[0] : undefined;
  // Counting active gears only, the floor reads the gears that held slots, as the baselines' first pool drew them.
  const floorTrace = onlyPool && replay.idleTakesNoSlot ? activeDemand(onlyPool, 60, replay.seed) : onlyPool?.trace;
  const floor = onlyPool && floorTrace ? floorForResults(floorTrace, { gearsPerNode: onlyPool.gearsPerNode, bootDelaySeconds: replay.bootDelaySeconds }, rows) : undefined;
  const goal = goalLine(rows, floor);
  if (goal) console.log(goal);
  const clairvoyant = rows.find((r) => r.policy === 'clairvoyant-4h');
  if (floor && clairvoyant) console.log(floorLine(floor, clairvoyant.nodeHours, rows.find((r) => r.policy === 'cluster-autoscaler')?.nodeHours));

  if (values.json) {
    writeOut(
      values.json,
      JSON.stringify(
        {
          trace: { source: trace.source, demandColumn: trace.demandColumn, steps: trace.steps.length, durationSeconds: trace.durationSeconds, peakGears: peakDemand(trace) },
          config: values.config ?? null,
          prices: { region: PRICE_REGION, asOf: PRICES_AS_OF },
          pools: pools.map(({ trace: _t, ...pool }) => pool),
          goal: goal ?? null,
          results: rows.map(({ series: _s, events: _e, ...rest }) => rest),
        },
        null,
        2,
      ),
    );
    console.log(`wrote ${values.json}`);
  }
  const config = parseConfig(input, 'replay configuration');
  // Each pool's node-hours at its own instance price; the cost panel plots nodes at their mean price.
  const price = new Map(pools.map((p) => [p.id, p.pricePerHour]));
  const poolsCost = (row: PolicyResult) => row.pools.reduce((sum, p) => sum + p.nodeHours * (price.get(p.pool) ?? 0), 0);
  const reference = rows.find((row) => row.policy === 'nodescaler') ?? rows[0];
  const meanPrice = reference && reference.nodeHours > 0 ? poolsCost(reference) / reference.nodeHours : (pools[0]?.pricePerHour ?? 0);
  const pricePerNodeHour = Math.round(meanPrice * 10_000) / 10_000;
  writeOut(
    values.report!,
    renderReport({
      title: 'nodescaler replay',
      trace: { source: trace.source, demandColumn: trace.demandColumn, durationSeconds: trace.durationSeconds, ...(trace.startsAt ? { startsAt: trace.startsAt } : {}) },
      thresholds: { scaleUp: config.scaleUp.threshold, scaleDown: config.scaleDown.utilizationThreshold },
      pricePerNodeHour,
      settings: [
        ['configuration', values.config ?? 'the simulation defaults (lib/sim/replay.ts simulationConfig: the product defaults, one pool, handler ec2 on the simulated cloud)'],
        ['pools', pools.map((p) => `${p.id} (min ${p.min}, max ${p.max}, ${p.gearsPerNode} gears per node, ${p.instanceType} $${p.pricePerHour}/h)`).join('; ')],
        ['scale up', `at utilization >= ${config.scaleUp.threshold}, to ${config.scaleUp.target}; headroom ${config.scaleUp.headroomGears} gears`],
        ['scale down', `at utilization <= ${config.scaleDown.utilizationThreshold} for ${formatDuration(config.scaleDown.unneededTime)}; delay after add ${formatDuration(config.scaleDown.delayAfterAdd)}`],
        ['trace', `${trace.source}, column ${trace.demandColumn}, ${trace.steps.length} steps of ${trace.stepSeconds} s, peak scaled to ${values['peak-gears']} gears`],
        ['boot delay', `${replay.bootDelaySeconds} s`],
        ['placement', placementText(replay.placement)],
        ['slots', slotsText(replay.idleTakesNoSlot)],
        ['seed', String(replay.seed)],
        ['store', replay.store],
        ['prices', `on-demand ${PRICE_REGION} as of ${PRICES_AS_OF} (lib/domain/node-price.ts, lib/sim/prices.ts)`],
      ],
      policies: rows.map((row) => ({ ...row, cost: poolsCost(row) })),
      notes: [
        'Capacity: gear slots of nodes that take gears. Nodes: hosts that cost money (booting, active, draining).',
        'Oracle: ceil(demand / gears per node) nodes at every step: perfect packing and instant boot.',
        'Cost: node-hours x the price per node-hour.',
        ...(goal ? [goal] : []),
      ],
    }),
  );
  console.log(`wrote ${values.report}`);
  if (results.some((r) => r.invariantViolations > 0)) process.exitCode = 1;
}

function progressBar(label: string) {
  const tty = process.stdout.isTTY;
  let last = -1;
  return {
    update: (fraction: number) => {
      const percent = Math.floor(fraction * 100);
      if (percent === last) return;
      last = percent;
      if (tty) {
        const width = 40;
        const filled = Math.round((width * percent) / 100);
        process.stdout.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${percent}%`);
      } else if (percent % 25 === 0) {
        console.log(`${label}: ${percent}%`);
      }
    },
    done: () => {
      if (tty) process.stdout.write('\n');
    },
  };
}

main().catch((error: unknown) => {
  if (error instanceof ValidationError) {
    console.error(error.message);
    process.exit(2);
  }
  console.error(error);
  process.exit(1);
});
