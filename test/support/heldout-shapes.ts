/**
 * What every held-out family (lib/sim/heldout.ts, heldout-wander.ts, heldout-surge.ts) promises of its traces,
 * checked the same way for each.
 */
import { expect } from 'vitest';
import type { HeldoutShape } from '../../lib/sim/heldout.js';

export const demandsOf = (shape: Pick<HeldoutShape, 'trace'>) => shape.trace.steps.map((s) => s.demand);

/** `shapes` are `rows` rows of `stepSeconds` each, whole gears, never negative, peaking at exactly `peakGears`. */
export function expectValidTraces(shapes: readonly HeldoutShape[], expected: { stepSeconds: number; rows: number; peakGears: number }): void {
  const { stepSeconds, rows, peakGears } = expected;
  for (const shape of shapes) {
    const { trace } = shape;
    expect(trace.stepSeconds).toBe(stepSeconds);
    expect(trace.steps).toHaveLength(rows);
    expect(trace.durationSeconds).toBe(rows * stepSeconds);
    trace.steps.forEach((step, i) => {
      expect(step.at).toBe(i * stepSeconds);
      expect(Number.isInteger(step.demand) && step.demand >= 0 && step.demand <= peakGears, `${shape.name} step ${i}: ${step.demand}`).toBe(true);
    });
    expect(Math.max(...demandsOf(shape))).toBe(peakGears);
  }
}

/** A minute-by-minute family's shapes of seeds 0, 5 and 99 over 1.5 days at a 700-gear peak are valid traces. */
export function expectValidMinuteTraces(draw: (index: number, options: { seed: number; days: number; peakGears: number }) => HeldoutShape): void {
  for (const seed of [0, 5, 99]) {
    expectValidTraces(
      Array.from({ length: 10 }, (_, index) => draw(index, { seed, days: 1.5, peakGears: 700 })),
      { stepSeconds: 60, rows: 2160, peakGears: 700 },
    );
  }
}
