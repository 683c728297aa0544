import { describe, expect, it } from 'vitest';
import { payoffGate, poolMoveCost } from '../../lib/domain/payoff-gate.js';
import type { Config } from '../../lib/config/index.js';
import type { NodeRecord } from '../../lib/domain/model.js';
import { computeUtilization } from '../../lib/domain/utilization.js';
import { POOL, config, demandHistory, node } from '../support/builders.js';

const MIN = 60_000;

/** A pool's history: a sample every 5 minutes back `hours` (25: one day, 50: two), per minute for the last half hour. */
const history = (now: Date, demandAt: (minutesFromNow: number) => number, hours = 25) => demandHistory(now, demandAt, hours);

/** `nodes`, each reporting at `now`, and their pool's utilization under `cfg`. */
function reportingPool(nodes: NodeRecord[], now: Date, cfg: Config) {
  for (const n of nodes) n.stats!.reportedAt = now.toISOString();
  return { nodes, u: computeUtilization({ pool: POOL, nodes, drains: [], now, statsMaxAge: cfg.statsMaxAge, expectedGearsPerNode: 100 }) };
}

describe('payoffGate', () => {
  it('judges the fit check on the confident demand, and refuses a candidate that does not pay', () => {
    const now = new Date('2026-01-06T22:30:00Z');
    const cfg = config();
    const { nodes, u } = reportingPool([node('a', { gears: 60 }), node('b', { gears: 60 }), node('c', { gears: 10 })], now, cfg);
    const h = history(now, (m) => (m > -10 ? 130 : 200)); // 200 gears until ten minutes ago
    const gate = payoffGate({ config: cfg, history: h, now, utilization: u });
    expect(gate.utilization.demand).toBe(200);
    expect(gate.utilization.freeSlots).toBe(u.freeSlots - 70);
    // without c, 200 slots hold less than the 200 gears of the last hour: it is needed now (held up to the scale-up's target)
    const holds = Math.min(200 * cfg.scaleUp.target, 200 - cfg.scaleUp.headroomGears);
    expect(holds).toBe(200 * cfg.scaleUp.target);
    // The sentence says which setting set the level: here the target...
    expect(gate.check!(nodes[2]!, 200)).toEqual({ refused: `needed now: recent demand 200 gears >= the ${holds} the pool holds without it (set by the target: ${cfg.scaleUp.target} x 200 slots)` });
    // ...and with a headroom larger than what the target leaves free, the headroom.
    const roomy = config({ scaleUp: { headroomGears: 100 } });
    expect(payoffGate({ config: roomy, history: h, now, utilization: u }).check!(nodes[2]!, 200)).toEqual({
      refused: 'needed now: recent demand 200 gears >= the 100 the pool holds without it (set by the headroom: 200 slots - 100 headroomGears)',
    });
    // with 300 slots left and a quiet day behind, the cheap node pays
    const quiet = history(now, () => 130);
    expect(payoffGate({ config: cfg, history: quiet, now, utilization: u }).check!(nodes[2]!, 300)).toMatchObject({ accepted: expect.stringMatching(/^pays: 24\.0h unneeded/) });
  });

  it('does not drain what the scale-up forecast would buy back: a drain judges at least the scale-up\'s forecast', () => {
    const now = new Date('2026-01-06T22:30:00Z');
    const cfg = config();
    const { nodes, u } = reportingPool([node('a', { gears: 60 }), node('b', { gears: 60 }), node('c', { gears: 10 })], now, cfg);
    const quiet = history(now, () => 130);
    const holds = Math.min(300 * cfg.scaleUp.target, 300 - cfg.scaleUp.headroomGears); // 270 with 300 slots left
    const expecting = (forecastDemand: number) => payoffGate({ config: cfg, history: quiet, now, utilization: u, forecastDemand }).check!(nodes[2]!, 300);
    expect(expecting(holds + 1)).toEqual({ refused: `needed soon: the forecast expects ${holds + 1} gears > the ${holds} the pool holds without it` });
    // A forecast the pool holds without the node (below its level) changes nothing.
    expect(expecting(holds - 1)).toMatchObject({ accepted: expect.stringMatching(/^pays: 24\.0h unneeded/) });
    const rising = payoffGate({ config: cfg, history: quiet, now, utilization: u, forecastDemand: 250 });
    expect(rising.utilization.demand).toBe(250);
    // a forecast below the confident level changes nothing
    expect(payoffGate({ config: cfg, history: quiet, now, utilization: u, forecastDemand: 100 }).utilization.demand).toBe(130);
  });

  it('keeps above a job the kept days expect only what that level keeps (headroomAt), not the full headroom on top of it', () => {
    const now = new Date('2026-01-06T22:30:00Z');
    const cfg = config({ scaleUp: { headroomGears: 150 } });
    const { nodes, u } = reportingPool([node('a', { gears: 60 }), node('b', { gears: 60 }), node('c', { gears: 10 })], now, cfg);
    // 130 gears, and a job to 250 from 23:30 to midnight on each of the last two days.
    const hourOf = (m: number) => new Date(now.getTime() + m * MIN).getUTCHours();
    const jobs = history(now, (m) => (hourOf(m) === 23 && new Date(now.getTime() + m * MIN).getUTCMinutes() >= 30 ? 250 : 130), 50);
    // Without node c, 400 slots less the full 150 of headroom hold 250 gears: the job reaches that, so c is needed.
    const full = payoffGate({ config: cfg, history: jobs, now, utilization: u }).check!(nodes[2]!, 400);
    // The reason says how far below the slots left that level is, and what sets it: the 150 of headroom kept free above it.
    expect(full).toEqual({ refused: "needed again in 30m (yesterday's demand reaches 250 gears, 150 below the 400 slots without it, set by the headroom: 400 slots - 150 headroomGears), within the 4h horizon" });
    // A job's level keeps 20 (the rises on top of it and its day-to-day spread), the usual standing the full 150.
    const headroomAt = { at: (level: number) => (level >= 250 ? 20 : 150), usual: 130 };
    const byLevel = payoffGate({ config: cfg, history: jobs, now, utilization: u, headroomAt }).check!(nodes[2]!, 400);
    expect(byLevel).toMatchObject({ accepted: expect.stringMatching(/^pays: 24\.0h unneeded \(yesterday's demand\)/) });
    // The fit check keeps the full headroom above the usual standing, and above a job in the last hour what the job's
    // level keeps, or what the standing's full headroom leaves above it, whichever is more.
    expect(payoffGate({ config: cfg, history: jobs, now, utilization: u, headroomAt }).keepFree).toBe(150);
    const afterJob = history(now, (m) => (m > -40 && m <= -20 ? 250 : 130), 50);
    expect(payoffGate({ config: cfg, history: afterJob, now, utilization: u, headroomAt }).keepFree).toBe(Math.max(20, 150 - (250 - 130)));
    expect(payoffGate({ config: cfg, history: jobs, now, utilization: u }).keepFree).toBeUndefined();
    // The share still binds: with 300 slots left, 0.7 x 300 = 210 < 250, however little the job keeps.
    // The reason names what the pool holds without the node at the level expected then, not the full headroom's 150.
    expect(payoffGate({ config: cfg, history: jobs, now, utilization: u, headroomAt }).check!(nodes[2]!, 300)).toEqual({
      refused: "needed again in 30m (yesterday's demand reaches 210 gears, 90 below the 300 slots without it, set by the target: 0.7 x 300 slots), within the 4h horizon",
    });
    // Where the level's own margin binds (100 free above the job: 200 < 0.7 x 300), the reason names that margin.
    const margin = { at: () => 100, usual: 130, why: (level: number) => `set by the margin at ${level} gears` };
    expect(payoffGate({ config: cfg, history: jobs, now, utilization: u, headroomAt: margin }).check!(nodes[2]!, 300)).toEqual({
      refused: "needed again in 30m (yesterday's demand reaches 200 gears, 100 below the 300 slots without it, set by the margin at 250 gears), within the 4h horizon",
    });
  });

  it("reads a capacity's levels once, and still prices each candidate's own moves", () => {
    const now = new Date('2026-01-06T22:30:00Z');
    // Restarts priced high enough that a full node's do not pay for a day of its rent.
    const cfg = config({ scaleDown: { payoff: { moveCost: { disruptive: 0.1 } } } });
    const cheap = node('c', { gears: 10 });
    const dear = node('d', { gears: 100 });
    const { u } = reportingPool([node('a', { gears: 60 }), cheap, dear], now, cfg);
    const quiet = history(now, () => 130, 50);
    const fresh = (candidate: typeof cheap, capacity: number) => payoffGate({ config: cfg, history: quiet, now, utilization: u }).check!(candidate, capacity);
    // One gate asked for both nodes at each capacity, in both orders, answers as a gate asked once for each.
    const shared = payoffGate({ config: cfg, history: quiet, now, utilization: u });
    const asked = [[dear, 300], [cheap, 300], [cheap, 150], [dear, 150], [dear, 300]] as const;
    for (const [candidate, capacity] of asked) expect(shared.check!(candidate, capacity)).toEqual(fresh(candidate, capacity));
    // The same levels, a different verdict: the node with 100 gears to move does not pay where the one with 10 does.
    expect(fresh(cheap, 300)).toMatchObject({ accepted: expect.stringMatching(/^pays:/) });
    expect(fresh(dear, 300)).toMatchObject({ refused: expect.stringMatching(/^does not pay:/), pending: true });
    // A capacity too small for the quiet level is refused whatever the node.
    expect(fresh(cheap, 150)).toEqual(fresh(dear, 150));
    expect(fresh(cheap, 150)).toMatchObject({ refused: expect.stringMatching(/^needed now:/) });
  });

  it("weighs a pool's drains with its own move prices, key by key over the global ones", () => {
    const now = new Date('2026-01-06T22:30:00Z');
    const cfg = config();
    const candidate = node('c', { gears: 40 });
    candidate.stats!.disruptiveGears = 30;
    const { u } = reportingPool([node('a', { gears: 60 }), candidate], now, cfg);
    const quiet = history(now, () => 50, 50);
    const verdict = (poolConfig?: Parameters<typeof payoffGate>[0]['poolConfig']) =>
      payoffGate({ config: cfg, history: quiet, now, utilization: u, ...(poolConfig ? { poolConfig } : {}) }).check!(candidate, 300);
    // At the global prices 30 restarts cost $0.675 (and 10 siblings $0.045): a day of a node's rent pays twice that.
    expect(verdict()).toMatchObject({ accepted: expect.stringMatching(/^pays: .* >= 2 x \$0\.72 for 30 disruptive, 10 sibling moves/) });
    // A paid tier's restarts, priced at $0.2 each, do not pay for that day; its siblings keep the global price.
    expect(verdict({ template: cfg.pools[0]!.template, moveCost: { disruptive: 0.2 } })).toMatchObject({ refused: expect.stringMatching(/^does not pay: .* 2 x \$6\.04 for 30 disruptive, 10 sibling moves/) });
    expect(poolMoveCost(cfg.scaleDown.payoff.moveCost, { moveCost: { disruptive: 0.2 } })).toEqual({ idle: 0, sibling: 0.0045, disruptive: 0.2 });
    expect(poolMoveCost(cfg.scaleDown.payoff.moveCost, {})).toBe(cfg.scaleDown.payoff.moveCost);
  });

  it('is off when payoff is disabled', () => {
    const cfg = config({ scaleDown: { payoff: { enabled: false } } });
    const nodes = [node('a', { gears: 60 })];
    const u = computeUtilization({ pool: POOL, nodes, drains: [], now: new Date(), statsMaxAge: cfg.statsMaxAge, expectedGearsPerNode: 100 });
    const gate = payoffGate({ config: cfg, history: undefined, now: new Date(), utilization: u });
    expect(gate.check).toBeUndefined();
    expect(gate.utilization).toBe(u);
  });
});
