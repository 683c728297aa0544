/**
 * `npm run demo` as a process: the whole story runs on one virtual clock and
 * each step leaves the state the next one needs (the script itself stops at
 * the first step that does not).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'nodescaler-demo-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm run demo', () => {
  it('tells one story: full pool, scale-up, join, load falls, the next node closed early, a drain that pays gear by gear, the host released', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/demo.ts', '--state-dir', join(dir, 'state')], { cwd: ROOT, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const out = run.stdout;
    const order = [
      'pool d1/small at 0.95, 20 free slots < headroomGears 30; +1 node to 0.76',
      'handler log: would create node d1-small-5.example.com',
      'joined: first stats reported',
      'blocked: scaleDown.delayAfterAdd until 10:10:30Z',
      'd1-small-5.example.com: pool would keep 20 free slots < headroomGears 30',
      'close d1-small-5.example.com to new gears',
      "drain d1-small-5.example.com (3 gears, least-disruption); pays: 2.2h unneeded (recent demand)",
      'drain started: node draining',
      'drain completed: 3 gear(s) moved',
      'handler log: would release the host of node d1-small-5.example.com',
      'node terminated',
    ];
    let from = 0;
    for (const text of order) {
      const at = out.indexOf(text, from);
      expect(at, `"${text}" after offset ${from}`).toBeGreaterThanOrEqual(from);
      from = at;
    }
    expect(out.match(/gear moved: \S+ \(app-\d\) -> d1-small-[1-4]\.example\.com/g)).toHaveLength(3);
    // The last status: four nodes again, the released one gone.
    const last = out.slice(out.lastIndexOf('$ npx nodescaler status'));
    expect(last).toContain('4 nodes: 4 active');
    expect(last).not.toContain('d1-small-5.example.com');
  });
});
