import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBaseline } from '../../lib/sim/baselines.js';
import { configPools } from '../../lib/sim/config-pools.js';
import { peakDemand } from '../../lib/sim/pools.js';
import { runNodescaler } from '../../lib/sim/replay.js';
import { parseTrace } from '../../lib/sim/trace.js';

const CONFIG = `
handler: log
limits:
  maxNodesTotal: 14
pools:
  - { district: east, profile: small, min: 1, max: 8, gearsPerNode: 50, naming: { base: east-small }, template: { instanceTypes: [{ name: m5.large, vcpus: 2, memoryGiB: 8 }] } }
  - { district: east, profile: large, min: 1, max: 4, gearsPerNode: 20, naming: { base: east-large }, template: { instanceTypes: [{ name: m5.2xlarge, vcpus: 8, memoryGiB: 32 }] } }
  - { district: west, profile: small, min: 1, max: 8, gearsPerNode: 50, naming: { base: west-small } }
  - { district: west, profile: large, min: 0, max: 4, gearsPerNode: 20, nodeHourPrice: 0.05, naming: { base: west-large } }
`;

/** Two columns over 3 hours: web ramps up to its peak and holds, batch runs flat. */
function csv(): string {
  const rows = ['timestamp,web,batch'];
  for (let minute = 0; minute < 180; minute += 5) rows.push(`${minute * 60},${minute < 60 ? 100 + 10 * minute : 700},${300}`);
  return rows.join('\n');
}

describe('replaying every pool of a configuration', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nodescaler-pools-'));
  const configFile = join(dir, 'four-pools.yml');
  const tracePath = join(dir, 'two-columns.csv');
  writeFileSync(configFile, CONFIG);
  writeFileSync(tracePath, csv());
  const traceOptions = { stepSeconds: 300, peakGears: 800 };
  const trace = parseTrace(csv(), tracePath, { ...traceOptions, demandColumn: 'web' });
  const replay = configPools({
    configFile,
    tracePath,
    trace,
    traceOptions,
    peakGears: 800,
    fallbackGearsPerNode: 100,
    bootDelaySeconds: 120,
    // The others split the web column by their default weights (max x gearsPerNode: 400, 80, 400).
    demands: [{ pool: 'east/large', column: 'batch' }],
  });

  it('gives each pool its own size, bounds, price and demand', () => {
    expect(replay.pools.map((p) => [p.id, p.gearsPerNode, p.min, p.max, p.instanceType])).toEqual([
      ['east/small', 50, 1, 8, 'm5.large'],
      ['east/large', 20, 1, 4, 'm5.2xlarge'],
      ['west/small', 50, 1, 8, 'm5.xlarge'],
      ['west/large', 20, 0, 4, 'm5.xlarge'],
    ]);
    // 800 gears at the peak, split 400 : 80 : 400 : 80.
    const peaks = replay.pools.map((p) => peakDemand(p.trace));
    expect(peaks).toEqual([333, 67, 333, 67]);
    // The batch pool follows its own (flat) column; the others the web ramp.
    expect(new Set(replay.pools[1]!.trace.steps.map((s) => s.demand))).toEqual(new Set([67]));
    expect(replay.pools[0]!.trace.steps[0]!.demand).toBeLessThan(100);
    expect(replay.pools[1]!.trace.demandColumn).toBe('batch');
    // Each pool's node-hour: its instance type's list price, or the price its configuration names (a spot pool's).
    expect(replay.pools.map((p) => p.pricePerHour)).toEqual([0.096, 0.384, 0.192, 0.05]);
  });

  it("gives each pool the run's application mix, or its own (--pool-apps), and refuses a pool the file lacks", () => {
    const mixed = (apps: Parameters<typeof configPools>[0]['apps'], poolApps: Parameters<typeof configPools>[0]['poolApps']) =>
      configPools({ configFile, tracePath, trace, traceOptions, peakGears: 800, fallbackGearsPerNode: 100, bootDelaySeconds: 120, demands: [], ...(apps ? { apps } : {}), ...(poolApps ? { poolApps } : {}) });
    expect(replay.pools.map((p) => p.trace.apps)).toEqual([undefined, undefined, undefined, undefined]);
    const paid = { idleShare: 0, sizeExponent: 5 };
    const free = { idleShare: 0.6, sizeExponent: 2.5 };
    const tiers = mixed(free, [{ pool: 'west/large', apps: paid }]);
    expect(tiers.pools.map((p) => p.trace.apps)).toEqual([free, free, free, paid]);
    expect(mixed(undefined, [{ pool: 'east/small', apps: paid }]).pools.map((p) => p.trace.apps)).toEqual([paid, undefined, undefined, undefined]);
    expect(() => mixed(undefined, [{ pool: 'north/small', apps: paid }])).toThrow(/--pool-apps: no such pool in .*four-pools\.yml; pools: east\/small, east\/large, west\/small, west\/large \(got "north\/small"\)/);
  });

  it('runs all four pools through the real handlers, each within its bounds and all within maxNodesTotal', async () => {
    const outcome = await runNodescaler(trace, { gearsPerNode: 100, bootDelaySeconds: 120, store: 'memory', seed: 3, config: replay });
    const { result } = outcome;
    expect(outcome.violations).toEqual([]);
    expect(result.pools.map((p) => p.pool)).toEqual(['east/small', 'east/large', 'west/small', 'west/large']);
    for (const pool of result.pools) {
      expect(pool.maxNodes).toBeLessThanOrEqual(pool.max);
      expect(pool.nodeHours).toBeGreaterThan(0);
    }
    // The pools want 7 + 4 + 7 + 4 = 22 nodes together at the peak: the global limit binds, and holds.
    expect(result.maxNodes).toBeLessThanOrEqual(14);
    expect(result.maxNodes).toBeGreaterThanOrEqual(12);
    expect(result.nodeHours).toBeCloseTo(result.pools.reduce((sum, p) => sum + p.nodeHours, 0), 6);
    expect(result.nodeCostPerMonth).toBeCloseTo(result.pools.reduce((sum, p) => sum + p.nodeCostPerMonth, 0), 6);
    expect(result.autoscalerCostPerMonth).toBeGreaterThan(0);

    const karpenter = runBaseline('karpenter', replay.pools, { bootDelaySeconds: 120, tickSeconds: 60, moveSeconds: 30, maxConcurrentMoves: 3, seed: 3, sampleEverySeconds: 60, maxNodesTotal: 14 });
    expect(karpenter.pools).toHaveLength(4);
    expect(karpenter.maxNodes).toBeLessThanOrEqual(14);
    for (const pool of karpenter.pools) expect(pool.maxNodes).toBeLessThanOrEqual(pool.max);
  });
});
