import { describe, expect, it } from 'vitest';
import { APP_SIZE_WEIGHTS, AppModel, DEFAULT_APP_MIX, IDLE_APP_SHARE, MoveLedger } from '../../lib/sim/disruption.js';
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

  it("remembers each gear's application, past the first thousand gears, and none for a gear not created", () => {
    const apps = new AppModel(seededRandom(9), { idleShare: 0.3, sizeExponent: 1 });
    const drawn = Array.from({ length: 3000 }, () => apps.next());
    expect(drawn.every((gear) => apps.appOf(gear.id) === gear.app)).toBe(true);
    // An application's gears are consecutive: the application number never goes back.
    expect(drawn.every((gear, i) => i === 0 || gear.app >= drawn[i - 1]!.app)).toBe(true);
    expect(apps.appOf(5000)).toBe(0);
  });

  it('draws the idle share and the application sizes a mix asks for', () => {
    const draw = (mix: ConstructorParameters<typeof AppModel>[1]) => {
      const apps = new AppModel(seededRandom(9), mix);
      const gears = Array.from({ length: 20000 }, () => apps.next());
      const count = new Set(gears.map((g) => g.app)).size;
      return { gears, count, idle: gears.filter((g) => g.idle).length, disruptive: gears.filter((g) => g.disruptive).length };
    };
    // Every application active: one disruptive gear per application.
    const active = draw({ idleShare: 0, sizeExponent: 2.5 });
    expect(active.idle).toBe(0);
    expect(active.disruptive).toBe(active.count);
    // Every application idle: no move restarts anything.
    const idle = draw({ idleShare: 1, sizeExponent: 2.5 });
    expect(idle.idle).toBe(idle.gears.length);
    expect(idle.disruptive).toBe(0);
    // A steep exponent: nearly every application one gear, so nearly every active gear disruptive.
    const singles = draw({ idleShare: 0, sizeExponent: 20 });
    expect(singles.disruptive / singles.gears.length).toBeGreaterThan(0.99);
    // Every size alike: 5.5 gears an application on average, so most gears are siblings.
    const flat = draw({ idleShare: 0, sizeExponent: 0 });
    expect(flat.gears.length / flat.count).toBeGreaterThan(5.2);
    expect(flat.gears.length / flat.count).toBeLessThan(5.8);
  });

  it('draws the same gears with the default mix as without one (results of the default mix stay comparable)', () => {
    const without = new AppModel(seededRandom(4));
    const withDefault = new AppModel(seededRandom(4), { ...DEFAULT_APP_MIX });
    const take = (apps: AppModel) => Array.from({ length: 500 }, () => apps.next());
    expect(take(withDefault)).toEqual(take(without));
  });
});
