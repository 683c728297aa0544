import { Metrics as PowertoolsMetricsClient, MetricUnit as PowertoolsUnit } from '@aws-lambda-powertools/metrics';
import type { MetricUnit, Metrics } from '../../ports/metrics.js';

export const METRICS_NAMESPACE = 'nodescaler';

const UNITS: Record<MetricUnit, (typeof PowertoolsUnit)[keyof typeof PowertoolsUnit]> = {
  Count: PowertoolsUnit.Count,
  Percent: PowertoolsUnit.Percent,
  Milliseconds: PowertoolsUnit.Milliseconds,
  Seconds: PowertoolsUnit.Seconds,
  None: PowertoolsUnit.NoUnit,
};

/**
 * `Metrics` as CloudWatch embedded metric format (EMF) log lines, through
 * Powertools, in the `nodescaler` namespace with a `service` dimension.
 *
 * Points are kept until `flush()`, which a handler calls once at the end of
 * every invocation (also when it fails). Points with the same dimensions go
 * out together; each distinct set of dimensions is its own EMF document,
 * since EMF applies a document's dimensions to all of its metrics.
 *
 * Never throws: a point that cannot be recorded (bad name, a value that is
 * not finite, a unit that differs from the first one of that name, too many
 * dimensions) is dropped and passed to `onError`, if given.
 */
export class PowertoolsMetrics implements Metrics {
  /** The instance for points without dimensions; exposed for cold-start metrics and the like. */
  readonly powertools: PowertoolsMetricsClient;
  private readonly byDimensions = new Map<string, PowertoolsMetricsClient>();

  constructor(
    private readonly serviceName: string,
    private readonly onError: (error: unknown) => void = () => {},
  ) {
    this.powertools = new PowertoolsMetricsClient({ namespace: METRICS_NAMESPACE, serviceName });
  }

  record(name: string, value: number, unit: MetricUnit, dimensions: Record<string, string> = {}): void {
    try {
      // EMF has no NaN or Infinity: JSON would turn them into null and spoil the document.
      if (!Number.isFinite(value)) throw new RangeError(`metric ${name}: value must be a finite number, got ${value}`);
      this.instanceFor(dimensions).addMetric(name, UNITS[unit] ?? PowertoolsUnit.NoUnit, value);
    } catch (error) {
      this.report(error);
    }
  }

  /** Writes every point kept so far and forgets them. Never throws. */
  flush(): void {
    for (const metrics of [this.powertools, ...this.byDimensions.values()]) {
      try {
        if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
      } catch (error) {
        this.report(error);
      }
    }
    // Dimension values (pools, nodes) come and go: keep no instance past an invocation.
    this.byDimensions.clear();
  }

  private instanceFor(dimensions: Record<string, string>): PowertoolsMetricsClient {
    const keys = Object.keys(dimensions).sort();
    if (keys.length === 0) return this.powertools;
    const signature = JSON.stringify(keys.map((key) => [key, dimensions[key]]));
    let metrics = this.byDimensions.get(signature);
    if (metrics === undefined) {
      metrics = new PowertoolsMetricsClient({
        namespace: METRICS_NAMESPACE,
        serviceName: this.serviceName,
        defaultDimensions: dimensions,
      });
      this.byDimensions.set(signature, metrics);
    }
    return metrics;
  }

  private report(error: unknown): void {
    try {
      this.onError(error);
    } catch {
      // an error reporter must not make record() throw either
    }
  }
}
