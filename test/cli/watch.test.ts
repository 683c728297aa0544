/**
 * `status --watch` on the local state while other commands write it: every
 * refresh either shows the state or says the state was busy and tries again;
 * the watch never ends on another process's lock, and the writers are not
 * refused because a refresh held it for a moment. Also `status d1-small`,
 * the pool spelled as in node names.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliWorld, runCli } from '../support/cli-world.js';

let dir: string;
let world: CliWorld;
const local = () => ['--state-dir', dir, '--config', world.configFile, '--at', world.at];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'nodescaler-watch-'));
  world = new CliWorld(dir, '2026-11-21T10:00:00.000Z');
  await world.reportUntil('2026-11-21T10:01:00.000Z');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('status', () => {
  it('--watch keeps refreshing while protect / unprotect write the state, and every write lands', async () => {
    const refreshes = 8;
    const watch = runCli(['status', '--watch', '--interval', '1s', '--iterations', String(refreshes), '--no-color', ...local()], { env: { COLUMNS: '120' } });
    const writes: Array<{ code: number | null; stderr: string }> = [];
    for (let i = 0; i < 6; i++) writes.push(await runCli([i % 2 === 0 ? 'protect' : 'unprotect', 'd1-small-2.example.com', '--reason', 'watch test', ...local()]));
    const watched = await watch;
    expect(watched.code, watched.stderr).toBe(0);
    const shown = watched.stdout.split('nodescaler status ·').length - 1;
    const busy = watched.stderr.split('the local state is busy').length - 1;
    expect(shown).toBeGreaterThan(0);
    expect(shown + busy).toBe(refreshes);
    expect(watched.stderr).not.toMatch(/Database is closed|\n\s+at /);
    for (const write of writes) expect(write.code, write.stderr).toBe(0);
    const final = await runCli(['status', 'd1/small', '--json', ...local()]);
    const node = (JSON.parse(final.stdout) as { pools: Array<{ nodeList: Array<{ nodeId: string; protected: boolean }> }> }).pools[0]!.nodeList.find((n) => n.nodeId === 'd1-small-2.example.com');
    expect(node?.protected).toBe(false);
  });

  it('takes d1-small for the pool d1/small', async () => {
    const [dashed, slashed] = await Promise.all([runCli(['status', 'd1-small', '--json', ...local()]), runCli(['status', 'd1/small', '--json', ...local()])]);
    expect(dashed.code, dashed.stderr).toBe(0);
    expect((JSON.parse(dashed.stdout) as { pools: Array<{ pool: string }> }).pools.map((p) => p.pool)).toEqual(['d1/small']);
    const pools = (stdout: string) => (JSON.parse(stdout) as { pools: Array<{ pool: string; nodeList: unknown[] }> }).pools.map((p) => [p.pool, p.nodeList]);
    expect(pools(dashed.stdout)).toEqual(pools(slashed.stdout));
  });
});
