/**
 * The broker reporter (infra/agent/nodescaler-broker-reporter.sh), run for
 * real with `sh` on a fake broker host: the broker emulator places tenants'
 * gears and writes origin-server's user action log (test/support/
 * broker-user-actions.ts), a stub `aws` first on PATH records what the
 * reporter sends, and that body must parse with the project's own schema.
 * A stub `oo-admin-ctl-district` prints the emulator's `-c list` output for
 * the district reads.
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
      // The refusal tests below read no district; the district tests turn it on.
      NODESCALER_DISTRICT_EVERY: '0',
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
  /** Every body sent, parsed with the project's schema. */
  const allSent = () =>
    (existsSync(join(dir, 'stub/bodies')) ? readFileSync(join(dir, 'stub/bodies'), 'utf8').trim().split('\n') : []).map((line) => {
      const parsed = parseMessage(line, { now: new Date() });
      if (!parsed.ok) throw parsed.error;
      return parsed.message;
    });
  /** What `oo-admin-ctl-district -c list` prints on the broker now. */
  const listing = (text = broker.listDistricts().stdout) => writeFileSync(join(dir, 'stub/districts.txt'), text);
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
        'while [ $# -gt 0 ]; do if [ "$1" = --message-body ]; then printf "%s" "$2" > "$STUB_DIR/body.json"; printf "%s\\n" "$2" >> "$STUB_DIR/bodies"; fi; shift; done',
        'echo \'{"MessageId": "m-1"}\'',
      ].join('\n'),
    );
    chmodSync(join(dir, 'bin/aws'), 0o755);
    writeFileSync(
      join(dir, 'bin/oo-admin-ctl-district'),
      ['#!/bin/sh', '[ "$*" = "-c list" ] || { echo "unexpected arguments: $*"; exit 255; }', 'cat "$STUB_DIR/districts.txt"', 'exit "${STUB_DISTRICT_EXIT:-0}"'].join('\n'),
    );
    chmodSync(join(dir, 'bin/oo-admin-ctl-district'), 0o755);
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

  it('says zonesRequired when the broker asked for a node in a zone ("gear size/zone combination"), and only then', async () => {
    const zoned = new BrokerUserActions(broker, [{ name: 'd1', gearSize: 'small' }], logFile, clock, true);
    await run();
    expect(zoned.create(tenant(1))).toBeUndefined(); // the district's nodes are in no zone
    expect(readFileSync(logFile, 'utf8')).toContain('No nodes available for the specified gear size/zone combination.');
    await run();
    expect(sent()).toMatchObject({ type: 'gears-refused', refused: 1, zonesRequired: true });
    for (let n = 2; n <= 8; n++) actions.create(tenant(n)); // 6 placed, 1 refused, in words without a zone
    await run();
    expect(sent()).toMatchObject({ refused: 1 });
    expect(sent()).not.toHaveProperty('zonesRequired');
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

  describe('district UIDs', () => {
    beforeEach(() => {
      // d1 holds 4 UIDs for its 6 slots; d2 (gear size medium) has its default 6,000 and no gear.
      broker = new BrokerEmulator({ clock, brokerInstanceId: 'i-0b0b0b0b0b0b0b0b0', documentName: 'nodescaler-prod-broker-admin' });
      broker.createDistrict('d1', 'small', 4);
      broker.createDistrict('d2', 'medium');
      for (const node of ['node-1.example.com', 'node-2.example.com']) {
        broker.addNodeHost(node, 'small', 3);
        broker.joinDistrict('d1', node);
      }
      broker.addNodeHost('node-3.example.com', 'medium', 3);
      broker.joinDistrict('d2', 'node-3.example.com');
      actions = new BrokerUserActions(broker, [{ name: 'd1', gearSize: 'small' }, { name: 'd2', gearSize: 'medium' }], logFile, clock);
      writeEnv({ NODESCALER_DISTRICT_EVERY: '300' });
    });

    it('refuses a gear once its district has no UID left, with the words of a full pool, though its nodes have room', () => {
      for (let n = 1; n <= 4; n++) expect(actions.create(tenant(n))).toBeDefined();
      expect(broker.availableCapacity('d1')).toBe(0);
      expect(actions.create(tenant(5))).toBeUndefined();
      expect(broker.gearsOn('node-1.example.com').length + broker.gearsOn('node-2.example.com').length).toBe(4); // of 6 slots
      expect(readFileSync(logFile, 'utf8')).toContain('LOGIN=user5@example.com DOMAIN=ns5 Unable to complete the requested operation due to: No nodes available for the specified gear size');
      broker.addDistrictCapacity('d1', 2);
      expect(actions.create(tenant(5))).toBeDefined();
    });

    it('sends each district\'s UIDs after the refusals, from the list the broker prints, then not again until due', async () => {
      listing();
      await run(); // the offset; the districts are read on this run too
      for (let n = 1; n <= 6; n++) actions.create(tenant(n)); // 4 placed, 2 refused for want of UIDs
      listing();
      writeFileSync(join(dir, 'state/reporter.last.districts'), '0\n'); // due again
      const result = await run();
      expect(result).toMatchObject({ code: 0, stderr: '' });
      const messages = allSent();
      expect(messages.map((m) => m.type)).toEqual(['district-capacity', 'district-capacity', 'gears-refused', 'district-capacity', 'district-capacity']);
      expect(messages.at(2)).toMatchObject({ district: 'd1', profile: 'small', refused: 2 });
      expect(messages.slice(3)).toEqual([
        expect.objectContaining({ type: 'district-capacity', v: 1, district: 'd1', profile: 'small', maxCapacity: 4, availableCapacity: 0 }),
        expect.objectContaining({ type: 'district-capacity', v: 1, district: 'd2', profile: 'medium', maxCapacity: 6000, availableCapacity: 6000 }),
      ]);

      // Within NODESCALER_DISTRICT_EVERY of that read: the refusals' zero only.
      expect(await run()).toMatchObject({ code: 0, stderr: '' });
      expect(allSent().slice(5).map((m) => m.type)).toEqual(['gears-refused']);
    });

    it('never reads the districts with NODESCALER_DISTRICT_EVERY 0, and refuses a value that is not seconds', async () => {
      writeEnv({ NODESCALER_DISTRICT_EVERY: '0' });
      listing();
      await run();
      await run();
      expect(calls()).toBe(0);
      writeEnv({ NODESCALER_DISTRICT_EVERY: '5m' });
      const result = await run();
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("NODESCALER_DISTRICT_EVERY '5m' is not a number of seconds");
    });

    it('logs a failed listing in one line and tries again when due; leaves out a district whose dump is not plain', async () => {
      listing('/opt/rh/ruby193/root/usr/share/gems/gems/mongoid-3.1.6/lib/mongoid/sessions.rb:12: Could not connect to a primary node\n');
      const failed = await run({ STUB_DISTRICT_EXIT: '1' });
      expect(failed.code).toBe(0);
      expect(failed.stderr).toContain('oo-admin-ctl-district -c list failed: /opt/rh/ruby193');
      expect(calls()).toBe(0);

      const forged = broker.listDistricts().stdout.replace('"name"=>"d2"', '"name"=>"d2\\",\\"availableCapacity\\":6000"');
      listing(forged);
      // Not asked again within NODESCALER_DISTRICT_EVERY of the failed attempt (a broker whose database is down).
      expect(await run()).toMatchObject({ code: 0, stderr: '' });
      expect(calls()).toBe(0);
      writeFileSync(join(dir, 'state/reporter.last.districts'), '0\n'); // due again
      const partial = await run();
      expect(partial.stderr).toContain('1 district(s) in the listing without a plain name');
      expect(allSent()).toEqual([expect.objectContaining({ type: 'district-capacity', district: 'd1', availableCapacity: 4 })]);

      // A dump whose last key is one the reporter reads (Mongo keeps a document's keys in the order they were written).
      const lastKey = '\n\n{"_id"=>BSON::ObjectId(\'5f0000000000000000000042\'),\n "name"=>"d3",\n "gear_size"=>"small",\n "available_uids"=>"<17 uids hidden>",\n "available_capacity"=>17,\n "max_capacity"=>50}\n';
      listing(lastKey);
      writeFileSync(join(dir, 'state/reporter.last.districts'), '0\n');
      expect(await run()).toMatchObject({ code: 0, stderr: '' });
      expect(allSent().at(-1)).toMatchObject({ type: 'district-capacity', district: 'd3', profile: 'small', maxCapacity: 50, availableCapacity: 17 });
    });
  });
});
