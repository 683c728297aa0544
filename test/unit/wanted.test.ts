import { describe, expect, it } from 'vitest';
import { drainLevel, drainLevelOf } from '../../lib/domain/wanted.js';

const scaleUp = { threshold: 0.98, target: 0.96, headroomGears: 30 };

describe('drainLevel (what a drain may leave a pool holding)', () => {
  it('is what a scale-up sizes to (target), below where one fires (threshold): the band between is the hysteresis', () => {
    expect(drainLevel(2000, scaleUp)).toBe(1920); // 0.96 x 2000, where a scale-up would fire at 0.98 x 2000 = 1960
    // 1,940 gears keep 20 nodes of 100 from scaling up, but a 21st node is not drained for them
    expect(1940).toBeLessThan(2000 * scaleUp.threshold);
    expect(1940).toBeGreaterThan(drainLevel(2000, scaleUp));
  });

  it('keeps the headroom free, which binds first on a small pool', () => {
    expect(drainLevel(300, scaleUp)).toBe(270); // 300 - 30 < 0.96 x 300 = 288
    expect(drainLevel(1000, { ...scaleUp, headroomGears: 0 })).toBe(960);
  });

  it('never uses a target above the threshold (a misordered configuration has no negative band)', () => {
    expect(drainLevel(1000, { threshold: 0.8, target: 0.9, headroomGears: 0 })).toBe(800);
  });
});

describe('drainLevelOf (the level, and which setting sets it)', () => {
  it('names the target, the threshold (when below the target) or the headroom, whichever is lower', () => {
    expect(drainLevelOf(2000, { threshold: 0.98, target: 0.96, headroomGears: 30 })).toEqual({ level: 1920, setBy: 'set by the target: 0.96 x 2000 slots' });
    expect(drainLevelOf(300, { threshold: 0.98, target: 0.96, headroomGears: 30 })).toEqual({ level: 270, setBy: 'set by the headroom: 300 slots - 30 headroomGears' });
    expect(drainLevelOf(1000, { threshold: 0.8, target: 0.9, headroomGears: 0 })).toEqual({ level: 800, setBy: 'set by the threshold: 0.8 x 1000 slots' });
  });
});
