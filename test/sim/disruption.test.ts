import { describe, expect, it } from 'vitest';
import { APP_SIZE_WEIGHTS, AppModel, IDLE_APP_SHARE, MoveLedger } from '../../lib/sim/disruption.js';
import { seededRandom } from '../../lib/sim/random.js';

describe('disruption metrics', () => {
  it('computes the figures of a hand-made case', () => {
    // 20 gears existed; mean 10 gears over 2 days. Gear 1 moved 3 times (days 0, 1 and 9: two within 7 days),
    // gear 2 twice 8 days apart, gear 3 once.
    const ledger = new MoveLedger();
    const day = 86400;
    ledger.record(1, 0, true);
    ledger.record(1, 1 * day, true);
    ledger.record(1, 9 * day, false);
    ledger.record(2, 0, false);
    ledger.record(2, 8 * day, true);
    ledger.record(3, 5, false);
    ledger.drainsStarted = 4;
    ledger.drainsAborted = 1;
    const figures = ledger.figures(20, 10, 2);
    expect(figures).toEqual({
      gearMoves: 6,
      movesPerGearDay: 6 / 10 / 2,
      // Sorted per-gear counts over 20 gears: 17 zeros, 1, 2, 3. The 95th percentile is the 19th: 2.
      movesPerGearP95: 2,
      movesPerGearMax: 3,
      gearsMovedTwiceIn7d: 1,
      disruptiveMoves: 3,
      drainsStarted: 4,
      drainsAborted: 1,
    });
  });

  it('counts unmoved gears in the distribution: few movers leave the 95th percentile at 0', () => {
    const ledger = new MoveLedger();
    for (let gear = 0; gear < 4; gear++) ledger.record(gear, 60, true);
    expect(ledger.figures(100, 100, 1).movesPerGearP95).toBe(0);
    expect(ledger.figures(100, 100, 1).movesPerGearMax).toBe(1);
  });

  it('models applications as documented: most have one gear, some are idle, heads and single gears of active apps are disruptive', () => {
    const apps = new AppModel(seededRandom(3));
    const gears = Array.from({ length: 20000 }, () => apps.next());
    const appSizes = new Map<number, number>();
    for (const gear of gears) appSizes.set(gear.app, (appSizes.get(gear.app) ?? 0) + 1);
    const sizes = [...appSizes.values()];
    const single = sizes.filter((s) => s === 1).length / sizes.length;
    const expectedSingle = APP_SIZE_WEIGHTS[0]! / APP_SIZE_WEIGHTS.reduce((a, b) => a + b, 0);
    expect(single).toBeGreaterThan(expectedSingle - 0.03);
    expect(single).toBeLessThan(expectedSingle + 0.03);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(APP_SIZE_WEIGHTS.length);
    // Disruptive: one gear per active app (its head, or its only gear).
    const disruptive = gears.filter((g) => g.disruptive).length;
    expect(disruptive / sizes.length).toBeGreaterThan(1 - IDLE_APP_SHARE - 0.03);
    expect(disruptive / sizes.length).toBeLessThan(1 - IDLE_APP_SHARE + 0.03);
    expect(gears.every((g) => apps.disruptive(g.id) === g.disruptive)).toBe(true);
  });

  it('peek shows the next gear without creating it', () => {
    const apps = new AppModel(seededRandom(5));
    const peeked = apps.peek();
    expect(apps.peek()).toEqual(peeked);
    expect(apps.created).toBe(0);
    expect(apps.next()).toEqual(peeked);
    expect(apps.created).toBe(1);
  });
});
