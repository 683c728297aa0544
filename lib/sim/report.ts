import type { PolicyResult, SeriesPoint } from './results.js';

export interface ReportInput {
  title: string;
  traceSource: string;
  demandColumn: string;
  durationSeconds: number;
  results: PolicyResult[];
  notes: string[];
}

const COLORS: Record<PolicyResult['policy'], string> = {
  nodescaler: '#1f77b4',
  'static-peak': '#7f7f7f',
  'cluster-autoscaler': '#ff7f0e',
  karpenter: '#9467bd',
  'clairvoyant-1h': '#8c564b',
  'clairvoyant-4h': '#e377c2',
};
const WIDTH = 1100;
const PLOT_LEFT = 70;
const PLOT_RIGHT = 20;

/** One self-contained HTML page (inline SVG, no scripts, no CDN): the summary table and the timeline chart. */
export function renderReport(input: ReportInput): string {
  const rows = input.results
    .map(
      (r) => `<tr><td style="color:${COLORS[r.policy]}">${r.policy}</td><td>${r.nodeHours.toFixed(1)}</td><td>${r.ratioToOracle.toFixed(3)}</td>` +
        `<td>${r.unplacedGearMinutes.toFixed(0)}</td><td>${(r.unplacedShare * 100).toFixed(3)} %</td><td>${r.scaleUps}</td><td>${r.scaleDowns}</td>` +
        `<td>${r.gearMoves}</td><td>${r.maxNodes}</td><td>${r.deadLetters}</td><td>${r.invariantViolations}</td></tr>`,
    )
    .join('\n');
  const oracle = input.results[0]?.oracleNodeHours ?? 0;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(input.title)}</title>
<style>
body{font-family:system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:12px 0}td,th{border:1px solid #ccc;padding:4px 10px;text-align:right}
td:first-child,th:first-child{text-align:left}.muted{color:#666;font-size:90%}
</style></head><body>
<h1>${escape(input.title)}</h1>
<p class="muted">Trace ${escape(input.traceSource)}, column <code>${escape(input.demandColumn)}</code>, ${(input.durationSeconds / 86400).toFixed(1)} days.
Oracle (perfect packing, instant boot): ${oracle.toFixed(1)} node-hours.</p>
<table><thead><tr><th>policy</th><th>node-hours</th><th>x oracle</th><th>unplaced gear-min</th><th>unplaced share</th><th>scale-ups</th><th>scale-downs</th><th>gear moves</th><th>max nodes</th><th>dead letters</th><th>invariant violations</th></tr></thead>
<tbody>${rows}</tbody></table>
${chart(input)}
<ul class="muted">${input.notes.map((note) => `<li>${escape(note)}</li>`).join('')}</ul>
</body></html>
`;
}

function chart(input: ReportInput): string {
  const duration = Math.max(1, input.durationSeconds);
  const all = input.results.flatMap((r) => r.series);
  const maxGears = Math.max(1, ...all.map((p) => Math.max(p.demand, p.capacity)));
  const maxNodes = Math.max(1, ...all.map((p) => p.nodes));
  const x = (at: number) => PLOT_LEFT + ((WIDTH - PLOT_LEFT - PLOT_RIGHT) * at) / duration;
  const top = { y0: 30, height: 300 };
  const bottom = { y0: 380, height: 160 };
  const yTop = (value: number) => top.y0 + top.height - (top.height * value) / (maxGears * 1.05);
  const yBottom = (value: number) => bottom.y0 + bottom.height - (bottom.height * value) / (maxNodes * 1.1);
  const line = (points: SeriesPoint[], value: (p: SeriesPoint) => number, y: (v: number) => number, color: string, width = 1.5, dash = '') =>
    `<polyline fill="none" stroke="${color}" stroke-width="${width}"${dash ? ` stroke-dasharray="${dash}"` : ''} points="${stepPoints(points, value, x, y)}"/>`;

  const demandSource = input.results[0]?.series ?? [];
  const parts: string[] = [];
  parts.push(axis(top.y0, top.height, maxGears * 1.05, 'gears', yTop));
  parts.push(axis(bottom.y0, bottom.height, maxNodes * 1.1, 'nodes', yBottom));
  parts.push(timeAxis(duration, x, bottom.y0 + bottom.height));
  parts.push(line(demandSource, (p) => p.demand, yTop, '#2ca02c', 2));
  for (const result of input.results) {
    parts.push(line(result.series, (p) => p.capacity, yTop, COLORS[result.policy], 1.2, result.policy === 'nodescaler' ? '' : '5,3'));
    parts.push(line(result.series, (p) => p.nodes, yBottom, COLORS[result.policy], 1.2, result.policy === 'nodescaler' ? '' : '5,3'));
  }
  const ours = input.results.find((r) => r.policy === 'nodescaler');
  for (const event of ours?.events ?? []) {
    const ex = x(event.at);
    parts.push(
      event.kind === 'up'
        ? `<path d="M${ex.toFixed(1)},${top.y0 - 2} l-3,-6 h6 z" fill="#1f77b4"><title>scale-up at ${(event.at / 3600).toFixed(2)} h</title></path>`
        : `<path d="M${ex.toFixed(1)},${top.y0 - 8} l-3,6 h6 z" fill="#d62728"><title>scale-down at ${(event.at / 3600).toFixed(2)} h</title></path>`,
    );
  }
  const legend = [
    ['demand (gears)', '#2ca02c', ''],
    ...input.results.map((r) => [`${r.policy} capacity / nodes`, COLORS[r.policy], r.policy === 'nodescaler' ? '' : '5,3']),
  ]
    .map(([label, color, dash], i) => {
      const lx = PLOT_LEFT + 10 + i * 230;
      return `<line x1="${lx}" y1="${bottom.y0 + bottom.height + 40}" x2="${lx + 24}" y2="${bottom.y0 + bottom.height + 40}" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''}/><text x="${lx + 30}" y="${bottom.y0 + bottom.height + 44}" font-size="12">${escape(label!)}</text>`;
    })
    .join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${bottom.y0 + bottom.height + 60}" role="img" aria-label="demand, capacity and node count over time">
<text x="${PLOT_LEFT}" y="16" font-size="13">Demand and capacity (gears); triangles: nodescaler scale-ups (blue, top) and scale-downs (red)</text>
<text x="${PLOT_LEFT}" y="${bottom.y0 - 10}" font-size="13">Nodes (booting, active, draining)</text>
${parts.join('\n')}
${legend}
</svg>`;
}

/** A step chart: each value holds until the next sample. */
function stepPoints(points: SeriesPoint[], value: (p: SeriesPoint) => number, x: (at: number) => number, y: (v: number) => number): string {
  const out: string[] = [];
  let previous: number | undefined;
  for (const point of points) {
    const px = x(point.at).toFixed(1);
    if (previous !== undefined) out.push(`${px},${previous.toFixed(1)}`);
    previous = y(value(point));
    out.push(`${px},${previous.toFixed(1)}`);
  }
  return out.join(' ');
}

function axis(y0: number, height: number, max: number, label: string, y: (v: number) => number): string {
  const ticks = niceTicks(max);
  return [
    `<line x1="${PLOT_LEFT}" y1="${y0}" x2="${PLOT_LEFT}" y2="${y0 + height}" stroke="#999"/>`,
    ...ticks.map(
      (tick) =>
        `<line x1="${PLOT_LEFT}" y1="${y(tick).toFixed(1)}" x2="${WIDTH - PLOT_RIGHT}" y2="${y(tick).toFixed(1)}" stroke="#eee"/>` +
        `<text x="${PLOT_LEFT - 6}" y="${(y(tick) + 4).toFixed(1)}" font-size="11" text-anchor="end">${tick}</text>`,
    ),
    `<text x="14" y="${y0 + height / 2}" font-size="12" transform="rotate(-90 14 ${y0 + height / 2})" text-anchor="middle">${label}</text>`,
  ].join('\n');
}

function timeAxis(duration: number, x: (at: number) => number, y: number): string {
  const days = duration / 86400;
  const stepSeconds = days > 3 ? 86400 * Math.ceil(days / 15) : days > 0.5 ? 6 * 3600 : 3600;
  const unit = stepSeconds >= 86400 ? 'd' : 'h';
  const parts: string[] = [`<line x1="${PLOT_LEFT}" y1="${y}" x2="${WIDTH - PLOT_RIGHT}" y2="${y}" stroke="#999"/>`];
  for (let at = 0; at <= duration; at += stepSeconds) {
    const label = unit === 'd' ? `${Math.round(at / 86400)}d` : `${Math.round(at / 3600)}h`;
    parts.push(`<text x="${x(at).toFixed(1)}" y="${y + 16}" font-size="11" text-anchor="middle">${label}</text>`);
  }
  return parts.join('\n');
}

function niceTicks(max: number): number[] {
  const raw = max / 5;
  const magnitude = 10 ** Math.floor(Math.log10(Math.max(raw, 1e-9)));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? raw;
  const ticks: number[] = [];
  for (let tick = 0; tick <= max; tick += step) ticks.push(Math.round(tick * 100) / 100);
  return ticks;
}

function escape(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}
