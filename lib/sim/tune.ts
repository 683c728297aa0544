import type { ConfigInput } from '../config/index.js';
import { parseConfig } from '../config/index.js';
import { ValidationError } from '../errors.js';
import { baselineKeyParts, floorDemand, runBaselines, type BaselineCache, type BaselineReplay } from './baseline-cache.js';
import { runNodescaler, simulationConfig, type ReplayOptions } from './replay.js';
import { count, floorForResults, type ReactiveFloor } from './floor.js';
import type { PolicyResult } from './results.js';
import { formatTable, goalChecks, perNodeDay } from './summary.js';
import type { Trace } from './trace.js';

/**
 * The suite tuner (`npm run bench -- tune`): nodescaler under each variant of
 * its configuration on every suite trace, scored against the baselines with the
 * goal line, and the variants ranked. Defaults are chosen on the whole suite.
 */

export type Variants = Record<string, Record<string, unknown>>;

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** `{"name": {overrides}, ...}`; a clear error names the variant and the value that is wrong. */
export function parseVariants(text: string, source: string): Variants {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ValidationError({ path: 'variants', message: `${source} is not JSON: ${(error as Error).message}`, value: text.slice(0, 80) });
  }
  if (!isObject(value) || Object.keys(value).length === 0) {
    throw new ValidationError({ path: 'variants', message: `${source} must map at least one variant name to configuration overrides, e.g. {"tight":{"scaleUp":{"threshold":0.95}}}`, value });
  }
  for (const [name, overrides] of Object.entries(value)) {
    if (!isObject(overrides)) throw new ValidationError({ path: `variants.${name}`, message: 'expected an object of configuration overrides', value: overrides });
  }
  return value as Variants;
}

/** `overrides` laid over `base`: objects merge key by key, anything else (arrays included) replaces. */
export function mergeOverrides<T>(base: T, overrides: Record<string, unknown>): T {
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [key, value] of Object.entries(overrides)) {
    out[key] = isObject(value) && isObject(out[key]) ? mergeOverrides(out[key], value) : value;
  }
  return out as T;
}

/** The whole replay configuration of a variant on `trace` (the simulation's, the overrides merged in). */
export function variantConfig(trace: Trace, replay: BaselineReplay, overrides: Record<string, unknown>): ConfigInput {
  return mergeOverrides(simulationConfig(trace, replay), overrides);
}

/** Refuses a variant whose merged configuration does not validate, before any replay starts. */
export function checkVariants(variants: Variants, trace: Trace, replay: BaselineReplay): void {
  for (const [name, overrides] of Object.entries(variants)) {
    parseConfig(variantConfig(trace, replay, overrides), `variant "${name}"`);
  }
}

/** One variant on one trace, in the goal line's terms. */
export interface TraceScore {
  trace: string;
  nodeHours: number;
  gearMoves: number;
  clairvoyantNodeHours: number;
  clairvoyantMoves: number;
  /** Share of gear-minutes unplaced (0..1). */
  unplacedShare: number;
  /** nodescaler's calls to close and reopen nodes (replays count them; baselines' results do not). */
  nodeToggles?: number;
  met: number;
  of: number;
  /** Misses the figures show infeasible (only when the score was given the trace's reactive floor). */
  infeasible?: number;
  /** Every check the trace ran, by name (GoalCheck.name). */
  checked?: string[];
  /** The missed checks by name (GoalCheck.name): what a variant gained or lost against another. */
  missed?: string[];
  /** The misses the figures do not show infeasible, as their goal line reads them (only with the reactive floor). */
  reachable?: string[];
  /** The missed checks the figures show infeasible, by name (only with the reactive floor). */
  infeasibleMissed?: string[];
}

export function scoreTrace(trace: string, results: PolicyResult[], floor?: ReactiveFloor): TraceScore {
  const ours = results.find((r) => r.policy === 'nodescaler');
  const clairvoyant = results.find((r) => r.policy === 'clairvoyant-4h');
  if (!ours || !clairvoyant) throw new Error(`scoreTrace ${trace}: needs nodescaler's and clairvoyant-4h's results`);
  const checks = goalChecks(results, floor) ?? [];
  return {
    ...(floor
      ? {
          infeasible: checks.filter((c) => c.infeasible).length,
          reachable: checks.filter((c) => !c.met && !c.infeasible).map((c) => `${c.text}${missCause(c.name, ours)}`),
          infeasibleMissed: checks.filter((c) => !c.met && c.infeasible).map((c) => c.name),
        }
      : {}),
    trace,
    nodeHours: ours.nodeHours,
    gearMoves: ours.gearMoves,
    clairvoyantNodeHours: clairvoyant.nodeHours,
    clairvoyantMoves: clairvoyant.gearMoves,
    unplacedShare: ours.unplacedShare,
    ...(ours.nodeToggles ? { nodeToggles: ours.nodeToggles.closes + ours.nodeToggles.reopens } : {}),
    met: checks.filter((c) => c.met).length,
    of: checks.length,
    checked: checks.map((c) => c.name),
    missed: checks.filter((c) => !c.met).map((c) => c.name),
  };
}

/**
 * What the replay measured of a reachable miss's cause, where it has a measure: the moves of drains the pool bought
 * back within 4 hours (move-causes.ts), the waiting that closed nodes' free slots could have held. Each session sorted
 * its unseen seeds' misses by these figures, one `heldout --only` run per shape.
 */
function missCause(check: string, ours: PolicyResult): string {
  const causes = ours.moveCauses;
  if (check === 'moves' && causes && causes.total > 0) return ` (${count(causes.boughtBack)} of ${count(causes.total)} in drains bought back within 4 h)`;
  const besideClosed = Math.round(ours.waitingBesideClosedGearMinutes ?? 0);
  if ((check === 'cluster-autoscaler waiting' || check === 'unplaced') && besideClosed > 0) return ` (${count(besideClosed)} gear-min beside closed nodes' free slots)`;
  return '';
}

const ratio = (value: number, reference: number) => (reference > 0 ? value / reference : value === 0 ? 0 : Infinity);

export interface VariantScore {
  variant: string;
  traces: TraceScore[];
  met: number;
  of: number;
  /** Mean over traces of node-hours x clairvoyant-4h's. */
  nodeHoursRatio: number;
  /** The suite's gear moves over clairvoyant-4h's (summed, so a trace where clairvoyant moves nothing stays finite). */
  movesRatio: number;
  worstUnplacedShare: number;
  /** Misses shown infeasible, summed over the traces (only when every trace was scored with its reactive floor). */
  infeasible?: number;
}

export function scoreVariant(variant: string, traces: TraceScore[]): VariantScore {
  const sum = (f: (t: TraceScore) => number) => traces.reduce((total, t) => total + f(t), 0);
  const floored = traces.length > 0 && traces.every((t) => t.infeasible !== undefined);
  return {
    ...(floored ? { infeasible: sum((t) => t.infeasible!) } : {}),
    variant,
    traces,
    met: sum((t) => t.met),
    of: sum((t) => t.of),
    nodeHoursRatio: traces.length === 0 ? 0 : sum((t) => ratio(t.nodeHours, t.clairvoyantNodeHours)) / traces.length,
    movesRatio: ratio(sum((t) => t.gearMoves), sum((t) => t.clairvoyantMoves)),
    worstUnplacedShare: traces.reduce((worst, t) => Math.max(worst, t.unplacedShare), 0),
  };
}

/** Most goal checks met first; then fewer node-hours, then fewer moves, both relative to clairvoyant-4h. */
export function rankVariants(scores: VariantScore[]): VariantScore[] {
  return [...scores].sort((a, b) => b.met - a.met || a.nodeHoursRatio - b.nodeHoursRatio || a.movesRatio - b.movesRatio || a.variant.localeCompare(b.variant));
}

const sumOf = (traces: TraceScore[], f: (t: TraceScore) => number) => traces.reduce((total, t) => total + f(t), 0);

/** Moves as a ratio to clairvoyant-4h's; where it moved none, the count (a ratio would read "Infinity"). */
function movesAgainst(moves: number, clairvoyantMoves: number): string {
  return clairvoyantMoves > 0 || moves === 0 ? ratio(moves, clairvoyantMoves).toFixed(2) : `${moves} vs 0`;
}

/** One variant's table: a row per trace and the suite's total. */
export function formatVariant(score: VariantScore, totalLabel = 'suite (mean; moves summed; worst)'): string {
  const rows = score.traces.map((t) => ({
    trace: t.trace,
    'node-hours x clairvoyant-4h': ratio(t.nodeHours, t.clairvoyantNodeHours).toFixed(3),
    'moves x clairvoyant-4h': movesAgainst(t.gearMoves, t.clairvoyantMoves),
    'unplaced %': (t.unplacedShare * 100).toFixed(3),
    goal: `${t.met}/${t.of}${t.infeasible === undefined ? '' : `, ${t.infeasible} of ${t.of - t.met} misses infeasible`}`,
  }));
  rows.push({
    trace: totalLabel,
    'node-hours x clairvoyant-4h': score.nodeHoursRatio.toFixed(3),
    'moves x clairvoyant-4h': movesAgainst(sumOf(score.traces, (t) => t.gearMoves), sumOf(score.traces, (t) => t.clairvoyantMoves)),
    'unplaced %': (score.worstUnplacedShare * 100).toFixed(3),
    goal: `${score.met}/${score.of}${infeasibleNote(score)}`,
  });
  return formatTable(rows);
}

/**
 * One row per set of a `tune --sets` run (the suite, each held-out family at its seed): checks met with the misses out
 * of reach, the misses within reach, mean node-hours and summed moves x clairvoyant-4h. A session's unseen seeds are
 * reported set by set, and one run's total mixes families whose misses differ in kind. Undefined for fewer than two
 * sets; `setOf` names a trace's set (undefined: left out).
 */
export function formatBySet(score: Pick<VariantScore, 'traces'>, setOf: (trace: string) => string | undefined): string | undefined {
  const bySet = new Map<string, TraceScore[]>();
  for (const trace of score.traces) {
    const set = setOf(trace.trace);
    if (set === undefined) continue;
    (bySet.get(set) ?? bySet.set(set, []).get(set)!).push(trace);
  }
  if (bySet.size < 2) return undefined;
  const rows = [...bySet].map(([set, traces]) => {
    const s = scoreVariant(set, traces);
    const row: Record<string, string> = { set, goal: `${s.met}/${s.of}${infeasibleNote(s)}` };
    if (traces.every((t) => t.reachable !== undefined)) row['within reach'] = String(sumOf(traces, (t) => t.reachable!.length));
    return {
      ...row,
      'node-hours x clairvoyant-4h (mean)': s.nodeHoursRatio.toFixed(3),
      'moves x clairvoyant-4h (summed)': movesAgainst(sumOf(traces, (t) => t.gearMoves), sumOf(traces, (t) => t.clairvoyantMoves)),
      'worst unplaced %': (s.worstUnplacedShare * 100).toFixed(3),
    };
  });
  return formatTable(rows);
}

/**
 * The misses within reach, trace by trace ("s48-3: gear moves 1.58 x clairvoyant-4h <= 1.5"): what a held-out set
 * leaves to work on, without reading every goal line. Empty when none, or when the traces were scored without a floor.
 */
export function formatReachable(score: Pick<VariantScore, 'traces'>): string[] {
  return score.traces.flatMap((t) => (t.reachable ?? []).map((text) => `  ${t.trace}: ${text}`));
}

export interface CheckTally {
  check: string;
  /** Traces that ran the check. */
  of: number;
  met: number;
  infeasible: number;
  /** The traces that missed it within reach. */
  reachableOn: string[];
}

/**
 * The goal line check by check over a set of traces: how often each is met, missed out of reach, and missed within
 * reach. Many sets of unseen shapes read this way say which kind of miss is left, where a list of misses per shape
 * does not. Empty unless every trace was scored with its reactive floor.
 */
export function tallyChecks(traces: TraceScore[]): CheckTally[] {
  if (traces.length === 0 || traces.some((t) => t.infeasibleMissed === undefined || t.missed === undefined || t.checked === undefined)) return [];
  const tallies = new Map<string, CheckTally>();
  const tally = (check: string) => tallies.get(check) ?? tallies.set(check, { check, of: 0, met: 0, infeasible: 0, reachableOn: [] }).get(check)!;
  for (const t of traces) {
    for (const check of t.checked!) tally(check).of += 1;
    for (const check of t.missed!) {
      if (t.infeasibleMissed!.includes(check)) tally(check).infeasible += 1;
      else tally(check).reachableOn.push(t.trace);
    }
  }
  for (const entry of tallies.values()) entry.met = entry.of - entry.infeasible - entry.reachableOn.length;
  return [...tallies.values()];
}

/** The tally as a table, with the traces that missed a check within reach (the first few, then how many more). */
export function formatCheckTally(traces: TraceScore[], shown = 6): string | undefined {
  const tallies = tallyChecks(traces);
  if (tallies.length === 0) return undefined;
  const short = (trace: string) => trace.replace(/^heldout:/, '');
  const rows = tallies.map((t) => ({
    check: t.check,
    met: `${t.met} of ${t.of}`,
    'missed, out of reach': String(t.infeasible),
    'missed, within reach': String(t.reachableOn.length),
    on: t.reachableOn.length <= shown ? t.reachableOn.map(short).join(' ') : `${t.reachableOn.slice(0, shown).map(short).join(' ')} and ${t.reachableOn.length - shown} more`,
  }));
  return formatTable(rows);
}

/** ", k of the n misses infeasible" when the variant was scored with every trace's reactive floor. */
export function infeasibleNote(score: Pick<VariantScore, 'met' | 'of' | 'infeasible'>): string {
  return score.infeasible === undefined ? '' : `, ${score.infeasible} of ${score.of - score.met} misses infeasible`;
}

/** The ranking: one row per variant, best first, with the goal checks met on each trace. */
export function formatRanking(scores: VariantScore[]): string {
  return formatTable(
    rankVariants(scores).map((s, i) => ({
      variant: `${i + 1}. ${s.variant}`,
      'goal checks': `${s.met}/${s.of}${infeasibleNote(s)}`,
      'node-hours x c-4h (mean)': s.nodeHoursRatio.toFixed(3),
      'moves x c-4h (suite)': movesAgainst(sumOf(s.traces, (t) => t.gearMoves), sumOf(s.traces, (t) => t.clairvoyantMoves)),
      'worst unplaced %': (s.worstUnplacedShare * 100).toFixed(3),
      ...(s.traces.some((t) => t.nodeToggles !== undefined) ? { 'closes+reopens per node-day': togglesPerNodeDay(s.traces).toFixed(2) } : {}),
      'met per trace': s.traces.map((t) => t.met).join(' '),
    })),
  );
}

/** Closes and reopens over every trace per node-day: a variant that flaps nodes open and shut shows against another. */
function togglesPerNodeDay(traces: TraceScore[]): number {
  return perNodeDay(sumOf(traces, (t) => t.nodeToggles ?? 0), sumOf(traces, (t) => t.nodeHours));
}

/**
 * Per variant, the checks it met that `base` missed and those it missed that `base` met, trace by trace: a variant that
 * keeps the count can still trade one trace's check for another's, and the count alone hides it.
 */
export function formatAgainst(scores: VariantScore[], base = 'defaults'): string[] {
  const reference = scores.find((s) => s.variant === base);
  if (!reference) return [];
  const missedBy = new Map(reference.traces.map((t) => [t.trace, new Set(t.missed ?? [])]));
  return scores
    .filter((s) => s !== reference)
    .map((s) => {
      const gained: string[] = [];
      const lost: string[] = [];
      for (const t of s.traces) {
        const before = missedBy.get(t.trace);
        if (!before || !t.missed) continue;
        const after = new Set(t.missed);
        for (const name of before) if (!after.has(name)) gained.push(`${t.trace} ${name}`);
        for (const name of after) if (!before.has(name)) lost.push(`${t.trace} ${name}`);
      }
      const changes = [gained.length > 0 ? `gained ${gained.join(', ')}` : '', lost.length > 0 ? `lost ${lost.join(', ')}` : ''].filter(Boolean);
      return `${s.variant} against ${base}: ${changes.length > 0 ? changes.join('; ') : 'the same checks met on every trace'}`;
    });
}

export interface TuneTrace {
  name: string;
  load: () => Trace;
  /** The replay's seed for this trace, when its set has its own (a held-out family's seed in `tune --sets`); else `replay.seed`. */
  seed?: number;
}

export interface TuneOptions {
  traces: TuneTrace[];
  variants: Variants;
  /** With `zones`, nodescaler's replays spread its nodes over that many availability zones (the baselines do not). */
  replay: BaselineReplay & Pick<ReplayOptions, 'zones'>;
  window: { days: number | undefined; peakGears: number };
  cache: BaselineCache;
  /** Progress of one nodescaler replay (0..1), and whether the trace's baselines came from the cache. */
  onProgress?: (step: { variant: string; variantIndex: number; traceIndex: number; trace: string; fraction: number; baselinesCached: boolean }) => void;
  /** Called as each variant finishes (every trace replayed). */
  onVariant?: (score: VariantScore) => void;
  /** Called as each trace of a variant is replayed, with every policy's result and the trace's reactive floor (a page of them). */
  onTrace?: (replayed: { variant: string; trace: string; results: PolicyResult[]; floor: ReactiveFloor | undefined }) => void;
}

/** Every variant on every trace; the baselines of a trace are computed once (or read from the cache). */
export async function tuneSuite(options: TuneOptions): Promise<VariantScore[]> {
  const loaded = options.traces.map((entry) => ({ name: entry.name, trace: entry.load(), replay: entry.seed === undefined ? options.replay : { ...options.replay, seed: entry.seed } }));
  if (loaded[0]) checkVariants(options.variants, loaded[0].trace, loaded[0].replay);
  // Each trace's baselines on first use (from the cache when their inputs are unchanged), then for every variant.
  const baselines: Array<{ results: PolicyResult[]; cached: boolean; floor: ReactiveFloor | undefined }> = [];
  const baselinesOf = (traceIndex: number) => {
    const { name, trace, replay } = loaded[traceIndex]!;
    if (!baselines[traceIndex]) {
      const stored = options.cache.get(baselineKeyParts(name, trace, replay, options.window), () => runBaselines(trace, replay));
      // The reactive floor depends on the trace and the baselines only: once per trace, as they are.
      baselines[traceIndex] = { ...stored, floor: floorForResults(floorDemand(trace, replay), replay, stored.results) };
    }
    return baselines[traceIndex];
  };
  const scores: VariantScore[] = [];
  for (const [variantIndex, [variant, overrides]] of Object.entries(options.variants).entries()) {
    const traces: TraceScore[] = [];
    for (const [traceIndex, { name, trace, replay }] of loaded.entries()) {
      const { results: reference, cached: baselinesCached, floor } = baselinesOf(traceIndex);
      const outcome = await runNodescaler(trace, {
        ...replay,
        store: 'memory',
        configOverrides: variantConfig(trace, replay, overrides),
        onProgress: (fraction) => options.onProgress?.({ variant, variantIndex, traceIndex, trace: name, fraction, baselinesCached }),
      });
      const results = [outcome.result, ...reference];
      traces.push(scoreTrace(name, results, floor));
      options.onTrace?.({ variant, trace: name, results, floor });
    }
    const score = scoreVariant(variant, traces);
    scores.push(score);
    options.onVariant?.(score);
  }
  return scores;
}
