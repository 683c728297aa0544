#!/usr/bin/env node
// `npm run package|deploy -- [serverless options]`: validates the stage's
// configuration file (config/<stage>.<region>.yml when it exists, else
// config/<stage>.yml; infra/nodescaler.example.yml for the
// local stage) with the functions' own schema, then runs `serverless <command>`
// with the same options. The local stage is never deployed.
//
//   npm run package -- --stage prod --region eu-west-1
//   npm run deploy  -- --stage prod --region eu-west-1
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const [command, ...args] = process.argv.slice(2);
const env = { ...process.env, SLS_TELEMETRY_DISABLED: '1' };

/** The value of --name / -n / --name=value among the arguments. */
function option(long, short) {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === long || (short && args[i] === short)) return args[i + 1];
    if (args[i].startsWith(`${long}=`)) return args[i].slice(long.length + 1);
  }
  return undefined;
}

const stage = option('--stage', '-s') ?? 'dev';
if (command === 'deploy' && stage === 'local') {
  console.error('the local stage is for `npm run invoke` only; deploy a real stage: npm run deploy -- --stage <stage>');
  process.exit(2);
}
const configParam = args.map((arg, i) => (arg === '--param' ? args[i + 1] : arg.startsWith('--param=') ? arg.slice(8) : undefined)).find((p) => p?.startsWith('configFile='));
const region = option('--region', '-r');
// lib/config/stage-file.ts: a stage deployed to a second region has its own file (images and subnets are regional).
const regionalFile = region === undefined ? undefined : `config/${stage}.${region}.yml`;
const stageFile = regionalFile !== undefined && existsSync(resolve(root, regionalFile)) ? regionalFile : `config/${stage}.yml`;
const configFile = configParam?.slice('configFile='.length) ?? (stage === 'local' ? 'infra/nodescaler.example.yml' : stageFile);
// serverless.yml defaults to config/<stage>.yml; name the regional file when it is the one chosen.
const serverlessArgs = configParam === undefined && configFile === regionalFile ? [...args, `--param=configFile=${configFile}`] : args;

const run = (bin, argv) => spawnSync(resolve(root, 'node_modules/.bin', bin), argv, { cwd: root, env, stdio: 'inherit' });
const check = run('tsx', ['scripts/check-config.ts', configFile]);
if (check.status !== 0) {
  console.error(`stage ${stage}: fix ${configFile} (copy infra/nodescaler.example.yml for a new stage)`);
  process.exit(check.status ?? 1);
}
if (configFile === regionalFile) console.error(`stage ${stage} in ${region}: ${configFile}`);
const result = run('serverless', [command, ...serverlessArgs]);
process.exit(result.status ?? 1);
