import type { MetricUnit, Metrics } from '../../ports/metrics.js';

export const METRICS_NAMESPACE = 'nodescaler';

/** CloudWatch's limits for one EMF document: metrics a directive names, values one metric carries, dimensions a set has. */
const MAX_METRICS = 100;
const MAX_VALUES = 100;
const MAX_DIMENSIONS = 30;
const MAX_NAME_LENGTH = 255;
const UNITS: ReadonlySet<MetricUnit> = new Set(['Count', 'Percent', 'Milliseconds', 'Seconds', 'None']);

interface Point {
  unit: MetricUnit;
  values: number[];
}

interface DimensionSet {
  dimensions: Record<string, string>;
  points: Map<string, Point>;
}

/**
 * `Metrics` as CloudWatch embedded metric format (EMF) log lines, in the
 * `nodescaler` namespace with a `service` dimension: the documents the
 * Powertools Metrics it replaced wrote (test/unit/lambda-metrics.test.ts
 * compares them), without its 1 to 2 ms of every cold start (a console and
 * stores built at load, 15 KiB to compile; docs/BENCHMARKS.md, "Cold start").
 *
 * Points are kept until `flush()`, which a handler calls once at the end of
 * every invocation (also when it fails). Points with the same dimensions go
 * out together, a metric recorded twice as one array of values; each
 * distinct set of dimensions is its own document, since EMF applies a
 * document's dimensions to all of its metrics. A document holds at most 100
 * metrics of 100 values each (CloudWatch's limits): more is written as more
 * documents.
 *
 * Never throws: a point that cannot be recorded (a name empty or longer than
 * 255 characters, or one a dimension already uses; a value that is not
 * finite; a unit other than the first one of that name; more than 29
 * dimensions besides `service`, or one that is empty) is dropped and passed
 * to `onError`, if given.
 */
export class EmfMetrics implements Metrics {
  private readonly sets = new Map<string, DimensionSet>();

  constructor(
    private readonly serviceName: string,
    private readonly onError: (error: unknown) => void = () => {},
    private readonly write: (line: string) => void = (line) => process.stdout.write(line),
    private readonly now: () => number = Date.now,
  ) {}

  record(name: string, value: number, unit: MetricUnit, dimensions: Record<string, string> = {}): void {
    try {
      if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME_LENGTH) {
        throw new RangeError(`metric name must be 1 to ${MAX_NAME_LENGTH} characters, got ${JSON.stringify(name)}`);
      }
      // EMF has no NaN or Infinity: JSON would turn them into null and spoil the document.
      if (typeof value !== 'number' || !Number.isFinite(value)) throw new RangeError(`metric ${name}: value must be a finite number, got ${value}`);
      if (!UNITS.has(unit)) throw new RangeError(`metric ${name}: unit ${JSON.stringify(unit)} is not one of ${[...UNITS].join(', ')}`);
      const set = this.setFor(name, dimensions);
      const point = set.points.get(name);
      if (point === undefined) {
        set.points.set(name, { unit, values: [value] });
      } else if (point.unit !== unit) {
        throw new RangeError(`metric ${name} was recorded with unit ${point.unit}, now with ${unit}`);
      } else {
        point.values.push(value);
      }
    } catch (error) {
      this.report(error);
    }
  }

  /** Writes every point kept so far and forgets them. Never throws. */
  flush(): void {
    const sets = [...this.sets.values()];
    // Dimension values (pools, nodes) come and go: keep nothing past an invocation.
    this.sets.clear();
    const timestamp = this.now();
    for (const set of sets) {
      for (const document of documentsOf(set, timestamp)) {
        try {
          this.write(`${JSON.stringify(document)}\n`);
        } catch (error) {
          this.report(error);
        }
      }
    }
  }

  private setFor(name: string, given: Record<string, string>): DimensionSet {
    const dimensions: Record<string, string> = { service: this.serviceName };
    for (const key of Object.keys(given).sort()) {
      const value = given[key];
      if (typeof value !== 'string' || value.length === 0 || key.length === 0) {
        throw new RangeError(`metric ${name}: dimension ${JSON.stringify(key)} must be a non-empty string, got ${JSON.stringify(value)}`);
      }
      dimensions[key] = value;
    }
    if (Object.keys(dimensions).length > MAX_DIMENSIONS) {
      throw new RangeError(`metric ${name}: at most ${MAX_DIMENSIONS - 1} dimensions besides service, got ${Object.keys(given).length}`);
    }
    if (name in dimensions) throw new RangeError(`metric ${name}: a dimension has that name`);
    const signature = JSON.stringify(dimensions);
    let set = this.sets.get(signature);
    if (set === undefined) {
      set = { dimensions, points: new Map() };
      this.sets.set(signature, set);
    }
    return set;
  }

  private report(error: unknown): void {
    try {
      this.onError(error);
    } catch {
      // an error reporter must not make record() throw either
    }
  }
}

/** One set's points as EMF documents of at most MAX_METRICS metrics and MAX_VALUES values a metric. */
function documentsOf(set: DimensionSet, timestamp: number): Array<Record<string, unknown>> {
  // Each round takes the next MAX_VALUES values of every metric that has more: 250 values go out in three documents.
  const all = [...set.points].map(([name, point]) => ({ name, unit: point.unit, values: point.values }));
  const documents: Array<Record<string, unknown>> = [];
  for (let offset = 0; all.some((metric) => metric.values.length > offset); offset += MAX_VALUES) {
    const round = all.filter((metric) => metric.values.length > offset);
    for (let first = 0; first < round.length; first += MAX_METRICS) {
      const metrics = round.slice(first, first + MAX_METRICS);
      const values: Record<string, number | number[]> = {};
      for (const { name, values: recorded } of metrics) {
        const part = recorded.slice(offset, offset + MAX_VALUES);
        values[name] = part.length === 1 ? part[0]! : part;
      }
      documents.push({
        _aws: {
          Timestamp: timestamp,
          CloudWatchMetrics: [
            { Namespace: METRICS_NAMESPACE, Dimensions: [Object.keys(set.dimensions)], Metrics: metrics.map(({ name, unit }) => ({ Name: name, Unit: unit })) },
          ],
        },
        ...set.dimensions,
        ...values,
      });
    }
  }
  return documents;
}
