#!/usr/bin/env node
// `nodescaler` (package.json "bin"; `npx nodescaler ...` in this repository): the
// operator CLI, lib/cli/main.ts. A fresh clone needs `npm ci` and no build step:
// on first use (and whenever a source file it uses changed) this shim bundles the
// CLI's TypeScript with esbuild into node_modules/.cache/nodescaler/<hash>/ (code
// split, so commands that need no state load no AWS SDK; packages stay external
// and resolve from node_modules as usual) and runs the bundle. The check costs a
// few stat calls; a rebuild about 0.2 s. When the cache cannot be written, the
// sources run through tsx instead (slower start, same behaviour).
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'lib/cli/main.ts');
const cacheDir = join(root, 'node_modules/.cache/nodescaler');
const manifestFile = join(cacheDir, 'cli.json');
/** Bumped when the build options change, so an old bundle is rebuilt. */
const BUILD = 3;
/** Builds no process uses any more are removed after this long. */
const KEEP_OLD_MS = 3_600_000;

// The AWS SDK's notice that its 2027 releases need Node.js 22 goes to every command's stderr on
// Node.js 20 (this project supports >= 20.19); the CLI's output is for operators, so it is dropped here.
const emitWarning = process.emitWarning.bind(process);
process.emitWarning = (warning, ...rest) => {
  if (String(warning).startsWith('NodeVersionSupportWarning')) return;
  emitWarning(warning, ...rest);
};

/** `size:mtime` of a file, or undefined when it is gone. */
function stamp(file) {
  try {
    const stat = statSync(file);
    return `${stat.size}:${stat.mtimeMs}`;
  } catch {
    return undefined;
  }
}

/** The current build's directory, when every source it was built from is unchanged. */
function currentBuild() {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
  } catch {
    return undefined;
  }
  if (manifest.build !== BUILD || stamp(join(cacheDir, manifest.dir, 'main.mjs')) === undefined) return undefined;
  const fresh = Object.entries(manifest.inputs).every(([file, was]) => stamp(join(root, file)) === was);
  return fresh ? join(cacheDir, manifest.dir) : undefined;
}

async function build() {
  const esbuild = await import('esbuild');
  mkdirSync(cacheDir, { recursive: true });
  // Built in a directory of this process, then renamed to a name derived from its sources:
  // concurrent runs never see half a build, and a process still running an older one keeps it.
  const temporary = join(cacheDir, `tmp-${process.pid}`);
  rmSync(temporary, { recursive: true, force: true });
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [entry],
    outdir: temporary,
    entryNames: '[name]',
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    metafile: true,
    sourcemap: 'inline',
    logLevel: 'silent',
  });
  // Metafile paths are relative to absWorkingDir (root).
  const inputs = {};
  for (const file of Object.keys(result.metafile.inputs).sort()) inputs[file] = stamp(join(root, file));
  const dir = `cli-${createHash('sha256').update(JSON.stringify([BUILD, inputs])).digest('hex').slice(0, 16)}`;
  try {
    renameSync(temporary, join(cacheDir, dir));
  } catch {
    rmSync(temporary, { recursive: true, force: true }); // built by another process at the same moment
  }
  writeFileSync(`${manifestFile}.${process.pid}.tmp`, JSON.stringify({ build: BUILD, dir, inputs }));
  renameSync(`${manifestFile}.${process.pid}.tmp`, manifestFile);
  for (const name of readdirSync(cacheDir)) {
    if (name === dir || !/^(cli-|tmp-)/.test(name)) continue;
    try {
      if (Date.now() - statSync(join(cacheDir, name)).mtimeMs > KEEP_OLD_MS) rmSync(join(cacheDir, name), { recursive: true, force: true });
    } catch {
      // removed by another process
    }
  }
  return join(cacheDir, dir);
}

let cli;
try {
  const dir = currentBuild() ?? (await build());
  ({ cli } = await import(pathToFileURL(join(dir, 'main.mjs')).href));
} catch {
  // No writable cache (or no esbuild): run the sources through tsx.
  try {
    const { register } = await import('tsx/esm/api');
    register();
  } catch {
    process.stderr.write('nodescaler: error: cannot build the CLI (esbuild) nor run it through tsx: run `npm ci` in the repository\n');
    process.exit(1);
  }
  ({ cli } = await import(pathToFileURL(entry).href));
}

process.exitCode = await cli(process.argv.slice(2), root);
