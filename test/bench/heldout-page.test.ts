/**
 * `npm run bench -- heldout` as a process, on one short shape: it prints the
 * shape's goal line and total, and writes the page to explore (with the
 * shape's marks and its goal checks) where `--html` says. The page's drawing
 * is checked in Chromium (test/browser/suite-report.browser.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { POLICIES } from '../../lib/sim/results.js';

const ROOT = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'nodescaler-heldout-page-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm run bench -- heldout --html', () => {
  it("writes the shape's marks and goal checks to the page it names, with the boot delay every policy ran with", () => {
    const out = join(dir, 'pages', 'seed-3.html');
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench.ts', 'heldout', '--count', '1', '--seed', '3', '--days', '0.25', '--boot-delay', '300', '--no-cache', '--html', out], { cwd: ROOT, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/gears per node, boot delay 300 s\)$/m);
    expect(run.stdout).toMatch(/^reactive floor \(learns of demand as it arrives, boots in 5 min\)/m);
    expect(run.stdout).toMatch(/^goal \(\d\/8 met/m);
    expect(run.stdout).toContain(`wrote ${out}`);
    const page = readFileSync(out, 'utf8');
    expect(page).toContain('<title>nodescaler: held-out shapes of seed 3</title>');
    const data = JSON.parse(/<script type="application\/json" id="suite-data">(.*?)<\/script>/s.exec(page)![1]!) as { points: Array<{ trace: string; policy: string }>; traces: string[] };
    expect(data.traces).toEqual(['heldout:s3-1']);
    expect(data.points.map((p) => p.policy).sort()).toEqual([...POLICIES].sort());
    expect(page).toMatch(/<tr data-trace="heldout:s3-1"><td>heldout:s3-1<div class="muted">[^<]+<\/div><\/td><td>\d\/8<\/td>/);
    expect(page).toContain('<tr><th>shapes</th><td>1-1 of seed 3 (lib/sim/heldout.ts)</td></tr>');
    expect(page).toContain('<tr><th>boot delay</th><td>300 s</td></tr>');
    // The node's price is what its drains are credited: a reader of figures at another node size needs it.
    expect(page).toContain("<tr><th>node</th><td>m5.xlarge ($0.192/h): the bill's price and each drain's saving per node-hour</td></tr>");
    expect(page).toContain('<tr><th>placement</th><td>the least-loaded node</td></tr>');
  });

  it("replays the broker's own placement when asked, and says so on the page", () => {
    const out = join(dir, 'pages', 'seed-3-broker.html');
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench.ts', 'heldout', '--count', '1', '--seed', '3', '--days', '0.25', '--placement', 'broker', '--no-cache', '--html', out], { cwd: ROOT, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/boot delay 120 s, placement broker\)$/m);
    expect(run.stdout).toMatch(/^goal \(\d\/8 met/m);
    expect(readFileSync(out, 'utf8')).toMatch(/<tr><th>placement<\/th><td>the broker(&#39;|')s \(origin-server(&#39;|')s select_best_fit_node\)<\/td><\/tr>/);
    const refused = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench.ts', 'heldout', '--count', '1', '--placement', 'round-robin'], { cwd: ROOT, encoding: 'utf8' });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('--placement: expected least-loaded or broker (got "round-robin")');
  });
});
