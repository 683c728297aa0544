import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonBytes } from '../../lib/sim/json-bytes.js';

const stringified = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? '');

describe('jsonBytes: the bytes JSON.stringify would write, counted without writing them', () => {
  it('agrees with JSON.stringify on generated values of every kind', () => {
    const leaf = fc.oneof(
      fc.integer(),
      fc.double(),
      fc.constantFrom(0, -0, 1e15, -1e15, 999_999_999_999_999, 1e21, 1.5e-7, Number.NaN, Infinity, -Infinity, Number.MAX_SAFE_INTEGER),
      fc.string(),
      fc.string({ unit: 'grapheme' }),
      fc.string({ unit: 'binary' }),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.date({ noInvalidDate: true }),
    );
    const value = fc.letrec((tie) => ({
      tree: fc.oneof({ depthSize: 'small' }, leaf, tie('array'), tie('record')),
      array: fc.array(tie('tree')),
      record: fc.dictionary(fc.string(), tie('tree')),
    })).tree;
    fc.assert(
      fc.property(value, (generated) => {
        if (generated === undefined) return;
        expect(jsonBytes(generated)).toBe(stringified(generated));
      }),
      { numRuns: 2000 },
    );
  });

  it('counts a demand history, a record with dropped fields and escaped text exactly', () => {
    const history = Array.from({ length: 200 }, (_, i) => Object.freeze([28_000_000 + 5 * i, (i * 37) % 1_000]));
    const pool = Object.freeze({ pool: 'sim/small', version: 7, demandHistory: Object.freeze(history), lowSince: undefined, note: 'née "quoted" \\ \n' });
    expect(jsonBytes(pool)).toBe(stringified(pool));
    expect(jsonBytes([undefined, () => 1, Symbol('s')])).toBe(stringified([undefined, () => 1, Symbol('s')]));
    expect(jsonBytes({ at: new Date(0), n: new Number(3), m: new Map([[1, 2]]) })).toBe(stringified({ at: new Date(0), n: new Number(3), m: new Map([[1, 2]]) }));
  });

  it('leaves a cycle to JSON.stringify, which names it', () => {
    const looped: Record<string, unknown> = { a: 1 };
    looped.self = looped;
    expect(() => jsonBytes(looped)).toThrow(/circular/i);
  });
});
