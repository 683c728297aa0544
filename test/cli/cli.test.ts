/**
 * `nodescaler` as an operator runs it: a child process (node bin/nodescaler.mjs,
 * and once through npx) against a local embedded state prepared by a short
 * simulated run (test/support/cli-world.ts): five nodes report for five
 * minutes, the evaluator decides a scale-down of d1-small-4, the gear mover
 * starts moving its gears. The tests run in order on that one state, each
 * step building on the previous (as an operator session would).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalDynamo, type LocalDynamo } from '../../lib/adapters/local/dynalite.js';
import { drainIdFor } from '../../lib/domain/drain.js';
import type { SQSEvent } from 'aws-lambda';
import { CliWorld, ROOT, TABLE_FILE, runCli, type CliResult } from '../support/cli-world.js';

const START = '2026-11-21T10:00:00.000Z';
const WIDTH = 100;
const ESC = '\u001b[';

let dir: string;
let world: CliWorld;

/** The CLI on the world's state, at the world's virtual time, in a 100-column "terminal". */
function cli(args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli([...args, '--state-dir', dir, '--config', world.configFile, '--at', world.at], { env: { COLUMNS: String(WIDTH), ...env } });
}

/** Output with every run of whitespace as one space: wrapped lines read as one. */
function flat(text: string): string {
  return text.replace(/\s+/g, ' ');
}

function json<T = Record<string, any>>(result: CliResult): T {
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as T;
}

function drainQueue(): SQSEvent['Records'] {
  try {
    return (JSON.parse(readFileSync(join(dir, 'queues/drain.json'), 'utf8')) as SQSEvent).Records;
  } catch {
    return [];
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'nodescaler-cli-'));
  world = new CliWorld(dir, START);
  // Ten evaluations at about 0.2 utilization; the one at 10:05:00 (5m unneeded time) drains d1-small-4.
  await world.reportUntil('2026-11-21T10:05:00.000Z');
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('nodescaler against the local embedded state', () => {
  it('status shows the scale-down in flight (the pool lease) before the gear mover takes it', async () => {
    const result = await cli(['status', 'd1/small']);
    expect(result.code).toBe(0);
    expect(flat(result.stdout)).toMatch(/in flight: scale-down down:d1_small:\d+ since 10:05:00Z, lease until 10:20:00Z \(in 15m\), sent 10:05:00Z/);
    expect(result.stdout).not.toContain('pool d1/medium');

    await world.runGearMover({ deliverDrainQueue: true });
    world.nowMs += 15_000;
  });

  it('status: every pool with nodes by state, utilization, limits and the drain with each gear, fitted to the terminal', async () => {
    const result = await cli(['status']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const out = result.stdout;
    expect(out).toContain('nodescaler status · local state');
    expect(flat(out)).toContain('5 of 100 nodes (limits.maxNodesTotal)');
    expect(out).toContain('pool d1/small · min 1 · max 10 · 4 nodes: 3 active, 1 draining');
    expect(flat(out)).toContain('utilization 0.28 (85 gears in 300 slots, 215 free; scale up >= 0.80, down <= 0.50), low since 10:00:00Z (5m15s ago)');
    expect(out).toContain('in flight: none');
    expect(flat(out)).toMatch(/drain drain:down:d1_small:\d+ of d1-small-4\.example\.com \(scale-down\) since 10:05:00Z \(15s ago\): 0 of 10 gears moved, 3 moving, 7 planned/);
    expect(out.match(/d1-small-4-g\d\d +app-\d +d1-small-\d\.example\.com +moving +1/g)).toHaveLength(3);
    expect(out.match(/d1-small-4-g\d\d +app-\d +d1-small-\d\.example\.com +planned +0/g)).toHaveLength(7);
    expect(out).toContain('pool d1/medium · min 0 · max 5 · 1 node: 1 active');
    expect(out).toMatch(/d1-medium-1\.example\.com +active +20\/50 +0\.40/);
    // Not a terminal: no colour; every line within COLUMNS.
    expect(out).not.toContain(ESC);
    for (const line of out.split('\n')) expect(line.length).toBeLessThanOrEqual(WIDTH);
    const narrow = await cli(['status'], { COLUMNS: '60' });
    for (const line of narrow.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(60);
    expect(narrow.stdout).toContain('…');
  });

  it('status --json: the same facts for scripts', async () => {
    const view = json(await cli(['status', '--json']));
    expect(view.limits).toEqual({ nodes: 5, maxNodesTotal: 100, maxCores: null, maxMemoryGiB: null });
    expect(view.pools.map((p: { pool: string }) => p.pool)).toEqual(['d1/small', 'd1/medium']);
    const small = view.pools[0];
    expect(small).toMatchObject({ configured: true, min: 1, max: 10, nodes: 4, nodesByState: { active: 3, draining: 1 }, demand: 85, capacity: 300, lease: null });
    expect(small.utilization).toBeCloseTo(85 / 300, 3);
    expect(small.nodeList.find((n: { nodeId: string }) => n.nodeId === 'd1-small-4.example.com')).toMatchObject({ state: 'draining', activeGears: 10, protected: false });
    expect(small.drains).toHaveLength(1);
    expect(small.drains[0]).toMatchObject({ nodeId: 'd1-small-4.example.com', kind: 'scale-down', stopping: null, progress: { total: 10, planned: 7, moving: 3, moved: 0, failed: 0 } });
    expect(small.drains[0].moves).toHaveLength(10);
  });

  it('status --watch refreshes (--iterations bounds it for a script)', async () => {
    const result = await cli(['status', 'd1/medium', '--watch', '--interval', '1s', '--iterations', '2']);
    expect(result.code).toBe(0);
    expect(result.stdout.match(/nodescaler status ·/g)).toHaveLength(2);
    expect(result.stdout).toContain('refreshing every 1s; Ctrl-C stops');
  });

  it('explain names the refused candidate and why, now and in the decision log', async () => {
    const result = await cli(['explain', 'd1/medium']);
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(flat(out)).toContain('no-action: pool d1/medium at 0.40 <= 0.50 for 5m15s; no node can be drained');
    expect(out).toMatch(/✗ +candidate +every active node refused \(1\)/);
    // Right now (a dry decidePool) and in the log entry the evaluator wrote at 10:05:00 (details.rejected).
    expect(flat(out).match(/refused d1-medium-1\.example\.com: gears do not fit below 80% on the other nodes \(20 gears, 0 free slots\)/g)).toHaveLength(2);
    expect(flat(out)).toMatch(/10:05:00Z no-action: pool d1\/medium at 0\.40 <= 0\.50 for 5m; no node can be drained/);
    expect(out).toMatch(/and \d more like it back to 10:00:\d\dZ/);
  });

  it('explain says which limit holds a scale-down back and shows the decision that started the drain', async () => {
    const result = await cli(['explain', 'd1/small']);
    expect(result.code).toBe(0);
    expect(flat(result.stdout)).toContain('scale-down blocked by scaleDown.budget.maxDraining: 1 of 1 drains in progress (scaleDown.maxConcurrentDrains=1)');
    expect(flat(result.stdout)).toMatch(/✗ +scaleDown\.budget\.maxDraining +1 of 1 drains in progress \(scaleDown\.maxConcurrentDrains=1\); frees +up when a drain ends \(or stalls for drainTimeout\); until +10:35:00Z/);
    expect(result.stdout).toMatch(/✓ +scaleDown\.unneededTime +low for 5m15s of 5m/);
    expect(flat(result.stdout)).toMatch(/10:05:00Z scale-down: pool d1\/small at 0\.21 <= 0\.50 for 5m; drain d1-small-4\.example\.com \(10 gears, least-gears\)/);
    expect(result.stdout).toMatch(/decision down:d1_small:\d+ · on stats · utilization 0\.21/);

    const view = json(await cli(['explain', 'd1/small', '--json', '--limit', '2']));
    const pool = view.pools[0];
    expect(pool.now.scaleDown.find((c: { name: string }) => c.name === 'scaleDown.budget.maxDraining')).toMatchObject({ ok: false, until: expect.stringMatching(/T10:35:00/) });
    expect(pool.now.candidates.rejected).toEqual([
      { nodeId: 'd1-small-2.example.com', reason: expect.stringMatching(/^receiving gears of drain /) },
      { nodeId: 'd1-small-3.example.com', reason: expect.stringMatching(/^receiving gears of drain /) },
    ]);
    expect(pool.decisions).toHaveLength(2);
    expect(pool.decisions[0]).toMatchObject({ kind: 'scale-down', details: { nodeId: 'd1-small-4.example.com', trigger: 'stats' } });
  });

  it('protect / unprotect change the node flag in the table (with its version); a protected node is a refused candidate', async () => {
    const before = await world.withState((state) => state.ports.store.getNode('d1-small-1.example.com'));
    const protect = await cli(['protect', 'd1-small-1.example.com', '--reason', 'hosts the canary']);
    expect(protect.code).toBe(0);
    expect(protect.stdout).toContain('node d1-small-1.example.com protected: never chosen for scale-down, never terminated');
    const after = await world.withState((state) => state.ports.store.getNode('d1-small-1.example.com'));
    expect(after).toMatchObject({ protected: true, version: before!.version + 1 });

    const explained = json(await cli(['explain', 'd1/small', '--json']));
    expect(explained.pools[0].now.candidates.rejected).toContainEqual({ nodeId: 'd1-small-1.example.com', reason: 'protected' });
    // A protected node is not drained by hand either.
    const drain = await cli(['drain', 'd1-small-1.example.com', '--reason', 'test']);
    expect(drain.code).toBe(4);
    expect(drain.stderr).toContain('is protected');

    const unprotect = await cli(['unprotect', 'd1-small-1.example.com', '--json', '--reason', 'canary moved']);
    expect(json(unprotect)).toMatchObject({ action: 'unprotect', protected: false, changed: true });
    expect(await world.withState((state) => state.ports.store.getNode('d1-small-1.example.com'))).toMatchObject({ protected: false, version: before!.version + 2 });
  });

  it('drain is refused (exit 4, nothing sent) while the pool has as many drains as allowed', async () => {
    const result = await cli(['drain', 'd1-small-2.example.com', '--reason', 'test']);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('pool d1/small already drains d1-small-4.example.com (scaleDown.maxConcurrentDrains=1)');
    expect(drainQueue()).toEqual([]);
  });

  it("cancel-drain takes the gear mover's abort path: moves in flight settle, then the node re-opens", async () => {
    const result = await cli(['cancel-drain', 'd1-small-4.example.com', '--reason', 'change freeze']);
    expect(result.code).toBe(0);
    expect(flat(result.stdout)).toContain('stopping (cancelled: operator (nodescaler CLI): change freeze): no move starts any more; 3 in flight settle');
    // A cancel does not keep the node: the evaluator may choose it again, and the output says how to keep it.
    expect(flat(result.stdout)).toContain('nodescaler protect d1-small-4.example.com --reason');
    const drainId = (await world.withState((state) => state.ports.store.getNode('d1-small-4.example.com')))!.drainId!;
    const drain = await world.withState((state) => state.ports.store.getDrain(drainId));
    expect(drain).toMatchObject({ state: 'active', abortReason: 'cancelled: operator (nodescaler CLI): change freeze' });
    // Written at the CLI's clock: --at, plus the milliseconds the command ran.
    expect(Date.parse(drain!.abortRequestedAt!) - world.nowMs).toBeGreaterThanOrEqual(0);
    expect(Date.parse(drain!.abortRequestedAt!) - world.nowMs).toBeLessThan(10_000);
    const status = await cli(['status', 'd1/small']);
    expect(flat(status.stdout)).toContain('stopping since 10:05:15Z: cancelled: operator (nodescaler CLI): change freeze');

    // The gear mover's next run: the three moves finish, nothing else starts, the node is active again.
    world.nowMs += 30_000;
    await world.runGearMover({ deliverDrainQueue: false });
    const view = json(await cli(['status', 'd1/small', '--json']));
    expect(view.pools[0].nodesByState).toEqual({ active: 4 });
    expect(view.pools[0].drains).toEqual([]);
    // The operator's own action is no failure: no backoff (and no DrainsAborted page), a scale-down entry, not a failure.
    expect(view.pools[0].holds.map((h: { kind: string }) => h.kind).filter((kind: string) => kind.includes('failure'))).toEqual([]);
    expect(view.pools[0].lastDrainFailureAt).toBeNull();
    expect(view.pools[0].lastFailureAt).toBeNull();
    const stopped = await world.withState((state) => state.ports.store.getDrain(drainId));
    expect(stopped).toMatchObject({ state: 'aborted', cancelledAt: drain!.abortRequestedAt });
    const log = await cli(['explain', 'd1/small', '--limit', '1']);
    expect(flat(log.stdout)).toMatch(/scale-down: drain drain:down:d1_small:\d+ of d1-small-4\.example\.com stopped: cancelled: operator/);

    const none = await cli(['cancel-drain', 'd1-small-4.example.com', '--reason', 'test']);
    expect(none.code).toBe(4);
    expect(none.stderr).toContain('node d1-small-4.example.com has no drain in progress (it is active)');
  });

  it('drain sends a scale-down with a manual: decisionId to the drain queue; the gear mover makes it a manual drain', async () => {
    const result = await cli(['drain', 'd1-small-2.example.com', '--reason', 'kernel update', '--json']);
    const view = json(result);
    expect(view).toMatchObject({ action: 'drain', nodeId: 'd1-small-2.example.com', pool: 'd1/small', queue: join(dir, 'queues/drain.json') });
    expect(view.decisionId).toMatch(/^manual:\d{8}T\d{6}Z:[0-9a-f]{8}$/);
    const records = drainQueue();
    expect(records).toHaveLength(1);
    expect(JSON.parse(records[0]!.body)).toEqual({
      type: 'scale-down',
      v: 1,
      decisionId: view.decisionId,
      pool: 'd1/small',
      nodeId: 'd1-small-2.example.com',
      reason: 'manual drain (nodescaler CLI): kernel update',
      decidedAt: expect.stringMatching(/^2026-11-21T10:05:45\.\d{3}Z$/),
    });
    expect(records[0]!.attributes).toMatchObject({ MessageGroupId: 'd1/small', MessageDeduplicationId: view.decisionId });
    // Until the gear mover begins it the drain counts, as the evaluator counts it: status says it is on its way, and a
    // second drain, which the gear mover would refuse (maxConcurrentDrains 1), is refused here.
    const waiting = await cli(['status', 'd1/small']);
    expect(flat(waiting.stdout)).toMatch(/waiting: drain of d1-small-2\.example\.com sent at 2026-11-21T10:05:45\.\d{3}Z, for the gear mover to begin; counted as draining meanwhile \(by local user \S+ at /);
    const second = await cli(['drain', 'd1-small-3.example.com', '--reason', 'kernel update']);
    expect(second.code).toBe(4);
    expect(second.stderr).toContain('pool d1/small already drains d1-small-2.example.com (scaleDown.maxConcurrentDrains=1)');
    expect(drainQueue()).toHaveLength(1);

    await world.runGearMover({ deliverDrainQueue: true });
    expect(drainQueue()).toEqual([]);
    const drain = await world.withState((state) => state.ports.store.getDrain(drainIdFor(view.decisionId)));
    expect(drain).toMatchObject({ kind: 'manual', nodeId: 'd1-small-2.example.com', decisionId: view.decisionId, state: 'active' });
    const status = await cli(['status', 'd1/small']);
    expect(flat(status.stdout)).toMatch(/drain drain:manual:\S+ of d1-small-2\.example\.com \(manual\)/);
    expect(status.stdout).toContain('1 draining');
  });

  it('evaluate --dry-run prints what the evaluator would do and changes nothing', async () => {
    const before = await world.dump();
    expect(before.items.length).toBeGreaterThan(20);
    const result = await cli(['evaluate', '--dry-run']);
    expect(result.code).toBe(0);
    expect(flat(result.stdout)).toContain('nothing written, nothing sent');
    expect(flat(result.stdout)).toMatch(/d1\/small utilization 0\.\d\d would do: no-action pool d1\/small at 0\.\d\d <= 0\.50 for \S+; scale-down blocked by scaleDown\.budget\.maxDraining: 1 of 1 drains in progress/);
    expect(flat(result.stdout)).toMatch(/d1\/medium utilization 0\.40 would do: no-action pool d1\/medium at 0\.40 <= 0\.50 for \S+; no node can be drained/);
    const view = json(await cli(['evaluate', '--dry-run', '--json', 'd1/medium']));
    expect(view).toMatchObject({ dryRun: true, pools: [{ pool: 'd1/medium', decision: { kind: 'no-action', rejected: [{ nodeId: 'd1-medium-1.example.com' }] } }] });
    expect(await world.dump()).toEqual(before);
  });

  it('an unknown node or pool is exit 3 with a clear message (and the name it probably meant)', async () => {
    const unknown = await cli(['protect', 'nosuch.example.com', '--reason', 'test']);
    expect(unknown.code).toBe(3);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain('nodescaler: error: unknown node "nosuch.example.com"');
    const short = await cli(['drain', 'd1-small-3', '--reason', 'test']);
    expect(short.code).toBe(3);
    expect(short.stderr).toContain('did you mean d1-small-3.example.com?');
    expect(drainQueue()).toEqual([]);
    const pool = await cli(['explain', 'd1/large']);
    expect(pool.code).toBe(3);
    expect(pool.stderr).toContain('unknown pool "d1/large"');
    expect(pool.stderr).toContain('pools: d1/small, d1/medium');
  });

  it('colour only when asked for (--color), never with NO_COLOR even if FORCE_COLOR is set', async () => {
    expect((await cli(['status', 'd1/medium', '--color'])).stdout).toContain(ESC);
    expect((await cli(['status', 'd1/medium'], { FORCE_COLOR: '1', NO_COLOR: '1' })).stdout).not.toContain(ESC);
  });

  it('is the package bin: npx nodescaler runs it, and the local state is the default target without AWS settings', async () => {
    const home = mkdtempSync(join(tmpdir(), 'nodescaler-home-'));
    try {
      const npx = await runCli(['--offline', '--no', 'nodescaler', 'status', 'd1/medium', '--json', '--at', world.at], {
        command: ['npx'],
        env: { HOME: home, npm_config_update_notifier: 'false', NODESCALER_LOCAL_STATE_DIR: dir, NODESCALER_CONFIG_FILE: world.configFile },
      });
      expect(npx.code).toBe(0);
      expect(JSON.parse(npx.stdout)).toMatchObject({ target: `local state ${dir}`, pools: [{ pool: 'd1/medium', nodes: 1 }] });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('nodescaler against a deployed stage (the DynamoDB protocol, served by dynalite)', () => {
  let dynamo: LocalDynamo;
  beforeAll(async () => {
    dynamo = await startLocalDynamo({ tableName: 'unused' });
    // The table serverless.yml names for stage `qa`: nodescaler-qa-state.
    await dynamo.createTable('nodescaler-qa-state', TABLE_FILE);
  });
  afterAll(() => dynamo.close());

  const aws = () => ({ AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', NODESCALER_DYNAMODB_ENDPOINT: dynamo.endpoint, COLUMNS: '100' });

  it('derives the table from --stage, needs the stage configuration, and is chosen by AWS settings', async () => {
    const noConfig = await runCli(['status', '--stage', 'qa'], { env: aws() });
    expect(noConfig.code).toBe(3);
    expect(noConfig.stderr).toContain(`no configuration for stage qa: ${join(ROOT, 'config/qa.yml')} does not exist`);

    const status = await runCli(['status', '--stage', 'qa', '--config', 'infra/nodescaler.example.yml', '--json'], { env: aws() });
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ target: 'stage qa (us-east-1, table nodescaler-qa-state)', pools: [{ pool: 'd1/small', nodes: 0 }, { pool: 'd1/medium', nodes: 0 }] });

    // No flag, but AWS credentials in the environment: the deployed stage (NODESCALER_STAGE) is the target, and it says so.
    const chosen = await runCli(['explain', 'd1/small', '--config', 'infra/nodescaler.example.yml'], { env: { ...aws(), NODESCALER_STAGE: 'qa' } });
    expect(chosen.code).toBe(0);
    expect(chosen.stderr).toContain('nodescaler: stage qa (us-east-1, table nodescaler-qa-state), chosen by AWS settings in the environment (NODESCALER_STAGE, AWS_ACCESS_KEY_ID)');
    expect(chosen.stdout).toContain('decision log: empty');

    const missing = await runCli(['status', '--stage', 'prod', '--config', 'infra/nodescaler.example.yml'], { env: aws() });
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('table nodescaler-prod-state not found');
  });
});
