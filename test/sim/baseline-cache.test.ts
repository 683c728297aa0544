import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BaselineCache, baselineKey, type BaselineReplay, baselineKeyParts, runBaselines, sourceVersion, traceHash } from '../../lib/sim/baseline-cache.js';
import { BASELINES } from '../../lib/sim/baselines.js';
import { parseTrace, type Trace } from '../../lib/sim/trace.js';

function trace(values: number[]): Trace {
  const rows = ['t,gears', ...values.map((v, i) => `${i * 300},${v}`)];
  return parseTrace(rows.join('\n'), 'tiny.csv', { stepSeconds: 300, peakGears: Math.max(...values) });
}

const TINY = trace([300, 500, 800, 400, 300, 300, 600, 300]);
const REPLAY: BaselineReplay = { gearsPerNode: 100, bootDelaySeconds: 120, seed: 42 };
const WINDOW = { days: 7, peakGears: 800 };
const keyOf = (t = TINY, replay = REPLAY, window = WINDOW, source = 'v1') => baselineKey(baselineKeyParts('tiny:gears', t, replay, window, source));

describe('baseline cache key', () => {
  it('is the same for the same inputs, and readable by the trace name', () => {
    expect(keyOf()).toBe(keyOf(trace([300, 500, 800, 400, 300, 300, 600, 300])));
    expect(keyOf()).toMatch(/^tiny_gears-[0-9a-f]{24}$/);
  });

  it('changes with everything the baselines depend on', () => {
    const keys = [
      keyOf(),
      keyOf(trace([300, 500, 800, 400, 300, 300, 600, 301])), // one step of demand
      keyOf(TINY, { ...REPLAY, gearsPerNode: 50 }),
      keyOf(TINY, { ...REPLAY, bootDelaySeconds: 60 }),
      keyOf(TINY, { ...REPLAY, seed: 43 }),
      keyOf(TINY, REPLAY, { ...WINDOW, days: 3 }),
      keyOf(TINY, REPLAY, { ...WINDOW, peakGears: 2000 }),
      keyOf(TINY, REPLAY, WINDOW, 'v2'), // the baselines' source
      keyOf({ ...TINY, apps: { idleShare: 0, sizeExponent: 2.5 } }), // the applications' mix
      keyOf({ ...TINY, apps: { idleShare: 0, sizeExponent: 5 } }),
      keyOf(TINY, { ...REPLAY, placement: 'broker' }), // where the broker puts new gears
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('keeps the key of the least-loaded placement, named or not, so its cached results stay valid', () => {
    expect(keyOf(TINY, { ...REPLAY, placement: 'least-loaded' })).toBe(keyOf());
  });

  it('hashes the demand the replay sees, not where it came from', () => {
    expect(traceHash(TINY)).toBe(traceHash({ ...TINY, source: 'elsewhere.csv' }));
    expect(traceHash(TINY)).not.toBe(traceHash({ ...TINY, steps: TINY.steps.slice(0, -1), durationSeconds: TINY.durationSeconds - 300 }));
  });

  it('keeps the hash of a trace without a mix as it was, so the default mix keeps its cached results', () => {
    expect(traceHash({ ...TINY, apps: undefined })).toBe(traceHash(TINY));
    expect(traceHash({ ...TINY, apps: { idleShare: 0.3, sizeExponent: 2.5 } })).not.toBe(traceHash(TINY));
  });
});

describe('sourceVersion', () => {
  it("follows the entry's value imports (not its type-only ones) and changes when one of them does", () => {
    const dir = mkdtempSync(join(tmpdir(), 'nodescaler-source-'));
    mkdirSync(join(dir, 'sub'));
    const write = (file: string, text: string) => writeFileSync(join(dir, file), text);
    write('entry.ts', "import { a } from './sub/a.js';\nimport type { B } from './b.js';\nexport const x = a;\n");
    write('sub/a.ts', "export { c as a } from '../c.js';\n");
    write('c.ts', 'export const c = 1;\n');
    write('b.ts', 'export type B = number;\n');
    const before = sourceVersion(join(dir, 'entry.ts'));
    write('b.ts', 'export type B = string;\n');
    expect(sourceVersion(join(dir, 'entry.ts'))).toBe(before);
    write('c.ts', 'export const c = 2;\n'); // two imports away
    expect(sourceVersion(join(dir, 'entry.ts'))).not.toBe(before);
  });

  it('does not change for a comment or a type in a module it follows, only for code', () => {
    const dir = mkdtempSync(join(tmpdir(), 'nodescaler-source-'));
    const write = (file: string, text: string) => writeFileSync(join(dir, file), text);
    write('entry.ts', "import { figure } from './results.js';\nexport const x = figure;\n");
    write('results.ts', 'export interface Result { nodeHours: number }\nexport const figure = 1;\n');
    const before = sourceVersion(join(dir, 'entry.ts'));
    write('results.ts', '/** Why. */\nexport interface Result { nodeHours: number; closes?: number }\n// why\nexport const figure = 1;\n');
    expect(sourceVersion(join(dir, 'entry.ts'))).toBe(before);
    write('results.ts', 'export interface Result { nodeHours: number }\nexport const figure = 2;\n');
    expect(sourceVersion(join(dir, 'entry.ts'))).not.toBe(before);
  });

  it("covers the real baselines' module", () => {
    expect(sourceVersion()).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('BaselineCache', () => {
  it('computes once, then reads the same figures from disk (without the chart series)', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'nodescaler-cache-')), 'baselines');
    const parts = baselineKeyParts('tiny:gears', TINY, REPLAY, WINDOW);
    let computed = 0;
    const compute = () => {
      computed++;
      return runBaselines(TINY, REPLAY);
    };
    const first = new BaselineCache(dir).get(parts, compute);
    expect(first.cached).toBe(false);
    expect(first.results.map((r) => r.policy)).toEqual([...BASELINES]);
    const again = new BaselineCache(dir);
    const second = again.get(parts, compute);
    expect(computed).toBe(1);
    expect(second.cached).toBe(true);
    expect([again.hits, again.misses]).toEqual([1, 0]);
    expect(second.results.map((r) => [r.policy, r.nodeHours, r.gearMoves, r.unplacedGearMinutes])).toEqual(first.results.map((r) => [r.policy, r.nodeHours, r.gearMoves, r.unplacedGearMinutes]));
    expect(second.results.every((r) => r.series.length === 0)).toBe(true);
    // Another seed is another entry.
    expect(again.get(baselineKeyParts('tiny:gears', TINY, { ...REPLAY, seed: 7 }, WINDOW), compute).cached).toBe(false);
    expect(computed).toBe(2);
    expect(readdirSync(dir).filter((f) => f.endsWith('.json'))).toHaveLength(2);
  });

  it('treats a damaged entry as a miss and writes it again', () => {
    const dir = mkdtempSync(join(tmpdir(), 'nodescaler-cache-'));
    const parts = baselineKeyParts('tiny:gears', TINY, REPLAY, WINDOW);
    writeFileSync(join(dir, `${baselineKey(parts)}.json`), '{"key": "tiny');
    const cache = new BaselineCache(dir);
    expect(cache.get(parts, () => runBaselines(TINY, REPLAY)).cached).toBe(false);
    expect(new BaselineCache(dir).get(parts, () => []).cached).toBe(true);
  });

  it('keeps nothing without a directory', () => {
    const cache = new BaselineCache(undefined);
    const parts = baselineKeyParts('tiny:gears', TINY, REPLAY, WINDOW);
    cache.get(parts, () => runBaselines(TINY, REPLAY));
    expect(cache.get(parts, () => runBaselines(TINY, REPLAY)).cached).toBe(false);
    expect(cache.misses).toBe(2);
  });
});
