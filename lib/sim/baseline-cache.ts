import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';
import { activeDemand } from './active-demand.js';
import { BASELINES, runBaseline, type BaselineOptions } from './baselines.js';
import type { SimPool } from './pools.js';
import { replayPools, type ReplayOptions } from './replay.js';
import { sampleInterval, type PolicyResult } from './results.js';
import type { Trace } from './trace.js';

/**
 * The comparison policies' results on one suite trace, cached on disk: they do
 * not depend on nodescaler's configuration, so a tuning run replays only
 * nodescaler once they are known (`npm run bench -- tune`).
 */

/** Bumped when the stored shape changes. */
const FORMAT = 1;
const BASELINES_SOURCE = fileURLToPath(new URL('./baselines.ts', import.meta.url));

/** The replay settings the baselines share with nodescaler's run (the suite's). */
export type BaselineReplay = Pick<ReplayOptions, 'gearsPerNode' | 'bootDelaySeconds' | 'seed' | 'placement' | 'idleTakesNoSlot'>;

/** The pools and options every baseline runs with on `trace`, as `npm run bench -- suite` runs them. */
export function baselineSetup(trace: Trace, replay: BaselineReplay): { pools: SimPool[]; options: BaselineOptions } {
  const { input, pools } = replayPools(trace, { ...replay, store: 'memory' });
  return { pools, options: baselineOptions(trace, replay, input.limits?.maxNodesTotal ?? 100) };
}

/** The mechanics every baseline runs with: the same boot delay, tick and move pace as nodescaler's replay. */
export function baselineOptions(trace: Trace, replay: BaselineReplay, maxNodesTotal: number): BaselineOptions {
  return {
    bootDelaySeconds: replay.bootDelaySeconds,
    tickSeconds: 60,
    moveSeconds: 30,
    maxConcurrentMoves: 3,
    seed: replay.seed,
    sampleEverySeconds: sampleInterval(trace.durationSeconds),
    maxNodesTotal,
    // Only when asked for, so the default's cache keys stay as they were.
    ...(replay.placement && replay.placement !== 'least-loaded' ? { placement: replay.placement } : {}),
    ...(replay.idleTakesNoSlot ? { idleTakesNoSlot: true } : {}),
  };
}

/**
 * The demand the reactive floor (floor.ts) reads: the trace's, or with `idleTakesNoSlot` the gears holding a slot as
 * the pool's own draws leave them (active-demand.ts), so the floor judges what the policies sized for.
 */
export function floorDemand(trace: Trace, replay: BaselineReplay): Pick<Trace, 'steps' | 'durationSeconds'> {
  if (!replay.idleTakesNoSlot) return trace;
  const { pools, options } = baselineSetup(trace, replay);
  if (pools.length !== 1) return trace;
  return activeDemand(pools[0]!, options.tickSeconds, options.seed);
}

/** Every baseline on `trace`, in BASELINES order. */
export function runBaselines(trace: Trace, replay: BaselineReplay): PolicyResult[] {
  const { pools, options } = baselineSetup(trace, replay);
  return BASELINES.map((policy) => runBaseline(policy, pools, options));
}

/** A hash of the demand a replay sees (after windowing and scaling), not of the file it came from. */
export function traceHash(trace: Trace): string {
  const churn = trace.churnPerHour ? { churnPerHour: trace.churnPerHour } : {};
  // Unset, the mix leaves the hash as it was, so the cached baselines of the default mix stay valid.
  const apps = trace.apps ? { apps: { idleShare: trace.apps.idleShare, sizeExponent: trace.apps.sizeExponent } } : {};
  return sha256(JSON.stringify({ stepSeconds: trace.stepSeconds, durationSeconds: trace.durationSeconds, steps: trace.steps.map((s) => [s.at, s.demand]), ...churn, ...apps }));
}

/**
 * A hash of `entry` and every module it imports (not only its types) by relative path, recursively:
 * an edit to the baselines (or to the figures they record) invalidates the cache. Each module counts as the
 * JavaScript esbuild emits for it, so a comment or a type (an optional field on PolicyResult) changes nothing: hashing
 * the TypeScript text made such an edit recompute every baseline, about half of a 296-trace tally (session 54).
 */
export function sourceVersion(entry: string = BASELINES_SOURCE): string {
  const root = dirname(entry);
  const seen = new Map<string, string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    const text = readFileSync(file, 'utf8');
    seen.set(file, text);
    // Type-only imports change no figure; every other relative import or re-export is followed.
    for (const match of text.matchAll(/^(?:import|export)\s+(type\s)?[^;]*?\sfrom\s+'(\.{1,2}\/[^']+)\.js'/gm)) {
      if (!match[1]) visit(resolve(dirname(file), `${match[2]}.ts`));
    }
  };
  visit(entry);
  const parts = [...seen.entries()].map(([file, text]) => `${relative(root, file)}\n${transformSync(text, { loader: 'ts' }).code}`).sort();
  return sha256(parts.join('\0'));
}

export interface BaselineKeyParts {
  trace: string;
  traceHash: string;
  /** Days of the window (undefined: the whole trace). */
  days: number | undefined;
  peakGears: number;
  gearsPerNode: number;
  bootDelaySeconds: number;
  seed: number;
  /** The pools as the baselines see them (bounds, node size, price), without their demand. */
  pools: Array<Omit<SimPool, 'trace'>>;
  options: BaselineOptions;
  source: string;
}

export function baselineKeyParts(name: string, trace: Trace, replay: BaselineReplay, window: { days: number | undefined; peakGears: number }, source = sourceVersion()): BaselineKeyParts {
  const { pools, options } = baselineSetup(trace, replay);
  return {
    trace: name,
    traceHash: traceHash(trace),
    days: window.days,
    peakGears: window.peakGears,
    gearsPerNode: replay.gearsPerNode,
    bootDelaySeconds: replay.bootDelaySeconds,
    seed: replay.seed,
    pools: pools.map(({ trace: _demand, ...pool }) => pool),
    options,
    source,
  };
}

/** The file name of an entry: the trace's name (readable) and a hash of everything the results depend on. */
export function baselineKey(parts: BaselineKeyParts): string {
  const slug = parts.trace.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 60);
  const sorted = JSON.stringify({ format: FORMAT, ...parts }, (_key, value: unknown) =>
    value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b))) : value,
  );
  return `${slug}-${sha256(sorted).slice(0, 24)}`;
}

/** Cached results keep the figures, not the chart series (a tuning run prints no chart). */
function compact(result: PolicyResult): PolicyResult {
  return { ...result, series: [], events: [], ...(result.autoscalerBill ? { autoscalerBill: [] } : {}) };
}

/** Baseline results on disk, one JSON file per key; an unreadable or foreign file is a miss. */
export class BaselineCache {
  hits = 0;
  misses = 0;

  constructor(private readonly directory: string | undefined) {}

  /** The cached results for `parts`, or runs `compute`, stores and returns its results. */
  get(parts: BaselineKeyParts, compute: () => PolicyResult[]): { results: PolicyResult[]; cached: boolean } {
    const key = baselineKey(parts);
    const file = this.directory === undefined ? undefined : join(this.directory, `${key}.json`);
    if (file) {
      const stored = readEntry(file, key);
      if (stored) {
        this.hits++;
        return { results: stored, cached: true };
      }
    }
    this.misses++;
    const results = compute().map(compact);
    if (file) {
      mkdirSync(this.directory!, { recursive: true });
      // Written aside and renamed, so an interrupted run never leaves half an entry.
      writeFileSync(`${file}.tmp`, `${JSON.stringify({ key, parts, results })}\n`);
      renameSync(`${file}.tmp`, file);
    }
    return { results, cached: false };
  }
}

function readEntry(file: string, key: string): PolicyResult[] | undefined {
  try {
    const entry = JSON.parse(readFileSync(file, 'utf8')) as { key?: unknown; results?: unknown };
    return entry.key === key && Array.isArray(entry.results) ? (entry.results as PolicyResult[]) : undefined;
  } catch {
    return undefined;
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
