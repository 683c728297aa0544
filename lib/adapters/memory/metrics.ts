import type { MetricUnit, Metrics } from '../../ports/metrics.js';

/** Keeps everything in memory; for tests and the local runtime's summary. */
export class InMemoryMetrics implements Metrics {
  readonly points: Array<{ name: string; value: number; unit: MetricUnit; dimensions: Record<string, string> }> = [];

  record(name: string, value: number, unit: MetricUnit, dimensions: Record<string, string> = {}): void {
    this.points.push({ name, value, unit, dimensions });
  }

  sum(name: string): number {
    return this.points.filter((p) => p.name === name).reduce((total, p) => total + p.value, 0);
  }
}
