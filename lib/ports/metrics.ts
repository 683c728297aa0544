export type MetricUnit = 'Count' | 'Percent' | 'Milliseconds' | 'Seconds' | 'None';

/**
 * Operational metrics (CloudWatch EMF when deployed). Never throws: a metric
 * that cannot be recorded must not fail the action it describes.
 */
export interface Metrics {
  record(name: string, value: number, unit: MetricUnit, dimensions?: Record<string, string>): void;
}
