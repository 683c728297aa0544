import { Metrics as PowertoolsMetrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EmfMetrics, METRICS_NAMESPACE } from '../../lib/adapters/lambda/metrics.js';
import type { MetricUnit as OurUnit } from '../../lib/ports/metrics.js';

interface Directive {
  Namespace: string;
  Dimensions: string[][];
  Metrics: Array<{ Name: string; Unit: string }>;
}
type Document = Record<string, unknown> & { _aws: { Timestamp: number; CloudWatchMetrics: Directive[] } };

const NOW = Date.parse('2026-11-30T12:00:00.000Z');

/** EmfMetrics writing into an array, with the errors it reported. */
function metricsUnderTest(service = 'thresholdEvaluator') {
  const documents: Document[] = [];
  const dropped: unknown[] = [];
  const write = (line: string) => {
    expect(line.endsWith('\n')).toBe(true);
    documents.push(JSON.parse(line) as Document);
  };
  return { metrics: new EmfMetrics(service, (error) => dropped.push(error), write, () => NOW), documents, dropped };
}

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe('EmfMetrics', () => {
  it('writes EMF in the nodescaler namespace on flush, one document per set of dimensions', () => {
    const { metrics, documents } = metricsUnderTest();
    metrics.record('StatsIngested', 3, 'Count');
    metrics.record('PoolUtilization', 91, 'Percent', { pool: 'd1/small' });
    metrics.record('PoolUtilization', 40, 'Percent', { pool: 'd2/large' });
    expect(documents).toEqual([]);
    metrics.flush();
    expect(documents).toEqual([
      {
        _aws: { Timestamp: NOW, CloudWatchMetrics: [{ Namespace: 'nodescaler', Dimensions: [['service']], Metrics: [{ Name: 'StatsIngested', Unit: 'Count' }] }] },
        service: 'thresholdEvaluator',
        StatsIngested: 3,
      },
      {
        _aws: { Timestamp: NOW, CloudWatchMetrics: [{ Namespace: 'nodescaler', Dimensions: [['service', 'pool']], Metrics: [{ Name: 'PoolUtilization', Unit: 'Percent' }] }] },
        service: 'thresholdEvaluator',
        pool: 'd1/small',
        PoolUtilization: 91,
      },
      {
        _aws: { Timestamp: NOW, CloudWatchMetrics: [{ Namespace: 'nodescaler', Dimensions: [['service', 'pool']], Metrics: [{ Name: 'PoolUtilization', Unit: 'Percent' }] }] },
        service: 'thresholdEvaluator',
        pool: 'd2/large',
        PoolUtilization: 40,
      },
    ]);
    metrics.flush();
    expect(documents).toHaveLength(3);
  });

  it('keeps a metric recorded twice as an array, and the same dimensions in any order as one set', () => {
    const { metrics, documents } = metricsUnderTest('gearMover');
    metrics.record('MoveSeconds', 31, 'Seconds', { pool: 'd1/small', reason: 'scale-down' });
    metrics.record('MoveSeconds', 45, 'Seconds', { reason: 'scale-down', pool: 'd1/small' });
    metrics.flush();
    expect(documents).toHaveLength(1);
    expect(documents[0]).toMatchObject({ MoveSeconds: [31, 45], pool: 'd1/small', reason: 'scale-down', service: 'gearMover' });
  });

  it('splits a set past CloudWatch limits: 100 metrics and 100 values a document', () => {
    const { metrics, documents, dropped } = metricsUnderTest();
    for (let i = 0; i < 150; i++) metrics.record(`M${i}`, i, 'Count');
    for (let i = 0; i < 230; i++) metrics.record('Repeated', i, 'Count', { pool: 'p' });
    metrics.flush();
    expect(dropped).toEqual([]);
    const directives = documents.map((d) => d._aws.CloudWatchMetrics[0]!);
    expect(directives.map((d) => d.Metrics.length)).toEqual([100, 50, 1, 1, 1]);
    expect(documents.slice(2).map((d) => (Array.isArray(d.Repeated) ? d.Repeated.length : 1))).toEqual([100, 100, 30]);
    // Every value written once.
    const written = documents.slice(2).flatMap((d) => d.Repeated as number[]);
    expect(written).toEqual(Array.from({ length: 230 }, (_, i) => i));
    expect(Object.keys(documents[1]!).filter((key) => key.startsWith('M'))).toHaveLength(50);
  });

  it('never throws from record or flush, and reports each point it dropped', () => {
    const { metrics, documents, dropped } = metricsUnderTest('gearMover');
    metrics.record('GearsMoved', 1, 'Count');
    const bad: Array<() => void> = [
      () => metrics.record('GearsMoved', 1, 'Seconds'), // unit differs from the first
      () => metrics.record('', 1, 'Count'),
      () => metrics.record('x'.repeat(256), 1, 'Count'),
      () => metrics.record('Bad', Number.NaN, 'Count'),
      () => metrics.record('Bad', Number.POSITIVE_INFINITY, 'Count'),
      () => metrics.record('Bad', 1, 'Bytes' as OurUnit),
      () => metrics.record('Bad', 1, 'Count', { pool: '' }),
      () => metrics.record('pool', 1, 'Count', { pool: 'd1/small' }),
      () => metrics.record('Bad', 1, 'Count', Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`d${i}`, 'v']))),
    ];
    for (const call of bad) expect(call).not.toThrow();
    expect(dropped).toHaveLength(bad.length);
    expect(String(dropped[0])).toContain('GearsMoved');
    metrics.flush();
    expect(documents).toHaveLength(1);
    expect(documents[0]).toMatchObject({ GearsMoved: 1 });
    const failing = new EmfMetrics('gearMover', (error) => dropped.push(error), () => {
      throw new Error('EPIPE');
    });
    failing.record('GearsMoved', 1, 'Count');
    expect(() => failing.flush()).not.toThrow();
    expect(String(dropped.at(-1))).toContain('EPIPE');
  });

  it('writes to stdout by default', () => {
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const metrics = new EmfMetrics('decommissioner');
    metrics.record('NodesReleased', 1, 'Count');
    metrics.flush();
    expect(JSON.parse(String(stdout.mock.calls[0]![0]))).toMatchObject({ service: 'decommissioner', NodesReleased: 1 });
  });

  it('writes the documents the Powertools Metrics it replaced wrote', () => {
    // Powertools writes through its own console to stdout; it reads these itself.
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
    vi.stubEnv('POWERTOOLS_DEV', 'false');
    const captured: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation(((chunk: string | Uint8Array) => {
      captured.push(String(chunk));
      return true;
    }) as typeof process.stdout.write);
    const points: Array<[string, number, OurUnit, Record<string, string>?]> = [
      ['StatsIngested', 3, 'Count'],
      ['PoolUtilization', 91, 'Percent', { pool: 'd1/small' }],
      ['PoolUtilization', 92, 'Percent', { pool: 'd1/small' }],
      ['DrainSeconds', 12.5, 'Seconds', { pool: 'd1/small' }],
      ['Decisions', 1, 'Count', { pool: 'd2/large', kind: 'scale-up' }],
      ['EvaluationTime', 80, 'Milliseconds'],
      ['Ratio', 0.5, 'None'],
    ];
    // The adapter Powertools was used through: one instance a set of dimensions, given as default dimensions.
    const instances = new Map<string, PowertoolsMetrics>();
    for (const [name, value, unit, dimensions = {}] of points) {
      const key = JSON.stringify(Object.entries(dimensions).sort());
      if (!instances.has(key)) instances.set(key, new PowertoolsMetrics({ namespace: METRICS_NAMESPACE, serviceName: 'thresholdEvaluator', defaultDimensions: dimensions }));
      instances.get(key)!.addMetric(name, unit === 'None' ? MetricUnit.NoUnit : (unit as (typeof MetricUnit)[keyof typeof MetricUnit]), value);
    }
    for (const instance of instances.values()) instance.publishStoredMetrics();
    const theirs = captured.join('').trim().split('\n').map((line) => JSON.parse(line) as Document);
    expect(theirs).toHaveLength(3);
    const { metrics, documents: ours } = metricsUnderTest();
    for (const [name, value, unit, dimensions] of points) metrics.record(name, value, unit, dimensions);
    metrics.flush();
    // Dimension names are a set to CloudWatch; the timestamp is the time of the flush.
    const comparable = ({ _aws, ...rest }: Document) => ({
      ...rest,
      _aws: { CloudWatchMetrics: _aws.CloudWatchMetrics.map((d) => ({ ...d, Dimensions: d.Dimensions.map((names) => [...names].sort()) })) },
    });
    expect(ours.map(comparable)).toEqual(theirs.map(comparable));
  });
});
