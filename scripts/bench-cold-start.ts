/**
 * The `cold-start` entry of `npm run bench`: for each function, its Lambda
 * bundle, built as `serverless package` builds it for a production-like stage
 * (scripts/bundle-functions.mjs with the configuration below: handler ec2, the
 * openshift-broker platform, DNS; no spool, no notify topic), and the time a
 * fresh Node process takes to load it, next to a "bare" bundle holding only
 * the AWS clients that function uses with that configuration, each
 * constructed once.
 *
 * What "load" is: `import()` of the bundle, timed inside the fresh process
 * (the process start itself not counted), i.e. the init phase of a Lambda
 * cold start: every module evaluated, the deployment settings read from the
 * environment and validated, the packaged configuration taken, the clients,
 * logger, metrics and message schemas built. Not counted: the first
 * invocation itself (its AWS calls). Nothing is built lazily to leave it out
 * of this figure: the configuration schema is not built at all when a
 * function starts with its packaged configuration (lib/config/packaged.ts).
 *
 * The baseline ("bare"): the AWS SDK code the function runs, alone, built
 * with the same esbuild options and plugins: the clients of the adapters the
 * configuration makes it build (lib/config/adapters.ts), DynamoDB through the
 * document client, each constructed once, and the commands the function
 * sends (their classes and operation schemas are SDK code: EC2's RunInstances
 * alone is 30 KiB). "Our own code" is everything else: lib/, functions/,
 * the logger, the EMF writer, middy. The load added to the clients alone, without their
 * commands, is printed too. The bench fails if a bundle holds any other client.
 *
 * How: the three bundles load in turn, in a rotating order, in each of
 * ${RUNS} rounds, and the added load is the median over rounds of each
 * round's ratio, so a slow spell of this shared machine slows a round's
 * bundles alike instead of one bundle's runs (the spread of the ratios over
 * the middle half of the rounds is printed below the table).
 *
 * Budgets (issue 8): evaluator and decommissioner bundles < 500 KiB, gear
 * mover and provisioner < 1 MiB; our code adds < 20 % to the load time of the
 * bare client bundle. A handler not written yet is skipped with a note.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import type { BuiltFunction } from './bundle-functions.mjs';

interface Row {
  case: string;
  figure: number;
  unit: string;
  target?: { op: '>=' | '<'; value: number };
}

const ROOT = resolve(import.meta.dirname, '..');
const KIB = 1024;
const RUNS = 41;

/** With the bench configuration: the state table and the queue it sends to, the broker (SSM), the hosts (EC2) and their records (Route 53). */
const FUNCTIONS = [
  { name: 'thresholdEvaluator', entry: 'functions/threshold-evaluator.ts', budgetKiB: 500, clients: ['client-dynamodb', 'client-ec2', 'client-pricing', 'client-sqs', 'client-ssm', 'lib-dynamodb'] },
  { name: 'nodeProvisioner', entry: 'functions/node-provisioner.ts', budgetKiB: 1024, clients: ['client-dynamodb', 'client-ec2', 'client-route-53', 'client-ssm', 'lib-dynamodb'] },
  { name: 'gearMover', entry: 'functions/gear-mover.ts', budgetKiB: 1024, clients: ['client-dynamodb', 'client-sqs', 'client-ssm', 'lib-dynamodb'] },
  {
    name: 'decommissioner',
    entry: 'functions/decommissioner.ts',
    budgetKiB: 500,
    clients: ['client-dynamodb', 'client-ec2', 'client-route-53', 'client-ssm', 'lib-dynamodb'],
  },
] as const;


/**
 * A production-like stage configuration: handler ec2, the broker platform,
 * DNS, so each function builds every client it would build when deployed.
 */
function benchConfigFile(dir: string): string {
  const config = parse(readFileSync(join(ROOT, 'infra/nodescaler.example.yml'), 'utf8')) as Record<string, unknown>;
  config.handler = 'ec2';
  config.platform = { kind: 'openshift-broker', brokerInstanceId: 'i-0123456789abcdef0' };
  config.dns = { hostedZoneId: 'Z0123456789ABCDEFGHIJ' };
  const file = join(dir, 'bench-config.yml');
  writeFileSync(file, stringify(config));
  return file;
}

/** Milliseconds to `import()` a bundle in a fresh process (the process start itself not counted). */
function loadTime(bundle: string, env: NodeJS.ProcessEnv): number {
  const script = 'const t = performance.now(); await import(process.argv[1]); process.stdout.write(String(performance.now() - t));';
  const run = spawnSync(process.execPath, ['--input-type=module', '--no-warnings', '-e', script, bundle], { env, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`loading ${bundle} failed:\n${run.stderr}`);
  return Number(run.stdout);
}

/** The value below which a fraction `q` of `values` lie (linear between neighbours). */
function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  return sorted[low]! + (sorted[Math.min(low + 1, sorted.length - 1)]! - sorted[low]!) * (at - low);
}
const median = (values: number[]) => quantile(values, 0.5);
const percent = (ratio: number) => (ratio - 1) * 100;

/** Loads of the function's bundle and of its two bare bundles, `RUNS` rounds, each round in a rotating order. */
function loadRounds(files: { own: string; bare: string; bareClients: string }, env: NodeJS.ProcessEnv, runs: number) {
  const order = ['own', 'bare', 'bareClients'] as const;
  for (const key of order) loadTime(files[key], env); // warm the file system cache
  const rounds: Array<Record<(typeof order)[number], number>> = [];
  for (let round = 0; round < runs; round++) {
    const times = { own: 0, bare: 0, bareClients: 0 };
    for (let i = 0; i < order.length; i++) {
      const key = order[(round + i) % order.length]!;
      times[key] = loadTime(files[key], env);
    }
    rounds.push(times);
  }
  return rounds;
}

export const coldStartBench = {
  name: 'cold-start',
  description: `Lambda bundles as packaged for a stage with handler ec2, the broker platform and DNS (infra/esbuild.yml): size from the esbuild metafile, and time for a fresh Node process to import it (the init phase of a cold start: modules, settings, packaged configuration, clients, logger, metrics, message schemas; not the first invocation), next to a bare bundle of the SDK code the function runs (its clients and the commands it sends): ${RUNS} rounds, each loading the three bundles in a rotating order; the added load is the median of the rounds' ratios`,
  /** `quick`: 3 rounds instead of RUNS, enough to show every bundle builds and loads. */
  run(options: { quick: boolean } = { quick: false }): Row[] {
    const runs = options.quick ? 3 : RUNS;
    const present = FUNCTIONS.filter((fn) => existsSync(join(ROOT, fn.entry)));
    for (const fn of FUNCTIONS) if (!present.includes(fn)) console.log(`  ${fn.name}: ${fn.entry} does not exist yet; skipped`);
    if (present.length === 0) return [];
    const dir = mkdtempSync(join(tmpdir(), 'nodescaler-cold-start-'));
    try {
      const configFile = benchConfigFile(dir);
      const build = spawnSync(process.execPath, [join(ROOT, 'scripts/bundle-functions.mjs'), '--config', configFile, dir, ...present.map((fn) => `${fn.name}=${fn.entry}`)], {
        cwd: ROOT,
        encoding: 'utf8',
      });
      if (build.status !== 0) throw new Error(`bundling failed:\n${build.stderr}`);
      const built = JSON.parse(build.stdout) as Record<string, BuiltFunction>;
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'bench',
        AWS_SECRET_ACCESS_KEY: 'bench',
        NODESCALER_STAGE: 'bench',
        NODESCALER_TABLE: 'nodescaler-bench-state',
        NODESCALER_STATS_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/nodescaler-bench-stats',
        NODESCALER_SCALE_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/nodescaler-bench-scale.fifo',
        NODESCALER_DRAIN_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/nodescaler-bench-drain.fifo',
        NODESCALER_DECOMMISSION_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/nodescaler-bench-decommission',
        NODESCALER_LOG_LEVEL: 'SILENT',
      };
      const rows: Row[] = [];
      const spreads: string[] = [];
      for (const fn of present) {
        const { bundle, bytes, clients, commands, bare, bareBytes, bareClients, bareClientsBytes } = built[fn.name]!;
        if (clients.join() !== fn.clients.join()) {
          throw new Error(`${fn.name} bundles ${clients.join(', ')}; with the bench configuration it uses ${fn.clients.join(', ')}`);
        }
        const rounds = loadRounds({ own: bundle, bare, bareClients }, env, runs);
        const toBare = rounds.map((round) => round.own / round.bare);
        const toClients = rounds.map((round) => round.own / round.bareClients);
        const sdk = clients.map((c) => c.replace(/^client-/, '')).join(', ');
        const commandCount = Object.values(commands).flat().length;
        rows.push(
          { case: `${fn.name}: bundle`, figure: bytes / KIB, unit: 'KiB', target: { op: '<', value: fn.budgetKiB } },
          { case: `${fn.name}: bare bundle (${sdk}; ${commandCount} commands)`, figure: bareBytes / KIB, unit: 'KiB' },
          { case: `${fn.name}: load`, figure: median(rounds.map((round) => round.own)), unit: 'ms' },
          { case: `${fn.name}: bare load`, figure: median(rounds.map((round) => round.bare)), unit: 'ms' },
          { case: `${fn.name}: load added to bare`, figure: percent(median(toBare)), unit: '%', target: { op: '<', value: 20 } },
          { case: `${fn.name}: load added to the clients alone (${(bareClientsBytes / KIB).toFixed(0)} KiB)`, figure: percent(median(toClients)), unit: '%' },
        );
        spreads.push(
          `  ${fn.name}: load added to bare, middle half of the ${runs} rounds: ${percent(quantile(toBare, 0.25)).toFixed(1)} % to ${percent(quantile(toBare, 0.75)).toFixed(1)} %`,
        );
      }
      console.log(spreads.join('\n'));
      return rows;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
