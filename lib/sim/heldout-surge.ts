import { seededRandom } from './random.js';
import { heldoutTrace, pct, shapeDraws, type HeldoutShape, type ShapeOptions } from './heldout.js';

/**
 * A third held-out family (`npm run bench -- heldout --family surge`): what
 * neither the mixed (heldout.ts) nor the wandering (heldout-wander.ts) family
 * draws. Their days have one crest and their bursts stop as they started; real
 * days often have two crests, weekends have another shape, a flash crowd fades
 * over hours, a queue's backlog builds up and is cleared at once, and tenants
 * leave a district over an afternoon. Each shape is a minute-by-minute trace
 * and draws, independently:
 * - a level (30..80 % of the run's peak before scaling);
 * - a day of crests (3 in 5): one crest, or (1 in 2 of them) a second one 5..12
 *   hours later at 50..100 % of the first, each 1..4 hours wide, the trough
 *   20..80 % below them;
 * - weekends (1 in 3): two days a week at 50..120 % of the others, their crests
 *   1..5 hours later;
 * - flash crowds (1 in 3): 0.2..2 a day, to 1.5..6 x within 1..5 minutes, then
 *   fading by half every 10..240 minutes (each crowd x0.8..1.2 and x0.7..1.3
 *   around the shape's);
 * - backlogs (1 in 4): every 4..24 hours demand grows steadily for 30 %..80 %
 *   of the period by +50..200 %, and drops back at once when it is cleared;
 * - departures (1 in 5): once, the level falls to 30..70 % over 1..6 hours, and
 *   (1 in 2) comes back 0.5..3 days later just as slowly;
 * - minute noise (always): 0..8 %, normal;
 * - app churn (1 in 2): 1..30 % of the gears replaced each hour.
 * The same seed and index give the same shape; demand is scaled so the peak
 * is `peakGears`.
 */

const STEP = 60;
const DAY = 86400;
const HOUR = 3600;
const BACKLOG_PERIODS_HOURS = [4, 6, 8, 12, 24] as const;

interface Crest {
  hour: number;
  height: number;
  width: number;
}

interface Crowd {
  start: number;
  rise: number;
  height: number;
  halfLife: number;
}

interface Backlog {
  start: number;
  growFor: number;
  height: number;
}

export function surgeShape(index: number, options: ShapeOptions): HeldoutShape {
  // Not the other families' mixing constants, so seed s here is not a variation of seed s there.
  const random = seededRandom((Math.imul(options.seed + 23, 0x2545f491) ^ Math.imul(index + 7, 0x61c88647)) >>> 0);
  const { between, chance, normal, arrivals } = shapeDraws(random);
  const duration = Math.max(STEP, Math.round((options.days * DAY) / STEP) * STEP);
  const parts: string[] = [];

  const level = between(0.3, 0.8);
  const daily = chance(0.6) ? drawDay() : undefined;
  if (daily) parts.push(`${daily.crests.length === 2 ? 'two crests' : 'crest'} ${daily.crests.map((c) => `${c.hour.toFixed(0)}h`).join('+')} trough ${pct(daily.depth)}`);
  // `weekStart`: the day (0-6) the 7-day week of the shape starts; its days 5 and 6 are the weekend.
  const weekend = chance(1 / 3) ? { weekStart: Math.floor(random() * 7), factor: between(0.5, 1.2), crestShift: between(1, 5) } : undefined;
  if (weekend) parts.push(`weekends at ${pct(weekend.factor)}${daily ? ` crest +${weekend.crestShift.toFixed(0)}h` : ''} from day ${(weekend.weekStart + 5) % 7}`);
  const crowds: Crowd[] = [];
  if (chance(1 / 3)) {
    const perDay = between(0.2, 2);
    const height = between(1.5, 6);
    const halfLife = between(10, 240) * 60;
    // Each crowd's height and fading vary around the shape's.
    crowds.push(...arrivals(perDay, duration, (start) => ({ start, rise: Math.round(between(1, 5)) * 60, height: height * between(0.8, 1.2), halfLife: halfLife * between(0.7, 1.3) })));
    if (crowds.length > 0) parts.push(`crowds ${crowds.length} x${height.toFixed(1)} fading by half in ${(halfLife / 60).toFixed(0)} min`);
  }
  const backlogs: Backlog[] = [];
  if (chance(0.25)) {
    const period = BACKLOG_PERIODS_HOURS[Math.floor(random() * BACKLOG_PERIODS_HOURS.length)]! * HOUR;
    const grows = between(0.3, 0.8);
    const height = between(0.5, 2);
    for (let start = -between(0, 1) * period; start < duration; start += period) {
      backlogs.push({ start, growFor: period * grows * between(0.8, 1.2), height: height * between(0.8, 1.2) });
    }
    parts.push(`backlog every ${period / HOUR} h +${pct(height)} over ${pct(grows)} of it`);
  }
  const departure = chance(0.2)
    ? { at: between(0.1, 0.8) * duration, over: between(1, 6) * HOUR, to: between(0.3, 0.7), back: chance(0.5) ? between(0.5, 3) * DAY : undefined }
    : undefined;
  if (departure) parts.push(`departure to ${pct(departure.to)}@${(departure.at / DAY).toFixed(1)}d${departure.back ? ` back after ${(departure.back / DAY).toFixed(1)}d` : ''}`);
  const noise = between(0, 0.08);
  parts.push(`noise ${pct(noise)}`);
  const churn = chance(0.5) ? between(0.01, 0.3) : 0;
  if (churn > 0) parts.push(`churn ${pct(churn)}/h`);

  const values: number[] = [];
  for (let t = 0; t < duration; t += STEP) {
    const day = Math.floor(t / DAY);
    const isWeekend = weekend !== undefined && (day - weekend.weekStart + 7) % 7 >= 5;
    let value = level * (isWeekend ? weekend.factor : 1);
    if (daily) value *= 1 - daily.depth + daily.depth * crestWave(daily.crests, (t % DAY) / HOUR - (isWeekend ? weekend.crestShift : 0));
    if (departure) value *= departureFactor(departure, t);
    const base = value;
    for (const backlog of backlogs) {
      const into = t - backlog.start;
      if (into >= 0 && into < backlog.growFor) value += base * backlog.height * (into / backlog.growFor);
    }
    for (const crowd of crowds) {
      const into = t - crowd.start;
      if (into < 0 || into > crowd.rise + 6 * crowd.halfLife) continue;
      const reached = into < crowd.rise ? (into + STEP) / (crowd.rise + STEP) : 0.5 ** ((into - crowd.rise) / crowd.halfLife);
      value = Math.max(value, base * (1 + (crowd.height - 1) * reached));
    }
    values.push(Math.max(0, value * (1 + noise * normal())));
  }
  return heldoutTrace(`heldout:u${options.seed}-${index + 1}`, parts, values, { stepSeconds: STEP, peakGears: options.peakGears, churn });

  function drawDay(): { depth: number; crests: Crest[] } {
    const first: Crest = { hour: between(0, 24), height: 1, width: between(1, 4) };
    const crests = [first];
    if (chance(0.5)) crests.push({ hour: (first.hour + between(5, 12)) % 24, height: between(0.5, 1), width: between(1, 4) });
    return { depth: between(0.2, 0.8), crests };
  }
}

/** 0 at the trough, 1 at the highest crest: each crest a bell `width` hours wide (one standard deviation), around the clock. */
function crestWave(crests: readonly Crest[], hourOfDay: number): number {
  let highest = 0;
  for (const crest of crests) {
    const apart = Math.abs((((hourOfDay - crest.hour) % 24) + 36) % 24 - 12);
    highest = Math.max(highest, crest.height * Math.exp(-(apart * apart) / (2 * crest.width * crest.width)));
  }
  return highest;
}

/** The share of the level left at `t`: 1 before, easing down to `to` over `over`, and back as slowly after `back`. */
function departureFactor(departure: { at: number; over: number; to: number; back: number | undefined }, t: number): number {
  const eased = (from: number) => Math.min(1, Math.max(0, (t - from) / departure.over));
  const gone = eased(departure.at) - (departure.back === undefined ? 0 : eased(departure.at + departure.over + departure.back));
  return 1 - (1 - departure.to) * gone;
}
