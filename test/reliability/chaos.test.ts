/**
 * The DESIGN.md invariants under generated workloads and fault schedules:
 * duplicated, reordered and delayed messages, port calls failing before or
 * after their effect, invocations dying between any two steps, overlapping
 * invocations of one function, clock skew and jumps. fast-check shrinks a
 * failing scenario to a small one; keep those in regressions.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runScenario, type Scenario, type ScenarioOutcome } from './support/scenario.js';
import { DEFAULT_SCENARIO_RUNS, reportTally, scaled, soakRuns } from './support/tally.js';

const rate = (max: number) => fc.double({ min: 0, max, noNaN: true, noDefaultInfinity: true });

export const scenarioArbitrary = (store: Scenario['store']): fc.Arbitrary<Scenario> =>
  fc.record({
    seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    demand: fc.array(fc.record({ minutes: fc.integer({ min: 3, max: 20 }), gears: fc.integer({ min: 0, max: 60 }) }), { minLength: 1, maxLength: 6 }),
    faults: fc.record({ errorBefore: rate(0.1), errorAfter: rate(0.1), crash: rate(0.05), skewMs: fc.integer({ min: 0, max: 30_000 }) }),
    queue: fc.record({ duplicateRate: rate(0.3), reorderWindow: fc.integer({ min: 1, max: 10 }), delayRate: rate(0.2), partialSendFailure: rate(0.2) }),
    concurrency: rate(0.3),
    clockJumps: rate(0.05),
    moveFailureRate: rate(0.2),
    rebalanceRate: rate(0.05),
    capacityCap: fc.option(fc.integer({ min: 2, max: 8 }), { nil: undefined }),
    maxNodesTotal: fc.integer({ min: 3, max: 8 }),
    maxCores: fc.option(fc.integer({ min: 8, max: 32 }), { nil: undefined }),
    store: fc.constant(store),
  });

interface Totals {
  scenarios: number;
  violations: number;
  minutes: number;
  invocations: number;
  faultsInjected: number;
  crashes: number;
  messages: number;
  deadLetters: number;
  scaleUps: number;
  drains: number;
  gearMoves: number;
}

function newTotals(): Totals {
  return { scenarios: 0, violations: 0, minutes: 0, invocations: 0, faultsInjected: 0, crashes: 0, messages: 0, deadLetters: 0, scaleUps: 0, drains: 0, gearMoves: 0 };
}

function add(totals: Totals, outcome: ScenarioOutcome): void {
  totals.scenarios += 1;
  totals.violations += outcome.violations.length;
  totals.minutes += outcome.minutes;
  totals.invocations += outcome.invocations;
  totals.faultsInjected += outcome.faults.errorsBefore + outcome.faults.errorsAfter + outcome.faults.crashes;
  totals.crashes += outcome.faults.crashes;
  totals.messages += outcome.ledger.sent;
  totals.deadLetters += outcome.ledger.deadLettered;
  totals.scaleUps += outcome.scaleUps;
  totals.drains += outcome.drains;
  totals.gearMoves += outcome.gearMoves;
}

async function check(name: string, store: Scenario['store'], numRuns: number): Promise<Totals> {
  const totals = newTotals();
  await fc.assert(
    fc.asyncProperty(scenarioArbitrary(store), async (scenario) => {
      const outcome = await runScenario(scenario);
      add(totals, outcome);
      expect(outcome.violations, JSON.stringify(scenario)).toEqual([]);
      expect(outcome.ledger.lost).toEqual([]);
    }),
    { numRuns, ...(process.env.NODESCALER_CHAOS_SEED ? { seed: Number(process.env.NODESCALER_CHAOS_SEED) } : {}) },
  );
  const { scenarios, violations, ...details } = totals;
  reportTally({ name, scenarios, violations, details });
  return totals;
}

const soak = soakRuns();

describe('invariants under generated workloads and faults', () => {
  it(`hold over ${soak ?? DEFAULT_SCENARIO_RUNS} scenarios on the memory store`, async () => {
    const totals = await check('chaos-memory', 'memory', soak ?? DEFAULT_SCENARIO_RUNS);
    // The suite must have exercised what it claims to.
    expect(totals.faultsInjected).toBeGreaterThan(0);
    expect(totals.crashes).toBeGreaterThan(0);
    expect(totals.drains).toBeGreaterThan(0);
    expect(totals.scaleUps).toBeGreaterThan(0);
  }, 600_000);

  it(`hold over ${scaled(3)} scenarios on dynalite`, async () => {
    const totals = await check('chaos-dynalite', 'dynalite', scaled(3));
    expect(totals.invocations).toBeGreaterThan(0);
  }, 600_000);
});
