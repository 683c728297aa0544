#!/usr/bin/env node
// Builds Lambda bundles exactly as `serverless package` does for a stage (the
// esbuild options of infra/esbuild.yml and the plugins of
// infra/esbuild-plugins.cjs, with the stage's configuration file), writing
// each bundle with its esbuild metafile, and, next to each, two "bare"
// bundles of AWS SDK code alone, as the smallest Lambda using the same
// services would load it:
//   bare:        the clients the function's bundle contains, each constructed
//                once at module scope, and the SDK commands it sends (the
//                operations' classes and schemas: SDK code, not ours);
//   bareClients: the clients alone.
// Both are built with the same options and plugins as the function.
//
//   node scripts/bundle-functions.mjs --config <stage configuration file> <out dir> <name>=<entry> [<name>=<entry> ...]
//
// Prints one JSON object:
//   { <name>: { bundle, bytes, meta, clients, commands, bare, bareBytes, bareClients, bareClientsBytes } }.
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

/** The SDK commands a bundle holds (after tree shaking), by package, e.g. { 'client-sqs': ['SendMessageBatchCommand'] }. */
function commandsOf(meta) {
  const found = {};
  const [output] = Object.values(meta.outputs);
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    if (bytesInOutput === 0) continue;
    const match = input.match(/node_modules\/@aws-sdk\/((?:client|lib)-[a-z0-9-]+)\/dist-es\/commands\/([A-Za-z0-9]+Command)\.js$/);
    if (match) (found[match[1]] ??= []).push(match[2]);
  }
  for (const names of Object.values(found)) names.sort();
  return Object.fromEntries(Object.entries(found).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * Source of a bare bundle: each client constructed at module scope (a
 * document client over DynamoDB) and, given `commands`, those command classes
 * kept (as a function sending them keeps them).
 */
function bareSource(clients, commands = {}) {
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
  const kept = [];
  for (const [pkg, names] of Object.entries(commands)) {
    // lib-dynamodb's QueryCommand and client-dynamodb's share a name.
    const aliased = names.map((name) => [name, `${pkg.replace(/-/g, '_')}_${name}`]);
    lines.push(`import { ${aliased.map(([name, alias]) => `${name} as ${alias}`).join(', ')} } from '@aws-sdk/${pkg}';`);
    kept.push(...aliased.map(([, alias]) => alias));
  }
  lines.push(`export const clients = [${constructed.join(', ')}];`);
  if (kept.length > 0) lines.push(`export const commands = [${kept.join(', ')}];`);
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
    const commands = commandsOf(built.metafile);
    const buildBare = async (suffix, source) => {
      const entry = join(outDir, `${name}-${suffix}-entry.mjs`);
      writeFileSync(entry, source);
      const outfile = join(outDir, `${name}-${suffix}.mjs`);
      const bareBuilt = await esbuild.build({ ...options, entryPoints: [entry], outfile, metafile: true, logLevel: 'error', absWorkingDir: root, nodePaths: [join(root, 'node_modules')] });
      return { file: outfile, bytes: Object.values(bareBuilt.metafile.outputs)[0].bytes };
    };
    const bare = await buildBare('bare', bareSource(clients, commands));
    const bareClients = await buildBare('bare-clients', bareSource(clients));
    results[name] = {
      bundle,
      bytes: Object.values(built.metafile.outputs)[0].bytes,
      meta,
      clients,
      commands,
      bare: bare.file,
      bareBytes: bare.bytes,
      bareClients: bareClients.file,
      bareClientsBytes: bareClients.bytes,
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
