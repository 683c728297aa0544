/** The generated scenarios of the reliability suite: workloads and fault schedules, each rate drawn anew (shrinking toward no fault). */
import fc from 'fast-check';
import { budgetArbitrary } from './budgets.js';
import { operatorArbitrary } from './operator.js';
import type { Scenario } from './scenario.js';

/** A rate from 0 to `max`, spread evenly (fc.double favours its bounds), shrinking toward 0. */
const rate = (max: number) => fc.integer({ min: 0, max: 1000 }).map((permille) => (permille / 1000) * max);

/** `short`: at most 3 segments of at most 10 minutes (dynalite answers in milliseconds, not microseconds). */
export const scenarioArbitrary = (store: Scenario['store'], size: 'full' | 'short' = 'full', platform: NonNullable<Scenario['platform']> = 'simulated'): fc.Arbitrary<Scenario> =>
  fc.record({
    seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    demand: fc.array(fc.record({ minutes: fc.integer({ min: 3, max: size === 'short' ? 10 : 20 }), gears: fc.integer({ min: 0, max: 60 }) }), {
      minLength: 1,
      maxLength: size === 'short' ? 3 : 6,
    }),
    faults: fc.record({ errorBefore: rate(0.1), errorAfter: rate(0.1), crash: rate(0.05), skewMs: fc.integer({ min: 0, max: 30_000 }) }),
    queue: fc.record({ duplicateRate: rate(0.3), reorderWindow: fc.integer({ min: 1, max: 10 }), delayRate: rate(0.2), partialSendFailure: rate(0.2) }),
    concurrency: rate(0.3),
    clockJumps: rate(0.05),
    moveFailureRate: rate(0.2),
    rebalanceRate: rate(0.05),
    attrition: fc.boolean(),
    hostileRate: rate(0.2),
    capacityCap: fc.option(fc.integer({ min: 2, max: 8 }), { nil: undefined }),
    districtUids: fc.option(fc.integer({ min: 5, max: 60 }), { nil: undefined }),
    maxNodesTotal: fc.integer({ min: 3, max: 8 }),
    maxCores: fc.option(fc.integer({ min: 8, max: 32 }), { nil: undefined }),
    store: fc.constant(store),
    budget: fc.option(budgetArbitrary, { nil: undefined }),
    platform: fc.constant(platform),
    // Drawn on the broker only, so the simulated platform's scenarios are the ones they were.
    zones: platform === 'broker' ? fc.boolean() : fc.constant(undefined),
    scaleUpOptions: fc.record({ waitingRise: fc.boolean(), doubleWhenFull: fc.boolean() }),
    market: fc.option(fc.record({ spot: fc.boolean(), dollars: fc.constantFrom(0.0001, 0.05, 0.192, 3, 1e6) }), { nil: undefined }),
    renewal: fc.constantFrom(undefined, 'drifted' as const, 'expired' as const),
    // Drawn last, so the fields before it are drawn as they were.
    operator: fc.option(operatorArbitrary, { nil: undefined, freq: 2 }),
  });

