import { peakDemand } from './pools.js';
import type { Trace } from './trace.js';

/**
 * The part of a trace a replay runs: its first `seconds` (all of it when
 * undefined), rescaled so the window's own peak is `peakGears`. A window of
 * a quiet week must not be scaled by the peak of a busy month.
 */
export function windowOf(trace: Trace, seconds: number | undefined, peakGears: number): Trace {
  const cut = seconds === undefined || seconds >= trace.durationSeconds ? trace : { ...trace, steps: trace.steps.filter((s) => s.at < seconds), durationSeconds: seconds };
  const peak = peakDemand(cut);
  if (peak === 0 || peak === peakGears) return cut;
  const scale = peakGears / peak;
  return { ...cut, steps: cut.steps.map((s) => ({ at: s.at, demand: Math.round(s.demand * scale) })) };
}
