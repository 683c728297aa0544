/**
 * Every nodescaler metric an alarm or the dashboard reads is one the code
 * records, with the dimensions the read names. CloudWatch matches a Metrics
 * Insights `SCHEMA(...)` or a `SEARCH` only on that exact dimension set: an
 * alarm on a metric renamed in the code, or recorded with one more
 * dimension, stays OK for ever, and nothing says so.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { METRICS_NAMESPACE } from '../../lib/adapters/lambda/metrics.js';
import { loadPackagedStack, resources, ROOT, type Json } from './support/packaged-stack.js';

beforeAll(loadPackagedStack);

/** A metric and the dimension set a read names, as `name {a,b}` (dimensions sorted). */
const read = (name: string, dimensions: string[]) => `${name} {${[...dimensions].map((d) => d.trim()).sort().join(',')}}`;

/** What the alarms and the dashboard read of the nodescaler namespace, each with who reads it. */
function readsOfStack(stack: Record<string, Json> = resources): Map<string, string[]> {
  const reads = new Map<string, string[]>();
  const add = (metric: string, by: string) => reads.set(metric, [...(reads.get(metric) ?? []), by]);
  for (const [id, alarm] of Object.entries(stack).filter(([, resource]) => resource.Type === 'AWS::CloudWatch::Alarm')) {
    for (const metric of (alarm.Properties.Metrics ?? []) as Json[]) {
      const query = /^SELECT \w+\((\w+)\) FROM SCHEMA\("([^"]+)", ([^)]*)\)/.exec(metric.Expression ?? '');
      if (query && query[2] === METRICS_NAMESPACE) add(read(query[1]!, query[3]!.split(',')), id);
    }
    if (alarm.Properties.Namespace === METRICS_NAMESPACE) add(read(alarm.Properties.MetricName, alarm.Properties.Dimensions.map((d: Json) => d.Name)), id);
  }
  const [body] = stack.Dashboard!.Properties.DashboardBody['Fn::Sub'] as [string];
  for (const match of body.matchAll(/\{([\w-]+),([\w,]+)\} MetricName=\\"(\w+)\\"/g)) {
    if (match[1] === METRICS_NAMESPACE) add(read(match[3]!, match[2]!.split(',')), 'Dashboard');
  }
  return reads;
}

/** The reads no call of the code records, one line each. */
function unrecorded(reads: Map<string, string[]>, code: ReturnType<typeof recordsOfCode>): string[] {
  const { recorded, dynamicDimensions, literals } = code;
  return [...reads]
    .filter(([metric]) => {
      if (recorded.has(metric)) return false;
      const [name, dimensions] = metric.split(' ') as [string, string];
      // Recorded under a name chosen at run time: the name is in the code, and a call with a run-time name has the read's dimensions.
      return !(literals.has(name) && dynamicDimensions.has(` ${dimensions}`) && ![...recorded].some((known) => known.startsWith(`${name} `)));
    })
    .map(([metric, by]) => `${by.join(', ')} read ${metric}, which the code does not record`);
}

/** The code's `metrics.record(NAME, value, unit, { keys })` calls outside the replay, and every quoted name in lib/. */
function recordsOfCode(): { recorded: Set<string>; dynamicDimensions: Set<string>; literals: Set<string> } {
  const recorded = new Set<string>();
  const dynamicDimensions = new Set<string>();
  const literals = new Set<string>();
  const files = readdirSync(join(ROOT, 'lib'), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts') && !file.startsWith('sim/'));
  for (const file of files) {
    const source = readFileSync(join(ROOT, 'lib', file), 'utf8');
    for (const [, literal] of source.matchAll(/'([A-Z][A-Za-z]+)'/g)) literals.add(literal!);
    for (const call of source.matchAll(/metrics\.record\((.*), '(Count|Percent|Milliseconds|Seconds|None)', (\{[^}]*\}|\w+)\);/g)) {
      const [, head, , dims] = call;
      // `{ pool }`, `{ pool: x }`, or a variable set just before (`const dimensions = { pool: node.pool }`).
      const object = dims!.startsWith('{') ? dims! : new RegExp(`const ${dims} = (\\{[^}]*\\})`).exec(source)?.[1];
      if (!object) throw new Error(`lib/${file}: cannot read the dimensions of metrics.record(${head}, ...)`);
      const keys = [...object.matchAll(/(\w+)(?::[^,}]*)?(?=\s*[,}])/g)].map((key) => key[1]!);
      const names = [...head!.matchAll(/'(\w+)'/g)].map((name) => name[1]!);
      // A name chosen at run time (a drain's stop, a failed read) is one of the module's or its domain's literals.
      if (names.length === 0) dynamicDimensions.add(read('', [...keys, 'service']));
      for (const name of names) recorded.add(read(name, [...keys, 'service']));
    }
  }
  return { recorded, dynamicDimensions, literals };
}

describe('the metrics the alarms and the dashboard read', () => {
  it('are recorded by the code, with the dimension set each read names', () => {
    const reads = readsOfStack();
    const code = recordsOfCode();
    expect(reads.size).toBeGreaterThan(25);
    expect(code.recorded.size).toBeGreaterThan(25);
    expect(reads.get('GearsLost {pool,service}')).toEqual(['GearsLostAlarm', 'Dashboard']);
    expect(reads.get('StatsRejected {reason,service}')).toEqual(['StatsRejectedAlarm']);
    expect(unrecorded(reads, code)).toEqual([]);
  });

  it('names a read of another name or another dimension set than the code records', () => {
    const broken = structuredClone(resources) as Record<string, Json>;
    broken.GearsLostAlarm.Properties.Metrics[0].Expression = 'SELECT SUM(GearLost) FROM SCHEMA("nodescaler", pool, service) GROUP BY pool';
    broken.DrainsAbortedAlarm.Properties.Metrics[0].Expression = 'SELECT SUM(DrainsAborted) FROM SCHEMA("nodescaler", node, pool, service) GROUP BY pool';
    expect(unrecorded(readsOfStack(broken), recordsOfCode())).toEqual([
      'DrainsAbortedAlarm read DrainsAborted {node,pool,service}, which the code does not record',
      'GearsLostAlarm read GearLost {pool,service}, which the code does not record',
    ]);
  });
});
