import { describe, expect, it } from 'vitest';
import { drainLevel, scaleUpLevel, slotsWanted } from '../../lib/domain/wanted.js';

const scaleUp = { threshold: 0.98, target: 0.96, headroomGears: 30 };

describe('capacity wanted (one rule for scale-up and drain)', () => {
  it('fires a scale-up at the threshold or when the headroom is used up', () => {
    expect(scaleUpLevel(2000, scaleUp)).toBe(1960); // 0.98 x 2000 (headroom would allow 1970)
    expect(scaleUpLevel(1000, { ...scaleUp, headroomGears: 50 })).toBe(950); // the headroom binds first
  });

  it('lets a drain leave the pool holding only what a scale-up sizes to: the band between is the hysteresis', () => {
    expect(drainLevel(2000, scaleUp)).toBe(1920); // 0.96 x 2000
    expect(drainLevel(2000, scaleUp)).toBeLessThan(scaleUpLevel(2000, scaleUp));
    // demand of 1940 keeps 20 nodes of 100 from scaling up, but a 21st node is not drained for it
    expect(1940).toBeLessThan(scaleUpLevel(2000, scaleUp));
    expect(1940).toBeGreaterThan(drainLevel(2000, scaleUp));
  });

  it('wants the slots a scale-up buys, which the drain level then holds exactly', () => {
    const slots = slotsWanted(1920, scaleUp);
    expect(slots).toBe(2000);
    expect(drainLevel(slots, scaleUp)).toBeCloseTo(1920);
    expect(slotsWanted(100, { ...scaleUp, headroomGears: 50 })).toBe(150); // small pool: the headroom decides
  });

  it('never uses a target above the threshold (a misordered configuration has no negative band)', () => {
    expect(drainLevel(1000, { threshold: 0.8, target: 0.9, headroomGears: 0 })).toBe(800);
  });
});
