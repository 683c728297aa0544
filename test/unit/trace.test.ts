import { describe, expect, it } from 'vitest';
import { demandAt, parseTrace } from '../../lib/sim/trace.js';
import { ValidationError } from '../../lib/errors.js';

const options = { stepSeconds: 60, peakGears: 2000 };

describe('workload traces', () => {
  it('reads a seconds time column and scales demand so its peak is peakGears', () => {
    const trace = parseTrace('timestamp,cpu_usage,assigned_mem\n0,10,5\n300,20,6\n600,15,7\n', 'x.csv', options);
    expect(trace).toMatchObject({ timeColumn: 'timestamp', demandColumn: 'cpu_usage', stepSeconds: 300, durationSeconds: 900 });
    expect(trace.steps).toEqual([
      { at: 0, demand: 1000 },
      { at: 300, demand: 2000 },
      { at: 600, demand: 1500 },
    ]);
  });

  it('reads date-times, another demand column, and rows without a time column', () => {
    const dated = parseTrace('time,a,b\n2026-01-01T00:00:00Z,1,4\n2026-01-01T00:10:00Z,1,8\n', 'y.csv', { ...options, demandColumn: 'b' });
    expect(dated.steps).toEqual([
      { at: 0, demand: 1000 },
      { at: 600, demand: 2000 },
    ]);
    // The report's axis shows real dates from here; a seconds column has none.
    expect(dated.startsAt).toBe('2026-01-01T00:00:00.000Z');
    expect(parseTrace('timestamp,a\n0,1\n300,2\n', 's.csv', options).startsAt).toBeUndefined();
    const plain = parseTrace('load\n1\n2\n4\n', 'z.csv', { stepSeconds: 120, peakGears: 400 });
    expect(plain.steps.map((s) => s.at)).toEqual([0, 120, 240]);
    expect(plain.steps.map((s) => s.demand)).toEqual([100, 200, 400]);
    expect(demandAt(plain, 130).demand).toBe(200);
  });

  it('names the column or row that is wrong', () => {
    expect(() => parseTrace('t,load\n0,1\n', 'a.csv', { ...options, demandColumn: 'cpu' })).toThrow(/--demand-column.*cpu/s);
    const error = (() => {
      try {
        parseTrace('t,load\n0,1\n60,abc\n', 'a.csv', options);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe('row 3.load');
  });
});
