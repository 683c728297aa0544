#!/usr/bin/env node
// Builds Lambda bundles exactly as `serverless package` does for a stage (the
// esbuild options of infra/esbuild.yml and the plugins of
// infra/esbuild-plugins.cjs, with the stage's configuration file), writing
// each bundle with its esbuild metafile, and, next to each, a "bare" bundle:
// only the AWS SDK clients the function's bundle contains, each constructed
// once at module scope, as the smallest Lambda using them would.
//
//   node scripts/bundle-functions.mjs --config <stage configuration file> <out dir> <name>=<entry> [<name>=<entry> ...]
//
// Prints one JSON object: { <name>: { bundle, bytes, meta, clients, bare, bareBytes } }.
// scripts/bench.ts (the cold-start entry) runs it; usable alone to inspect a bundle.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { parse } from 'yaml';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

/** serverless-esbuild's own keys in infra/esbuild.yml (the rest are esbuild build options). */
const PLUGIN_ONLY_KEYS = ['exclude', 'outputFileExtension', 'outputWorkFolder', 'packager', 'plugins', 'concurrency', 'zipConcurrency', 'keepOutputDirectory'];

/** `configFile`: the stage's configuration, as serverless.yml's `configFile` parameter names it; without one, no stage plugins. */
export function esbuildOptions({ configFile } = {}) {
  const options = parse(readFileSync(join(root, 'infra/esbuild.yml'), 'utf8'));
  const external = [...(options.external ?? []), ...(options.exclude ?? [])];
  for (const key of PLUGIN_ONLY_KEYS) delete options[key];
  const { lambdaPlugins } = require(join(root, 'infra/esbuild-plugins.cjs'));
  return { ...options, external, plugins: lambdaPlugins(configFile ? { configFile: resolve(configFile) } : {}) };
}

/** The AWS SDK clients (and document client) a metafile's inputs include, e.g. ['client-dynamodb', 'lib-dynamodb']. */
function clientsOf(meta) {
  const found = new Set();
  for (const input of Object.keys(meta.inputs)) {
    const match = input.match(/node_modules\/@aws-sdk\/((?:client|lib)-[a-z0-9-]+)\//);
    if (match) found.add(match[1]);
  }
  return [...found].sort();
}

/** Source of the bare bundle: each client constructed at module scope (a document client over DynamoDB). */
function bareSource(clients) {
  const lines = [];
  const constructed = [];
  for (const client of clients.filter((c) => c.startsWith('client-'))) {
    const module = require(join(root, 'node_modules/@aws-sdk', client, 'package.json'));
    const exports = require(join(root, 'node_modules/@aws-sdk', client));
    const className = Object.keys(exports).find((name) => /^[A-Z][A-Za-z0-9]*Client$/.test(name) && typeof exports[name] === 'function');
    if (!className) throw new Error(`no client class in ${module.name}`);
    lines.push(`import { ${className} } from '@aws-sdk/${client}';`);
    constructed.push(`new ${className}({})`);
  }
  if (clients.includes('lib-dynamodb')) {
    lines.push(`import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';`);
    constructed.push('DynamoDBDocumentClient.from(new DynamoDBClient({}))');
  }
  lines.push(`export const clients = [${constructed.join(', ')}];`);
  lines.push('export const handler = async () => clients.length;');
  return `${lines.join('\n')}\n`;
}

export async function bundleFunctions(outDir, entries, { configFile } = {}) {
  mkdirSync(outDir, { recursive: true });
  const options = esbuildOptions({ configFile });
  const results = {};
  for (const [name, entry] of Object.entries(entries)) {
    const bundle = join(outDir, `${name}.mjs`);
    const built = await esbuild.build({ ...options, entryPoints: [resolve(root, entry)], outfile: bundle, metafile: true, logLevel: 'error' });
    const meta = join(outDir, `${name}-meta.json`);
    writeFileSync(meta, JSON.stringify(built.metafile));
    const clients = clientsOf(built.metafile);
    const bareEntry = join(outDir, `${name}-bare-entry.mjs`);
    writeFileSync(bareEntry, bareSource(clients));
    const bare = join(outDir, `${name}-bare.mjs`);
    const bareBuilt = await esbuild.build({ ...options, entryPoints: [bareEntry], outfile: bare, metafile: true, logLevel: 'error', absWorkingDir: root, nodePaths: [join(root, 'node_modules')] });
    results[name] = {
      bundle,
      bytes: Object.values(built.metafile.outputs)[0].bytes,
      meta,
      clients,
      bare,
      bareBytes: Object.values(bareBuilt.metafile.outputs)[0].bytes,
    };
  }
  return results;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--config');
  const configFile = at >= 0 ? args.splice(at, 2)[1] : undefined;
  const [outDir, ...pairs] = args;
  if (!configFile || !outDir || pairs.length === 0) {
    console.error('usage: node scripts/bundle-functions.mjs --config <stage configuration file> <out dir> <name>=<entry> [...]');
    process.exit(2);
  }
  const entries = Object.fromEntries(pairs.map((pair) => pair.split('=')));
  console.log(JSON.stringify(await bundleFunctions(resolve(outDir), entries, { configFile })));
}
