import type { decidePool } from '../../lib/domain/evaluate.js';
import { epochMinute, recordDemand } from '../../lib/domain/forecast.js';
import type { DemandSample, NodeRecord } from '../../lib/domain/model.js';
import { NOW, node } from './builders.js';

const MIN = 60_000;

/** Active nodes `node-1.example.com`..., one per entry of `gears`, 100 slots each. */
export function withGears(gears: number[], max = 100): NodeRecord[] {
  return gears.map((g, i) => node(`node-${i + 1}.example.com`, { gears: g, max }));
}

/** Demand history as the evaluator would have recorded it once a minute before NOW. */
export function history(from: number, to: number, demandAt: (minutesFromNow: number) => number): DemandSample[] {
  let samples: DemandSample[] = [];
  for (let m = from; m <= to; m++) {
    samples = recordDemand(samples, new Date(NOW.getTime() + m * MIN), demandAt(m), { window: 30 * MIN, keepDaily: true });
  }
  return samples;
}

/** 5-minute samples ending before NOW, `hours` of them, each demand from `at(i)` (the headroom re-buckets them by BUCKET_MINUTES). */
export function fiveMinuteHistory(hours: number, at: (i: number) => number): DemandSample[] {
  const count = hours * 12;
  const last = epochMinute(NOW) - (epochMinute(NOW) % 5) - 5;
  return Array.from({ length: count }, (_, i) => [last - (count - 1 - i) * 5, at(i)] as DemandSample);
}

/** A day in which the pool never needed more than it has: every drain is expected to pay for a day. */
export const quietDay = history(-25 * 60, -1, () => 0);

export const noForecast = { scaleUp: { forecast: { enabled: false } } } as const;

/** The scale-up decision, failing the test when the decision is something else. */
export function scaleUp(result: ReturnType<typeof decidePool>) {
  if (result.decision.kind !== 'scale-up') throw new Error(`expected scale-up, got ${result.decision.kind}: ${result.decision.reason}`);
  return result.decision;
}

/** What a scale-up of a full pool of 100-slot nodes adds to its reason. */
export const OUTRAN = '; demand outran the boot delay: no free slot left, new gears wait about 3m for these nodes';
