import { describe, expect, it } from 'vitest';
import { renderSuiteReport, suitePoints, suiteReportTrace, type SuiteReportTrace } from '../../lib/sim/suite-report.js';
import { policyResult } from '../support/builders.js';

/** NASA at 2,000 gears as the suite measured it (README, "The trace suite"), three of its policies. */
const nasa: SuiteReportTrace = {
  name: 'nasa1995_http_requests_300s:requests',
  results: [
    policyResult('nodescaler', { nodeHours: 1989, gearMoves: 1619, unplacedShare: 0.00043, unplacedGearMinutes: 3109 }),
    policyResult('cluster-autoscaler', { nodeHours: 1810, gearMoves: 200, unplacedShare: 0.0016, unplacedGearMinutes: 11731 }),
    policyResult('clairvoyant-4h', { nodeHours: 1965, gearMoves: 2840 }),
  ],
  checks: [
    { name: 'node-hours', text: 'node-hours 1.012 x clairvoyant-4h <= 1.05', met: true },
    { name: 'cluster-autoscaler node-hours', text: "node-hours < cluster-autoscaler's (1989 vs 1810)", met: false, why: 'reachable only by letting gears wait: ...' },
    { name: 'karpenter node-hours', text: "node-hours < karpenter's (1989 vs 1497)", met: false, infeasible: true, why: "impossible: karpenter's 1497 are below clairvoyant-1h's 1685" },
  ],
};

/** A flat load where clairvoyant-4h never releases a node. */
const flat: SuiteReportTrace = {
  name: 'synthetic:noisy-flat',
  note: 'shape: noise 5 %',
  results: [policyResult('nodescaler', { nodeHours: 3528, gearMoves: 0 }), policyResult('clairvoyant-4h', { nodeHours: 3360, gearMoves: 0 })],
  checks: [{ name: 'moves', text: 'gear moves 0 where clairvoyant-4h moves none (<= 1.5 x)', met: true }],
};

describe('suitePoints', () => {
  it("places every policy at its node-hours and moves as multiples of clairvoyant-4h's on the same trace", () => {
    const points = suitePoints([nasa]);
    expect(points.map((p) => p.policy)).toEqual(['nodescaler', 'cluster-autoscaler', 'clairvoyant-4h']);
    const ours = points[0]!;
    expect(ours.nodeHoursRatio).toBeCloseTo(1989 / 1965, 9);
    expect(ours.movesRatio).toBeCloseTo(1619 / 2840, 9);
    expect(ours).toMatchObject({ trace: nasa.name, nodeHours: 1989, moves: 1619, unplacedShare: 0.00043, waitingGearMinutes: 3109 });
    expect(points[2]).toMatchObject({ nodeHoursRatio: 1, movesRatio: 1 });
  });

  it('gives no moves ratio where clairvoyant-4h moved none, and leaves out a trace without clairvoyant-4h', () => {
    const points = suitePoints([flat, { name: 'no reference', results: [policyResult('nodescaler', { nodeHours: 10 })], checks: [] }]);
    expect(points).toHaveLength(2);
    expect(points.every((p) => p.movesRatio === null && p.trace === flat.name)).toBe(true);
    expect(points[0]!.nodeHoursRatio).toBeCloseTo(1.05, 9);
  });
});

describe('suiteReportTrace', () => {
  it('keeps only the figures the page draws, not the replay series', () => {
    const full = policyResult('nodescaler', { nodeHours: 10, gearMoves: 3, unplacedShare: 0.001, unplacedGearMinutes: 7, series: [{ at: 0, demand: 1, capacity: 2, nodes: 1, unplaced: 0 }] });
    expect(suiteReportTrace('t', [full], [], 'shape: noise 5 %')).toEqual({
      name: 't',
      note: 'shape: noise 5 %',
      results: [{ policy: 'nodescaler', nodeHours: 10, gearMoves: 3, unplacedShare: 0.001, unplacedGearMinutes: 7 }],
      checks: [],
    });
    expect(suiteReportTrace('t', [full], [])).not.toHaveProperty('note');
  });
});

describe('renderSuiteReport', () => {
  const page = renderSuiteReport({ title: 'suite <run>', settings: [['peak gears', '2,000']], traces: [nasa, flat] });
  const data = JSON.parse(/<script type="application\/json" id="suite-data">(.*?)<\/script>/s.exec(page)![1]!) as {
    points: unknown[];
    policies: Array<{ name: string; color: string }>;
    traces: string[];
    goal: { nodeHours: number; moves: number };
  };

  it('embeds the marks, the policies with their colours, the traces and the goal box for the page script', () => {
    expect(data.points).toEqual(suitePoints([nasa, flat]));
    expect(data.policies.map((p) => p.name)).toEqual(['nodescaler', 'cluster-autoscaler', 'clairvoyant-4h']);
    expect(data.policies[0]!.color).toBe('#1f77b4');
    expect(data.traces).toEqual([nasa.name, flat.name]);
    expect(data.goal).toEqual({ nodeHours: 1.05, moves: 1.5 });
  });

  it("lists nodescaler's goal checks per trace, each miss with its reason, and the tally", () => {
    expect(page).toContain('nodescaler meets 2 of 4 goal checks; 1 of the 2 misses are out of reach by the figures.');
    expect(page).toContain(`<tr data-trace="${nasa.name}"><td>${nasa.name}</td><td>1/3</td>`);
    expect(page).toContain("<li class=\"missed\">node-hours &lt; cluster-autoscaler's (1989 vs 1810) (reachable only by letting gears wait: ...)</li>");
    expect(page).toContain('<li class="infeasible">node-hours &lt; karpenter');
    expect(page).toContain('<div class="muted">shape: noise 5 %</div></td><td>1/1</td><td>none</td>');
  });

  it('escapes text into the page and keeps the embedded data from closing its script', () => {
    expect(page).toContain('<title>suite &lt;run&gt;</title>');
    const hostile = renderSuiteReport({ title: 't', settings: [], traces: [{ ...flat, name: 'x</script><script>alert(1)</script>' }] });
    const json = /<script type="application\/json" id="suite-data">(.*?)<\/script>/s.exec(hostile)![1]!;
    expect(json).not.toContain('</script>');
    expect((JSON.parse(json) as { traces: string[] }).traces).toEqual(['x</script><script>alert(1)</script>']);
    expect(hostile).toContain('<td>x&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
  });
});
