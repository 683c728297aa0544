/**
 * The node stats agent (infra/agent/nodescaler-agent.sh), run for real with
 * `sh` against a fake node file tree, a stub `aws` first on PATH and a stub
 * IMDSv2 on 127.0.0.1; what it sends must parse with the project's own
 * node-stats schema. Plus the user data the provisioner renders for
 * events/scale-up.json: it installs that same agent for the right pool.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EC2Client, RunInstancesCommand } from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { cloudFor } from '../../lib/adapters/cloud/from-settings.js';
import { findPoolConfig, loadSettings, poolNaming, type Settings } from '../../lib/config/index.js';
import { clientToken, nodeNames } from '../../lib/domain/provisioning.js';
import { STATS_AGENT_SCRIPT, STATS_AGENT_SERVICE, STATS_AGENT_TIMER } from '../../lib/domain/stats-agent-script.js';
import { parseMessage } from '../../lib/messages/index.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { AGENT, INSTANCE_ID, QUEUE_URL, TOKEN, useAgentNode, type AgentRun } from '../support/stats-agent-node.js';

const ROOT = resolve(import.meta.dirname, '../..');

describe('nodescaler-agent.sh (sh, stub aws, stub IMDSv2, fake node tree)', () => {
  const agent = useAgentNode();
  let dir: string;
  let gears: string;
  let limits: string;
  let envFile: string;

  beforeEach(() => {
    ({ dir, gears, limits, envFile } = agent.node);
    // Three active gears: started (an unscaled app's), no state file yet (a scaled app's secondary gear),
    // building (that app's head gear); one stopped, one idle.
    agent.node.appGear(1, 'blog', 'unscaled', 'started');
    agent.node.appGear(2, 'shop', 'secondary');
    agent.node.appGear(3, 'shop', 'head', 'building');
    agent.node.appGear(4, 'wiki', 'unscaled', 'stopped');
    agent.node.appGear(5, 'shop', 'secondary', 'idle');
    // Not gears: node directories, a 31-character name, a file with a gear-like name, upper case.
    mkdirSync(join(gears, '.httpd.d'));
    mkdirSync(join(gears, 'lost+found'));
    mkdirSync(join(gears, 'a'.repeat(31)));
    mkdirSync(join(gears, 'A'.repeat(32)));
    writeFileSync(join(gears, 'b'.repeat(32)), 'not a directory');
  });

  const writeEnv = (over: Record<string, string | undefined>) => agent.node.writeEnv(over);
  const run = (extraEnv: Record<string, string> = {}, script = AGENT): Promise<AgentRun> => agent.node.run(extraEnv, script);
  const calls = () => agent.node.calls();
  const sent = () => agent.node.sent();
  const args = () => agent.node.args();

  it('sends one node-stats message that parses with the node-stats schema, with the gear counts of the tree', async () => {
    agent.imds.requests.length = 0;
    const before = Date.now();
    const result = await run();
    expect(result).toEqual({ code: 0, stderr: '' });
    expect(calls()).toBe(1);

    const parsed = parseMessage(sent(), { now: new Date() });
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.message).toMatchObject({
      type: 'node-stats',
      v: 1,
      nodeId: 'node-7.example.com',
      district: 'd1',
      profile: 'small',
      activeGears: 3,
      maxActiveGears: 100,
    });
    const reportedAt = Date.parse((parsed.message as { reportedAt: string }).reportedAt);
    expect(reportedAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(reportedAt).toBeLessThanOrEqual(Date.now());

    const argv = args();
    expect(argv.slice(0, 2)).toEqual(['sqs', 'send-message']);
    expect(argv[argv.indexOf('--queue-url') + 1]).toBe(QUEUE_URL);
    expect(argv[argv.indexOf('--region') + 1]).toBe('eu-west-1');
    expect(argv[argv.indexOf('--message-attributes') + 1]).toBe(`instanceId={DataType=String,StringValue=${INSTANCE_ID}}`);

    // IMDSv2: the token first (with its TTL), then every GET carrying it.
    expect(agent.imds.requests[0]).toEqual({ method: 'PUT', url: '/latest/api/token', ttl: '60' });
    expect(agent.imds.requests.slice(1).map((r) => [r.method, r.url, r.token])).toEqual([
      ['GET', '/latest/meta-data/instance-id', TOKEN],
      ['GET', '/latest/meta-data/hostname', TOKEN],
    ]);
  });

  it('uses NODESCALER_NODE_ID (the host name the provisioner recorded) over the IMDS host name', async () => {
    writeEnv({ NODESCALER_NODE_ID: 'd1-small-1.example.com' });
    const result = await run();
    expect(result.code).toBe(0);
    const parsed = parseMessage(sent());
    expect(parsed.ok && parsed.message).toMatchObject({ type: 'node-stats', nodeId: 'd1-small-1.example.com', activeGears: 3 });
  });

  it('counts no active gears on an empty node', async () => {
    rmSync(gears, { recursive: true });
    mkdirSync(gears, { recursive: true });
    expect((await run()).code).toBe(0);
    const parsed = parseMessage(sent());
    expect(parsed.ok && parsed.message).toMatchObject({ type: 'node-stats', activeGears: 0, maxActiveGears: 100 });
  });

  it('sends nothing, logs one line and exits non-zero when resource_limits.conf is missing', async () => {
    rmSync(limits);
    const result = await run();
    expect(result.code).not.toBe(0);
    expect(result.stderr).toBe(`nodescaler-agent: cannot read ${limits}; no stats sent\n`);
    expect(calls()).toBe(0);
  });

  it.each([
    ['0', 'max_active_gears=0\n'],
    ['a word', 'max_active_gears=many\n'],
    ['absent', 'node_profile=small\n'],
    ['negative', 'max_active_gears=-4\n'],
    ['above the UID pool', 'max_active_gears=6001\n'],
  ])('sends nothing when max_active_gears is %s', async (_label, text) => {
    writeFileSync(limits, text);
    const result = await run();
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/^nodescaler-agent: max_active_gears .* no stats sent\n$/);
    expect(calls()).toBe(0);
  });

  it.each([
    ['the district is missing', { NODESCALER_DISTRICT: undefined }, 'NODESCALER_DISTRICT is not set'],
    ['the profile is not a plain name', { NODESCALER_PROFILE: 'sm"all' }, `NODESCALER_PROFILE 'sm"all' is not a plain name`],
    ['the queue URL is missing', { NODESCALER_STATS_QUEUE_URL: undefined }, 'NODESCALER_STATS_QUEUE_URL is not set'],
    ['the gear directory is missing', { GEAR_BASE_DIR: '/nonexistent/openshift' }, 'cannot read the gear directory /nonexistent/openshift'],
    ['the metadata service is unreachable', { IMDS_ENDPOINT: 'http://127.0.0.1:9' }, 'no IMDSv2 token from http://127.0.0.1:9 (curl exit 7)'],
  ])('sends nothing when %s', async (_label, over, line) => {
    writeEnv(over);
    const result = await run();
    expect(result.code).not.toBe(0);
    expect(result.stderr).toBe(`nodescaler-agent: ${line}; no stats sent\n`);
    expect(calls()).toBe(0);
  });

  it('sends nothing when the env file cannot be read', async () => {
    const result = await run({ NODESCALER_AGENT_ENV: join(dir, 'missing.env') });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toBe(`nodescaler-agent: cannot read ${join(dir, 'missing.env')}; no stats sent\n`);
    expect(calls()).toBe(0);
  });

  it('retries a failing send with backoff (1 s, then 2 s) and succeeds on the third try', async () => {
    writeEnv({ NODESCALER_RETRY_DELAY: '1' });
    const started = Date.now();
    const result = await run({ STUB_FAILS: '2' });
    const elapsed = Date.now() - started;
    expect(result).toEqual({ code: 0, stderr: '' });
    expect(calls()).toBe(3);
    expect(elapsed).toBeGreaterThanOrEqual(3000);
    expect(parseMessage(sent()).ok).toBe(true);
  });

  it('gives up after three failed sends, exits non-zero and logs the last error', async () => {
    const result = await run({ STUB_FAILS: '5' });
    expect(result.code).not.toBe(0);
    expect(calls()).toBe(3);
    expect(result.stderr).toBe(
      'nodescaler-agent: aws sqs send-message failed 3 times (last: Could not connect to the endpoint URL); no stats sent\n',
    );
  });

  describe('reporting on change', () => {
    const stateFile = () => join(dir, 'state/agent.last');
    const nowSeconds = () => Math.floor(Date.now() / 1000);

    it('sends nothing when the figures equal the last report sent within the heartbeat, and remembers what it sent', async () => {
      expect(await run()).toEqual({ code: 0, stderr: '' });
      expect(calls()).toBe(1);
      const [active, max, at] = readFileSync(stateFile(), 'utf8').trim().split(' ').map(Number);
      expect([active, max]).toEqual([3, 100]);
      expect(Math.abs(at! - nowSeconds())).toBeLessThanOrEqual(5);
      expect(await run()).toEqual({ code: 0, stderr: '' });
      expect(calls()).toBe(1);
    });

    it('sends again as soon as a gear starts or stops', async () => {
      await run();
      agent.node.appGear(6, 'docs', 'unscaled');
      expect(await run()).toEqual({ code: 0, stderr: '' });
      expect(calls()).toBe(2);
      expect(JSON.parse(sent())).toMatchObject({ activeGears: 4 });
    });

    it('sends an unchanged report once the heartbeat has passed, so stats never age past statsMaxAge', async () => {
      await run();
      expect(calls()).toBe(1);
      // The state as the agent wrote it (active, max, when, checksum of the figures), sent 241 s ago.
      const [active, max, , sum] = readFileSync(stateFile(), 'utf8').trim().split(' ');
      writeFileSync(stateFile(), `${active} ${max} ${nowSeconds() - 241} ${sum}\n`);
      await run();
      expect(calls()).toBe(2);
      writeFileSync(stateFile(), `${active} ${max} ${nowSeconds() - 100} ${sum}\n`);
      await run();
      expect(calls()).toBe(2);
      writeEnv({ NODESCALER_HEARTBEAT: '60' });
      await run();
      expect(calls()).toBe(3);
      // A state file of the agent before the gear kinds (no checksum) sends again.
      writeFileSync(stateFile(), `${active} ${max} ${nowSeconds()}\n`);
      writeEnv({});
      await run();
      expect(calls()).toBe(4);
    });

    it('sends when the state file is garbage, and keeps nothing when the send failed', async () => {
      mkdirSync(join(dir, 'state'));
      writeFileSync(stateFile(), 'not numbers at all\n');
      await run();
      expect(calls()).toBe(1);
      const before = `1 100 ${nowSeconds()}\n`;
      writeFileSync(stateFile(), before);
      const failing = await run({ STUB_FAILS: '99' });
      expect(failing.code).toBe(1);
      expect(calls()).toBe(4);
      expect(readFileSync(stateFile(), 'utf8')).toBe(before);
    });

    it('refuses a heartbeat that is not a number of seconds', async () => {
      writeEnv({ NODESCALER_HEARTBEAT: '4m' });
      const result = await run();
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("NODESCALER_HEARTBEAT '4m' is not a number of seconds");
      expect(calls()).toBe(0);
    });
  });

  it('is embedded byte for byte in the provisioner (regenerate with node infra/agent/embed.mjs)', () => {
    expect(STATS_AGENT_SCRIPT).toBe(readFileSync(AGENT, 'utf8'));
    expect(STATS_AGENT_SERVICE).toBe(readFileSync(join(ROOT, 'infra/agent/nodescaler-agent.service'), 'utf8'));
    expect(STATS_AGENT_TIMER).toBe(readFileSync(join(ROOT, 'infra/agent/nodescaler-agent.timer'), 'utf8'));
  });

  describe('the user data rendered for events/scale-up.json', () => {
    const ec2 = mockClient(EC2Client);
    afterAll(() => ec2.restore());
    const decision = parseMessage(JSON.parse(readFileSync(join(ROOT, 'events/scale-up.json'), 'utf8')).Records[0].body);

    async function renderedUserData(env: Record<string, string>): Promise<string> {
      if (!decision.ok || decision.message.type !== 'scale-up') throw new Error('events/scale-up.json holds no scale-up decision');
      const loaded = loadSettings({ AWS_REGION: 'eu-west-1', ...env }, { cwd: ROOT });
      const settings: Settings = { ...loaded, config: { ...loaded.config, handler: 'ec2' } };
      const pool = findPoolConfig(settings.config, decision.message.pool)!;
      const { nodeId, cloudName } = nodeNames(poolNaming(settings.config, pool), 1);
      ec2.reset();
      ec2.on(RunInstancesCommand).resolves({ Instances: [{ InstanceId: INSTANCE_ID }] });
      await cloudFor(settings, new MemoryLog()).createHost({
        pool: decision.message.pool,
        district: pool.district,
        profile: pool.profile,
        hostName: nodeId,
        cloudName,
        decisionId: decision.message.decisionId,
        idempotencyToken: clientToken(decision.message.decisionId, 0, 0),
      });
      const input = ec2.commandCalls(RunInstancesCommand)[0]!.args[0].input;
      return Buffer.from(input.UserData!, 'base64').toString('utf8');
    }

    const heredoc = (text: string, path: string, delimiter: string) =>
      new RegExp(`^cat > ${path} <<'${delimiter}'\\n([\\s\\S]*?)\\n${delimiter}$`, 'm').exec(text)?.[1];

    it('installs the agent with the pool district and profile, the node id, queue URL and region, and enables its timer', async () => {
      const userData = await renderedUserData({ NODESCALER_STATS_QUEUE_URL: QUEUE_URL });
      expect(heredoc(userData, '/etc/nodescaler/agent.env', 'NODESCALER_AGENT_ENV')).toBe(
        [
          "NODESCALER_DISTRICT='d1'",
          "NODESCALER_PROFILE='small'",
          "NODESCALER_NODE_ID='d1-small-1.example.com'",
          `NODESCALER_STATS_QUEUE_URL='${QUEUE_URL}'`,
          "AWS_REGION='eu-west-1'",
        ].join('\n'),
      );
      expect(`${heredoc(userData, '/usr/local/sbin/nodescaler-agent', 'NODESCALER_AGENT_SCRIPT')}\n`).toBe(STATS_AGENT_SCRIPT);
      expect(`${heredoc(userData, '/etc/systemd/system/nodescaler-agent.timer', 'NODESCALER_AGENT_TIMER')}\n`).toBe(STATS_AGENT_TIMER);
      expect(userData).toContain('chmod 0755 /usr/local/sbin/nodescaler-agent');
      expect(userData).toContain('systemctl daemon-reload && systemctl enable --now nodescaler-agent.timer');
      expect(userData).toContain("echo '* * * * * root /usr/local/sbin/nodescaler-agent' > /etc/cron.d/nodescaler-agent");
      // EC2 limits user data to 16 KiB before base64; valid bash.
      expect(Buffer.byteLength(userData, 'utf8')).toBeLessThan(16 * 1024);
      const file = join(dir, 'user-data.sh');
      writeFileSync(file, userData);
      expect(() => execFileSync('bash', ['-n', file])).not.toThrow();
    });

    it('installs an agent that, run as installed, reports this node of the pool', async () => {
      const userData = await renderedUserData({ NODESCALER_STATS_QUEUE_URL: QUEUE_URL });
      const installed = join(dir, 'nodescaler-agent');
      writeFileSync(installed, `${heredoc(userData, '/usr/local/sbin/nodescaler-agent', 'NODESCALER_AGENT_SCRIPT')}\n`);
      const env = heredoc(userData, '/etc/nodescaler/agent.env', 'NODESCALER_AGENT_ENV')!;
      writeFileSync(envFile, `${env}\nGEAR_BASE_DIR='${gears}'\nRESOURCE_LIMITS='${limits}'\nIMDS_ENDPOINT='${agent.imds.endpoint}'\nNODESCALER_SYSLOG=0\nNODESCALER_STATE_FILE='${join(dir, 'state/agent.last')}'\n`);
      const result = await run({}, installed);
      expect(result).toEqual({ code: 0, stderr: '' });
      const parsed = parseMessage(sent());
      expect(parsed.ok && parsed.message).toMatchObject({
        type: 'node-stats',
        nodeId: 'd1-small-1.example.com',
        district: 'd1',
        profile: 'small',
        activeGears: 3,
        maxActiveGears: 100,
      });
      expect(args()[args().indexOf('--queue-url') + 1]).toBe(QUEUE_URL);
    });

    it('installs no agent when the deployment has no stats queue URL', async () => {
      const userData = await renderedUserData({});
      expect(userData).not.toContain('nodescaler-agent');
      expect(userData).toContain("NODESCALER_DISTRICT='d1'");
    });
  });
});
