/**
 * What every minute-by-minute held-out family (lib/sim/heldout-wander.ts, heldout-surge.ts) promises of its traces,
 * checked the same way for each.
 */
import { expect } from 'vitest';
import type { HeldoutShape } from '../../lib/sim/heldout.js';

export const demandsOf = (shape: Pick<HeldoutShape, 'trace'>) => shape.trace.steps.map((s) => s.demand);

/** Shapes of seeds 0, 5 and 99 over 1.5 days at a 700-gear peak: whole gears each minute, never negative, peak exactly 700. */
export function expectValidMinuteTraces(draw: (index: number, options: { seed: number; days: number; peakGears: number }) => HeldoutShape): void {
  for (const seed of [0, 5, 99]) {
    for (let index = 0; index < 10; index++) {
      const shape = draw(index, { seed, days: 1.5, peakGears: 700 });
      const { trace } = shape;
      expect(trace.stepSeconds).toBe(60);
      expect(trace.steps).toHaveLength(2160);
      expect(trace.durationSeconds).toBe(2160 * 60);
      trace.steps.forEach((step, i) => {
        expect(step.at).toBe(i * 60);
        expect(Number.isInteger(step.demand) && step.demand >= 0 && step.demand <= 700, `${shape.name} minute ${i}: ${step.demand}`).toBe(true);
      });
      expect(Math.max(...demandsOf(shape))).toBe(700);
    }
  }
}
