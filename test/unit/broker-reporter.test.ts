/**
 * The broker reporter (infra/agent/nodescaler-broker-reporter.sh), run for
 * real with `sh` on a fake broker host: the broker emulator places tenants'
 * gears and writes origin-server's user action log (test/support/
 * broker-user-actions.ts), a stub `aws` first on PATH records what the
 * reporter sends, and that body must parse with the project's own schema.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { parseMessage } from '../../lib/messages/index.js';
import { BrokerEmulator } from '../support/broker-emulator.js';
import { BrokerUserActions, type BrokerRequest } from '../support/broker-user-actions.js';

const REPORTER = join(resolve(import.meta.dirname, '../..'), 'infra/agent/nodescaler-broker-reporter.sh');
const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/nodescaler-prod-stats';

describe('nodescaler-broker-reporter.sh (sh, stub aws, the broker emulator writing user_action.log)', () => {
  let dir: string;
  let logFile: string;
  let clock: VirtualClock;
  let broker: BrokerEmulator;
  let actions: BrokerUserActions;

  const writeEnv = (over: Record<string, string | undefined> = {}) => {
    const values: Record<string, string | undefined> = {
      NODESCALER_STATS_QUEUE_URL: QUEUE_URL,
      AWS_REGION: 'eu-west-1',
      BROKER_CONF: join(dir, 'broker.conf'),
      NODESCALER_DISTRICT: 'd1',
      NODESCALER_RETRY_DELAY: '0',
      NODESCALER_SYSLOG: '0',
      NODESCALER_STATE_FILE: join(dir, 'state/reporter.last'),
      ...over,
    };
    writeFileSync(join(dir, 'reporter.env'), Object.entries(values).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}='${v}'`).join('\n') + '\n');
  };
  const run = (env: Record<string, string> = {}) =>
    new Promise<{ code: number | null; stderr: string }>((done, failed) => {
      const child = spawn('sh', [REPORTER], {
        env: { PATH: `${join(dir, 'bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: dir, NODESCALER_REPORTER_ENV: join(dir, 'reporter.env'), STUB_DIR: join(dir, 'stub'), ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', failed);
      child.on('close', (code) => done({ code, stderr }));
    });
  const calls = () => (existsSync(join(dir, 'stub/calls')) ? Number(readFileSync(join(dir, 'stub/calls'), 'utf8')) : 0);
  const sent = () => {
    const parsed = parseMessage(readFileSync(join(dir, 'stub/body.json'), 'utf8'), { now: new Date() });
    if (!parsed.ok) throw parsed.error;
    if (parsed.message.type !== 'gears-refused') throw new Error(`sent ${parsed.message.type}`);
    return parsed.message;
  };
  const tenant = (n: number, over: Partial<BrokerRequest> = {}): BrokerRequest => ({ login: `user${n}@example.com`, domain: `ns${n}`, app: `app${n}`, gearSize: 'small', ...over });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'nodescaler-broker-reporter-'));
    mkdirSync(join(dir, 'stub'));
    mkdirSync(join(dir, 'bin'));
    writeFileSync(
      join(dir, 'bin/aws'),
      [
        '#!/bin/sh',
        'n=$(cat "$STUB_DIR/calls" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > "$STUB_DIR/calls"',
        'if [ "$n" -le "${STUB_FAILS:-0}" ]; then echo "Could not connect to the endpoint URL" >&2; exit 255; fi',
        'while [ $# -gt 0 ]; do if [ "$1" = --message-body ]; then printf "%s" "$2" > "$STUB_DIR/body.json"; fi; shift; done',
        'echo \'{"MessageId": "m-1"}\'',
      ].join('\n'),
    );
    chmodSync(join(dir, 'bin/aws'), 0o755);
    logFile = join(dir, 'user_action.log');
    writeFileSync(join(dir, 'broker.conf'), `USER_ACTION_LOG_FILE="${logFile}"\nVALID_GEAR_SIZES="small"\nDEFAULT_GEAR_SIZE="small"\n`);
    writeEnv();
    clock = new VirtualClock('2026-03-01T12:00:00Z');
    broker = new BrokerEmulator({ clock, brokerInstanceId: 'i-0b0b0b0b0b0b0b0b0', documentName: 'nodescaler-prod-broker-admin' });
    broker.createDistrict('d1', 'small');
    for (const node of ['node-1.example.com', 'node-2.example.com']) {
      broker.addNodeHost(node, 'small', 3);
      broker.joinDistrict('d1', node);
    }
    actions = new BrokerUserActions(broker, [{ name: 'd1', gearSize: 'small' }], logFile, clock);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('starts at the end of the log on its first run: refusals before it are history', async () => {
    for (let n = 1; n <= 8; n++) actions.create(tenant(n)); // 6 placed, 2 refused
    expect(await run()).toMatchObject({ code: 0 });
    expect(calls()).toBe(0);
    expect(await run()).toMatchObject({ code: 0 });
    expect(calls()).toBe(0);
  });

  it('counts the distinct creations the broker refused for lack of capacity since its last run, and sends them for the pool', async () => {
    await run(); // first run: the offset
    for (let n = 1; n <= 6; n++) expect(actions.create(tenant(n))).toBeDefined(); // the district is now full
    expect(actions.create(tenant(7))).toBeUndefined();
    expect(actions.create(tenant(7))).toBeUndefined(); // the same tenant retrying: one waiting gear
    expect(actions.create(tenant(8))).toBeUndefined();
    expect(actions.create(tenant(1, { scaleUp: true }))).toBeUndefined(); // haproxy's scale-up of app1
    actions.failOther(tenant(10), 'Application name is not allowed.  Please choose another.');
    expect(readFileSync(logFile, 'utf8')).toContain('ACTION=ADD_APPLICATION REQ_ID=req-00000007 USER_ID=000000000000000000000011 LOGIN=user7@example.com DOMAIN=ns7 Unable to complete the requested operation due to: No nodes available');

    const result = await run();
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(calls()).toBe(1);
    const message = sent();
    // user7 once, user8, app1's scale-up; not the refusal for a bad name.
    expect(message).toMatchObject({ type: 'gears-refused', v: 1, district: 'd1', profile: 'small', refused: 3 });
    expect(Date.parse(message.windowEnd)).toBeGreaterThan(Date.parse(message.windowStart));
    expect(Date.parse(message.windowEnd) - Date.parse(message.windowStart)).toBeLessThanOrEqual(3_600_000);

    // Nothing new: one refused: 0 (the gears stopped waiting), then silence.
    expect(await run()).toMatchObject({ code: 0 });
    expect(calls()).toBe(2);
    expect(sent()).toMatchObject({ refused: 0 });
    expect(await run()).toMatchObject({ code: 0 });
    expect(calls()).toBe(2);
  });

  it('reads a rotated log from its start', async () => {
    await run();
    renameSync(logFile, `${logFile}.1`);
    actions = new BrokerUserActions(broker, [{ name: 'd1', gearSize: 'small' }], logFile, clock);
    for (let n = 1; n <= 8; n++) actions.create(tenant(n));
    await run();
    expect(sent()).toMatchObject({ refused: 2 });
  });

  it('names no district when none is configured: the evaluator shares it among the pools of the profile', async () => {
    writeEnv({ NODESCALER_DISTRICT: undefined, NODESCALER_PROFILE: 'small' });
    await run();
    for (let n = 1; n <= 7; n++) actions.create(tenant(n));
    await run();
    const message = sent();
    expect(message.district).toBeUndefined();
    expect(message).toMatchObject({ profile: 'small', refused: 1 });
  });

  it('sends nothing for a broker with several gear sizes and no NODESCALER_PROFILE: the log does not say which was refused', async () => {
    writeFileSync(join(dir, 'broker.conf'), `USER_ACTION_LOG_FILE="${logFile}"\nVALID_GEAR_SIZES="small,large"\n`);
    const result = await run();
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('several gear sizes (small,large)');
    expect(result.stderr).toContain('set NODESCALER_PROFILE');
    expect(calls()).toBe(0);
  });

  it('refuses a profile or district that is not a plain name (it goes into JSON unescaped)', async () => {
    writeEnv({ NODESCALER_DISTRICT: 'd1","refused":6000,"x":"' });
    const result = await run();
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('is not a plain name');
    expect(calls()).toBe(0);
  });

  it('keeps its offset when sending fails, so the next run counts the same refusals again', async () => {
    await run();
    for (let n = 1; n <= 9; n++) actions.create(tenant(n));
    const failed = await run({ STUB_FAILS: '3' });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('aws sqs send-message failed 3 times');
    expect(await run()).toMatchObject({ code: 0 });
    expect(sent()).toMatchObject({ refused: 3 });
  });
});
