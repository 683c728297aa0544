import { seededRandom } from './random.js';
import type { Trace } from './trace.js';

/**
 * Seeded synthetic workload families, for a suite that does not reward tuning
 * to one real trace. Each is `days` long at 5-minute rows, scaled so its peak
 * is `peakGears`:
 * - noisy-flat: a level load with +-10 % noise every step;
 * - bursts-5x: a 20 % base with about one burst a day to 5x, rising within
 *   5 minutes and lasting 30 to 120 minutes;
 * - steady-growth: from 40 % to 100 % over the run, with a mild daily cycle;
 * - weekly-cycle: a daily cycle (night at 45 % of the afternoon) and weekends at 60 %;
 * - step-change: 40 %, a step up to 90 % at 40 % of the run, down to 55 % at 75 %.
 */
export const SYNTHETIC_FAMILIES = ['noisy-flat', 'bursts-5x', 'steady-growth', 'weekly-cycle', 'step-change'] as const;
export type SyntheticFamily = (typeof SYNTHETIC_FAMILIES)[number];

const STEP = 300;
const DAY = 86400;

export function syntheticTrace(family: SyntheticFamily, options: { days: number; peakGears: number; seed: number }): Trace {
  const random = seededRandom(options.seed);
  const steps = Math.max(1, Math.round((options.days * DAY) / STEP));
  const values: number[] = [];
  const daily = (t: number) => 0.5 - 0.5 * Math.cos((2 * Math.PI * ((t % DAY) - 4 * 3600)) / DAY);
  let burstUntil = -1;
  let burstLevel = 1;
  for (let i = 0; i < steps; i++) {
    const t = i * STEP;
    const noise = (spread: number) => 1 + spread * (2 * random() - 1);
    let value: number;
    switch (family) {
      case 'noisy-flat':
        value = 0.8 * noise(0.1);
        break;
      case 'bursts-5x': {
        if (t >= burstUntil && random() < STEP / DAY) {
          burstUntil = t + (30 + Math.floor(random() * 90)) * 60;
          burstLevel = 0.9 + 0.1 * random();
        }
        value = t < burstUntil ? burstLevel : 0.2 * noise(0.05);
        break;
      }
      case 'steady-growth':
        value = (0.4 + (0.6 * i) / steps) * (0.9 + 0.1 * daily(t)) * noise(0.02);
        break;
      case 'weekly-cycle': {
        const weekend = Math.floor(t / DAY) % 7 >= 5;
        value = (0.45 + 0.55 * daily(t)) * (weekend ? 0.6 : 1) * noise(0.03);
        break;
      }
      case 'step-change':
        value = (i < 0.4 * steps ? 0.4 : i < 0.75 * steps ? 0.9 : 0.55) * noise(0.02);
        break;
    }
    values.push(Math.max(0, value));
  }
  const peak = values.reduce((max, v) => (v > max ? v : max), 0);
  return {
    source: `synthetic:${family}`,
    demandColumn: family,
    steps: values.map((v, i) => ({ at: i * STEP, demand: Math.round((v / peak) * options.peakGears) })),
    stepSeconds: STEP,
    durationSeconds: steps * STEP,
  };
}
