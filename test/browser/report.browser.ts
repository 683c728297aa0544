/// <reference lib="dom" />
/**
 * out/report.html in headless Chromium: a 3-day replay written by `npm start`,
 * loaded from disk with the network off; the panels draw, scale-ups point up,
 * hover details name the decision, the page fits 900 px and zoom and pan work
 * down to one hour. Leaves a screenshot in out/report-screenshot.png.
 */
import { spawnSync } from 'node:child_process';
import { POLICIES } from '../../lib/sim/results.js';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, watchPage } from '../support/chromium.js';

const ROOT = resolve(import.meta.dirname, '../..');

let dir: string;
let browser: BrowserContext;
let page: Page;
let seen: { requests: string[]; errors: string[] };

beforeAll(async () => {
  const executablePath = requireChromium();
  dir = mkdtempSync(join(tmpdir(), 'nodescaler-browser-'));
  const report = join(dir, 'report.html');
  const start = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/start.ts', '--days', '3', '--report', report], { cwd: ROOT, encoding: 'utf8' });
  if (start.status !== 0) throw new Error(`npm start failed:\n${start.stdout}\n${start.stderr}`);
  // A fresh profile each run (--user-data-dir, which Playwright takes as the persistent context's folder).
  browser = await chromium.launchPersistentContext(join(dir, 'profile'), {
    executablePath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 900, height: 1400 },
  });
  page = await browser.newPage();
  seen = watchPage(page);
  await page.goto(pathToFileURL(report).href);
  await page.waitForSelector('svg[data-panel="cost"]');
});

afterAll(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const view = () => page.evaluate(() => (window as unknown as { nodescalerReport: { view(): { t0: number; t1: number } } }).nodescalerReport.view());

describe('out/report.html in Chromium', () => {
  it('draws every panel from the embedded data, offline, without errors', async () => {
    const panels = await page.$$eval('svg[data-panel]', (svgs) => svgs.map((svg) => svg.getAttribute('data-panel')));
    expect(panels).toEqual(['gears', 'utilization', 'nodes', 'moves', 'waiting', 'cost']);
    // Demand plus every policy's capacity (npm start runs them all), each a line of many points.
    const lines = await page.$$eval('svg[data-panel="gears"] polyline', (ps) => ps.map((p) => p.getAttribute('points')!.split(' ').length));
    expect(lines).toHaveLength(1 + POLICIES.length);
    for (const points of lines) expect(points).toBeGreaterThan(100);
    const thresholds = await page.$$eval('svg[data-panel="utilization"] text', (ts) => ts.map((t) => t.textContent));
    expect(thresholds).toEqual(expect.arrayContaining(['scale up 0.98', 'scale down 0.93']));
    expect(await page.$$eval('#settings th', (ths) => ths.map((th) => th.textContent))).toEqual(expect.arrayContaining(['pools', 'boot delay', 'seed']));
    expect(seen.requests.every((url) => url.startsWith('file:'))).toBe(true);
    expect(seen.errors).toEqual([]);
  });

  it('fits 900 px', async () => {
    const widths = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, chart: document.getElementById('chart')!.getBoundingClientRect().right }));
    expect(widths.page).toBeLessThanOrEqual(900);
    expect(widths.chart).toBeLessThanOrEqual(900);
  });

  it('marks scale-ups pointing up and scale-downs pointing down, with the decision on hover', async () => {
    const marks = await page.$$eval('svg[data-panel="gears"] g.event', (gs) =>
      gs.map((g) => ({ kind: g.getAttribute('data-kind'), count: Number(g.getAttribute('data-count')), d: g.querySelector('path')!.getAttribute('d')!, title: g.querySelector('title')!.textContent! })),
    );
    const ups = marks.filter((m) => m.kind === 'up');
    const downs = marks.filter((m) => m.kind === 'down');
    expect(ups.length).toBeGreaterThan(0);
    expect(downs.length).toBeGreaterThan(0);
    // The path starts at the apex: above its base (smaller y) for a scale-up, below it for a scale-down.
    for (const m of ups) expect(m.d).toMatch(/ l-5,9 h10 z$/);
    for (const m of downs) expect(m.d).toMatch(/ l-5,-9 h10 z$/);
    expect(ups.some((m) => /up:sim_small:/.test(m.title) && /\+\d+ node/.test(m.title))).toBe(true);
    expect(downs.some((m) => /node node-\d+\.sim\.local/.test(m.title) && /gears moved/.test(m.title) && /down:sim_small:/.test(m.title))).toBe(true);
  });

  it('zooms with the buttons and the wheel down to one hour, then pans by dragging', async () => {
    const whole = await view();
    expect(whole.t1 - whole.t0).toBe(3 * 86400);
    await page.click('button[data-act="in"]');
    const half = await view();
    expect(half.t1 - half.t0).toBeCloseTo(1.5 * 86400, 0);

    const box = (await page.locator('svg[data-panel="nodes"]').boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    for (let i = 0; i < 20; i++) await page.mouse.wheel(0, -100);
    const hour = await view();
    expect(hour.t1 - hour.t0).toBe(3600);
    // An hour shows clock times on the axis, not days.
    const ticks = await page.$$eval('svg[data-panel="cost"] text.tick', (ts) => ts.map((t) => t.textContent));
    expect(ticks.length).toBeGreaterThan(1);
    expect(ticks.every((t) => /^\d\d:\d\d$|^day \d+$/.test(t!))).toBe(true);
    expect(await page.textContent('#range')).toMatch(/1\.0 hours/);

    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2 - 200, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    const panned = await view();
    expect(panned.t0).toBeGreaterThan(hour.t0);
    expect(panned.t1 - panned.t0).toBe(3600);

    await page.mouse.move(box.x + box.width / 3, box.y + box.height / 2);
    expect(await page.textContent('#readout')).toMatch(/nodescaler [\d,]+ slots, \d+ nodes, utilization [\d.]+/);
    await page.click('button[data-act="all"]');
    expect(await view()).toEqual(whole);
    mkdirSync(join(ROOT, 'out'), { recursive: true });
    await page.screenshot({ path: join(ROOT, 'out/report-screenshot.png'), fullPage: true });
  });
});
