/// <reference lib="dom" />
/**
 * out/suite.html in headless Chromium: the page `npm run bench -- suite`
 * writes, for two synthetic traces of one day, loaded from disk with the
 * network off. One mark per trace and policy with the goal box, policies
 * toggle, a trace is picked out, hover names the figures, and the page fits
 * 900 px; a mark beyond the axis's 1.6 x sits hollow on its edge. Leaves a
 * screenshot in out/suite-screenshot.png.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, watchPage } from '../support/chromium.js';
import { POLICIES } from '../../lib/sim/results.js';
import { renderSuiteReport } from '../../lib/sim/suite-report.js';
import { writeOut } from '../../lib/sim/report.js';
import { policyResult } from '../support/builders.js';

const ROOT = resolve(import.meta.dirname, '../..');
const TRACES = ['synthetic:steady-growth', 'synthetic:step-change'];

let dir: string;
let browser: Browser;
let page: Page;
let seen: { requests: string[]; errors: string[] };

beforeAll(async () => {
  const executablePath = requireChromium();
  dir = mkdtempSync(join(tmpdir(), 'nodescaler-suite-page-'));
  const out = join(dir, 'suite.html');
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench.ts', 'suite', '--days', '1', '--only', 'synthetic:st', '--html', out], { cwd: ROOT, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`bench suite failed:\n${run.stdout}\n${run.stderr}`);
  expect(run.stdout).toContain(`wrote ${out}`);
  browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'] });
  page = await browser.newPage({ viewport: { width: 900, height: 1200 } });
  seen = watchPage(page);
  await page.goto(pathToFileURL(out).href);
  await page.waitForSelector('svg[data-chart="suite"]');
});

afterAll(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const visible = (policy: string) => page.evaluate((name) => (window as unknown as { nodescalerSuite: { visible(p: string): number } }).nodescalerSuite.visible(name), policy);

describe('out/suite.html in Chromium', () => {
  it('draws one mark per trace and policy, and the goal box with clairvoyant-4h inside it, offline, without errors', async () => {
    const marks = await page.$$eval('svg[data-chart="suite"] circle', (cs) => cs.map((c) => ({ policy: c.getAttribute('data-policy'), trace: c.getAttribute('data-trace') })));
    expect(marks).toHaveLength(TRACES.length * POLICIES.length);
    for (const trace of TRACES) for (const policy of POLICIES) expect(marks).toContainEqual({ policy, trace });
    // clairvoyant-4h sits at 1 x node-hours: inside the box, left of the 1.05 line.
    const geometry = await page.evaluate(() => {
      const x = (selector: string) => Number(document.querySelector(selector)!.getAttribute('cx') ?? document.querySelector(selector)!.getAttribute('x1'));
      const box = document.querySelector('rect[data-goal="box"]')!.getBoundingClientRect();
      return { line: x('line[data-goal="node-hours"]'), reference: x('circle[data-policy="clairvoyant-4h"]'), box: { width: box.width, height: box.height } };
    });
    expect(geometry.reference).toBeLessThan(geometry.line);
    expect(geometry.box.width).toBeGreaterThan(50);
    expect(geometry.box.height).toBeGreaterThan(50);
    expect(await page.$$eval('#goal-table tbody tr', (rows) => rows.map((r) => r.getAttribute('data-trace')))).toEqual(TRACES);
    expect(seen.requests.every((url) => url.startsWith('file:'))).toBe(true);
    expect(seen.errors).toEqual([]);
  });

  it('hides a policy whose box is unticked, and shows it again', async () => {
    expect(await visible('karpenter')).toBe(TRACES.length);
    await page.click('#legend input[data-policy="karpenter"]');
    expect(await visible('karpenter')).toBe(0);
    expect(await visible('nodescaler')).toBe(TRACES.length);
    await page.click('#legend input[data-policy="karpenter"]');
    expect(await visible('karpenter')).toBe(TRACES.length);
  });

  it("brings a picked trace's marks forward and marks its row of goal checks", async () => {
    await page.selectOption('#trace-pick', TRACES[1]!);
    const opacity = await page.$$eval('svg[data-chart="suite"] circle', (cs) => cs.map((c) => ({ trace: c.getAttribute('data-trace'), opacity: c.getAttribute('opacity') })));
    expect(opacity.filter((o) => o.trace === TRACES[1]).every((o) => o.opacity === '1')).toBe(true);
    expect(opacity.filter((o) => o.trace === TRACES[0]).every((o) => Number(o.opacity) < 0.5)).toBe(true);
    const rows = await page.$$eval('#goal-table tbody tr', (rs) => rs.map((r) => (r as HTMLElement).style.background));
    expect(rows[0]).toBe('');
    expect(rows[1]).not.toBe('');
    await page.selectOption('#trace-pick', '');
  });

  it("names a mark's figures on hover, and fits 900 px", async () => {
    await page.hover(`svg[data-chart="suite"] circle[data-policy="nodescaler"][data-trace="${TRACES[0]}"]`);
    expect(await page.textContent('#readout')).toMatch(new RegExp(`^${TRACES[0]}, nodescaler: node-hours [\\d.]+ x clairvoyant-4h \\([\\d,]+\\), moves .+, unplaced [\\d.]+ %, waiting [\\d,]+ gear-min$`));
    const widths = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, chart: document.getElementById('chart')!.getBoundingClientRect().right }));
    expect(widths.page).toBeLessThanOrEqual(900);
    expect(widths.chart).toBeLessThanOrEqual(900);
    mkdirSync(join(ROOT, 'out'), { recursive: true });
    await page.screenshot({ path: join(ROOT, 'out/suite-screenshot.png'), fullPage: true });
  });

  it('pins a mark beyond 1.6 x node-hours hollow to the right edge, with its true figure on hover', async () => {
    const out = join(dir, 'wide.html');
    const results = [policyResult('nodescaler', { nodeHours: 1281, gearMoves: 1783 }), policyResult('static-peak', { nodeHours: 3360 }), policyResult('clairvoyant-4h', { nodeHours: 1372, gearMoves: 1725 })];
    writeOut(out, renderSuiteReport({ title: 'bursts', settings: [], traces: [{ name: 'synthetic:bursts-5x', results, checks: [] }] }));
    const wide = await browser.newPage({ viewport: { width: 900, height: 900 } });
    await wide.goto(pathToFileURL(out).href);
    const marks = await wide.$$eval('svg[data-chart="suite"] circle', (cs) => cs.map((c) => ({ policy: c.getAttribute('data-policy'), beyond: c.getAttribute('data-beyond'), cx: Number(c.getAttribute('cx')), fill: c.getAttribute('fill') })));
    const peak = marks.find((m) => m.policy === 'static-peak')!;
    expect(peak.beyond).toBe('true');
    expect(peak.fill).toBe('#fff');
    expect(peak.cx).toBe(Math.max(...marks.map((m) => m.cx)));
    await wide.hover('circle[data-policy="static-peak"]');
    expect(await wide.textContent('#readout')).toContain('static-peak: node-hours 2.449 x clairvoyant-4h (3,360), moves 0.00 x (0)');
    expect(marks.find((m) => m.policy === 'nodescaler')!.beyond).toBe('false');
    await wide.close();
  });
});
