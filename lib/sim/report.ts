/**
 * `out/report.html`: one offline page (no CDN, no network) an operator can
 * explore. The server side writes the summary, the run's settings and the
 * data as JSON; a small embedded script (report-page.js, read from disk and
 * inlined) draws the panels and handles zoom, pan and hover.
 *
 * The input is a small typed interface on purpose: PolicyResult satisfies
 * ReportPolicy as it is, and richer results (a cost, moves per event) only
 * fill optional fields.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { ScaleEvent } from './results.js';

/** One sample of a policy's run. */
export interface ReportPoint {
  /** Seconds from the start of the trace. */
  at: number;
  demand: number;
  /** Gear slots of nodes that take gears. */
  capacity: number;
  /** Hosts that cost money: booting, active, draining. */
  nodes: number;
  /** Gears waiting for a slot. */
  unplaced: number;
  /** Gear moves completed since the start (cumulative); gives the moves-per-hour panel. */
  moved?: number;
  /** Gear moves completed since the previous point (the replay's results carry this; `moved` is derived from it). */
  moves?: number;
}

/** A scale action; the optional fields show on hover when the result carries them. */
export type ReportEvent = ScaleEvent;

export interface ReportPolicy {
  policy: string;
  nodeHours: number;
  ratioToOracle: number;
  oracleNodeHours: number;
  unplacedGearMinutes: number;
  unplacedShare: number;
  scaleUps: number;
  scaleDowns: number;
  gearMoves: number;
  maxNodes: number;
  deadLetters: number;
  invariantViolations: number;
  /** Money spent over the run; nodeHours x pricePerNodeHour when absent. */
  cost?: number;
  series: readonly ReportPoint[];
  events: readonly ReportEvent[];
}

export interface ReportInput {
  title: string;
  trace: {
    source: string;
    demandColumn: string;
    durationSeconds: number;
    /** ISO date-time of the first row when the trace's time column holds dates: the axis then shows real dates. */
    startsAt?: string;
  };
  /** The utilization thresholds drawn on the utilization panel. */
  thresholds?: { scaleUp: number; scaleDown: number };
  /** Price of one node-hour, for the cost panel and column. */
  pricePerNodeHour: number;
  currency?: string;
  /** The run's settings as label / value pairs (configuration, pools, seed, boot delay). */
  settings: ReadonlyArray<readonly [string, string]>;
  policies: readonly ReportPolicy[];
  notes: readonly string[];
}

/** A policy's colour on every page (out/report.html, out/suite.html). */
export const COLORS: Record<string, string> = {
  nodescaler: '#1f77b4',
  'static-peak': '#7f7f7f',
  'cluster-autoscaler': '#ff7f0e',
  karpenter: '#9467bd',
  'clairvoyant-1h': '#8c564b',
  'clairvoyant-4h': '#e377c2',
};
export const EXTRA_COLORS = ['#17becf', '#bcbd22', '#2ca02c', '#d62728'];

const PAGE_SCRIPT = new URL('./report-page.js', import.meta.url);

/** The whole page as one string. */
export function renderReport(input: ReportInput): string {
  const currency = input.currency ?? '$';
  const policies = input.policies.map((p, i) => ({
    ...p,
    color: COLORS[p.policy] ?? EXTRA_COLORS[i % EXTRA_COLORS.length]!,
    cost: p.cost ?? p.nodeHours * input.pricePerNodeHour,
  }));
  const oracle = policies[0]?.oracleNodeHours ?? 0;
  const data = {
    trace: input.trace,
    thresholds: input.thresholds ?? null,
    pricePerNodeHour: input.pricePerNodeHour,
    currency,
    policies: policies.map((p) => ({
      name: p.policy,
      color: p.color,
      dashed: p.policy !== 'nodescaler',
      // Columns, not objects: a 30-day run has thousands of samples per policy.
      at: p.series.map((s) => s.at),
      demand: p.series.map((s) => s.demand),
      capacity: p.series.map((s) => s.capacity),
      nodes: p.series.map((s) => s.nodes),
      unplaced: p.series.map((s) => s.unplaced),
      moved: cumulativeMoves(p.series),
      events: p.events,
    })),
  };
  const rows = policies
    .map(
      (p) =>
        `<tr><td><span class="swatch" style="background:${p.color}"></span>${escapeHtml(p.policy)}</td><td>${fixed(p.nodeHours, 1)}</td><td>${p.ratioToOracle.toFixed(3)}</td>` +
        `<td>${currency}${fixed(p.cost, 0)}</td><td>${fixed(p.unplacedGearMinutes, 0)}</td><td>${(p.unplacedShare * 100).toFixed(3)} %</td>` +
        `<td>${p.scaleUps}</td><td>${p.scaleDowns}</td><td>${fixed(p.gearMoves, 0)}</td><td>${p.maxNodes}</td><td>${p.deadLetters}</td><td>${p.invariantViolations}</td></tr>`,
    )
    .join('\n');
  return `${pageStart(
    input.title,
    `td,th{border:1px solid #ddd;padding:3px 6px;text-align:right}td:first-child,th:first-child{text-align:left}
table.settings td,table.settings th{text-align:left;vertical-align:top}table.settings th{font-weight:600;white-space:nowrap}
.muted{color:#666;font-size:12px}.swatch{display:inline-block;width:10px;height:10px;margin-right:5px;border-radius:2px}
#controls{display:flex;flex-wrap:wrap;gap:6px;align-items:center;margin:6px 0}
#controls button{font-size:12px;padding:2px 8px}#range{font-size:12px;color:#444;margin-left:6px}
#readout{font-size:12px;min-height:32px;color:#333}
#chart svg{display:block;width:100%;user-select:none;cursor:grab}#chart svg.dragging{cursor:grabbing}
#chart .event:hover{stroke:#000;stroke-width:1.5}`,
  )}
<p class="muted">Trace <code>${escapeHtml(input.trace.source)}</code>, column <code>${escapeHtml(input.trace.demandColumn)}</code>,
${(input.trace.durationSeconds / 86400).toFixed(1)} days${input.trace.startsAt ? ` from ${escapeHtml(input.trace.startsAt)}` : ' (the trace has no dates: times are counted from its start)'}.
Oracle (perfect packing, instant boot): ${fixed(oracle, 1)} node-hours.</p>
<div class="scroll"><table id="summary"><thead><tr><th>policy</th><th>node-hours</th><th>x oracle</th><th>cost</th><th>waiting gear-min</th><th>waiting</th><th>scale-ups</th><th>scale-downs</th><th>gear moves</th><th>max nodes</th><th>dead letters</th><th>invariant violations</th></tr></thead>
<tbody>${rows}</tbody></table></div>
<h2>Timeline</h2>
<div id="controls"><button data-act="in">zoom in</button><button data-act="out">zoom out</button><button data-act="left">&larr;</button><button data-act="right">&rarr;</button><button data-act="all">whole run</button><span id="range"></span></div>
<p class="muted">Scroll to zoom (down to one hour), drag to pan, double-click for the whole run. Triangles: scale-ups (blue, pointing up) and scale-downs (red, pointing down); a number is a group of nearby events; hover for each decision.</p>
<div id="readout"></div>
<div id="chart"></div>
<h2>Settings of this run</h2>
<div class="scroll"><table class="settings" id="settings">${settingsRows(input.settings)}</table></div>
<ul class="muted">${input.notes.map((note) => `<li>${escapeHtml(note)}</li>`).join('')}</ul>
<script type="application/json" id="report-data">${JSON.stringify(data).replace(/</g, '\\u003c')}</script>
<script>
${readFileSync(PAGE_SCRIPT, 'utf8')}
</script>
</body></html>
`;
}

function fixed(value: number, digits: number): string {
  return value.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/**
 * A page's start, to its heading: the look every page shares (900 px wide, the
 * tables), then the page's own `style` rules.
 */
export function pageStart(title: string, style: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body{font-family:system-ui,sans-serif;margin:0 auto;padding:12px;max-width:900px;box-sizing:border-box;color:#222;font-size:14px}
h1{font-size:20px;margin:4px 0}h2{font-size:16px;margin:18px 0 6px}
.scroll{overflow-x:auto}table{border-collapse:collapse;margin:6px 0;font-size:12px}
${style}
</style></head><body>
<h1>${escapeHtml(title)}</h1>`;
}

/** A run's settings as table rows, label beside value. */
export function settingsRows(settings: ReadonlyArray<readonly [string, string]>): string {
  return settings.map(([label, value]) => `<tr><th>${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`).join('\n');
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

/** Moves since the start at each point, from cumulative or per-point counts; null when the series has neither. */
function cumulativeMoves(series: readonly ReportPoint[]): number[] | null {
  if (series.every((s) => s.moved !== undefined)) return series.map((s) => s.moved!);
  if (!series.every((s) => s.moves !== undefined)) return null;
  let total = 0;
  return series.map((s) => (total += s.moves!));
}

/** Writes a page (or any output file), creating its folder: `out/` is not in a fresh clone. */
export function writeOut(path: string, text: string): void {
  const full = resolve(path);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, text);
}
