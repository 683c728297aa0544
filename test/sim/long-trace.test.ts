import { describe, expect, it } from 'vitest';
import { runBaseline } from '../../lib/sim/baselines.js';
import { singlePool } from '../../lib/sim/pools.js';
import { runNodescaler, simulationConfig } from '../../lib/sim/replay.js';
import { peakDemand, parseTrace, type Trace } from '../../lib/sim/trace.js';

/** Three months at one minute: 130,000 rows, a daily wave on a weekly one, with its single highest row in week 11. */
const ROWS = 130_000;
const PEAK_ROW = 110_000;

function threeMonthsCsv(): string {
  const lines = ['seconds,load'];
  for (let row = 0; row < ROWS; row++) {
    const daily = Math.sin((2 * Math.PI * row) / 1440);
    const weekly = Math.sin((2 * Math.PI * row) / (7 * 1440));
    const load = row === PEAK_ROW ? 1000 : Math.round(400 + 150 * daily + 100 * weekly);
    lines.push(`${row * 60},${load}`);
  }
  return lines.join('\n');
}

function firstDays(trace: Trace, days: number): Trace {
  const seconds = days * 86400;
  return { ...trace, steps: trace.steps.filter((s) => s.at < seconds), durationSeconds: Math.min(trace.durationSeconds, seconds) };
}

const sumOfDemand = (trace: Trace) => trace.steps.reduce((sum, s) => sum + s.demand, 0);

// Before: `Math.max(...steps)` over a trace this long overflowed the stack (RangeError) when reading it, sizing the
// simulation's pool and running the baselines. A whole nodescaler replay of 130,000 simulated minutes costs about a
// minute of CPU (scripts/bench-replay.ts measures it), too much for the suite: it replays the first two days instead.
describe('a 130,000-row trace (3 months at one minute)', () => {
  const trace = parseTrace(threeMonthsCsv(), 'generated', { stepSeconds: 60, peakGears: 2000 });

  it('is read whole, scaled so its highest row is the peak', () => {
    expect(trace.steps).toHaveLength(ROWS);
    expect(trace.stepSeconds).toBe(60);
    expect(trace.durationSeconds).toBe(ROWS * 60);
    expect(peakDemand(trace)).toBe(2000);
    expect(trace.steps[PEAK_ROW]!.demand).toBe(2000);
    expect(trace.steps[0]!.demand).toBe(Math.round(400 * 2)); // scale 2000 / 1000
  });

  it('sizes the simulated pool from the peak of all of it', () => {
    const config = simulationConfig(trace, { gearsPerNode: 100, bootDelaySeconds: 120 });
    expect(config.pools![0]!.max).toBe(Math.ceil((2000 / 100) * 2) + 2);
  });

  it('replays end to end through the static-peak baseline, every minute of it', () => {
    const result = runBaseline('static-peak', [singlePool(trace, 100)], { bootDelaySeconds: 120, tickSeconds: 60, moveSeconds: 30, maxConcurrentMoves: 3, seed: 1, sampleEverySeconds: 3600, maxNodesTotal: 100 });
    expect(result.demandGearMinutes).toBe(sumOfDemand(trace));
    expect(result.nodeHours).toBeCloseTo((20 * ROWS) / 60, 6); // 20 nodes for the peak, all along
    expect(result.series.length).toBeGreaterThanOrEqual(Math.floor(ROWS / 60));
    expect(result.invariantViolations).toBe(0);
  });

  it('replays its first two days through the four handlers, with nothing broken', async () => {
    const window = firstDays(trace, 2);
    expect(window.steps).toHaveLength(2 * 1440);
    const outcome = await runNodescaler(window, { gearsPerNode: 100, bootDelaySeconds: 120, store: 'memory', seed: 1 });
    expect(outcome.violations).toEqual([]);
    expect(outcome.deadLetters).toEqual([]);
    expect(outcome.result.demandGearMinutes).toBe(sumOfDemand(window));
    // Two daily waves: it follows them up and down, close to the oracle, leaving no gear waiting long.
    expect(outcome.result.scaleUps).toBeGreaterThan(1);
    expect(outcome.result.scaleDowns).toBeGreaterThan(1);
    expect(outcome.result.ratioToOracle).toBeLessThan(1.25);
    expect(outcome.result.unplacedShare).toBeLessThan(0.001);
  }, 600_000);
});
