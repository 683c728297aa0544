import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBaselines } from '../../lib/sim/baseline-cache.js';
import { runNodescaler } from '../../lib/sim/replay.js';
import { parseTrace } from '../../lib/sim/trace.js';

/** 4 hours: 430 gears, a rise to 900, and back to 300 (drains, so moves). */
function trace() {
  const rows = ['timestamp,gears'];
  for (let minute = 0; minute < 240; minute += 5) rows.push(`${minute * 60},${minute < 60 ? 430 : minute < 120 ? 900 : 300}`);
  return parseTrace(rows.join('\n'), 'figures.csv', { stepSeconds: 300, peakGears: 900 });
}

describe('the figures of a nodescaler replay', () => {
  it('starts with nodes for the first step, and counts moves, disruption, drains and money consistently', async () => {
    // A 4-hour trace tests the figures, not the pays-off policy (which, with no day of history, drains only a node
    // unneeded for hours): a short horizon and confidence window, and any saving pays.
    const configOverrides = { scaleDown: { payoff: { horizon: '5m', confidenceWindow: '5m', factor: 0 } } };
    const { result, bill } = await runNodescaler(trace(), { gearsPerNode: 100, bootDelaySeconds: 120, store: 'memory', seed: 11, configOverrides });
    // The world starts where the trace starts: ceil(430 / 100) nodes, not a 70 %-full cluster.
    expect(result.series[0]!.nodes).toBe(5);
    expect(result.invariantViolations).toBe(0);
    expect(result.gearMoves).toBeGreaterThan(0);
    expect(result.series.reduce((sum, p) => sum + (p.moves ?? 0), 0)).toBe(result.gearMoves);
    expect(result.disruptiveMoves).toBeGreaterThan(0);
    expect(result.disruptiveMoves).toBeLessThan(result.gearMoves);
    expect(result.drainsStarted).toBeGreaterThanOrEqual(result.scaleDowns);
    // A drain's start closes its node to new gears: a broker call each, counted beside the moves.
    expect(result.nodeToggles!.closes).toBeGreaterThanOrEqual(result.drainsStarted);
    expect(result.drainsStarted).toBeGreaterThan(0);
    // Every aborted drain is tallied under the reason its drain stored.
    expect(Object.values(result.aborts!.byKind).reduce((a, b) => a + b, 0)).toBe(result.drainsAborted);
    expect(result.movesPerGearMax).toBeGreaterThanOrEqual(result.movesPerGearP95);
    expect(result.movesPerGearDay).toBeCloseTo(result.gearMoves / result.meanGears / (4 / 24), 9);
    // m5.xlarge at $0.192 an hour, per 730-hour month.
    expect(result.nodeCostPerMonth).toBeCloseTo(((result.nodeHours * 0.192) / 4) * 730, 6);
    expect(result.autoscalerCostPerMonth).toBeCloseTo(bill.total, 9);
    expect(bill.lines.find((l) => l.item === 'Lambda requests')!.quantity).toBeGreaterThan(0);
    expect(bill.lines.find((l) => l.item === 'DynamoDB writes')!.quantity).toBeGreaterThan(0);
    // Every move is explained by a drain: here scale-down drains on recent demand only (no day of history), all on day one.
    const causes = result.moveCauses!;
    expect(causes.total).toBe(result.gearMoves);
    expect(causes.recent).toBe(result.gearMoves);
    expect(causes.unattributed + causes.yesterday + causes.interruption).toBe(0);
    expect(causes.firstDay).toBe(result.gearMoves);
    expect(causes.drainsWithMoves).toBeGreaterThan(0);
    expect(causes.drainsWithMoves).toBeLessThanOrEqual(result.drainsStarted);
    expect(result.pools).toHaveLength(1);
    expect(result.pools[0]).toMatchObject({ pool: 'sim/small', instanceType: 'm5.xlarge', nodeHours: result.nodeHours, gearMoves: result.gearMoves });
  });

  it("replays the trace's application mix for nodescaler and the baselines alike", async () => {
    // As above, and no rent owed after the rise: restarts of every gear would otherwise hold the nodes for hours.
    const configOverrides = { scaleDown: { payoff: { horizon: '5m', confidenceWindow: '5m', factor: 0, oneOffRentFactor: 0 } } };
    const replay = { gearsPerNode: 100, bootDelaySeconds: 120, seed: 11 };
    const run = async (apps: { idleShare: number; sizeExponent: number }) => {
      const mixed = { ...trace(), apps };
      const { result } = await runNodescaler(mixed, { ...replay, store: 'memory', configOverrides });
      return { nodescaler: result, karpenter: runBaselines(mixed, replay).find((r) => r.policy === 'karpenter')! };
    };
    // Every application idle: the same drains, and not one move restarts anything.
    const idle = await run({ idleShare: 1, sizeExponent: 2.5 });
    // Every application active and of one gear: every move is a restart.
    const active = await run({ idleShare: 0, sizeExponent: 20 });
    for (const { nodescaler, karpenter } of [idle, active]) {
      expect(nodescaler.gearMoves).toBeGreaterThan(0);
      expect(karpenter.gearMoves).toBeGreaterThan(0);
    }
    expect(idle.nodescaler.disruptiveMoves).toBe(0);
    expect(idle.karpenter.disruptiveMoves).toBe(0);
    expect(active.nodescaler.disruptiveMoves).toBeGreaterThan(0.95 * active.nodescaler.gearMoves);
    expect(active.karpenter.disruptiveMoves).toBeGreaterThan(0.95 * active.karpenter.gearMoves);
  });

  it("places gears as origin-server's broker does when asked, for nodescaler and the baselines alike", async () => {
    const configOverrides = { scaleDown: { payoff: { horizon: '5m', confidenceWindow: '5m', factor: 0 } } };
    const replay = { gearsPerNode: 100, bootDelaySeconds: 120, seed: 11 };
    const run = async (placement: 'least-loaded' | 'broker') => {
      const { result } = await runNodescaler(trace(), { ...replay, placement, store: 'memory', configOverrides });
      return { nodescaler: result, karpenter: runBaselines(trace(), { ...replay, placement }).find((r) => r.policy === 'karpenter')! };
    };
    const leastLoaded = await run('least-loaded');
    const broker = await run('broker');
    for (const { nodescaler } of [leastLoaded, broker]) {
      expect(nodescaler.invariantViolations).toBe(0);
      expect(nodescaler.gearMoves).toBeGreaterThan(0);
    }
    // The drains meet other gears where the broker spread them: the same demand, other moves.
    expect(broker.nodescaler.gearMoves).not.toBe(leastLoaded.nodescaler.gearMoves);
    expect(broker.karpenter.gearMoves).not.toBe(leastLoaded.karpenter.gearMoves);
    // The same seed, the same draws.
    expect((await run('broker')).nodescaler.gearMoves).toBe(broker.nodescaler.gearMoves);
  });
});

describe('npm start usage', () => {
  const start = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', resolve(import.meta.dirname, '../../scripts/start.ts'), ...args], { encoding: 'utf8' });

  it('prints its usage for --help', () => {
    const run = start('--help');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('usage: npm start -- [options]');
    expect(run.stdout).toContain('--pool-demand');
    expect(run.stdout).toContain('--pool-apps');
    expect(run.stdout).toContain('--idle-share');
    expect(run.stdout).toContain('--placement');
  });

  it('answers an unknown flag with the usage, not a stack trace', () => {
    const run = start('--trase', 'x.csv');
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("Unknown option '--trase'");
    expect(run.stderr).toContain('usage: npm start -- [options]');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('prints the goal line with its infeasible misses and the reactive floor under it, for one pool', () => {
    const report = resolve(mkdtempSync(join(tmpdir(), 'nodescaler-start-')), 'report.html');
    const run = start('--days', '0.25', '--store', 'memory', '--report', report);
    expect(run.status).toBe(0);
    const lines = run.stdout.split('\n');
    const goal = lines.findIndex((line) => line.startsWith('goal ('));
    expect(lines[goal]).toMatch(/^goal \(\d\/8 met; \d+ of the \d+ misses are infeasible here\)/);
    expect(lines[goal + 1]).toMatch(/^reactive floor \(learns of demand as it arrives, boots in 2 min\): at best \d+\.\d{3} % unplaced/);
  });

  it('names the field and the value of a bad option', () => {
    const run = start('--policy', 'reactive', '--days', '0.1');
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('--policy');
    expect(run.stderr).toContain('reactive');
  });

  it("refuses a pool's mix without the configuration that names the pool, and a share out of range", () => {
    const lonely = start('--pool-apps', 'd1/paid=0', '--days', '0.1');
    expect(lonely.status).toBe(2);
    expect(lonely.stderr).toContain('--pool-apps: needs --config');
    const share = start('--idle-share', '1.5', '--days', '0.1');
    expect(share.status).toBe(2);
    expect(share.stderr).toContain('--idle-share: expected the share of idle applications, from 0 to 1 (got "1.5")');
    const placement = start('--placement', 'random', '--days', '0.1');
    expect(placement.status).toBe(2);
    expect(placement.stderr).toContain('--placement: expected least-loaded or broker (got "random")');
  });
});
