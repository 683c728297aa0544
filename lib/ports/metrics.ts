export type MetricUnit = 'Count' | 'Percent' | 'Milliseconds' | 'Seconds' | 'None';

/**
 * Operational metrics (CloudWatch EMF when deployed). Never throws: a metric
 * that cannot be recorded must not fail the action it describes.
 */
export interface Metrics {
  record(name: string, value: number, unit: MetricUnit, dimensions?: Record<string, string>): void;
}

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
