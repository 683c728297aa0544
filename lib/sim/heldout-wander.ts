import { seededRandom } from './random.js';
import { heldoutTrace, pct, shapeDraws, type HeldoutShape, type ShapeOptions } from './heldout.js';

/**
 * A second held-out family (`npm run bench -- heldout --family wander`): what
 * the first one (heldout.ts) cannot draw. Its noise is drawn afresh every 5
 * minutes, its cycles repeat exactly, its bursts arrive at random. Real
 * demand also wanders for hours, repeats its days only roughly, runs jobs on
 * a clock, and now and then spikes far above anything before. Each shape is
 * a minute-by-minute trace and draws, independently:
 * - a level (30..80 % of the run's peak before scaling);
 * - wandering (always): demand's logarithm reverts to its level with a time
 *   constant of 20 minutes..12 hours, and a spread of 5..35 %;
 * - a daily cycle (1 in 2) whose depth (10..70 %) and crest hour change from
 *   day to day (depth x0.6..1.4, crest +-3 h);
 * - jobs on a clock (2 in 5): every 1, 2, 3, 4, 6, 8 or 12 hours at the same
 *   minute, for 5..60 minutes, to 1.2..3 x the demand around them;
 * - rare spikes (1 in 4): 0.1..1 a day, heights from a heavy tail (1.3 x and
 *   up, Pareto 1.5, at most 8 x), 5..30 minutes, at once;
 * - dips (1 in 5): 0.2..2 a day, demand falls to 10..50 % for 10..120 minutes
 *   and comes back (a release, an outage upstream);
 * - app churn (1 in 2): 1..30 % of the gears replaced each hour.
 * The same seed and index give the same shape; demand is scaled so the peak
 * is `peakGears`.
 */

const STEP = 60;
const DAY = 86400;
const HOUR = 3600;
const JOB_PERIODS_HOURS = [1, 2, 3, 4, 6, 8, 12] as const;

interface Episode {
  start: number;
  length: number;
  factor: number;
}

export function wanderShape(index: number, options: ShapeOptions): HeldoutShape {
  // Not heldout.ts's mixing constants, so seed s of one family is not a variation of seed s of the other.
  const random = seededRandom((Math.imul(options.seed + 11, 0x27d4eb2f) ^ Math.imul(index + 3, 0x165667b1)) >>> 0);
  const { between, chance, normal, arrivals } = shapeDraws(random);
  const duration = Math.max(STEP, Math.round((options.days * DAY) / STEP) * STEP);
  const days = Math.ceil(duration / DAY);
  const parts: string[] = [];

  const level = between(0.3, 0.8);
  const tau = between(20, 720) * 60;
  const spread = between(0.05, 0.35);
  parts.push(`wander ${pct(spread)} over ${tau >= HOUR ? `${(tau / HOUR).toFixed(1)} h` : `${(tau / 60).toFixed(0)} min`}`);
  const daily = chance(0.5) ? { depth: between(0.1, 0.7), crest: between(0, 24), sharpness: 1 + Math.floor(random() * 3) } : undefined;
  // One draw per midnight, eased between, so a day's change never jumps at midnight.
  const dayVariation = daily ? Array.from({ length: days + 1 }, () => ({ depth: between(0.6, 1.4), crestShift: between(-3, 3) * HOUR })) : [];
  if (daily) parts.push(`daily ${pct(daily.depth)} crest ${daily.crest.toFixed(0)}h${daily.sharpness > 1 ? ` sharp ${daily.sharpness}` : ''} varying by day`);
  const job = chance(0.4)
    ? { every: JOB_PERIODS_HOURS[Math.floor(random() * JOB_PERIODS_HOURS.length)]! * HOUR, offset: Math.floor(between(0, 60)) * 60, length: Math.round(between(5, 60)) * 60, height: between(1.2, 3) }
    : undefined;
  if (job) parts.push(`jobs every ${job.every / HOUR} h x${job.height.toFixed(1)} ${job.length / 60} min`);
  const spikes = chance(0.25)
    ? arrivals<Episode>(between(0.1, 1), duration, (start) => ({ start, length: Math.round(between(5, 30)) * 60, factor: Math.min(8, 1.3 * (1 - random()) ** (-1 / 1.5)) }))
    : [];
  if (spikes.length > 0) parts.push(`spikes ${spikes.length} to ${range(spikes, (f) => `x${f.toFixed(1)}`)}`);
  const dips = chance(0.2) ? arrivals<Episode>(between(0.2, 2), duration, (start) => ({ start, length: Math.round(between(10, 120)) * 60, factor: between(0.1, 0.5) })) : [];
  if (dips.length > 0) parts.push(`dips ${dips.length} to ${range(dips, pct)}`);
  const churn = chance(0.5) ? between(0.01, 0.3) : 0;
  if (churn > 0) parts.push(`churn ${pct(churn)}/h`);

  const keep = Math.exp(-STEP / tau);
  const kick = spread * Math.sqrt(1 - keep * keep);
  let wander = spread * normal();
  const values: number[] = [];
  for (let t = 0; t < duration; t += STEP) {
    wander = wander * keep + kick * normal();
    let value = level * Math.exp(wander);
    if (daily) {
      const day = Math.floor(t / DAY);
      const into = t / DAY - day;
      const [from, to] = [dayVariation[day]!, dayVariation[day + 1]!];
      const depth = Math.min(0.95, daily.depth * (from.depth + (to.depth - from.depth) * into));
      const crestShift = from.crestShift + (to.crestShift - from.crestShift) * into;
      const wave = 0.5 + 0.5 * Math.cos((2 * Math.PI * (t - daily.crest * HOUR - crestShift)) / DAY);
      value *= 1 - depth + depth * wave ** daily.sharpness;
    }
    if (job && (t - job.offset + job.every) % job.every < job.length) value *= job.height;
    for (const spike of spikes) if (t >= spike.start && t < spike.start + spike.length) value *= spike.factor;
    for (const dip of dips) if (t >= dip.start && t < dip.start + dip.length) value *= dip.factor;
    values.push(Math.max(0, value));
  }
  return heldoutTrace(`heldout:w${options.seed}-${index + 1}`, parts, values, { stepSeconds: STEP, peakGears: options.peakGears, churn });
}

function range(episodes: Episode[], show: (factor: number) => string): string {
  const factors = episodes.map((e) => e.factor);
  const [low, high] = [Math.min(...factors), Math.max(...factors)];
  return low === high ? show(low) : `${show(low)}..${show(high)}`;
}
