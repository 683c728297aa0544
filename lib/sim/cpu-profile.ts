/**
 * Where a replay's CPU went: a V8 CPU profile (`node --cpu-prof`, what
 * `npm run bench -- replay --profile DIR` writes) summed by function, each
 * function's own time and its time with what it called. Session 32 found the
 * replay four times over its target this way; its by-function table named
 * the bill meter, each candidate's history reads and the simulated agents.
 */
import { fileURLToPath } from 'node:url';

/** The parts of a `.cpuprofile` this reads (Chrome DevTools' Profile object). */
export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }>;
  samples: number[];
  /** Microseconds before each sample. */
  timeDeltas: number[];
}

export interface ProfiledFunction {
  /** `name (file)`, the file relative to `root` when under it. */
  name: string;
  /** Seconds in the function itself. */
  self: number;
  /** Seconds in it and what it called, each sample counted once however deep the recursion. */
  total: number;
}

export interface ProfileSummary {
  seconds: number;
  functions: ProfiledFunction[];
}

/** Every function of `profile` with its own and total seconds, by total time, most first. */
export function summarizeProfile(profile: CpuProfile, root = ''): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const selfMicros = new Map<number, number>();
  profile.samples.forEach((id, i) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

  const label = (id: number) => {
    const { functionName, url } = byId.get(id)!.callFrame;
    const file = url.startsWith('file:') ? fileURLToPath(url) : url;
    const shown = root && file.startsWith(root) ? file.slice(root.length).replace(/^\//, '') : file;
    return `${functionName || '(anonymous)'}${shown ? ` (${shown})` : ''}`;
  };
  const functions = new Map<string, ProfiledFunction>();
  const entry = (name: string) => {
    let found = functions.get(name);
    if (!found) functions.set(name, (found = { name, self: 0, total: 0 }));
    return found;
  };
  let micros = 0;
  for (const [id, time] of selfMicros) {
    micros += time;
    entry(label(id)).self += time / 1e6;
    const counted = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const name = label(at);
      if (counted.has(name)) continue;
      counted.add(name);
      entry(name).total += time / 1e6;
    }
  }
  return { seconds: micros / 1e6, functions: [...functions.values()].sort((a, b) => b.total - a.total || b.self - a.self) };
}

/** The `count` functions that took most of their own time, as lines: seconds, share of the run, name. */
export function profileLines(summary: ProfileSummary, count: number): string[] {
  const share = (seconds: number) => `${((100 * seconds) / Math.max(summary.seconds, 1e-9)).toFixed(1)} %`;
  return [...summary.functions]
    .filter((f) => !f.name.startsWith('(root)'))
    .sort((a, b) => b.self - a.self)
    .slice(0, count)
    .map((f) => `${f.self.toFixed(2).padStart(8)} s ${share(f.self).padStart(7)} own, ${f.total.toFixed(2).padStart(8)} s ${share(f.total).padStart(7)} with callees  ${f.name}`);
}
