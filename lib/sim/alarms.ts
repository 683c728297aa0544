/**
 * The pages a replay would have sent: infra/monitoring.yml alarms on any
 * point above 0 of these metrics in a 5-minute period, per pool, and an
 * alarm pages when it goes from OK to ALARM. A run of periods in alarm is one
 * page. Counted from the metrics the functions record, so the figure follows
 * the code (a stop that is no failure records no DrainsAborted).
 */
import type { Metrics } from '../ports/metrics.js';

/** The metrics with an alarm of threshold 0 per pool (infra/monitoring.yml). */
export const PAGING_METRICS = ['DrainsAborted', 'CapacityExhausted', 'GearsLost', 'ProvisionTimeouts'] as const;
const PERIOD_MS = 300_000;

export class AlarmWatch {
  /** `metric pool` -> the 5-minute periods with a point above 0. */
  private readonly periods = new Map<string, Set<number>>();

  constructor(private readonly clock: { now(): Date }) {}

  /** `metrics`, with each paging metric's periods noted. */
  watch(metrics: Metrics): Metrics {
    return {
      record: (name, value, unit, dimensions) => {
        if (value > 0 && (PAGING_METRICS as readonly string[]).includes(name)) {
          const key = `${name} ${dimensions?.pool ?? ''}`;
          const periods = this.periods.get(key) ?? new Set<number>();
          periods.add(Math.floor(this.clock.now().getTime() / PERIOD_MS));
          this.periods.set(key, periods);
        }
        metrics.record(name, value, unit, dimensions);
      },
    };
  }

  /** Pages by metric: each pool's runs of consecutive periods in alarm, summed over pools. */
  pages(): Record<string, number> {
    const pages: Record<string, number> = Object.fromEntries(PAGING_METRICS.map((name) => [name, 0]));
    for (const [key, periods] of this.periods) {
      const name = key.slice(0, key.indexOf(' '));
      pages[name] = (pages[name] ?? 0) + runs([...periods].sort((a, b) => a - b));
    }
    return pages;
  }
}

function runs(sorted: readonly number[]): number {
  let count = 0;
  for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i]! !== sorted[i - 1]! + 1) count++;
  return count;
}

/** `pages: DrainsAborted 0, CapacityExhausted 2, GearsLost 0, ProvisionTimeouts 0 (alarms from OK to ALARM)`. */
export function pagesLine(pages: Record<string, number> | undefined): string {
  if (!pages) return 'pages: not counted';
  return `pages: ${Object.entries(pages).map(([name, count]) => `${name} ${count}`).join(', ')} (alarms from OK to ALARM)`;
}
