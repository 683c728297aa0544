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

  it('counts a subtree frozen throughout once, and never a frozen record over a part that changed', () => {
    const note = { text: 'short' };
    const samples = Object.freeze([Object.freeze([28_000_000, 120]), Object.freeze([28_000_010, 95])]);
    const pool = Object.freeze({ note, samples });
    expect(jsonBytes(pool)).toBe(stringified(pool));
    // A frozen record whose child is not frozen can still change: its size is not kept.
    note.text = 'a good deal longer than it was';
    expect(jsonBytes(pool)).toBe(stringified(pool));
    // The next version shares the frozen samples, counted from what was kept.
    const next = Object.freeze({ samples, version: 2 });
    expect(jsonBytes(next)).toBe(stringified(next));
    expect(jsonBytes(Object.freeze([samples, samples]))).toBe(stringified([samples, samples]));
  });

  it('agrees with JSON.stringify on generated values frozen throughout, counted again as parts of others', () => {
    const leaf = fc.oneof(fc.integer(), fc.double(), fc.string(), fc.boolean(), fc.constant(null), fc.constant(undefined));
    const value = fc.letrec((tie) => ({
      tree: fc.oneof({ depthSize: 'small' }, leaf, tie('array'), tie('record')),
      array: fc.array(tie('tree')),
      record: fc.dictionary(fc.string(), tie('tree')),
    })).tree;
    const deepFreeze = (v: unknown): unknown => {
      if (v !== null && typeof v === 'object') {
        for (const child of Object.values(v)) deepFreeze(child);
        Object.freeze(v);
      }
      return v;
    };
    fc.assert(
      fc.property(value, value, (a, b) => {
        const frozen = deepFreeze([a, b]) as unknown[];
        expect(jsonBytes(frozen)).toBe(stringified(frozen));
        const again = Object.freeze({ first: frozen[0], both: frozen, second: frozen[1] });
        expect(jsonBytes(again)).toBe(stringified(again));
      }),
      { numRuns: 1000 },
    );
  });

  it('leaves a cycle to JSON.stringify, which names it', () => {
    const looped: Record<string, unknown> = { a: 1 };
    looped.self = looped;
    expect(() => jsonBytes(looped)).toThrow(/circular/i);
  });
});
