import { seededRandom } from './random.js';
import type { Trace } from './trace.js';

/**
 * Held-out workload shapes (`npm run bench -- heldout`): random shapes drawn
 * from a seed, mixing what operators see, that the defaults were not chosen
 * on. The suite's five synthetic families (synthetic.ts) are fixed shapes; a
 * policy fitted to them shows here. Each shape draws, independently:
 * - a level (30..80 % of the run's peak before scaling);
 * - a daily cycle (3 in 4 shapes): trough 10..80 % below the crest, crest at
 *   any hour, shape from a broad wave to a sharp afternoon peak;
 * - a weekly cycle (2 in 5): one or two quiet days in a row, starting any day
 *   of the week, at 40..90 % of the other days;
 * - a trend (2 in 5): the level changes by -60..+150 % over the run;
 * - step changes (1 in 3): one to three, each to 40..220 % of the level before;
 * - bursts (9 in 20): 0.2..4 a day, to 1.5..6 x the level, lasting 5..240
 *   minutes, rising within 0..15 minutes;
 * - noise: up to +-20 % every step;
 * - flat periods (3 in 10): one to three, 2..36 hours held at their first value;
 * - app churn (1 in 2): 1..30 % of the gears deleted and as many created each
 *   hour, beyond the demand's net change (`Trace.churnPerHour`).
 * The same seed and index give the same shape; demand is scaled so the peak
 * is `peakGears` (never negative, never above it).
 */

const STEP = 300;
const DAY = 86400;
const HOUR = 3600;

export interface HeldoutOptions {
  count: number;
  seed: number;
  days: number;
  peakGears: number;
}

/** What one shape of a minute-by-minute family (wander, surge, shift) is drawn from: shape n is the same whatever the count. */
export type ShapeOptions = Omit<HeldoutOptions, 'count'>;

export interface HeldoutShape {
  /** `heldout:s<seed>-<n>`, n from 1. */
  name: string;
  /** The components drawn, e.g. `daily 45 % crest 14h, bursts 1.2/day x3.1 40 min, noise 6 %, churn 5 %/h`. */
  description: string;
  trace: Trace;
}

/** `count` shapes of one seed: shape n is the same whatever `count` is. */
export function heldoutShapes(options: HeldoutOptions): HeldoutShape[] {
  return Array.from({ length: options.count }, (_, index) => heldoutShape(index, options));
}

interface Burst {
  start: number;
  rise: number;
  length: number;
  height: number;
}

export function heldoutShape(index: number, options: Omit<HeldoutOptions, 'count'>): HeldoutShape {
  // One generator per shape, so a shape does not depend on how many came before it.
  const random = seededRandom((Math.imul(options.seed + 1, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca6b)) >>> 0);
  const { between, chance, arrivals } = shapeDraws(random);
  const duration = Math.max(STEP, Math.round(options.days * DAY / STEP) * STEP);
  const parts: string[] = [];

  const level = between(0.3, 0.8);
  const daily = chance(0.75) ? { depth: between(0.1, 0.8), crest: between(0, 24), sharpness: 1 + Math.floor(random() * 3) } : undefined;
  if (daily) parts.push(`daily ${pct(daily.depth)} crest ${daily.crest.toFixed(0)}h${daily.sharpness > 1 ? ` sharp ${daily.sharpness}` : ''}`);
  const weekly = chance(0.4) ? { firstDay: Math.floor(random() * 7), days: 1 + Math.floor(random() * 2), factor: between(0.4, 0.9) } : undefined;
  if (weekly) parts.push(`weekly ${weekly.days} day${weekly.days > 1 ? 's' : ''} at ${pct(weekly.factor)} from day ${weekly.firstDay}`);
  const trend = chance(0.4) ? between(-0.6, 1.5) : 0;
  if (trend !== 0) parts.push(`trend ${trend > 0 ? '+' : ''}${pct(trend)}`);
  const steps = chance(1 / 3) ? Array.from({ length: 1 + Math.floor(random() * 3) }, () => ({ at: between(0.05, 0.95) * duration, factor: between(0.4, 2.2) })).sort((a, b) => a.at - b.at) : [];
  if (steps.length > 0) parts.push(`steps ${steps.map((s) => `x${s.factor.toFixed(2)}@${(s.at / DAY).toFixed(1)}d`).join(' ')}`);
  const bursts: Burst[] = [];
  if (chance(0.45)) {
    const perDay = between(0.2, 4);
    const height = between(1.5, 6);
    const minutes = between(5, 240);
    parts.push(`bursts ${perDay.toFixed(1)}/day x${height.toFixed(1)} ${minutes.toFixed(0)} min`);
    // Each burst's height and length vary around the shape's.
    bursts.push(...arrivals(perDay, duration, (start) => ({ start, rise: between(0, 15) * 60, length: minutes * between(0.5, 1.5) * 60, height: height * between(0.8, 1.2) })));
  }
  const noise = between(0, 0.2);
  parts.push(`noise ${pct(noise)}`);
  const flats = chance(0.3) ? Array.from({ length: 1 + Math.floor(random() * 3) }, () => ({ start: between(0, 0.9) * duration, length: between(2, 36) * HOUR })) : [];
  if (flats.length > 0) parts.push(`flat ${flats.map((f) => `${(f.length / HOUR).toFixed(0)}h@${(f.start / DAY).toFixed(1)}d`).join(' ')}`);
  const churn = chance(0.5) ? between(0.01, 0.3) : 0;
  if (churn > 0) parts.push(`churn ${pct(churn)}/h`);

  const values: number[] = [];
  let held: number | undefined;
  for (let t = 0; t < duration; t += STEP) {
    let value = level * Math.max(0.05, 1 + (trend * t) / duration);
    for (const step of steps) if (t >= step.at) value *= step.factor;
    if (weekly && (Math.floor(t / DAY) - weekly.firstDay + 7) % 7 < weekly.days) value *= weekly.factor;
    if (daily) {
      const wave = 0.5 + 0.5 * Math.cos((2 * Math.PI * (t - daily.crest * HOUR)) / DAY);
      value *= 1 - daily.depth + daily.depth * wave ** daily.sharpness;
    }
    const base = value;
    for (const burst of bursts) {
      if (t < burst.start || t >= burst.start + burst.length) continue;
      const ramp = burst.rise > 0 ? Math.min(1, (t - burst.start + STEP) / burst.rise) : 1;
      value = Math.max(value, base * (1 + (burst.height - 1) * ramp));
    }
    value *= 1 + noise * (2 * random() - 1);
    const flat = flats.find((f) => t >= f.start && t < f.start + f.length);
    if (flat) value = held ??= value;
    else held = undefined;
    values.push(Math.max(0, value));
  }
  return heldoutTrace(`heldout:s${options.seed}-${index + 1}`, parts, values, { stepSeconds: STEP, peakGears: options.peakGears, churn });
}

/** What a shape generator draws from its seeded `random`; each call takes its numbers in turn, so the order of calls is the shape. */
export function shapeDraws(random: () => number) {
  return {
    between: (low: number, high: number) => low + (high - low) * random(),
    chance: (p: number) => random() < p,
    /** A standard normal draw (Box-Muller). */
    normal: () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random()),
    /** Poisson arrivals, `perDay` a day, before `duration` seconds; `make` draws each one's own figures before the next arrival is drawn. */
    arrivals<T>(perDay: number, duration: number, make: (start: number) => T): T[] {
      const out: T[] = [];
      for (let at = -Math.log(1 - random()) * (DAY / perDay); at < duration; at += -Math.log(1 - random()) * (DAY / perDay)) out.push(make(at));
      return out;
    },
  };
}

/** A drawn shape as a trace: `values` one per `stepSeconds`, scaled so their peak is `peakGears` whole gears. */
export function heldoutTrace(name: string, parts: string[], values: number[], options: { stepSeconds: number; peakGears: number; churn: number }): HeldoutShape {
  const peak = values.reduce((max, v) => (v > max ? v : max), 0);
  return {
    name,
    description: parts.join(', '),
    trace: {
      source: name,
      demandColumn: 'demand',
      steps: values.map((v, i) => ({ at: i * options.stepSeconds, demand: peak > 0 ? Math.round((v / peak) * options.peakGears) : 0 })),
      stepSeconds: options.stepSeconds,
      durationSeconds: values.length * options.stepSeconds,
      ...(options.churn > 0 ? { churnPerHour: options.churn } : {}),
    },
  };
}

export function pct(share: number): string {
  return `${(share * 100).toFixed(0)} %`;
}
