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
 * Bare clients per function: those of the adapters the configuration makes it
 * build (lib/config/adapters.ts), DynamoDB through the document client. The
 * bench fails if a bundle holds any other client.
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

interface Row {
  case: string;
  figure: number;
  unit: string;
  target?: { op: '>=' | '<'; value: number };
}

const ROOT = resolve(import.meta.dirname, '..');
const KIB = 1024;
const RUNS = 15;

/** With the bench configuration: the state table and the queue it sends to, the broker (SSM), the hosts (EC2) and their records (Route 53). */
const FUNCTIONS = [
  { name: 'thresholdEvaluator', entry: 'functions/threshold-evaluator.ts', budgetKiB: 500, clients: ['client-dynamodb', 'client-sqs', 'client-ssm', 'lib-dynamodb'] },
  { name: 'nodeProvisioner', entry: 'functions/node-provisioner.ts', budgetKiB: 1024, clients: ['client-dynamodb', 'client-ec2', 'client-route-53', 'client-ssm', 'lib-dynamodb'] },
  { name: 'gearMover', entry: 'functions/gear-mover.ts', budgetKiB: 1024, clients: ['client-dynamodb', 'client-sqs', 'client-ssm', 'lib-dynamodb'] },
  {
    name: 'decommissioner',
    entry: 'functions/decommissioner.ts',
    budgetKiB: 500,
    clients: ['client-dynamodb', 'client-ec2', 'client-route-53', 'client-ssm', 'lib-dynamodb'],
  },
] as const;

interface Built {
  bundle: string;
  bytes: number;
  clients: string[];
  bare: string;
  bareBytes: number;
}

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

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export const coldStartBench = {
  name: 'cold-start',
  description: `Lambda bundles as packaged for a stage with handler ec2, the broker platform and DNS (infra/esbuild.yml): size from the esbuild metafile, and median time of ${RUNS} fresh Node processes to import the bundle (the init phase of a cold start: modules, settings, packaged configuration, clients, logger, metrics, message schemas; not the first invocation), next to a bare bundle of the AWS clients the function uses`,
  run(): Row[] {
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
      const built = JSON.parse(build.stdout) as Record<string, Built>;
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
      for (const fn of present) {
        const { bundle, bytes, clients, bare, bareBytes } = built[fn.name]!;
        if (clients.join() !== fn.clients.join()) {
          throw new Error(`${fn.name} bundles ${clients.join(', ')}; with the bench configuration it uses ${fn.clients.join(', ')}`);
        }
        loadTime(bundle, env); // warm the file system cache
        loadTime(bare, env);
        const own: number[] = [];
        const base: number[] = [];
        for (let i = 0; i < RUNS; i++) {
          own.push(loadTime(bundle, env));
          base.push(loadTime(bare, env));
        }
        const ownMs = median(own);
        const bareMs = median(base);
        const sdk = clients.map((c) => c.replace(/^client-/, '')).join(', ');
        rows.push(
          { case: `${fn.name}: bundle`, figure: bytes / KIB, unit: 'KiB', target: { op: '<', value: fn.budgetKiB } },
          { case: `${fn.name}: bare bundle (${sdk})`, figure: bareBytes / KIB, unit: 'KiB' },
          { case: `${fn.name}: load`, figure: ownMs, unit: 'ms' },
          { case: `${fn.name}: bare load`, figure: bareMs, unit: 'ms' },
          { case: `${fn.name}: load added to bare`, figure: ((ownMs - bareMs) / bareMs) * 100, unit: '%', target: { op: '<', value: 20 } },
        );
      }
      return rows;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
