import { describe, expect, it } from 'vitest';
import type { ConfigInput } from '../../lib/config/index.js';
import { REPLAY_START_MS, runNodescaler } from '../../lib/sim/replay.js';
import type { SeriesPoint } from '../../lib/sim/results.js';
import { parseTrace, type Trace } from '../../lib/sim/trace.js';

/** Ramp up, plateau, ramp down, a spike, and quiet again: 5-minute steps over 5 hours. */
function syntheticTrace(): Trace {
  const rows: string[] = ['timestamp,gears'];
  const shape = (minute: number): number => {
    if (minute < 60) return 200 + (600 * minute) / 60; // ramp up to 800
    if (minute < 120) return 800; // plateau
    if (minute < 180) return 800 - (500 * (minute - 120)) / 60; // ramp down to 300
    if (minute < 210) return 1000; // spike
    return 300;
  };
  for (let minute = 0; minute < 300; minute += 5) rows.push(`${minute * 60},${shape(minute)}`);
  return parseTrace(rows.join('\n'), 'synthetic', { stepSeconds: 300, peakGears: 1000 });
}

// A 5-hour trace of 30- to 60-minute phases tests the replay's mechanics, not the pays-off policy: with no day of
// history a drain pays only after the node stayed unneeded for hours, so the horizon and the confidence window are
// shortened to minutes and any saving pays (factor 0), with no rent-or-buy wait after a rise or a scale-up
// (oneOffRentFactor 0: its hours outlast these phases); attrition still closes the next node first.
const payoff = { horizon: '5m', confidenceWindow: '5m', factor: 0, oneOffRentFactor: 0 };
const base = { gearsPerNode: 100, bootDelaySeconds: 120, seed: 7, configOverrides: { scaleDown: { payoff } } };
const during = (series: SeriesPoint[], fromHour: number, toHour: number) => series.filter((p) => p.at >= fromHour * 3600 && p.at < toHour * 3600);
const mean = (points: SeriesPoint[], value: (p: SeriesPoint) => number) => points.reduce((sum, p) => sum + value(p), 0) / Math.max(1, points.length);

describe('replay through the real handlers', () => {
  it('follows demand up and down on dynalite, moving gears to release nodes, with no invariant broken', async () => {
    const outcome = await runNodescaler(syntheticTrace(), { ...base, store: 'dynalite' });
    const { result } = outcome;
    expect(outcome.storeKind).toBe('dynalite');
    expect(outcome.violations).toEqual([]);
    expect(outcome.deadLetters).toEqual([]);

    const plateau = mean(during(result.series, 1.5, 2), (p) => p.nodes);
    const start = mean(during(result.series, 0, 0.25), (p) => p.nodes);
    const afterRampDown = mean(during(result.series, 2.75, 3), (p) => p.nodes);
    expect(plateau).toBeGreaterThan(start + 3);
    expect(afterRampDown).toBeLessThan(plateau - 1);
    const spike = during(result.series, 3.25, 3.5);
    expect(Math.max(...spike.map((p) => p.capacity))).toBeGreaterThanOrEqual(1000);

    expect(result.scaleUps).toBeGreaterThan(2);
    expect(result.scaleDowns).toBeGreaterThan(0);
    expect(result.gearMoves).toBeGreaterThan(0);
    expect(result.unplacedShare).toBeLessThan(0.02);
    expect(result.ratioToOracle).toBeLessThan(1.6);
  });

  it("buys no node for gears its district's UIDs refuse: with the reporter's district reads the pool holds what the UIDs fill, without them it buys to its max", async () => {
    // 200 gears rising to 800 within the hour, then flat; the district holds 500 UIDs: 300 gears are always refused.
    const rows = ['timestamp,gears'];
    for (let minute = 0; minute < 300; minute += 5) rows.push(`${minute * 60},${minute < 60 ? 200 + 10 * minute : 800}`);
    const trace = parseTrace(rows.join('\n'), 'uids', { stepSeconds: 300, peakGears: 800 });
    const run = (districtReads: boolean) => runNodescaler(trace, { gearsPerNode: 100, bootDelaySeconds: 120, seed: 7, store: 'memory', districtUids: 500, districtReads });
    const [read, unread] = [await run(true), await run(false)];
    for (const outcome of [read, unread]) {
      expect(outcome.violations).toEqual([]);
      expect(outcome.deadLetters).toEqual([]);
      expect(outcome.result.series.at(-1)).toMatchObject({ unplaced: 300 });
    }
    const maxNodes = (outcome: typeof read) => Math.max(...outcome.result.series.map((p) => p.nodes));
    // 500 gears and the headroom: 6 nodes of 100. An older reporter's refusals alone bought 18 (measured), three times the node-hours.
    expect(maxNodes(read)).toBeLessThanOrEqual(6);
    expect(maxNodes(unread)).toBeGreaterThanOrEqual(12);
    expect(unread.result.nodeHours).toBeGreaterThan(2 * read.result.nodeHours);
  });

  it('spreads the nodes over the zones of their subnets with `zones`, drains among them, and breaks nothing', async () => {
    const outcome = await runNodescaler(syntheticTrace(), { ...base, store: 'memory', zones: 3 });
    expect(outcome.violations).toEqual([]);
    expect(outcome.result.gearMoves).toBeGreaterThan(0);
    // The nodes the pool launched (the replay's first node is seeded, with no subnet): one per subnet in turn.
    const launched = (await outcome.store.listNodes('sim/small')).filter((node) => node.nodeId !== 'node-1.sim.local');
    expect(new Set(launched.map((node) => node.zone))).toEqual(new Set(['sim-1a', 'sim-1b', 'sim-1c']));
  });

  it('counts slots as origin-server does with `idleTakesNoSlot`: fewer nodes for the same gears, idle gears moved with the rest, nothing broken', async () => {
    const counted = await runNodescaler(syntheticTrace(), { ...base, store: 'memory', idleTakesNoSlot: true });
    const every = await runNodescaler(syntheticTrace(), { ...base, store: 'memory' });
    expect(counted.violations).toEqual([]);
    expect(counted.deadLetters).toEqual([]);
    expect(counted.result.gearMoves).toBeGreaterThan(0);
    // The spike from 300 to 1,000 gears outruns the boot delay either way; counting only active gears, no more wait.
    expect(counted.result.unplacedGearMinutes).toBeLessThanOrEqual(every.result.unplacedGearMinutes);
    expect(counted.result.nodeHours).toBeLessThan(every.result.nodeHours);
    // Every node's stats say what the shipped agent would: its active gears, and every gear listed with the idle ones marked.
    // A pool's listing counts each list; the list is read with the node alone.
    const listed = (await counted.store.listNodes('sim/small')).filter((node) => node.stats?.listed !== undefined && node.state === 'active');
    const nodes = await Promise.all(listed.map(async (node) => (await counted.store.getNode(node.nodeId))!));
    for (const node of nodes) expect(node.stats!.gears).toHaveLength(node.stats!.listed!.gears);
    expect(nodes.length).toBeGreaterThan(0);
    for (const node of nodes) expect(node.stats!.gears!.filter((gear) => !gear.idle)).toHaveLength(node.stats!.activeGears);
    expect(nodes.some((node) => node.stats!.gears!.length > node.stats!.activeGears)).toBe(true);
  });

  it('deploys the configuration again mid-trace with `redeploy`: the nodes launched before a new image drift and are renewed, the pool record sees the new template from then', async () => {
    // 200 gears rising to 600 in 40 minutes (the nodes bought for the rise have launch records), then flat for 4 hours;
    // a new image deployed after 1 hour, renewal on.
    const rows = ['timestamp,gears'];
    for (let minute = 0; minute < 300; minute += 5) rows.push(`${minute * 60},${minute < 40 ? 200 + 10 * minute : 600}`);
    const trace = parseTrace(rows.join('\n'), 'redeploy', { stepSeconds: 300, peakGears: 600 });
    const patched = (input: ConfigInput): ConfigInput => ({ ...input, pools: input.pools.map((pool) => ({ ...pool, template: { ...pool.template, imageId: 'ami-sim-patched' } })) }) as ConfigInput;
    const outcome = await runNodescaler(trace, {
      ...base,
      store: 'memory',
      configOverrides: { scaleDown: { payoff, renewDrifted: true } },
      redeploy: { atSeconds: 3600, config: patched },
    });
    expect(outcome.violations).toEqual([]);
    const record = await outcome.store.getPool('sim/small');
    expect(record?.templateSeen?.since).toBe(new Date(REPLAY_START_MS + 3600_000).toISOString());
    const nodes = await outcome.store.listNodes('sim/small');
    const launched = nodes.filter((node) => node.state === 'active' && node.launchedFrom);
    // Every launched node there at the end runs the new image: those launched from the old one were renewed,
    // replacements first (the nodes there before nodescaler have no launch record, so they never drift).
    expect(launched.length).toBeGreaterThan(0);
    expect(launched.map((node) => node.launchedFrom!.image)).toEqual(launched.map(() => 'ami-sim-patched'));
    const decisions = await outcome.store.listDecisionsSince('sim/small', '2000-01-01T00:00:00.000Z');
    expect(decisions.some((decision) => decision.reason.includes('drifted: image ami-sim -> ami-sim-patched'))).toBe(true);
    expect(outcome.result.gearMoves).toBeGreaterThan(0);
    expect(outcome.result.unplacedShare).toBe(0);
  });

  it('keeps every gear when 10 % of the moves fail', async () => {
    const outcome = await runNodescaler(syntheticTrace(), { ...base, store: 'memory', moveFailureRate: 0.1 });
    expect(outcome.violations).toEqual([]);
    expect(outcome.deadLetters).toEqual([]);
    expect(outcome.result.scaleDowns).toBeGreaterThan(0);
    expect(outcome.result.gearMoves).toBeGreaterThan(0);
  });

  it('runs out of cloud capacity without breaking anything, and marks the pool exhausted', async () => {
    const outcome = await runNodescaler(syntheticTrace(), { ...base, store: 'memory', capacityCap: 8 });
    expect(outcome.violations).toEqual([]);
    expect(outcome.result.maxNodes).toBeLessThanOrEqual(8);
    expect(outcome.result.unplacedGearMinutes).toBeGreaterThan(0);
    const decisions = await outcome.store.listDecisions('sim/small', 2000);
    expect(decisions.some((d) => /exhausted/.test(d.reason))).toBe(true);
  });
});
