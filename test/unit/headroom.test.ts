import { describe, expect, it } from 'vitest';
import { decidePool, withPoolHeadroom } from '../../lib/domain/evaluate.js';
import { explainPool } from '../../lib/domain/explain.js';
import { BUCKET_MINUTES } from '../../lib/domain/forecast.js';
import { PAD_BUCKETS, bucketMaxima, measurePoolRises, measureSeries, observedHeadroom, poolHeadroom, type BucketSeries } from '../../lib/domain/headroom.js';
import type { DemandSample } from '../../lib/domain/model.js';
import { seededRandom } from '../../lib/sim/random.js';
import { config, evaluation, nodes, pool } from '../support/builders.js';
import { fiveMinuteHistory } from '../support/decisions.js';

const BOOT = 2 * 60_000;
const buckets = fiveMinuteHistory;
// 6 hours of rises, whatever the bucket size
const options = { bootMs: BOOT, quantile: 0.95, minSamples: (6 * 60) / BUCKET_MINUTES, fallback: 30 };

describe('observedHeadroom', () => {
  it('keeps little above a flat pool: its demand never rises above the hour before', () => {
    expect(observedHeadroom(buckets(12, () => 2000), options)).toMatchObject({ gears: 0, source: 'observed' });
    // +-5 gears of noise: what it rises above the last hour's highest is at most a few gears
    expect(observedHeadroom(buckets(12, (i) => 1995 + ((i * 7) % 11)), options).gears).toBeLessThanOrEqual(10);
  });

  it('keeps what the spikes took above a spiky pool: the rise above the level of the hour before', () => {
    // 400 gears, and a 300-gear jump every 90 minutes for 15 minutes: 1 in 6 buckets rises by 300
    const spiky = buckets(12, (i) => (i % 18 === 17 || i % 18 === 0 ? 700 : 400));
    expect(observedHeadroom(spiky, options)).toMatchObject({ gears: 300, source: 'observed' });
  });

  it('measures the same pool when one sample lies ages before the rest (a clock that jumped), without sizing by the gap', () => {
    const spiky = buckets(12, (i) => (i % 18 === 17 || i % 18 === 0 ? 700 : 400));
    const jumped: typeof spiky = [[spiky[0]![0] - 1e12, 9_000], ...spiky];
    const { gears, forScaleUp, samples } = observedHeadroom(spiky, options);
    expect(observedHeadroom(jumped, options)).toMatchObject({ gears, forScaleUp, samples, source: 'observed' });
    expect(gears).toBe(300);
  });

  it('counts a rise over as many buckets as a boot delay spans', () => {
    // a ramp of +20 per 5 minutes after a flat hour: a 2m boot sees one bucket's rise, a 12m boot ceil(12 / bucket) buckets'
    const ramp = buckets(12, (i) => 1000 + (i >= 12 ? (i - 11) * 20 : 0));
    const perBucket = (20 * BUCKET_MINUTES) / 5;
    expect(observedHeadroom(ramp, options).gears).toBe(perBucket);
    expect(observedHeadroom(ramp, { ...options, bootMs: 12 * 60_000 }).gears).toBe(Math.ceil(12 / BUCKET_MINUTES) * perBucket);
  });

  it('keeps headroomGears until the history covers minHistory, and when turned off', () => {
    expect(observedHeadroom(buckets(3, () => 2000), options)).toMatchObject({ gears: 30, source: 'configured' });
    expect(observedHeadroom(undefined, options)).toMatchObject({ gears: 30, source: 'configured', samples: 0 });
    const off = config({ scaleUp: { headroomGears: 30, observedHeadroom: { enabled: false } } });
    expect(poolHeadroom(off, buckets(12, () => 2000), BOOT)).toEqual({ gears: 30, forScaleUp: 30, source: 'configured', samples: 0 });
    const on = config({ scaleUp: { headroomGears: 30 } });
    expect(poolHeadroom(on, buckets(12, () => 2000), BOOT)).toMatchObject({ gears: 0, source: 'observed' });
  });
});

describe('observedHeadroom with an elevation window: the rises from a standing like now\'s', () => {
  const windowed = { ...options, elevationMinutes: 240 };
  // 400 gears, and a job that lifts it to 700 for 15 minutes every 90 minutes (samples 17 and 0 of every 18)
  const jobs = (hours: number, shift = 0) => buckets(hours, (i) => ((i + shift) % 18 === 17 || (i + shift) % 18 === 0 ? 700 : 400));

  it('keeps what the jobs take between jobs, as without the window', () => {
    const between = jobs(12, 5); // the last sample is 4 past a job
    expect(observedHeadroom(between, options).gears).toBe(300);
    expect(observedHeadroom(between, windowed)).toMatchObject({ gears: 300, forScaleUp: 300 });
  });

  it('buys little on top of a job, and keeps what the jobs take: demand standing at the jobs\' height rose by nothing the last times it stood there', () => {
    const during = jobs(12); // the last sample is a job's first
    expect(observedHeadroom(during, options)).toMatchObject({ gears: 300, forScaleUp: 300 });
    expect(observedHeadroom(during, windowed)).toMatchObject({ gears: 300, forScaleUp: 0 });
    // The standing may come from this evaluation's demand rather than the history's last sample.
    expect(observedHeadroom(jobs(12, 5), { ...windowed, demandNow: 700 })).toMatchObject({ gears: 300, forScaleUp: 0 });
    expect(observedHeadroom(jobs(12), { ...windowed, demandNow: 400 })).toMatchObject({ gears: 300, forScaleUp: 300 });
  });

  it('never keeps more than without the window, whatever the history', () => {
    const random = seededRandom(7);
    for (let run = 0; run < 40; run++) {
      const level = 200 + random() * 800;
      const history = buckets(12 + Math.floor(random() * 36), () => Math.round(level * (1 + (random() < 0.1 ? random() * 2 : random() * 0.2))));
      const { gears, forScaleUp } = observedHeadroom(history, windowed);
      expect(gears).toBe(observedHeadroom(history, options).gears);
      expect(forScaleUp).toBeLessThanOrEqual(gears);
    }
  });

  it('is on by default (4 hours) and turned off by scaleUp.observedHeadroom.elevationWindow 0m', () => {
    const during = jobs(12);
    expect(poolHeadroom(config({ scaleUp: { headroomGears: 30 } }), during, BOOT).forScaleUp).toBe(0);
    expect(poolHeadroom(config({ scaleUp: { headroomGears: 30, observedHeadroom: { elevationWindow: '0m' } } }), during, BOOT).forScaleUp).toBe(300);
  });
});

describe('observedHeadroom after a fall: no more capacity below the newest bucket\'s high than at that high', () => {
  const windowed = { ...options, elevationMinutes: 240, minSamples: (3 * 60) / BUCKET_MINUTES };
  // Nine hours at 400 with a blip to 700 every 70 minutes, each after a dip to 390; then a job at 700 for the last 3
  // hours, long enough that 700 is the usual level: every blip rose 300 from a standing just below it.
  const bucketOf = (i: number) => Math.floor((i * 5) / BUCKET_MINUTES);
  const atBucket = (b: number) => (b >= (9 * 60) / BUCKET_MINUTES ? 700 : b % 7 === 6 ? 700 : b % 7 === 5 ? 390 : 400);
  const jobTop = buckets(12, (i) => atBucket(bucketOf(i)));
  const nowMinute = jobTop.at(-1)![0] + 1;

  it('keeps above demand falling from the job\'s top only the fall and what the top kept: the job\'s end buys nothing', () => {
    expect(observedHeadroom(jobTop, { ...windowed, demandNow: 700 })).toMatchObject({ gears: 300, forScaleUp: 0 });
    for (const fallenTo of [650, 600, 500, 450]) {
      expect(observedHeadroom(jobTop, { ...windowed, demandNow: fallenTo, nowMinute }).forScaleUp).toBe(700 - fallenTo);
    }
    // Fallen by more than the headroom, the full headroom on top of what is left: a rise from there is the blips' 300.
    expect(observedHeadroom(jobTop, { ...windowed, demandNow: 350 }).forScaleUp).toBe(300);
  });

  it('reads the newest bucket only: a high before it, or before a gap in the history, bounds nothing', () => {
    // The job over for the last 20 minutes, at 450: its top, two buckets back, may have been a level's noise.
    const over = buckets(12, (i) => (bucketOf(i) >= (12 * 60 - 20) / BUCKET_MINUTES ? 450 : atBucket(bucketOf(i))));
    expect(observedHeadroom(over, { ...windowed, demandNow: 450 }).forScaleUp).toBe(300);
    // The history stopped at the job's top an hour ago (the evaluator was down): the top is no standing of now's.
    expect(observedHeadroom(jobTop, { ...windowed, demandNow: 450, nowMinute: nowMinute + 60 }).forScaleUp).toBe(300);
  });

  it('never asks more above a fall than the newest bucket\'s high asked above it, whatever the history', () => {
    const random = seededRandom(11);
    for (let run = 0; run < 40; run++) {
      const level = 200 + random() * 800;
      const history = buckets(12 + Math.floor(random() * 36), () => Math.round(level * (1 + (random() < 0.1 ? random() * 2 : random() * 0.2))));
      const newest = bucketOf(history.length - 1);
      const high = Math.max(...history.filter((_, i) => bucketOf(i) === newest).map(([, gears]) => gears));
      const atHigh = observedHeadroom(history, { ...windowed, demandNow: high }).forScaleUp;
      const fallenTo = Math.round(high * random());
      const { gears, forScaleUp } = observedHeadroom(history, { ...windowed, demandNow: fallenTo });
      expect(fallenTo + forScaleUp).toBeLessThanOrEqual(high + atHigh);
      expect(forScaleUp).toBeLessThanOrEqual(gears);
    }
  });

  it('decidePool: a pool emptying after a job buys no node, and explain says why', () => {
    const cfg = config({ scaleUp: { threshold: 0.98, target: 0.96, headroomGears: 30, observedHeadroom: { minHistory: '3h' }, forecast: { enabled: false } } });
    // 8 nodes held the job's 700 gears; 100 have left: 200 free slots, short of the blips' 300, above the 100 fallen.
    const input = evaluation({ config: cfg, nodes: nodes(8, 75), pool: pool({ demandHistory: jobTop }) });
    expect(decidePool(input).decision.kind).not.toBe('scale-up');
    const headroomCheck = explainPool(input).scaleUp.find((check) => check.name === 'trigger');
    expect(headroomCheck?.detail).toContain('200 free slots >= headroomGears 100');
    // What the pool keeps above what is left is still the blips' rise: no drain below it.
    expect(withPoolHeadroom(input).config.scaleUp.headroomGears).toBe(300);
  });
});

describe('decidePool: the observed headroom replaces headroomGears', () => {
  // Every rise counts here (no elevation window): the window's own cases are below.
  const cfg = config({ scaleUp: { threshold: 0.98, target: 0.96, headroomGears: 30, observedHeadroom: { elevationWindow: '0m' }, forecast: { enabled: false } } });
  const nearlyFull = nodes(10, 98); // 980 of 1,000 slots: 20 free, below 30 and above 0

  it('adds no node to a flat pool 20 slots short of a fixed 30, and one to a spiky pool', () => {
    const flat = decidePool(evaluation({ config: cfg, nodes: nearlyFull, pool: pool({ demandHistory: buckets(12, () => 980) }) }));
    expect(flat.decision.kind).toBe('no-action');
    const spiky = decidePool(evaluation({ config: cfg, nodes: nearlyFull, pool: pool({ demandHistory: buckets(12, (i) => (i % 18 === 17 || i % 18 === 0 ? 980 : 680)) }) }));
    expect(spiky.decision.kind).toBe('scale-up');
    expect(spiky.decision.reason).toContain('20 free slots < headroomGears 300');
    const young = decidePool(evaluation({ config: cfg, nodes: nearlyFull, pool: pool({ demandHistory: buckets(2, () => 980) }) }));
    expect(young.decision.reason).toContain('20 free slots < headroomGears 30;');
  });

  it('with an elevation window, reads the standing from this evaluation: a job\'s first minute buys no job\'s rise on top of it', () => {
    // The history stands at 400 between jobs that lift it to 700; the nodes already hold the next job's 750 gears.
    const history = buckets(12, (i) => ((i + 5) % 18 === 17 || (i + 5) % 18 === 0 ? 700 : 400));
    const inJob = nodes(10, 75);
    const without = decidePool(evaluation({ config: cfg, nodes: inJob, pool: pool({ demandHistory: history }) }));
    expect(without.decision.kind).toBe('scale-up');
    expect(without.decision.reason).toContain('250 free slots < headroomGears 300');
    const windowed = config({ scaleUp: { threshold: 0.98, target: 0.96, headroomGears: 30, observedHeadroom: { elevationWindow: '4h' }, forecast: { enabled: false } } });
    const within = decidePool(evaluation({ config: windowed, nodes: inJob, pool: pool({ demandHistory: history }) }));
    expect(within.decision.kind).toBe('no-action');
    // What the pool keeps (the fit check, attrition, the pays-off check) is still the jobs' rise: no drain on top of a job.
    expect(withPoolHeadroom(evaluation({ config: windowed, nodes: inJob, pool: pool({ demandHistory: history }) })).config.scaleUp.headroomGears).toBe(300);
    // Between jobs, standing at 400, the same history keeps the jobs' rise free: 100 free slots are short of it.
    const between = decidePool(evaluation({ config: windowed, nodes: nodes(5, 80), pool: pool({ demandHistory: history }) }));
    expect(between.decision.kind).toBe('scale-up');
    expect(between.decision.reason).toContain('100 free slots < headroomGears 300');
  });
});

describe('measurePoolRises: measured once while the buckets stay as they were', () => {
  /** The bucket series of `history` worked out with a map, as a new object: no measure of it is kept anywhere. */
  const seriesByMap = (history: readonly DemandSample[], first: number, length: number): BucketSeries => {
    const highest = new Map<number, number>();
    for (const [minute, gears] of history) {
      const bucket = Math.floor(minute / BUCKET_MINUTES);
      highest.set(bucket, Math.max(highest.get(bucket) ?? 0, gears));
    }
    const values = new Float64Array(length).fill(Number.NaN);
    for (const [bucket, gears] of highest) values[bucket - first] = gears;
    return { first, values, keys: [...highest.keys()].sort((a, b) => a - b) };
  };

  it('answers every history as a measure afresh would, and the same object for a history the same in content', () => {
    const random = seededRandom(11);
    let history = buckets(30, () => 400 + Math.round(random() * 300));
    const measures = new Set<object>();
    const contents = new Set<string>();
    for (let minute = 0; minute < 240; minute++) {
      const newest = history.at(-1)![0];
      // A new minute's sample (now and then a higher one in the same bucket), the oldest dropped now and then.
      const next: DemandSample = random() < 0.3 ? [newest, history.at(-1)![1] + Math.round(random() * 50)] : [newest + 1, 400 + Math.round(random() * 300)];
      history = [...history.slice(random() < 0.1 ? 1 : 0, next[0] === newest ? -1 : undefined), next];
      const measured = measurePoolRises(history, BOOT, 240);
      measures.add(measured);
      const series = bucketMaxima(history);
      expect(series).toBe(measured.buckets);
      expect(series.first).toBe(Math.floor(history[0]![0] / BUCKET_MINUTES) - PAD_BUCKETS);
      const fresh = seriesByMap(history, series.first, series.values.length);
      expect(series.values).toEqual(fresh.values);
      contents.add(`${series.first}:${Array.from(fresh.values).join()}`);
      expect(series.keys).toEqual(fresh.keys);
      expect(measured).toEqual(measureSeries(fresh, BOOT, 240));
      // A copy of the history, sample by sample, is the same content: the same measure, not measured again.
      expect(measurePoolRises(history.map(([m, g]) => [m, g] as DemandSample), BOOT, 240)).toBe(measured);
      // Other settings are measured apart.
      expect(measurePoolRises(history, BOOT, 0)).toEqual(measureSeries(fresh, BOOT, 0));
    }
    // One measure for each series that differed: measured once per change, none handed back stale (above).
    expect(measures.size).toBe(contents.size);
    expect(contents.size).toBeGreaterThan(20);
  });
});
