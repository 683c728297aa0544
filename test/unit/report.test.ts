import { describe, expect, it } from 'vitest';
import { renderReport, type ReportInput } from '../../lib/sim/report.js';

const input = (overrides: Partial<ReportInput> = {}): ReportInput => ({
  title: 'replay </script><script>alert(1)</script>',
  trace: { source: 'trace.csv', demandColumn: 'cpu', durationSeconds: 7200 },
  thresholds: { scaleUp: 0.95, scaleDown: 0.88 },
  pricePerNodeHour: 0.5,
  settings: [['seed', '42'], ['boot delay', '120 s']],
  policies: [
    {
      policy: 'nodescaler',
      nodeHours: 10,
      oracleNodeHours: 9,
      ratioToOracle: 10 / 9,
      unplacedGearMinutes: 0,
      unplacedShare: 0,
      scaleUps: 1,
      scaleDowns: 1,
      gearMoves: 7,
      maxNodes: 6,
      deadLetters: 0,
      invariantViolations: 0,
      series: [
        { at: 0, demand: 400, capacity: 500, nodes: 5, unplaced: 0, moved: 0 },
        { at: 3600, demand: 300, capacity: 400, nodes: 4, unplaced: 0, moved: 7 },
      ],
      events: [{ at: 1800, kind: 'down', node: 'node-5.sim.local', reason: 'low </b>', decisionId: 'down:sim_small:1', gearsMoved: 7 }],
    },
  ],
  notes: ['a note'],
  ...overrides,
});

describe('renderReport', () => {
  it('is one offline page: no URL to fetch, the data inline and unable to close its script element', () => {
    const html = renderReport(input());
    expect(html).not.toMatch(/(src|href)=["']?(https?:)?\/\//);
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html).toContain('replay &lt;/script&gt;');
    const json = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html)![1]!;
    expect(json).not.toContain('</');
    const data = JSON.parse(json) as { policies: Array<{ moved: number[]; events: Array<{ reason: string }> }>; thresholds: unknown };
    expect(data.policies[0]!.moved).toEqual([0, 7]);
    expect(data.policies[0]!.events[0]!.reason).toBe('low </b>');
    expect(data.thresholds).toEqual({ scaleUp: 0.95, scaleDown: 0.88 });
  });

  it('shows cost as node-hours x price when the result has none, and the run settings', () => {
    const html = renderReport(input());
    expect(html).toContain('<td>$5</td>');
    expect(html).toContain('<tr><th>boot delay</th><td>120 s</td></tr>');
    const priced = renderReport(input({ policies: [{ ...input().policies[0]!, cost: 12.4 }] }));
    expect(priced).toContain('<td>$12</td>');
  });

  it('names the start date when the trace has dates, and says so when it has none', () => {
    expect(renderReport(input())).toContain('the trace has no dates');
    const dated = renderReport(input({ trace: { source: 't.csv', demandColumn: 'cpu', durationSeconds: 7200, startsAt: '2026-01-01T00:00:00.000Z' } }));
    expect(dated).toContain('from 2026-01-01T00:00:00.000Z');
    expect(dated).toContain('"startsAt":"2026-01-01T00:00:00.000Z"');
  });
});
