import { describe, expect, it } from 'vitest';
import { AlarmWatch, pagesLine } from '../../lib/sim/alarms.js';
import type { Metrics } from '../../lib/ports/metrics.js';

describe('pages a replay would have sent', () => {
  it('counts a run of 5-minute periods in alarm as one page, per pool, and passes every metric on', () => {
    let now = Date.parse('2026-03-01T00:00:00.000Z');
    const passed: string[] = [];
    const inner: Metrics = { record: (name) => void passed.push(name) };
    const watch = new AlarmWatch({ now: () => new Date(now) });
    const metrics = watch.watch(inner);
    const at = (minute: number) => (now = Date.parse('2026-03-01T00:00:00.000Z') + minute * 60_000);
    // Pool a: periods 0 and 1 (one page), then period 4 (a second); pool b: period 1 (its own page).
    for (const minute of [1, 2, 7, 21]) {
      at(minute);
      metrics.record('DrainsAborted', 1, 'Count', { pool: 'a' });
    }
    at(6);
    metrics.record('DrainsAborted', 1, 'Count', { pool: 'b' });
    // Not paging: other metrics, and a point of 0.
    metrics.record('DrainsOutgrown', 1, 'Count', { pool: 'a' });
    metrics.record('GearsLost', 0, 'Count', { pool: 'a' });
    expect(watch.pages()).toEqual({ DrainsAborted: 3, CapacityExhausted: 0, GearsLost: 0, ProvisionTimeouts: 0 });
    expect(passed).toHaveLength(7);
    expect(pagesLine(watch.pages())).toBe('pages: DrainsAborted 3, CapacityExhausted 0, GearsLost 0, ProvisionTimeouts 0 (alarms from OK to ALARM)');
  });
});
