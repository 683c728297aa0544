/**
 * `npm run invoke` runs functions locally with no AWS account, against
 * embedded state that carries over between runs.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbStateStore } from '../../lib/adapters/dynamodb/state-store.js';
import { startLocalDynamo } from '../../lib/adapters/local/dynalite.js';
import { ROOT, run, type Json, type Ran } from './support/packaged-stack.js';

/** The node-stats bodies of events/node-stats.json, the sample the invocations below send. */
const SAMPLE_STATS = (JSON.parse(readFileSync(join(ROOT, 'events/node-stats.json'), 'utf8')).Records as Array<{ body: string }>).map(
  (record) => JSON.parse(record.body) as { nodeId: string; district: string; profile: string; activeGears: number; gears?: Array<{ uuid: string }> },
);

/** The environment of a machine with no AWS settings at all. */
function noAws(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, AWS_CONFIG_FILE: '/nonexistent', AWS_SHARED_CREDENTIALS_FILE: '/nonexistent' };
  for (const key of Object.keys(env)) if (/^AWS_(ACCESS|SECRET|SESSION|PROFILE|REGION|DEFAULT)/.test(key) || key.startsWith('NODESCALER_')) delete env[key];
  return env;
}

/** `npm run invoke -- <args>`; `direct` runs the same script without npm's own start-up (the later steps of a sequence). */
const invoke = (stateDir: string, ...args: string[]) =>
  run('npm', ['run', '--silent', 'invoke', '--', ...args, '--state-dir', stateDir], noAws());
const invokeDirect = (stateDir: string, ...args: string[]) =>
  run(process.execPath, [join(ROOT, 'scripts/invoke.mjs'), ...args, '--state-dir', stateDir], noAws());

/** Two sequences of `npm run invoke`, each in its own state directory, run side by side. */
interface Invocations {
  /** The command as is, then the gear mover's tick over the same state. */
  plain: { stateDir: string; stats: Ran; statsAt: Ran; gearMoverTick: Ran; decommissionerTick: Ran };
  /** Stats at 10:00:30, a tick at 10:02:45 (one scale-up in the scale queue file), the provisioner on that file. */
  timed: { stateDir: string; stats: Ran; tick: Ran; scaleQueueAfterTick: string; provision: Ran };
}
let invocations: Promise<Invocations>;
const stateDirs: string[] = [];

async function runInvocations(): Promise<Invocations> {
  const plainDir = mkdtempSync(join(tmpdir(), 'nodescaler-invoke-'));
  const timedDir = mkdtempSync(join(tmpdir(), 'nodescaler-invoke-'));
  stateDirs.push(plainDir, timedDir);
  const plain = (async () => {
    const stats = await invoke(plainDir, 'thresholdEvaluator', 'events/node-stats.json');
    // The sample stats are dated 2026-11-21T10:00Z: on the real clock they are too old to count, at their own time they do.
    const statsAt = await invokeDirect(plainDir, 'thresholdEvaluator', 'events/node-stats.json', '--at', '2026-11-21T10:00:30Z');
    const gearMoverTick = await invokeDirect(plainDir, 'gearMover', 'events/tick.json');
    const decommissionerTick = await invokeDirect(plainDir, 'decommissioner', 'events/tick.json');
    return { stateDir: plainDir, stats, statsAt, gearMoverTick, decommissionerTick };
  })();
  const timed = (async () => {
    const stats = await invokeDirect(timedDir, 'thresholdEvaluator', 'events/node-stats.json', '--at', '2026-11-21T10:00:30Z');
    const tick = await invokeDirect(timedDir, 'thresholdEvaluator', 'events/tick.json', '--at', '2026-11-21T10:02:45Z');
    const scaleFile = join(timedDir, 'queues', 'scale.json');
    const scaleQueueAfterTick = existsSync(scaleFile) ? readFileSync(scaleFile, 'utf8') : '';
    const provision = await invokeDirect(timedDir, 'nodeProvisioner', scaleFile, '--at', '2026-11-21T10:03:00Z');
    return { stateDir: timedDir, stats, tick, scaleQueueAfterTick, provision };
  })();
  return { plain: await plain, timed: await timed };
}

beforeAll(() => {
  invocations = runInvocations();
  invocations.catch(() => {}); // awaited (and reported) by the tests
});

afterAll(async () => {
  await invocations.catch(() => undefined);
  for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
});

describe('npm run invoke (serverless invoke local, stage local): no AWS account', () => {
  let ran: Invocations;
  beforeAll(async () => {
    ran = await invocations;
  });
  const withStore = async <T>(stateDir: string, use: (store: DynamoDbStateStore) => Promise<T>): Promise<T> => {
    const local = await startLocalDynamo({ path: join(stateDir, 'dynamodb'), tableName: 'nodescaler-local-state' });
    try {
      return await use(new DynamoDbStateStore(DynamoDbStateStore.documentClient(local.client), local.tableName));
    } finally {
      await local.close();
    }
  };

  it('npm run invoke -- thresholdEvaluator events/node-stats.json: drops the sample stats as too old on the real clock, takes them at their time (--at) and persists the nodes', async () => {
    const { stateDir, stats: old, statsAt: stats } = ran.plain;
    expect(old.status, `${old.stdout}\n${old.stderr}`).toBe(0);
    expect(old.stdout).toMatch(/"batchItemFailures": \[\]/);
    expect(old.stderr).toMatch(/"message":"node-stats dropped: too old to count".*"field":"reportedAt","value":"2026-11-21T10:00:/);
    expect(old.stdout).not.toMatch(/"message":"node adopted"/);
    expect(stats.status, `${stats.stdout}\n${stats.stderr}`).toBe(0);
    expect(stats.stdout).toMatch(/"batchItemFailures": \[\]/);
    expect(stats.stdout).toMatch(/"message":"node adopted".*"nodeId":"d1-small-1\.example\.com"/);
    expect(stats.stderr).toContain(`thresholdEvaluator: local state ${stateDir}`);
    const nodes = await withStore(stateDir, (store) => store.listNodes('d1/small'));
    expect(nodes.map((n) => [n.nodeId, n.state, n.stats?.activeGears])).toEqual(
      SAMPLE_STATS.filter((m) => `${m.district}/${m.profile}` === 'd1/small').map((m) => [m.nodeId, 'active', m.activeGears]),
    );
  });

  it('runs the gear mover and the decommissioner over the same state: the simulated platform starts from the nodes and gears the stats reported', () => {
    const { stateDir, gearMoverTick, decommissionerTick } = ran.plain;
    expect(gearMoverTick.status, `${gearMoverTick.stdout}\n${gearMoverTick.stderr}`).toBe(0);
    expect(gearMoverTick.stdout).toMatch(/"drains": 0/);
    expect(decommissionerTick.status, `${decommissionerTick.stdout}\n${decommissionerTick.stderr}`).toBe(0);
    // The stats taken at their time (--at) found fewer free slots than headroomGears: their scale-up waits for the provisioner.
    expect(decommissionerTick.stderr).toContain(`decommissioner: local state ${stateDir}; waiting: scale: 1 `);
    const platform = JSON.parse(readFileSync(join(stateDir, 'platform.json'), 'utf8'));
    const gears = Object.fromEntries(platform.nodes.map((n: Json) => [n.nodeId, n.gears.length]));
    expect(gears).toEqual(Object.fromEntries(SAMPLE_STATS.map((m) => [m.nodeId, m.activeGears])));
    // A node that listed its gears keeps their ids; the others get placeholders.
    const listed = SAMPLE_STATS.find((m) => m.gears?.length)!;
    expect(platform.nodes.find((n: Json) => n.nodeId === listed.nodeId).gears.map((g: Json) => g.uuid)).toEqual(listed.gears!.map((g) => g.uuid));
  });

  it('builds each invocation on the previous one: stats and a tick leave one scale-up in the scale queue file, the provisioner takes that file', async () => {
    const { stateDir, stats, tick, scaleQueueAfterTick, provision } = ran.timed;
    const scaleFile = join(stateDir, 'queues', 'scale.json');
    expect(stats.status, `${stats.stdout}\n${stats.stderr}`).toBe(0);
    expect(tick.status, `${tick.stdout}\n${tick.stderr}`).toBe(0);
    expect(tick.stderr).toContain(`waiting: scale: 1 (${scaleFile})`);
    const queued = JSON.parse(scaleQueueAfterTick).Records;
    expect(queued).toHaveLength(1);
    // One decision, whether the stats (at 10:00:30) or the tick (at 10:02:45, once the sustain window
    // passed) took it: the later invocation finds it in flight and sends nothing more.
    const decision = JSON.parse(queued[0].body);
    expect(decision).toMatchObject({ type: 'scale-up', pool: 'd1/small' });
    expect(decision.count).toBeGreaterThanOrEqual(1);
    expect(decision.decidedAt).toMatch(/^2026-11-21T10:0(0:3\d|2:4[5-9])\./);
    expect(queued[0].attributes).toMatchObject({ MessageGroupId: 'd1/small', MessageDeduplicationId: decision.decisionId });


    // The provisioner takes the queue file as its event; what it handled leaves the file, as SQS deletes it.
    expect(provision.status, `${provision.stdout}\n${provision.stderr}`).toBe(0);
    expect(provision.stdout).toMatch(/"batchItemFailures": \[\]/);
    expect(provision.stdout).toContain(`"decisionId":"${decision.decisionId}"`);
    expect(provision.stderr).toContain('scale queue: 1 handled, 0 to redeliver, 0 dead-lettered');
    expect(JSON.parse(readFileSync(scaleFile, 'utf8')).Records).toEqual([]);
    const claim = await withStore(stateDir, (store) => store.getScaleUp(decision.decisionId));
    expect(claim).toBeDefined();
  });
});
