/** Measures kept by the object they were measured from (lib/domain/memo.ts). */
import { describe, expect, it } from 'vitest';
import { measuredOnce, type MeasureCache } from '../../lib/domain/memo.js';

describe('measuredOnce', () => {
  it('works a measure out once per owner and key, undefined results included', () => {
    const cache: MeasureCache<object, number | undefined> = new WeakMap();
    const owner = {};
    const other = {};
    let computed = 0;
    const count = (value: number | undefined) => () => {
      computed += 1;
      return value;
    };
    expect(measuredOnce(cache, owner, 'a', count(1))).toBe(1);
    expect(measuredOnce(cache, owner, 'a', count(2))).toBe(1);
    expect(measuredOnce(cache, owner, 'b', count(undefined))).toBeUndefined();
    expect(measuredOnce(cache, owner, 'b', count(3))).toBeUndefined();
    expect(measuredOnce(cache, other, 'a', count(4))).toBe(4);
    expect(computed).toBe(3);
  });
});
