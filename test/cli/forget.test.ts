/**
 * Issue 18, item 2k: nodes adopted from a pool the configuration lacks were
 * invisible (no pool record to list them by) and could not be removed. The
 * evaluator now records such a pool at adoption; `status` names them in one
 * line and `status --all` lists them; `forget NODE --reason` drops one (its
 * host untouched), with an audit entry like every operator command.
 * `nodescaler` child processes against a local state (test/support/cli-world.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { ThresholdEvaluator } from '../../lib/app/evaluate.js';
import { CliWorld, runCli, type CliResult } from '../support/cli-world.js';

const START = '2026-11-21T10:00:00.000Z';
let dir: string;
let world: CliWorld;

function cli(args: readonly string[]): Promise<CliResult> {
  return runCli([...args, '--state-dir', dir, '--config', world.configFile, '--at', world.at], { env: { COLUMNS: '160' } });
}
const flat = (text: string) => text.replace(/\s+/g, ' ');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'nodescaler-forget-'));
  world = new CliWorld(dir, START);
  await world.reportUntil('2026-11-21T10:01:00.000Z');
  // Two hosts of a pool nobody configured report stats: adopted.
  await world.withState(async (state) => {
    const evaluator = new ThresholdEvaluator({ store: state.ports.store, queue: state.ports.queue, clock: { now: () => new Date(world.nowMs) }, metrics: new InMemoryMetrics(), log: world.log }, world.settings.config);
    const stats = (nodeId: string) => ({
      id: nodeId,
      message: { type: 'node-stats' as const, v: 1 as const, nodeId, district: 'd9', profile: 'gpu', activeGears: 3, maxActiveGears: 20, reportedAt: world.at },
    });
    await evaluator.handleBatch([stats('gpu-1.example.com'), stats('gpu-2.example.com')]);
  });
}, 30_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('adopted nodes of unconfigured pools', () => {
  it('status names them in one line; status --all lists them with their pool', async () => {
    const status = await cli(['status']);
    expect(status.code).toBe(0);
    expect(flat(status.stdout)).toContain('2 adopted nodes in 1 pool the configuration lacks (d9/gpu: 2), never evaluated: nodescaler status --all lists them; nodescaler forget NODE --reason TEXT drops one');
    expect(status.stdout).not.toContain('gpu-1.example.com');
    const all = await cli(['status', '--all']);
    expect(flat(all.stdout)).toMatch(/pool d9\/gpu · not in the configuration: not evaluated · 2 nodes: 2 active/);
    expect(all.stdout).toContain('gpu-1.example.com');
  });

  it('forget needs --reason, refuses a node of a configured pool, and drops an adopted one with an audit entry', async () => {
    const noReason = await cli(['forget', 'gpu-1.example.com']);
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toContain('forget needs --reason TEXT');

    const configured = await cli(['forget', 'd1-small-1.example.com', '--reason', 'oops']);
    expect(configured.code).toBe(4);
    expect(configured.stderr).toContain('node d1-small-1.example.com is in pool d1/small, which the configuration has: nodescaler manages it');

    const result = await cli(['forget', 'gpu-1.example.com', '--reason', 'host handed to the GPU team', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ action: 'forget', nodeId: 'gpu-1.example.com', pool: 'd9/gpu', was: 'active' });
    const node = await world.withState((state) => state.ports.store.getNode('gpu-1.example.com'));
    expect(node).toMatchObject({ state: 'terminated', reason: 'forgotten by an operator (nodescaler forget): host handed to the GPU team; its host and gears were not touched' });

    const all = await cli(['status', '--all']);
    expect(all.stdout).not.toContain('gpu-1.example.com');
    expect(flat(all.stdout)).toMatch(/pool d9\/gpu · not in the configuration: not evaluated · 1 node: 1 active/);
    const audit = await cli(['audit', '--json']);
    expect(audit.code).toBe(0);
    expect(audit.stdout).toContain('forget gpu-1.example.com: host handed to the GPU team');
    expect(audit.stdout).toContain(`local user ${userInfo().username}`);
  });
});
