/**
 * Diagnostic (not a benchmark): the kept days' spread of a shape's whole week,
 * as the pays-off check measures it (lib/domain/level-headroom.ts
 * `peakForecastSpread`: yesterday's 4-hour peak shifted by how far today stood
 * above yesterday over the hour before, in gears), beside the same with the
 * day scaled by that hour's ratio instead (a multiplicative day shift, tried
 * in session 57 for jobs whose height scales with a wandering level), and
 * the error of yesterday as daily-demand.ts follows it (scaled after a level
 * shift or a fall, never lowered otherwise). The 0.95 quantile of the error
 * both ways and, for the first two, upwards (demand above the forecast), in
 * percent.
 *
 *   npx tsx scripts/diag-spread.ts wander:25:8 mixed:57:5 …   (FAMILY:SEED:SHAPE)
 */
import { bucketMaxima, quantileOfSorted } from '../lib/domain/headroom.js';
import { BUCKET_MINUTES } from '../lib/domain/forecast.js';
import { peakForecastSpread } from '../lib/domain/level-headroom.js';
import type { DemandSample } from '../lib/domain/model.js';
import { familyShapes } from '../lib/sim/heldout-families.js';
import type { HeldoutFamily } from '../lib/sim/heldout-families.js';

const DAY = (24 * 60) / BUCKET_MINUTES;
const HOUR = 60 / BUCKET_MINUTES;
const AHEAD = 4 * HOUR;
const QUANTILE = 0.95;

const q95 = (values: number[]) => quantileOfSorted([...values].sort((a, b) => a - b), QUANTILE);
const percent = (share: number | undefined) => (share === undefined ? '   -' : `${Math.round(share * 100)}`.padStart(4));

for (const arg of process.argv.slice(2)) {
  const [family, seed, index] = arg.split(':');
  const shape = familyShapes(family as HeldoutFamily, { seed: Number(seed), count: 8, days: 7, peakGears: 2000 })[Number(index) - 1];
  if (!shape) throw new Error(`no shape ${arg}: FAMILY:SEED:SHAPE, shape 1..8`);
  const samples: DemandSample[] = shape.trace.steps.map((step) => [Math.floor(step.at / 60), step.demand]);
  const series = bucketMaxima(samples);
  const additive = peakForecastSpread(series, AHEAD, { quantile: QUANTILE, minSamples: 1 });
  const b = series.values;
  const both: number[] = [];
  const up: number[] = [];
  const upAdditive: number[] = [];
  const asForecast: number[] = [];
  for (const key of series.keys) {
    const at = key - series.first;
    if (at + AHEAD > b.length || at - DAY - HOUR < 0) continue;
    let [today, yesterday, hourToday, hourYesterday, rise] = [0, 0, 0, 0, 0];
    for (let i = 0; i < AHEAD; i++) [today, yesterday] = [Math.max(today, b[at + i]!), Math.max(yesterday, b[at + i - DAY]!)];
    for (let i = 1; i <= HOUR; i++) [hourToday, hourYesterday, rise] = [hourToday + b[at - i]!, hourYesterday + b[at - i - DAY]!, rise + b[at - i]! - b[at - i - DAY]!];
    if (![today, yesterday, hourToday, hourYesterday].every(Number.isFinite) || hourYesterday <= 0) continue;
    const scaled = yesterday * (hourToday / hourYesterday);
    const shifted = yesterday + rise / HOUR;
    if (scaled > 0) both.push(Math.abs(today / scaled - 1)), up.push(today / scaled - 1);
    if (shifted > 0) upAdditive.push(today / shifted - 1);
    // As daily-demand.ts follows yesterday: scaled after a level shift (2 hours all 20 % below) or a fall (the hour all
    // below), else raised (never lowered) by today's level now or over the hour.
    const current = b[at - 1]!;
    const then = b[at - 1 - DAY]!;
    const below = (hours: number, margin: number) => {
      let share = 0;
      for (let i = 1; i <= hours * HOUR; i++) {
        const [t, y] = [b[at - i]!, b[at - i - DAY]!];
        if (!(t < y * (1 - margin))) return undefined;
        share = Math.max(share, t / y);
      }
      return share;
    };
    const levelShift = then > 0 && below(2, 0.2) !== undefined;
    const fall = below(1, 0);
    const followed = levelShift ? yesterday * (current / then) : fall !== undefined ? yesterday * fall + Math.max(0, current - then * fall) : yesterday + Math.max(0, current - then, rise / HOUR);
    if (followed > 0) asForecast.push(Math.abs(today / followed - 1));
  }
  console.log(`${shape.name.padEnd(16)} shifted: both ${percent(additive)} up ${percent(q95(upAdditive))} | scaled: both ${percent(q95(both))} up ${percent(q95(up))} | as followed: both ${percent(q95(asForecast))}   ${shape.description}`);
}
