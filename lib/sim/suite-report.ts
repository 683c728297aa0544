/**
 * `out/suite.html` (and `out/heldout-seed-S.html`): the trace suite's figures as one
 * offline page to explore instead of eight tables to read. The product's
 * trade, node-hours against tenant restarts, is a scatter: one mark per trace
 * and policy at its node-hours and its gear moves, both as multiples of
 * clairvoyant-4h's on the same trace, with the goal line's box (1.05 x
 * node-hours, 1.5 x moves) drawn in. Policies toggle, a trace can be picked
 * out, each mark names its figures on hover; under the chart, nodescaler's goal
 * checks per trace with the reason for each miss. The embedded script
 * (suite-report-page.js) is read from disk and inlined, as report.ts does.
 */
import { readFileSync } from 'node:fs';
import { NODE_HOURS_GOAL_RATIO } from './floor.js';
import { COLORS, EXTRA_COLORS, escapeHtml, pageStart, settingsRows } from './report.js';
import type { PolicyResult } from './results.js';
import type { GoalCheck } from './summary.js';

/** The moves line of the goal (README, "The goal line"). */
export const MOVES_GOAL_RATIO = 1.5;

export interface SuiteReportTrace {
  name: string;
  /** A held-out shape's components. */
  note?: string;
  results: ReadonlyArray<Pick<PolicyResult, 'policy' | 'nodeHours' | 'gearMoves' | 'unplacedShare' | 'unplacedGearMinutes'>>;
  /** nodescaler's goal checks on this trace (summary.ts `goalChecks`). */
  checks: readonly GoalCheck[];
}

export interface SuiteReportInput {
  title: string;
  settings: ReadonlyArray<readonly [string, string]>;
  traces: readonly SuiteReportTrace[];
}

/**
 * A trace's entry for the page, holding only the figures it draws: a suite keeps
 * every trace's entry until its end, and a replay's results carry its whole
 * series.
 */
export function suiteReportTrace(name: string, results: readonly PolicyResult[], checks: readonly GoalCheck[], note?: string): SuiteReportTrace {
  return {
    name,
    ...(note === undefined ? {} : { note }),
    results: results.map(({ policy, nodeHours, gearMoves, unplacedShare, unplacedGearMinutes }) => ({ policy, nodeHours, gearMoves, unplacedShare, unplacedGearMinutes })),
    checks,
  };
}

/** One mark of the scatter. */
export interface SuitePoint {
  trace: string;
  policy: string;
  nodeHours: number;
  /** Node-hours / clairvoyant-4h's on the same trace. */
  nodeHoursRatio: number;
  moves: number;
  /** Moves / clairvoyant-4h's; null where clairvoyant-4h moved none (no ratio to draw). */
  movesRatio: number | null;
  unplacedShare: number;
  waitingGearMinutes: number;
}

/** Every policy's mark on every trace that has clairvoyant-4h to compare with (a trace without it has no ratio). */
export function suitePoints(traces: readonly SuiteReportTrace[]): SuitePoint[] {
  const points: SuitePoint[] = [];
  for (const trace of traces) {
    const reference = trace.results.find((r) => r.policy === 'clairvoyant-4h');
    if (!reference || reference.nodeHours <= 0) continue;
    for (const r of trace.results) {
      points.push({
        trace: trace.name,
        policy: r.policy,
        nodeHours: r.nodeHours,
        nodeHoursRatio: r.nodeHours / reference.nodeHours,
        moves: r.gearMoves,
        movesRatio: reference.gearMoves > 0 ? r.gearMoves / reference.gearMoves : null,
        unplacedShare: r.unplacedShare,
        waitingGearMinutes: r.unplacedGearMinutes,
      });
    }
  }
  return points;
}

const PAGE_SCRIPT = new URL('./suite-report-page.js', import.meta.url);

/** The whole page as one string. */
export function renderSuiteReport(input: SuiteReportInput): string {
  const names = [...new Set(input.traces.flatMap((t) => t.results.map((r) => r.policy)))];
  const policies = names.map((name, i) => ({ name, color: COLORS[name] ?? EXTRA_COLORS[i % EXTRA_COLORS.length]! }));
  const data = { points: suitePoints(input.traces), policies, traces: input.traces.map((t) => t.name), goal: { nodeHours: NODE_HOURS_GOAL_RATIO, moves: MOVES_GOAL_RATIO } };
  const met = input.traces.reduce((sum, t) => sum + t.checks.filter((c) => c.met).length, 0);
  const all = input.traces.reduce((sum, t) => sum + t.checks.length, 0);
  const infeasible = input.traces.reduce((sum, t) => sum + t.checks.filter((c) => c.infeasible).length, 0);
  const rows = input.traces.map((t) => goalRow(t)).join('\n');
  return `${pageStart(
    input.title,
    `td,th{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
.muted{color:#666;font-size:12px}.swatch{display:inline-block;width:10px;height:10px;margin-right:5px;border-radius:50%}
#legend{display:flex;flex-wrap:wrap;gap:10px;align-items:center;margin:6px 0;font-size:12px}
#readout{font-size:12px;min-height:34px;color:#333}
#chart svg{display:block;width:100%}#chart circle{cursor:pointer}
.missed{color:#b00}.infeasible{color:#666}`,
  )}
<p class="muted">Each mark is one policy on one trace: its node-hours (across) and its gear moves, each a tenant restart (up, log scale),
both as multiples of clairvoyant-4h's on the same trace (perfect foresight holding its node count for 4 hours). The shaded box is
the goal line's: at most ${NODE_HOURS_GOAL_RATIO} x its node-hours and ${MOVES_GOAL_RATIO} x its moves. Marks on the bottom row moved no gear, or
clairvoyant-4h moved none there. nodescaler meets ${met} of ${all} goal checks; ${infeasible} of the ${all - met} misses are out of reach by the figures.</p>
<div id="legend"></div>
<div id="readout">Hover a mark for its figures; pick a trace to bring its marks forward.</div>
<div id="chart"></div>
<h2>nodescaler's goal checks, trace by trace</h2>
<div class="scroll"><table id="goal-table"><thead><tr><th>trace</th><th>met</th><th>missed (why)</th></tr></thead><tbody>
${rows}
</tbody></table></div>
<h2>Settings of this run</h2>
<div class="scroll"><table id="settings">${settingsRows(input.settings)}</table></div>
<script type="application/json" id="suite-data">${JSON.stringify(data).replace(/</g, '\\u003c')}</script>
<script>
${readFileSync(PAGE_SCRIPT, 'utf8')}
</script>
</body></html>
`;
}

function goalRow(trace: SuiteReportTrace): string {
  const met = trace.checks.filter((c) => c.met).length;
  const missed = trace.checks
    .filter((c) => !c.met)
    .map((c) => `<li class="${c.infeasible ? 'infeasible' : 'missed'}">${escapeHtml(c.text)}${c.why ? ` (${escapeHtml(c.why)})` : ''}</li>`)
    .join('');
  const note = trace.note ? `<div class="muted">${escapeHtml(trace.note)}</div>` : '';
  return `<tr data-trace="${escapeHtml(trace.name)}"><td>${escapeHtml(trace.name)}${note}</td><td>${met}/${trace.checks.length}</td><td>${missed ? `<ul>${missed}</ul>` : 'none'}</td></tr>`;
}
