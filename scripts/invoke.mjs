#!/usr/bin/env node
// `npm run invoke -- <function> <event file> [options]`: serverless invoke local.
//
// Stage `local` (the default) needs no AWS account: the function's local twin
// (functions/local/) runs the real handler against the embedded state in
// .nodescaler/ (dynalite, queue files), with infra/nodescaler.example.yml
// (handler log, simulated platform). State carries over from one invocation
// to the next; messages a function sends wait in .nodescaler/queues/<queue>.json,
// itself an event for the next invocation:
//
//   npm run invoke -- thresholdEvaluator events/node-stats.json --at 2026-11-21T10:00:30Z
//   npm run invoke -- thresholdEvaluator events/tick.json --at 2026-11-21T10:02:45Z
//   npm run invoke -- nodeProvisioner .nodescaler/queues/scale.json
//
// Options:
//   --at <ISO time>     the local clock starts at this instant (sample events carry fixed times)
//   --state-dir <dir>   the embedded state (default .nodescaler; delete it to start afresh)
//   --stage <stage>     another stage runs the deployed handler locally against that
//                       stage's AWS resources (needs credentials and a deployed stack)
//   --region <region>
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const usage = 'usage: npm run invoke -- <function> <event file> [--at <ISO time>] [--state-dir <dir>] [--stage <stage>] [--region <region>]';

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      at: { type: 'string' },
      'state-dir': { type: 'string', default: '.nodescaler' },
      stage: { type: 'string', default: 'local' },
      region: { type: 'string' },
    },
  });
} catch (error) {
  console.error(`${error.message}\n${usage}`);
  process.exit(2);
}
const { values, positionals } = parsed;
if (positionals.length !== 2) {
  console.error(usage);
  process.exit(2);
}
const [fn, eventFile] = positionals;
// As the CLI's --at (lib/cli/target.ts): an ISO 8601 date-time, checked before serverless starts.
if (values.at !== undefined && (!/^\d{4}-\d{2}-\d{2}T/.test(values.at) || !Number.isFinite(Date.parse(values.at)))) {
  console.error(`--at ${JSON.stringify(values.at)}: expected an ISO 8601 time such as 2026-11-21T10:05:00Z\n${usage}`);
  process.exit(2);
}
if (values.at !== undefined && values.stage !== 'local') {
  console.error(`--at sets the local clock; stage ${values.stage} runs on the real one\n${usage}`);
  process.exit(2);
}

const env = { ...process.env, SLS_TELEMETRY_DISABLED: '1' };
if (values.stage === 'local') {
  env.NODESCALER_LOCAL_STATE_DIR = resolve(values['state-dir']);
  if (values.at !== undefined) env.NODESCALER_LOCAL_NOW = values.at;
}

const args = ['invoke', 'local', '--function', fn, '--path', resolve(eventFile), '--stage', values.stage];
// invoke local require()s the handler by a path without extension: build .js bundles,
// in a work folder of this run (inside the service directory, so the bundles are ES
// modules by its package.json), removed afterwards.
const workFolder = `.esbuild/invoke-${process.pid}`;
args.push('--param=bundleExtension=.js', `--param=esbuildWorkFolder=${workFolder}`);
if (values.region !== undefined) args.push('--region', values.region);

const serverless = resolve(root, 'node_modules/.bin/serverless');
const result = spawnSync(serverless, args, { cwd: root, env, stdio: 'inherit' });
rmSync(resolve(root, workFolder), { recursive: true, force: true });
if (result.error) {
  console.error(`cannot run ${serverless}: ${result.error.message}`);
  process.exit(1);
}
process.exit(result.status ?? 1);
