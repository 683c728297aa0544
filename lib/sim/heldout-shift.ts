import { seededRandom } from './random.js';
import { heldoutTrace, pct, shapeDraws, type HeldoutShape, type ShapeOptions } from './heldout.js';

/**
 * A fourth held-out family (`npm run bench -- heldout --family shift`): what
 * changes from one week to the next, which the other three families (heldout.ts,
 * heldout-wander.ts, heldout-surge.ts) hold still. Their days repeat a drawn
 * pattern around one population of tenants; on a real district tenants arrive
 * and leave, regions in other time zones grow at different rates, a holiday or
 * a sale makes one day unlike the one before, the clocks change, and some
 * applications flap faster than a host boots. Each shape is a minute-by-minute
 * trace and draws, independently:
 * - a level (30..80 % of the run's peak before scaling);
 * - regions (4 in 5): one to three daily cycles, each with its own crest hour,
 *   depth (20..80 %) and share of the demand; each region's share changes by
 *   -50..+100 % over the run, so the day's crest moves and reshapes;
 * - arrivals (2 in 5): one or two tenants move in, +20..100 % of the level,
 *   over 10 minutes..12 hours (a migration), and stay;
 * - a departure (1 in 4): a tenant leaves, -20..50 % of the level, within
 *   minutes (its applications deleted), for good;
 * - odd days (1 in 3): one or two days of the run, not the first, at
 *   30..60 % (a holiday) or 130..200 % (a sale) of an ordinary day;
 * - a clock change (1 in 5): from a day of the run on, every cycle an hour
 *   earlier or later;
 * - flapping (1 in 5): a wave of 6..30 minutes' period, +-5..25 %;
 * - blips (1 in 4): 1..10 a day, 1..3 minutes at 1.5..3 x;
 * - minute noise (always): 0..10 %, normal;
 * - app churn (1 in 2): 1..30 % of the gears replaced each hour.
 * The same seed and index give the same shape; demand is scaled so the peak
 * is `peakGears`.
 */

const STEP = 60;
const DAY = 86400;
const HOUR = 3600;

interface Region {
  crest: number;
  depth: number;
  share: number;
  growth: number;
}

interface Step {
  at: number;
  over: number;
  by: number;
}

interface Episode {
  start: number;
  length: number;
  factor: number;
}

export function shiftShape(index: number, options: ShapeOptions): HeldoutShape {
  // Not the other families' mixing constants, so seed s here is not a variation of seed s there.
  const random = seededRandom((Math.imul(options.seed + 37, 0x5bd1e995) ^ Math.imul(index + 13, 0x7feb352d)) >>> 0);
  const { between, chance, normal, arrivals } = shapeDraws(random);
  const duration = Math.max(STEP, Math.round((options.days * DAY) / STEP) * STEP);
  const days = Math.ceil(duration / DAY);
  const parts: string[] = [];

  const level = between(0.3, 0.8);
  const regions: Region[] = chance(0.8) ? Array.from({ length: 1 + Math.floor(random() * 3) }, () => ({ crest: between(0, 24), depth: between(0.2, 0.8), share: between(0.2, 1), growth: between(-0.5, 1) })) : [];
  if (regions.length > 0) parts.push(`regions ${regions.map((r) => `${r.crest.toFixed(0)}h ${pct(r.depth)} ${r.growth >= 0 ? '+' : ''}${pct(r.growth)}`).join(' / ')}`);
  const moveIns: Step[] = chance(0.4) ? Array.from({ length: 1 + Math.floor(random() * 2) }, () => ({ at: between(0.1, 0.9) * duration, over: between(10 * 60, 12 * HOUR), by: between(0.2, 1) })) : [];
  if (moveIns.length > 0) parts.push(`arrivals ${moveIns.map((s) => `+${pct(s.by)}@${(s.at / DAY).toFixed(1)}d over ${(s.over / HOUR).toFixed(1)} h`).join(', ')}`);
  const departure: Step | undefined = chance(0.25) ? { at: between(0.1, 0.9) * duration, over: between(1, 15) * 60, by: -between(0.2, 0.5) } : undefined;
  if (departure) parts.push(`departure ${pct(departure.by)}@${(departure.at / DAY).toFixed(1)}d`);
  const oddDays = new Map<number, number>();
  if (chance(1 / 3) && days > 1) {
    for (let n = 1 + Math.floor(random() * 2); n > 0; n--) oddDays.set(1 + Math.floor(random() * (days - 1)), chance(0.5) ? between(0.3, 0.6) : between(1.3, 2));
    parts.push(`odd days ${[...oddDays].map(([day, factor]) => `${day} at ${pct(factor)}`).join(', ')}`);
  }
  const clockChange = chance(0.2) && days > 1 ? { day: 1 + Math.floor(random() * (days - 1)), by: chance(0.5) ? HOUR : -HOUR } : undefined;
  if (clockChange) parts.push(`clocks ${clockChange.by > 0 ? '+1' : '-1'} h from day ${clockChange.day}`);
  const flapping = chance(0.2) ? { period: between(6, 30) * 60, amplitude: between(0.05, 0.25) } : undefined;
  if (flapping) parts.push(`flapping ${pct(flapping.amplitude)} every ${(flapping.period / 60).toFixed(0)} min`);
  const blips = chance(0.25) ? arrivals<Episode>(between(1, 10), duration, (start) => ({ start, length: Math.round(between(1, 3)) * 60, factor: between(1.5, 3) })) : [];
  if (blips.length > 0) parts.push(`blips ${blips.length}`);
  const noise = between(0, 0.1);
  parts.push(`noise ${pct(noise)}`);
  const churn = chance(0.5) ? between(0.01, 0.3) : 0;
  if (churn > 0) parts.push(`churn ${pct(churn)}/h`);

  const totalShare = regions.reduce((sum, r) => sum + r.share, 0);
  const levelSteps = departure ? [...moveIns, departure] : moveIns;
  const values: number[] = [];
  for (let t = 0; t < duration; t += STEP) {
    const day = Math.floor(t / DAY);
    const clock = t + (clockChange && day >= clockChange.day ? clockChange.by : 0);
    let value = level;
    if (regions.length > 0) {
      let cycle = 0;
      for (const region of regions) {
        const wave = 0.5 + 0.5 * Math.cos((2 * Math.PI * (clock - region.crest * HOUR)) / DAY);
        cycle += (region.share / totalShare) * (1 + region.growth * (t / duration)) * (1 - region.depth + region.depth * wave);
      }
      value *= cycle;
    }
    for (const step of levelSteps) value *= 1 + step.by * Math.min(1, Math.max(0, (t - step.at) / step.over));
    // Eased over the day's first hour, so an odd day does not jump at midnight.
    const dayFactor = oddDays.get(day) ?? 1;
    const dayBefore = day > 0 ? (oddDays.get(day - 1) ?? 1) : dayFactor;
    value *= dayBefore + (dayFactor - dayBefore) * Math.min(1, (t - day * DAY + STEP) / HOUR);
    if (flapping) value *= 1 + flapping.amplitude * Math.sin((2 * Math.PI * t) / flapping.period);
    for (const blip of blips) if (t >= blip.start && t < blip.start + blip.length) value *= blip.factor;
    values.push(Math.max(0, value * (1 + noise * normal())));
  }
  return heldoutTrace(`heldout:f${options.seed}-${index + 1}`, parts, values, { stepSeconds: STEP, peakGears: options.peakGears, churn });
}
