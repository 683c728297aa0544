/**
 * The gears that hold a slot at each tick when idle gears hold none
 * (`BaselineOptions.idleTakesNoSlot`): what perfect foresight sizes for. The
 * trace gives every gear; which of them are idle depends on the applications
 * drawn and on which gears leave, so this replays a pool's own draws
 * (departures, churn, applications: the same seeds and order as the
 * baselines' PoolSim) with every gear placed at once. It matches the run as
 * long as no gear of the run waits, which a clairvoyant run's do not.
 */
import { applyDemandStep, Churn } from './churn.js';
import { AppModel } from './disruption.js';
import type { SimPool } from './pools.js';
import { seededRandom } from './random.js';
import { demandAt, type Trace } from './trace.js';

/** Active gears at each tick (index t / tickSeconds), for a pool replayed with `seed` as PoolSim seeds it. */
export function activeDemandSeries(pool: SimPool, tickSeconds: number, seed: number): Int32Array {
  const trace = pool.trace;
  const random = seededRandom(seed);
  const apps = new AppModel(seededRandom(seed + 7), trace.apps);
  const churn = new Churn(trace.churnPerHour);
  const placed: number[] = [];
  const waiting: number[] = [];
  let active = 0;
  const remove = (position: number) => {
    const gear = placed[position]!;
    const last = placed.pop()!;
    if (position < placed.length) placed[position] = last;
    if (!apps.idle(gear)) active -= 1;
  };
  const state = { placedCount: () => placed.length, removeAt: remove, waiting };
  const ticks = Math.ceil(trace.durationSeconds / tickSeconds);
  const series = new Int32Array(ticks);
  let hint = 0;
  for (let tick = 0; tick < ticks; tick++) {
    const step = demandAt(trace, tick * tickSeconds, hint);
    hint = step.index;
    applyDemandStep(state, step.demand, tickSeconds, churn, random, () => apps.next().id);
    for (const gear of waiting) {
      placed.push(gear);
      if (!apps.idle(gear)) active += 1;
    }
    waiting.length = 0;
    series[tick] = active;
  }
  return series;
}

/** `activeDemandSeries` as a demand the reactive floor (floor.ts) reads: one step a tick. */
export function activeDemand(pool: SimPool, tickSeconds: number, seed: number): Pick<Trace, 'steps' | 'durationSeconds'> {
  const series = activeDemandSeries(pool, tickSeconds, seed);
  return { durationSeconds: pool.trace.durationSeconds, steps: Array.from(series, (demand, i) => ({ at: i * tickSeconds, demand })) };
}

/**
 * The gears holding a slot among a pool's first step's gears, as the baselines' applications draw them (seed + 7):
 * the cluster an operator runs when the replay starts is sized by the broker's active count, not every gear.
 */
export function firstStepSlots(pool: SimPool, seed: number, idleTakesNoSlot: boolean | undefined): number {
  const first = pool.trace.steps[0]?.demand ?? 0;
  if (!idleTakesNoSlot) return first;
  const apps = new AppModel(seededRandom(seed + 7), pool.trace.apps);
  let active = 0;
  for (let i = 0; i < first; i++) if (!apps.idle(apps.next().id)) active += 1;
  return active;
}
