import { describe, expect, it } from 'vitest';
import type { ReactiveFloor } from '../../lib/sim/floor.js';
import { figureAgainst, goalChecks, goalLine, togglesLine, waitingLine } from '../../lib/sim/summary.js';
import { policyResult, reactiveRun } from '../support/builders.js';

const run = reactiveRun;

/** The 5x bursts at 2,000 gears as the suite measured them (README, "The trace suite"). */
const bursts = [
  policyResult('nodescaler', { nodeHours: 1281, gearMoves: 1781, unplacedShare: 0.00326, unplacedGearMinutes: 16818 }),
  policyResult('cluster-autoscaler', { nodeHours: 1365, gearMoves: 6000, unplacedShare: 0.0035, unplacedGearMinutes: 18064 }),
  policyResult('karpenter', { nodeHours: 1030, gearMoves: 12938, unplacedShare: 0.00607, unplacedGearMinutes: 31000 }),
  policyResult('clairvoyant-1h', { nodeHours: 1110, gearMoves: 1950 }),
  policyResult('clairvoyant-4h', { nodeHours: 1372, gearMoves: 1725 }),
];

const burstsFloor: ReactiveFloor = {
  bootDelaySeconds: 120,
  nodeHoursLine: 1.05 * 1372,
  floor: run({ headroomGears: 279, holdSeconds: 600, waitingGearMinutes: 3110, nodeHours: 1437 }),
  forUnplacedGoal: run({ headroomGears: 1092, waitingGearMinutes: 970, nodeHours: 2775 }),
  forClusterAutoscaler: run({ headroomGears: 179, waitingGearMinutes: 18018, nodeHours: 1212 }),
  waitingNothing: run({ headroomGears: 1600, waitingGearMinutes: 0, nodeHours: 3500 }),
};

describe('the goal line with the reactive floor', () => {
  it('names a miss the floor shows impossible, with its figures, and counts it', () => {
    const line = goalLine(bursts, burstsFloor)!;
    expect(line).toMatch(/^goal \(6\/8 met; 2 of the 2 misses are infeasible here\): /);
    expect(line).toContain('unplaced 0.326 % <= 0.1 % MISSED (reactive floor 0.311 %: impossible without holding 1,092 gears of headroom, 2.02 x c-4h)');
    expect(line).toContain(
      "node-hours < karpenter's (1281 vs 1030) MISSED (impossible: karpenter's 1030 are below clairvoyant-1h's 1110, foresight resizing hourly; it resizes each minute, 7.5 x c-4h's moves, unplaced 0.607 %)",
    );
    // Met checks carry no explanation.
    expect(line).toContain("node-hours < cluster-autoscaler's (1281 vs 1365) MET;");
  });

  it('keeps met and missed exactly as without the floor: an infeasible check still counts as missed', () => {
    const plain = goalChecks(bursts)!;
    const withFloor = goalChecks(bursts, burstsFloor)!;
    expect(withFloor.map((c) => c.met)).toEqual(plain.map((c) => c.met));
    expect(withFloor.filter((c) => c.infeasible).map((c) => c.text)).toEqual(['unplaced 0.326 % <= 0.1 %', "node-hours < karpenter's (1281 vs 1030)"]);
  });

  it('says a miss is reachable when a reactive rule reaches it within the node-hours line, and does not count it', () => {
    const cheap: ReactiveFloor = { ...burstsFloor, floor: run({ waitingGearMinutes: 500, nodeHours: 1300 }), forUnplacedGoal: run({ headroomGears: 120, waitingGearMinutes: 900, nodeHours: 1400 }) };
    const line = goalLine(bursts, cheap)!;
    expect(line).toContain('unplaced 0.326 % <= 0.1 % MISSED (reactive floor 0.050 %: reachable, 120 gears of headroom, 1.02 x c-4h)');
    expect(line).toMatch(/^goal \(6\/8 met; 1 of the 2 misses are infeasible here\)/);
  });

  it("judges node-hours below cluster-autoscaler's by the cheapest reactive rule that waits no more than it and <= 0.1 %", () => {
    // A load at its peak: cluster-autoscaler holds the peak's nodes and nothing waits.
    const results = [
      policyResult('nodescaler', { nodeHours: 3528, unplacedGearMinutes: 113, unplacedShare: 0.00001 }),
      policyResult('cluster-autoscaler', { nodeHours: 3360, unplacedGearMinutes: 194 }),
      policyResult('clairvoyant-4h', { nodeHours: 3360 }),
    ];
    const atPeak: ReactiveFloor = { ...burstsFloor, nodeHoursLine: 3528, forClusterAutoscaler: run({ holdSeconds: 4 * 3600, waitingGearMinutes: 92, nodeHours: 3360 }) };
    expect(goalLine(results, atPeak)).toContain(
      "node-hours < cluster-autoscaler's (3528 vs 3360) MISSED (impossible: the cheapest reactive rule that waits no more and <= 0.1 %, the last 4 h's highest demand + 0 gears waits 92 gear-min (0.009 %; cluster-autoscaler 194) in 3,360 node-h)",
    );
    const below: ReactiveFloor = {
      ...atPeak,
      forClusterAutoscaler: run({ headroomGears: 2, waitingGearMinutes: 0, nodeHours: 3349 }),
      waitingNothing: run({ headroomGears: 2, waitingGearMinutes: 0, nodeHours: 3349 }),
    };
    const line = goalLine(results, below)!;
    expect(line).toContain("(3528 vs 3360) MISSED (reachable: 2 gears of headroom waits 0 gear-min (0.000 %; cluster-autoscaler 194) in 3,349 node-h)");
    expect(goalChecks(results, below)!.some((c) => c.infeasible)).toBe(false);
  });

  it("says when cluster-autoscaler's node-hours are within reach only by letting gears wait, and still counts the miss reachable", () => {
    // Steady growth at 2,000 gears: cluster-autoscaler buys a node only once gears wait for it.
    const results = [
      policyResult('nodescaler', { nodeHours: 2454, unplacedGearMinutes: 0 }),
      policyResult('cluster-autoscaler', { nodeHours: 2402, unplacedGearMinutes: 1146 }),
      policyResult('clairvoyant-4h', { nodeHours: 2413 }),
    ];
    const growth: ReactiveFloor = {
      ...burstsFloor,
      nodeHoursLine: 1.05 * 2413,
      forClusterAutoscaler: run({ headroomGears: 4, holdSeconds: 600, waitingGearMinutes: 1046, demandGearMinutes: 13_000_000, nodeHours: 2367 }),
      waitingNothing: run({ headroomGears: 21, holdSeconds: 3600, nodeHours: 2409 }),
    };
    expect(goalLine(results, growth)).toContain(
      "node-hours < cluster-autoscaler's (2454 vs 2402) MISSED (reachable only by letting gears wait: the last 10 min's highest demand + 4 gears waits 1,046 gear-min (0.008 %; cluster-autoscaler 1,146) in 2,367 node-h; leaving none waiting, as the scale-up's zero tolerance does, takes the last 1 h's highest demand + 21 gears, 2,409 node-h)",
    );
    expect(goalChecks(results, growth)!.some((c) => c.infeasible)).toBe(false);
    // The same miss where no gear need wait for it reads plainly reachable.
    const without = goalLine(results, { ...growth, waitingNothing: run({ headroomGears: 8, nodeHours: 2390 }) })!;
    expect(without).toContain("(2454 vs 2402) MISSED (reachable: the last 10 min's highest demand + 4 gears waits 1,046 gear-min");
    expect(without).not.toContain('only by letting gears wait');
  });

  it("judges waiting above cluster-autoscaler's by the reactive floor within the node-hours line", () => {
    const results = [policyResult('nodescaler', { nodeHours: 100, unplacedGearMinutes: 5000 }), policyResult('cluster-autoscaler', { nodeHours: 120, unplacedGearMinutes: 4000 }), policyResult('clairvoyant-4h', { nodeHours: 100 })];
    const unavoidable: ReactiveFloor = { ...burstsFloor, floor: run({ waitingGearMinutes: 4500 }), forClusterAutoscaler: run({ nodeHours: 200 }) };
    expect(goalLine(results, unavoidable)).toContain("waiting gear-min <= cluster-autoscaler's (5000 vs 4000) MISSED (impossible: reactive floor 4,500 gear-min within the node-hours line)");
    const avoidable: ReactiveFloor = { ...unavoidable, floor: run({ waitingGearMinutes: 3000 }) };
    expect(goalLine(results, avoidable)).toContain("(5000 vs 4000) MISSED (reactive floor 3,000 gear-min within the node-hours line)");
  });

  it("leaves karpenter's node-hours a plain miss when karpenter does not run below clairvoyant-1h and no floor was computed", () => {
    const results = bursts.map((r) => (r.policy === 'clairvoyant-1h' ? { ...r, nodeHours: 1000 } : r));
    expect(goalLine(results)).toContain("node-hours < karpenter's (1281 vs 1030) MISSED;");
    expect(goalLine(results)).toMatch(/^goal \(6\/8 met; 0 of the 2 misses are infeasible here\)/);
  });

  it("judges karpenter's node-hours above clairvoyant-1h by the cheapest reactive rule that meets the line's waiting checks", () => {
    // Held-out s27-6 at 2,000 gears: karpenter resizes each minute to clairvoyant-1h's level and leaves 0.242 % waiting.
    const results = [
      policyResult('nodescaler', { nodeHours: 2459, unplacedGearMinutes: 600, unplacedShare: 0.00005 }),
      policyResult('cluster-autoscaler', { nodeHours: 2518, unplacedGearMinutes: 676 }),
      policyResult('karpenter', { nodeHours: 2350, unplacedShare: 0.00242 }),
      policyResult('clairvoyant-1h', { nodeHours: 2344 }),
      policyResult('clairvoyant-4h', { nodeHours: 2411 }),
    ];
    const daily: ReactiveFloor = {
      ...burstsFloor,
      nodeHoursLine: 1.05 * 2411,
      forUnplacedGoal: run({ holdSeconds: 600, nodeHours: 2315 }),
      forClusterAutoscaler: run({ headroomGears: 22, holdSeconds: 3600, nodeHours: 2374 }),
      waitingNothing: run({ headroomGears: 244, holdSeconds: 4 * 3600, nodeHours: 2836 }),
    };
    const check = (floor: ReactiveFloor) => goalChecks(results, floor)!.find((c) => c.name === 'karpenter node-hours')!;
    expect(check(daily)).toMatchObject({
      met: false,
      infeasible: true,
      why: "impossible: the cheapest reactive rule that waits no more than cluster-autoscaler and <= 0.1 %, the last 1 h's highest demand + 22 gears holds 2,374 node-h; karpenter's 2,350 leave 0.242 % unplaced",
    });
    // Without cluster-autoscaler's run the line's waiting check is 0.1 % alone, which a rule below karpenter meets by letting gears wait.
    const alone = results.filter((r) => r.policy !== 'cluster-autoscaler');
    const withoutCa = goalChecks(alone, { ...daily, forClusterAutoscaler: undefined })!.find((c) => c.name === 'karpenter node-hours')!;
    expect(withoutCa).toMatchObject({ infeasible: false });
    expect(withoutCa.why).toBe(
      "reachable only by letting gears wait: the last 10 min's highest demand + 0 gears holds 2,315 node-h; karpenter's 2,350 leave 0.242 % unplaced; leaving none waiting, as the scale-up's zero tolerance does, takes the last 4 h's highest demand + 244 gears, 2,836 node-h",
    );
    expect(check({ ...daily, forClusterAutoscaler: undefined, waitingNothing: run({ headroomGears: 10, nodeHours: 2340 }) }).why).toMatch(/^reachable: the last 10 min's highest demand \+ 0 gears holds 2,315 node-h/);
  });
});

describe('the gear moves check', () => {
  it('names the moves and says clairvoyant-4h moved none when it never released a node, instead of an infinite ratio', () => {
    const growing = (moves: number) => [policyResult('nodescaler', { gearMoves: moves }), policyResult('clairvoyant-4h', { gearMoves: 0 })];
    expect(goalChecks(growing(85))!.find((c) => c.text.startsWith('gear moves'))).toEqual({ name: 'moves', text: 'gear moves 85 where clairvoyant-4h moves none (<= 1.5 x)', met: false });
    expect(goalChecks(growing(0))!.find((c) => c.text.startsWith('gear moves'))?.met).toBe(true);
    expect(goalChecks([policyResult('nodescaler', { gearMoves: 30 }), policyResult('clairvoyant-4h', { gearMoves: 20 })])!.find((c) => c.text.startsWith('gear moves'))).toEqual({ name: 'moves', text: 'gear moves 1.50 x clairvoyant-4h <= 1.5', met: true });
  });

  it("calls fewer moves than karpenter's out of reach where karpenter moved none (nothing is fewer), and only there", () => {
    const check = (ours: number, theirs: number) => goalChecks([policyResult('nodescaler', { gearMoves: ours }), policyResult('karpenter', { gearMoves: theirs })])!.find((c) => c.name === 'karpenter moves');
    expect(check(0, 0)).toEqual({ name: 'karpenter moves', text: "moves < karpenter's (0 vs 0)", met: false, infeasible: true, why: 'impossible: karpenter moved no gear, and no policy moves fewer' });
    expect(check(5, 3)).toEqual({ name: 'karpenter moves', text: "moves < karpenter's (5 vs 3)", met: false });
    expect(check(3, 5)).toEqual({ name: 'karpenter moves', text: "moves < karpenter's (3 vs 5)", met: true });
  });
});

describe('a figure beside its line', () => {
  it('shows the digits that tell a miss from the line, where the usual rounding would read as met', () => {
    // Azure cpu_usage at 200,000 gears, 3 days: 133,904 node-hours against clairvoyant-4h's 127,504 (line 133,879).
    const results = [policyResult('nodescaler', { nodeHours: 133_904 }), policyResult('clairvoyant-4h', { nodeHours: 127_504 })];
    expect(goalChecks(results)![0]).toEqual({ name: 'node-hours', text: 'node-hours 1.0502 x clairvoyant-4h <= 1.05', met: false });
    expect(figureAgainst(1.0502, 1.05, 3)).toBe('1.0502');
    expect(figureAgainst(1.5004, 1.5, 2)).toBe('1.5004');
    expect(figureAgainst(0.10004, 0.1, 3)).toBe('0.10004');
  });

  it('keeps the usual digits where they already tell, and for a figure that meets its line', () => {
    expect(figureAgainst(1.0496, 1.05, 3)).toBe('1.050');
    expect(figureAgainst(1.064, 1.05, 3)).toBe('1.064');
    expect(figureAgainst(1.5, 1.5, 2)).toBe('1.50');
    expect(figureAgainst(0.326, 0.1, 3)).toBe('0.326');
  });
});

describe("nodescaler's waiting line", () => {
  it("says how much of the waiting was beside closed nodes' free slots", () => {
    const results = [policyResult('nodescaler', { unplacedGearMinutes: 11_121, waitingBesideClosedGearMinutes: 596 }), policyResult('karpenter', { unplacedGearMinutes: 9 })];
    expect(waitingLine(results)).toBe("waiting 11,121 gear-min, of them beside closed nodes' free slots 596 (5 %)");
    expect(waitingLine([policyResult('nodescaler', { waitingBesideClosedGearMinutes: 0 })])).toBe("waiting 0 gear-min, of them beside closed nodes' free slots 0");
  });

  it('is left out when the run did not measure it', () => {
    expect(waitingLine([policyResult('nodescaler', { unplacedGearMinutes: 40 })])).toBeUndefined();
    expect(waitingLine([policyResult('karpenter', { unplacedGearMinutes: 40, waitingBesideClosedGearMinutes: 3 })])).toBeUndefined();
  });
});

describe("nodescaler's closes and reopens", () => {
  it('counts the broker calls and gives their rate per node-day', () => {
    // 30 + 18 calls over 480 node-hours (20 node-days).
    const results = [policyResult('nodescaler', { nodeHours: 480, nodeToggles: { closes: 30, reopens: 18 } }), policyResult('karpenter', { nodeHours: 400 })];
    expect(togglesLine(results)).toBe('closes and reopens to new gears: 30 deactivate-node, 18 activate-node, 2.40 per node-day');
    expect(togglesLine([policyResult('nodescaler', { nodeHours: 0, nodeToggles: { closes: 0, reopens: 0 } })])).toBe('closes and reopens to new gears: 0 deactivate-node, 0 activate-node, 0.00 per node-day');
  });

  it('is left out when the run did not count them', () => {
    expect(togglesLine([policyResult('nodescaler', { nodeHours: 480 })])).toBeUndefined();
    expect(togglesLine([policyResult('karpenter', { nodeToggles: { closes: 1, reopens: 1 } })])).toBeUndefined();
  });
});
