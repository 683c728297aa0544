/**
 * `npm run demo`: one story on the embedded default (the local stage of
 * `npm run invoke`: infra/nodescaler.example.yml, handler log, the simulated
 * platform, dynalite and queue files in a state directory), on one virtual
 * clock that only moves forward:
 *
 *   stats arrive -> pool d1/small runs full -> the evaluator decides a scale-up
 *   -> the provisioner requests a host -> it joins -> load falls -> the
 *   evaluator chooses a node -> the gear mover drains it gear by gear -> the
 *   decommissioner releases it
 *
 * Each step runs the function's local twin (functions/local/, what `npm run
 * invoke` runs through `serverless invoke local`) in a fresh process with the
 * step's time, then prints `nodescaler status` as of that time. The demo plays
 * the outside world too: the node agents (node-stats built from the simulated
 * platform's gears) and the tenants (apps created and deleted in
 * <state>/platform.json).
 *
 *   npm run demo [-- --state-dir DIR]     (default .nodescaler-demo, replaced)
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { PlatformSnapshot } from '../lib/adapters/local/persisted-platform.js';
import { LOCAL_SENDER } from '../lib/domain/stats-sender.js';

const ROOT = resolve(import.meta.dirname, '..');
const DAY = '2026-11-21';
const { values } = parseArgs({ options: { 'state-dir': { type: 'string', default: '.nodescaler-demo' } } });
const STATE = resolve(values['state-dir']!);
const FUNCTIONS = {
  thresholdEvaluator: 'functions/local/threshold-evaluator.ts',
  nodeProvisioner: 'functions/local/node-provisioner.ts',
  gearMover: 'functions/local/gear-mover.ts',
  decommissioner: 'functions/local/decommissioner.ts',
} as const;
type FunctionName = keyof typeof FUNCTIONS;

const iso = (time: string) => `${DAY}T${time}Z`;
const show = (path: string) => relative(ROOT, path) || '.';
const indent = (text: string, by = '    ') => text.replace(/\s+$/, '').split('\n').map((line) => by + line).join('\n');

let stepNumber = 0;
function step(time: string, title: string): void {
  stepNumber += 1;
  console.log(`\n${'─'.repeat(78)}\n${time}Z  ${stepNumber}. ${title}`);
}

/** Runs a function's local twin on `eventFile` at `time` (HH:MM:SS); prints what it logged and left in the queues. */
function invoke(fn: FunctionName, eventFile: string, time: string): void {
  console.log(`  $ npm run invoke -- ${fn} ${show(eventFile)} --at ${iso(time)} --state-dir ${show(STATE)}`);
  const script = [
    "const { readFileSync } = await import('node:fs');",
    'const [file, eventFile] = process.argv.slice(1);',
    'const { handler } = await import(file);',
    "const context = { functionName: process.env.NODESCALER_DEMO_FUNCTION, awsRequestId: 'demo', getRemainingTimeInMillis: () => 60000 };",
    "const result = await handler(JSON.parse(readFileSync(eventFile, 'utf8')), context);",
    "if (result?.batchItemFailures?.length) { console.error('batch item failures: ' + JSON.stringify(result.batchItemFailures)); process.exitCode = 1; }",
  ].join('\n');
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, join(ROOT, FUNCTIONS[fn]), resolve(eventFile)], {
    cwd: ROOT,
    encoding: 'utf8',
    env: {
      ...process.env,
      NODESCALER_STAGE: 'local',
      NODESCALER_TABLE: 'nodescaler-local-state',
      NODESCALER_CONFIG_FILE: join(ROOT, 'infra/nodescaler.example.yml'),
      NODESCALER_LOCAL_STATE_DIR: STATE,
      NODESCALER_LOCAL_NOW: iso(time),
      NODESCALER_DEMO_FUNCTION: fn,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  });
  for (const line of run.stdout.split('\n')) {
    if (!line.startsWith('{"level"')) continue;
    const entry = JSON.parse(line) as { level: string; message: string; reason?: string; uuid?: string; app?: string; to?: string; nodes?: string[] };
    const reason = entry.reason && !entry.message.includes(entry.reason) ? `: ${entry.reason}` : '';
    const gear = entry.uuid && entry.to ? `: ${entry.uuid} (${entry.app}) -> ${entry.to}` : '';
    const nodes = entry.nodes ? `: ${entry.nodes.join(', ')}` : '';
    console.log(`    ${entry.level === 'INFO' ? '' : `${entry.level} `}${entry.message}${reason}${gear}${nodes}`);
  }
  const summary = run.stderr.split('\n').filter((line) => line.startsWith(`${fn}:`));
  if (summary.length > 0) console.log(indent(summary.join('\n')));
  if (run.status !== 0) {
    console.error(run.stderr);
    throw new Error(`${fn} failed at ${time} (exit ${run.status})`);
  }
}

/** `nodescaler status` as of `time`, as an operator would run it. */
function status(time: string, pool = 'd1/small'): void {
  const args = ['status', pool, '--state-dir', STATE, '--at', iso(time), '--no-color'];
  console.log(`\n  $ npx nodescaler status ${pool} --state-dir ${show(STATE)} --at ${iso(time)}`);
  const run = spawnSync(process.execPath, [join(ROOT, 'bin/nodescaler.mjs'), ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, COLUMNS: '124' } });
  if (run.status !== 0) throw new Error(`nodescaler status failed: ${run.stderr}`);
  console.log(indent(run.stdout, '  '));
}

// ---------------------------------------------------------------------------
// The outside world: the simulated platform's gears (tenants) and the node agents.

const platformFile = () => join(STATE, 'platform.json');
const readPlatform = () => JSON.parse(readFileSync(platformFile(), 'utf8')) as PlatformSnapshot;

/** Tenants create and delete apps: each listed node ends up holding `count` gears (a host that just joined its district included). */
function setGears(counts: Record<string, number>): void {
  const platform = readPlatform();
  for (const nodeId of Object.keys(counts)) {
    if (!platform.nodes.some((node) => node.nodeId === nodeId)) platform.nodes.push({ nodeId, district: 'd1', profile: 'small', maxGears: 100, active: true, gears: [] });
  }
  for (const node of platform.nodes) {
    const want = counts[node.nodeId];
    if (want === undefined) continue;
    node.gears = node.gears.slice(0, want);
    for (let i = node.gears.length; i < want; i++) {
      node.gears.push({ uuid: `demo-${node.nodeId.split('.')[0]}-${i + 1}`, app: `app-${(i % 7) + 1}`, size: node.profile });
    }
  }
  writeFileSync(platformFile(), JSON.stringify(platform, null, 2));
}

/** Every node agent reports what the platform holds, `extra` hosts that are not on it yet too; an SQS event file of node-stats. */
function statsEvent(time: string, extra: Array<{ nodeId: string; district: string; profile: string; max: number }> = []): string {
  const reportedAt = iso(time);
  const bodies = readPlatform().nodes.map((node) => ({
    type: 'node-stats',
    v: 1,
    nodeId: node.nodeId,
    district: node.district,
    profile: node.profile,
    activeGears: node.gears.length,
    maxActiveGears: node.maxGears,
    gears: node.gears,
    reportedAt,
  }));
  for (const host of extra) bodies.push({ type: 'node-stats', v: 1, nodeId: host.nodeId, district: host.district, profile: host.profile, activeGears: 0, maxActiveGears: host.max, gears: [], reportedAt });
  const event = {
    Records: bodies.map((body, i) => ({
      messageId: `demo-stats-${time}-${i}`,
      receiptHandle: `demo-stats-${time}-${i}`,
      body: JSON.stringify(body),
      attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(Date.parse(reportedAt)), SenderId: LOCAL_SENDER, ApproximateFirstReceiveTimestamp: String(Date.parse(reportedAt)) },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:nodescaler-local-stats',
      awsRegion: 'us-east-1',
    })),
  };
  const file = join(STATE, 'demo', `stats-${time.replace(/:/g, '')}.json`);
  writeFileSync(file, JSON.stringify(event, null, 2));
  return file;
}

/** The one-minute schedule's event at `time`. */
function tickEvent(time: string): string {
  const event = { ...(JSON.parse(readFileSync(join(ROOT, 'events/tick.json'), 'utf8')) as object), time: iso(time) };
  const file = join(STATE, 'demo', `tick-${time.replace(/:/g, '')}.json`);
  writeFileSync(file, JSON.stringify(event, null, 2));
  return file;
}

const queueFile = (name: string) => join(STATE, 'queues', `${name}.json`);

/** The node a scale-down chose, from the drain queue file. */
function chosenNode(): string {
  const event = JSON.parse(readFileSync(queueFile('drain'), 'utf8')) as { Records: Array<{ body: string }> };
  return (JSON.parse(event.Records[0]!.body) as { nodeId: string }).nodeId;
}

/** The host the provisioner recorded, from the state (the status as JSON). */
function provisioningNodes(time: string): string[] {
  const run = spawnSync(process.execPath, [join(ROOT, 'bin/nodescaler.mjs'), 'status', 'd1/small', '--json', '--state-dir', STATE, '--at', iso(time)], { cwd: ROOT, encoding: 'utf8' });
  const view = JSON.parse(run.stdout) as { pools: Array<{ nodeList: Array<{ nodeId: string; state: string }> }> };
  return view.pools.flatMap((p) => p.nodeList).filter((n) => n.state === 'provisioning').map((n) => n.nodeId);
}

function queueLength(name: string): number {
  try {
    return (JSON.parse(readFileSync(queueFile(name), 'utf8')) as { Records: unknown[] }).Records.length;
  } catch {
    return 0;
  }
}

// ---------------------------------------------------------------------------
// The story.

function main(): void {
  rmSync(STATE, { recursive: true, force: true });
  mkdirSync(join(STATE, 'demo'), { recursive: true });
  console.log(`nodescaler demo: the four functions on the embedded default (${show(STATE)}: dynalite, queue files, the simulated platform;`);
  console.log('infra/nodescaler.example.yml: handler log, pools d1/small of 100 gears per node and d1/medium), on a virtual clock.');

  step('10:00:30', 'Stats arrive: the four d1/small nodes hold 94 to 96 of 100 gears (events/node-stats.json)');
  invoke('thresholdEvaluator', join(ROOT, 'events/node-stats.json'), '10:00:30');
  status('10:00:40');

  step('10:00:45', 'The provisioner takes the scale-up: claims a name, records the node, asks the log handler for a host');
  invoke('nodeProvisioner', queueFile('scale'), '10:00:45');
  const hosts = provisioningNodes('10:00:50');
  if (hosts.length === 0) throw new Error('the provisioner recorded no node');
  status('10:00:50');

  step('10:03:00', `The new host booted: its agent reports (${hosts.join(', ')}, 0 gears) with the others; it joins the pool`);
  invoke('thresholdEvaluator', statsEvent('10:03:00', hosts.map((nodeId) => ({ nodeId, district: 'd1', profile: 'small', max: 100 })) ), '10:03:00');
  status('10:03:10');

  step('10:04:00', 'Load falls: tenants delete apps; new ones land on the new host. The agents report');
  setGears({
    'd1-small-1.example.com': 52,
    'd1-small-2.example.com': 48,
    'd1-small-3.example.com': 45,
    'd1-small-4.example.com': 40,
    ...Object.fromEntries(hosts.map((nodeId) => [nodeId, 7])),
  });
  invoke('thresholdEvaluator', statsEvent('10:04:00'), '10:04:00');
  status('10:04:10');

  step('10:08:00', 'Still low, but scale-down waits: scaleDown.delayAfterAdd (10m after the scale-up) and unneededTime (5m low)');
  invoke('thresholdEvaluator', statsEvent('10:08:00'), '10:08:00');

  step('10:11:00', 'Low for 7 minutes, but scale-down judges the last hour\'s demand (its 95th percentile, 380 gears): it still needs every node');
  invoke('thresholdEvaluator', statsEvent('10:11:00'), '10:11:00');

  step('11:05:00', 'An hour low: a drain does not pay yet (no day of history, so a node must have been unneeded for the 2h recent horizon); the evaluator closes the next node to drain to new gears (attrition)');
  invoke('thresholdEvaluator', statsEvent('11:05:00'), '11:05:00');
  status('11:05:10');

  step('11:30:00', 'Tenants delete four of the closed node\'s gears; new ones land elsewhere. The agents report');
  setGears(Object.fromEntries(hosts.map((nodeId) => [nodeId, 3])));
  invoke('thresholdEvaluator', statsEvent('11:30:00'), '11:30:00');

  step('12:11:00', 'Two hours low: the drain pays (the pays-off check: saving over the hours unneeded >= 2 x the moves\' cost); the evaluator drains the closed node');
  invoke('thresholdEvaluator', statsEvent('12:11:00'), '12:11:00');
  if (queueLength('drain') === 0) throw new Error('the evaluator sent no scale-down');
  const victim = chosenNode();
  status('12:11:10');

  step('12:11:15', `The gear mover takes the scale-down: ${victim} goes draining; its three gears move (3 at a time)`);
  invoke('gearMover', queueFile('drain'), '12:11:15');
  status('12:11:20');

  let time = 12 * 3600 + 11 * 60 + 30;
  const clock = () => new Date(time * 1000).toISOString().slice(11, 19);
  for (let pass = 0; pass < 6 && queueLength('decommission') === 0; pass++, time += 30) {
    step(clock(), 'Tick: the gear mover checks its moves (one platform move each) and starts the next ones');
    invoke('gearMover', tickEvent(clock()), clock());
    status(new Date((time + 5) * 1000).toISOString().slice(11, 19));
  }
  if (queueLength('decommission') === 0) throw new Error('the drain did not complete');

  step(clock(), `The decommissioner takes drain-complete: asks the platform again that ${victim} is empty, then releases the host`);
  invoke('decommissioner', queueFile('decommission'), clock());
  time += 30;
  invoke('decommissioner', tickEvent(clock()), clock());
  status(new Date((time + 10) * 1000).toISOString().slice(11, 19));

  console.log(`\n${'─'.repeat(78)}\nThe state stays in ${show(STATE)}; look around with, for instance:`);
  console.log(`  npx nodescaler explain d1/small --state-dir ${show(STATE)} --at ${iso(clock())}`);
  console.log(`  npx nodescaler status --all --state-dir ${show(STATE)} --at ${iso(clock())}`);
}

main();
