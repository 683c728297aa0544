/**
 * The DESIGN.md invariants under generated workloads and fault schedules:
 * duplicated, reordered and delayed messages, port calls failing before or
 * after their effect, invocations dying between any two steps, overlapping
 * invocations of one function, clock skew and jumps. fast-check shrinks a
 * failing scenario to a small one; keep those in regressions.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scenarioArbitrary } from './support/arbitraries.js';
import { runScenario, type Scenario, type ScenarioOutcome } from './support/scenario.js';
import { DEFAULT_SCENARIO_RUNS, firstFailureReporter, reportTally, scaled, soakRuns } from './support/tally.js';

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
  /** Scale-down drains a scale-up called off (lib/domain/call-off.ts). */
  calledOff: number;
  gearMoves: number;
  hostileMessages: number;
  /** Scenarios whose pool bought with `waitingRise` on and stored a sighting of waiting gears: the option took part. */
  waitingRiseSighted: number;
  /** Scale-ups in scenarios with `doubleWhenFull` on (whether a pool doubled is not counted). */
  scaleUpsWithDoubleWhenFull: number;
  /** Requests of the markets drains were priced by, and the drains of those scenarios. */
  marketReads: number;
  drainsPricedByMarkets: number;
  /** District reads the broker reporter sent, in scenarios whose district's UIDs run out. */
  districtReads: number;
  /** Nodes nodescaler added in the pool's zone, on brokers that require zones. */
  joinedInZone: number;
  /** Moves that gave up on their application's lock (a tenant's operation holding it). */
  movesLockedOut: number;
  /** Drifted nodes renewed: the replacements asked for, and the drains started once they joined. */
  renewals: number;
  expiryRenewals: number;
  renewalDrains: number;
  /** Gears a renewal past its grace moved beyond maxMovesPerGear (no other drain may: budgets.ts), and of them by renewals of drifted nodes. */
  gearsMovedPastCap: number;
  driftGearsMovedPastCap: number;
  idleGearMoves: number;
  /** An operator's CLI commands (drain, drain --replace, cancel-drain) that went through, under the same faults, and those refused. */
  operatorDone: number;
  operatorRefused: number;
  operatorCancelledBeforeBegun: number;
  /** Of those, drains created from a message the gear mover took as the cancel was written, refused at their first step. */
  operatorCreatedThenRefused: number;
}

function newTotals(): Totals {
  return { scenarios: 0, violations: 0, minutes: 0, invocations: 0, faultsInjected: 0, crashes: 0, messages: 0, deadLetters: 0, scaleUps: 0, drains: 0, calledOff: 0, gearMoves: 0, hostileMessages: 0, waitingRiseSighted: 0, scaleUpsWithDoubleWhenFull: 0, marketReads: 0, drainsPricedByMarkets: 0, districtReads: 0, joinedInZone: 0, movesLockedOut: 0, renewals: 0, expiryRenewals: 0, renewalDrains: 0, gearsMovedPastCap: 0, driftGearsMovedPastCap: 0, idleGearMoves: 0, operatorDone: 0, operatorRefused: 0, operatorCancelledBeforeBegun: 0, operatorCreatedThenRefused: 0 };
}

function add(totals: Totals, outcome: ScenarioOutcome, scenario: Scenario): void {
  if (scenario.scaleUpOptions?.waitingRise && outcome.waitingSighted) totals.waitingRiseSighted += 1;
  if (scenario.scaleUpOptions?.doubleWhenFull) totals.scaleUpsWithDoubleWhenFull += outcome.scaleUps;
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
  totals.calledOff += outcome.calledOff;
  totals.gearMoves += outcome.gearMoves;
  totals.hostileMessages += outcome.hostileMessages;
  totals.marketReads += outcome.marketReads;
  if (outcome.marketReads > 0) totals.drainsPricedByMarkets += outcome.drains;
  totals.districtReads += outcome.districtReads;
  totals.joinedInZone += outcome.joinedInZone;
  totals.movesLockedOut += outcome.movesLockedOut;
  totals.renewals += outcome.renewals;
  totals.expiryRenewals += outcome.expiryRenewals;
  totals.renewalDrains += outcome.renewalDrains;
  totals.gearsMovedPastCap += outcome.gearsMovedPastCap;
  if (scenario.renewal === 'drifted') totals.driftGearsMovedPastCap += outcome.gearsMovedPastCap;
  totals.idleGearMoves += outcome.idleGearMoves;
  totals.operatorDone += outcome.operator.done;
  totals.operatorRefused += outcome.operator.refused;
  totals.operatorCancelledBeforeBegun += outcome.operator.cancelledBeforeBegun;
  totals.operatorCreatedThenRefused += outcome.operator.createdThenRefused;
}

async function check(name: string, store: Scenario['store'], platform: 'simulated' | 'broker', numRuns: number, kept: readonly Scenario[] = []): Promise<Totals> {
  const totals = newTotals();
  const reportFailure = firstFailureReporter(name);
  const runChecked = async (scenario: Scenario) => {
    const outcome = await runScenario(scenario);
    add(totals, outcome, scenario);
    const problems = [...outcome.violations, ...outcome.ledger.lost];
    if (problems.length > 0) reportFailure(scenario, problems);
    expect(outcome.violations, JSON.stringify(scenario)).toEqual([]);
    expect(outcome.ledger.lost).toEqual([]);
  };
  for (const scenario of kept) await runChecked(scenario);
  await fc.assert(
    fc.asyncProperty(scenarioArbitrary(store, store === 'dynalite' ? 'short' : 'full', platform), runChecked),
    {
      numRuns,
      // Each platform its own share of scenarios (another seed): together they try more workloads.
      seed: seed() + (platform === 'broker' ? 1 : 0),
      // No wall-clock limit on the default suite (a correct run on a busy machine must not fail); a soak run stops
      // after a day, and what it had not finished counts as a failure.
      ...(soak === undefined ? {} : { interruptAfterTimeLimit: 24 * 3_600_000, markInterruptAsFailure: true }),
    },
  );
  const { scenarios, violations, hostileMessages, ...details } = totals;
  reportTally({ name, platform, scenarios, violations, hostileMessages, details });
  return totals;
}

const soak = soakRuns();
/** The broker emulator's share of the default run (its commands take virtual seconds and more calls). */
const BROKER_SCENARIO_RUNS = 30;
/**
 * Run before the broker's generated scenarios, in every mode: a drain a scale-up calls off under faults. The generated
 * 30 reach one now and then (one scenario of them until session 62; none after its renewals in low pools changed the
 * port calls, and so where the faults fell); this one does (drawn with seed 777). Should a change make it miss, the
 * calledOff check below names it: draw another (`NODESCALER_CHAOS_SEED`).
 */
const KEPT_BROKER_SCENARIOS: readonly Scenario[] = [
  {
    seed: 1_462_514_509,
    demand: [{ minutes: 19, gears: 0 }, { minutes: 7, gears: 56 }],
    faults: { errorBefore: 0.1, errorAfter: 0.0915, crash: 0.01045, skewMs: 30_000 },
    queue: { duplicateRate: 0.2904, reorderWindow: 3, delayRate: 0.021, partialSendFailure: 0.036 },
    concurrency: 0.0024,
    clockJumps: 0.0093,
    moveFailureRate: 0.121,
    rebalanceRate: 0.04195,
    attrition: false,
    hostileRate: 0.0182,
    capacityCap: 2,
    districtUids: 37,
    maxNodesTotal: 5,
    maxCores: 11,
    store: 'memory',
    budget: { maxDraining: 3, maxMovesPerGear: 1, doNotMoveApps: 1 },
    platform: 'broker',
    zones: false,
    scaleUpOptions: { waitingRise: false, doubleWhenFull: true },
    market: { spot: true, dollars: 0.0001 },
    renewal: 'expired',
  },
];

/**
 * The default suite replays the same scenarios every run (a fixed seed: CI is
 * reproducible); the soak mode draws new ones each time unless given a seed.
 */
export const DEFAULT_SEED = 20_261_121;
function seed(): number {
  if (process.env.NODESCALER_CHAOS_SEED) return Number(process.env.NODESCALER_CHAOS_SEED);
  return soak === undefined ? DEFAULT_SEED : Date.now() % 2 ** 31;
}
/** A soak run takes as long as it takes. */
const timeout = soak === undefined ? 300_000 : 24 * 3_600_000;

describe('invariants under generated workloads and faults', () => {
  it(`hold over ${soak ?? DEFAULT_SCENARIO_RUNS} scenarios on the memory store and the simulated platform`, async () => {
    const totals = await check('chaos-memory', 'memory', 'simulated', soak ?? DEFAULT_SCENARIO_RUNS);
    // The suite must have exercised what it claims to.
    expect(totals.faultsInjected).toBeGreaterThan(0);
    expect(totals.crashes).toBeGreaterThan(0);
    expect(totals.drains).toBeGreaterThan(0);
    expect(totals.scaleUps).toBeGreaterThan(0);
    // The scale-up's options that are off by default hold the same invariants.
    expect(totals.waitingRiseSighted).toBeGreaterThan(0);
    expect(totals.scaleUpsWithDoubleWhenFull).toBeGreaterThan(0);
    // Scale-ups that called off drains under way: the node re-opens mid-drain, under the same faults. Checked on the
    // default run's fixed scenarios; a soak run draws new ones, which need not contain one.
    if (soak === undefined) expect(totals.calledOff).toBeGreaterThan(0);
    expect(totals.hostileMessages).toBeGreaterThan(0);
    // Drains priced by the markets, read under the same faults.
    expect(totals.marketReads).toBeGreaterThan(0);
    expect(totals.drainsPricedByMarkets).toBeGreaterThan(0);
    // Districts whose UIDs run out: the broker refuses beyond them and the reporter reads them, under the same faults.
    expect(totals.districtReads).toBeGreaterThan(0);
    // Drifted and expired nodes renewed (a replacement, then the drain once it joined), under the same faults.
    expect(totals.renewals).toBeGreaterThan(0);
    expect(totals.expiryRenewals).toBeGreaterThan(0);
    expect(totals.renewals).toBeGreaterThan(totals.expiryRenewals);
    expect(totals.renewalDrains).toBeGreaterThan(0);
    // Renewals past expireGrace or driftGrace moved gears at their move limit (no other drain did: the budget invariant).
    expect(totals.gearsMovedPastCap).toBeGreaterThan(totals.driftGearsMovedPastCap);
    expect(totals.driftGearsMovedPastCap).toBeGreaterThan(0);
    // Where the platform counts only active gears in its slots, drains moved idle gears, which took no slot.
    expect(totals.idleGearMoves).toBeGreaterThan(0);
    // An operator's drains and cancels at the CLI, beside the evaluator's, under the same faults; and refusals.
    expect(totals.operatorDone).toBeGreaterThan(0);
    expect(totals.operatorRefused).toBeGreaterThan(0);
    // Drains cancelled before they began (waiting for a replacement or for the gear mover), none of which began.
    if (soak === undefined) expect(totals.operatorCancelledBeforeBegun).toBeGreaterThan(0);
  }, timeout);

  it(`hold over ${scaled(BROKER_SCENARIO_RUNS)} scenarios on the memory store and the broker adapter over the broker emulator`, async () => {
    const totals = await check('chaos-memory-broker', 'memory', 'broker', scaled(BROKER_SCENARIO_RUNS), KEPT_BROKER_SCENARIOS);
    expect(totals.faultsInjected).toBeGreaterThan(0);
    expect(totals.drains).toBeGreaterThan(0);
    expect(totals.gearMoves).toBeGreaterThan(0);
    expect(totals.calledOff).toBeGreaterThan(0);
    expect(totals.hostileMessages).toBeGreaterThan(0);
    // Brokers that require zones: the nodes nodescaler added joined in the pool's region and zone, under the same faults.
    expect(totals.joinedInZone).toBeGreaterThan(0);
    // Moves the application's lock kept back, retried without spending an attempt, under the same faults.
    expect(totals.movesLockedOut).toBeGreaterThan(0);
    expect(totals.operatorDone).toBeGreaterThan(0);
  }, timeout);

  it(`hold over ${scaled(1)} shorter scenarios on dynalite and the simulated platform`, async () => {
    const totals = await check('chaos-dynalite', 'dynalite', 'simulated', scaled(1));
    expect(totals.invocations).toBeGreaterThan(0);
  }, timeout);

  it(`hold over ${scaled(1)} shorter scenarios on dynalite and the broker emulator`, async () => {
    const totals = await check('chaos-dynalite-broker', 'dynalite', 'broker', scaled(1));
    expect(totals.invocations).toBeGreaterThan(0);
  }, timeout);
});
