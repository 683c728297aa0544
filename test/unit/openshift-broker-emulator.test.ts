/**
 * The broker adapter against the broker emulator: the broker's real answers
 * (origin-server's messages and exit codes), each a regression test for how
 * the adapter reads them.
 */
import { SSMClient } from '@aws-sdk/client-ssm';
import { beforeEach, describe, expect, it } from 'vitest';
import { OpenShiftBrokerPlatform, SAFE_BROKER_DIR, SAFE_DISTRICT, SAFE_REGION, SAFE_NODE, SAFE_UUID } from '../../lib/adapters/platform/openshift-broker.js';
import { ValidationError, isRetryable } from '../../lib/errors.js';
import { NodeInOtherDistrictError, NodeNotInDistrictError } from '../../lib/ports/platform-errors.js';
import { BrokerEmulator, SSM_OUTPUT_LIMIT, brokerDocument } from '../support/broker-emulator.js';

const BROKER = 'i-0b10c0ffee0123456';
const DOCUMENT = 'nodescaler-test-broker-admin';
let now: number;
const clock = { now: () => new Date(now) };
let broker: BrokerEmulator;
let platform: OpenShiftBrokerPlatform;

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

beforeEach(() => {
  now = Date.parse('2026-11-24T01:00:00Z');
  broker = new BrokerEmulator({ clock, brokerInstanceId: BROKER, documentName: DOCUMENT, commandLatencyMs: 3_000 });
  platform = new OpenShiftBrokerPlatform(broker.client(), {
    brokerInstanceId: BROKER,
    documentName: DOCUMENT,
    commandTimeoutMs: 20 * 60_000,
    brokerDir: '/var/www/openshift/broker',
    sleep: async (ms) => void (now += ms),
    clock,
  });
  broker.createDistrict('d1', 'small');
  broker.createDistrict('d2', 'small');
  for (const node of ['n1', 'n2', 'n3', 'never-joined']) broker.addNodeHost(`${node}.example.com`, 'small', 10);
  broker.joinDistrict('d1', 'n1.example.com');
  broker.joinDistrict('d1', 'n2.example.com');
  broker.joinDistrict('d2', 'n3.example.com');
});

const actions = () => broker.sent.map((input) => `${input.Parameters?.action?.[0]} ${input.Parameters?.node?.[0]}`);

describe('district commands: the broker refusals, typed', () => {
  it('remove-node of a node that never joined: "doesn\'t belong to district" is NodeNotInDistrictError, sent once, not retryable (was a TransientError retried forever)', async () => {
    const error = await rejection(platform.removeNode('d1', 'never-joined.example.com'));
    expect(error).toBeInstanceOf(NodeNotInDistrictError);
    expect(isRetryable(error)).toBe(false);
    expect(actions()).toEqual(['remove-node never-joined.example.com']);
  });

  it('remove-node of an active node: "must be deactivated" makes the adapter deactivate it, then remove it', async () => {
    await platform.removeNode('d1', 'n2.example.com');
    expect(actions()).toEqual(['remove-node n2.example.com', 'deactivate-node n2.example.com', 'remove-node n2.example.com']);
    expect(broker.membership('n2.example.com')).toBeUndefined();
  });

  it('add-node of a node in another district never counts as success (the tool\'s "already belongs" was read as "already done")', async () => {
    const error = await rejection(platform.addNode('d1', 'n3.example.com'));
    expect(error).toBeInstanceOf(NodeInOtherDistrictError);
    expect((error as NodeInOtherDistrictError).holder).toBe('d2');
    expect(broker.membership('n3.example.com')).toEqual({ district: 'd2', active: true });
  });

  it('add-node repeated for its own district: the same "already belongs to another district" words, so the adapter asks which district holds it', async () => {
    await platform.addNode('d1', 'n1.example.com');
    expect(actions()).toEqual(['add-node n1.example.com', 'node-district n1.example.com']);
  });

  it('a large district: the tool appends its dump before the error, past SSM\'s 24,000 characters; the document drops the dump so the error arrives', async () => {
    for (let i = 0; i < 250; i++) {
      broker.addNodeHost(`filler-${i}.example.com`, 'small', 10);
      broker.joinDistrict('d1', `filler-${i}.example.com`);
    }
    const raw = broker.ctlDistrict('remove-node', 'd1', 'never-joined.example.com').stdout;
    expect(raw.length).toBeGreaterThan(SSM_OUTPUT_LIMIT);
    expect(raw.slice(0, SSM_OUTPUT_LIMIT)).not.toContain("doesn't belong");
    expect(await rejection(platform.removeNode('d1', 'never-joined.example.com'))).toBeInstanceOf(NodeNotInDistrictError);
  });

  it('waits out the command latency: the command is InProgress until it has run', async () => {
    const start = now;
    await platform.deactivateNode('d1', 'n1.example.com');
    expect(now - start).toBeGreaterThanOrEqual(3_000);
    expect(broker.membership('n1.example.com')).toEqual({ district: 'd1', active: false });
  });
});

describe('moves: the JSON report and the exit code', () => {
  beforeEach(() => broker.placeGear('n1.example.com', { uuid: 'g1', app: 'shop-acme', size: 'small' }));

  async function settle(handle: { commandId: string }) {
    for (let i = 0; i < 20; i++) {
      const status = await platform.moveStatus(handle);
      if (status.state !== 'running') return status;
      now += 10_000;
    }
    throw new Error('move never ended');
  }

  it('a move that completed but exited 1 (old copy not removed) is succeeded, as the gear is on its target', async () => {
    broker.failNextMove('g1', 'destroy-old');
    const status = await settle(await platform.startMove({ uuid: 'g1', app: 'shop-acme', size: 'small' }, 'n1.example.com', 'n2.example.com'));
    expect(status).toEqual({ state: 'succeeded' });
    expect(broker.whereIs('g1')).toBe('n2.example.com');
  });

  it('a full target: exit 1 with the capacity message in the report (stdout) is targetFull', async () => {
    for (let i = 0; i < 10; i++) broker.placeGear('n2.example.com', { uuid: `f${i}`, app: 'full-acme', size: 'small' });
    const status = await settle(await platform.startMove({ uuid: 'g1', app: 'shop-acme', size: 'small' }, 'n1.example.com', 'n2.example.com'));
    expect(status).toMatchObject({ state: 'failed', targetFull: true });
    expect(broker.whereIs('g1')).toBe('n1.example.com');
  });

  it("a target in another region: origin-server's refusal, the gear stays (a pool names its region so its new nodes are in the same one)", async () => {
    broker.createRegion('east', ['east-a']);
    broker.addNodeHost('n4.example.com', 'small', 10);
    broker.joinDistrict('d1', 'n4.example.com', { region: 'east', zone: 'east-a' });
    const status = await settle(await platform.startMove({ uuid: 'g1', app: 'shop-acme', size: 'small' }, 'n1.example.com', 'n4.example.com'));
    expect(status).toMatchObject({ state: 'failed', error: 'Error moving gear. Old and new servers must belong to the same region, source region:  destination region: east' });
    expect(status).not.toHaveProperty('targetFull');
    expect(broker.whereIs('g1')).toBe('n1.example.com');
  });

  it("waits on the application's lock: a move starts once the lock frees within 50 s, and otherwise fails as busy with no report (origin-server's LockUnavailableException, which oo-admin-move does not rescue)", async () => {
    broker.placeGear('n1.example.com', { uuid: 'g2', app: 'shop-acme', size: 'small' });
    // Two moves of the shop's gears at once: the second waits for the first (30 s) and goes through.
    const first = await platform.startMove({ uuid: 'g1', app: 'shop-acme', size: 'small' }, 'n1.example.com', 'n2.example.com');
    const second = await platform.startMove({ uuid: 'g2', app: 'shop-acme', size: 'small' }, 'n1.example.com', 'n2.example.com');
    expect(await settle(first)).toEqual({ state: 'succeeded' });
    expect(await settle(second)).toEqual({ state: 'succeeded' });
    expect(broker.whereIs('g2')).toBe('n2.example.com');

    // A tenant's deploy holds the lock for longer than the move waits.
    broker.holdAppLock('shop-acme', now + 120_000);
    const started = now;
    const status = await settle(await platform.startMove({ uuid: 'g2', app: 'shop-acme', size: 'small' }, 'n2.example.com', 'n1.example.com'));
    expect(status).toMatchObject({ state: 'failed', busy: true });
    expect((status as { error: string }).error).toContain('Unable to perform action on app object. Another operation is already running. (OpenShift::LockUnavailableException)');
    expect(now - started).toBeGreaterThanOrEqual(50_000);
    expect(broker.whereIs('g2')).toBe('n2.example.com');
  });

  it('a crash with no report: the gear\'s location (found through the command as sent) decides, here failed', async () => {
    broker.failNextMove('g1', 'crash');
    const status = await settle(await platform.startMove({ uuid: 'g1', app: 'shop-acme', size: 'small' }, 'n1.example.com', 'n2.example.com'));
    expect(status).toMatchObject({ state: 'failed' });
    expect((status as { error: string }).error).toContain('Failed');
    expect(broker.whereIs('g1')).toBe('n1.example.com');
  });

  it('sends the move with the nodescaler document and its parameters, never a shell', async () => {
    await platform.startMove({ uuid: 'g1', app: 'shop-acme', size: 'small' }, 'n1.example.com', 'n2.example.com');
    expect(broker.sent).toStrictEqual([
      {
        DocumentName: DOCUMENT,
        InstanceIds: [BROKER],
        Comment: 'nodescaler move g1',
        Parameters: { action: ['move'], node: ['n2.example.com'], gear: ['g1'], brokerDir: ['/var/www/openshift/broker'], executionTimeout: ['1200'] },
      },
    ]);
  });
});

describe('the SSM document and the adapter agree', () => {
  it('each document parameter pattern is the one the adapter checks', () => {
    const { parameters } = brokerDocument();
    expect(parameters.node!.allowedPattern).toBe(SAFE_NODE.source);
    expect(parameters.district!.allowedPattern).toBe(SAFE_DISTRICT.source);
    expect(parameters.gear!.allowedPattern).toBe(SAFE_UUID.source);
    expect(new RegExp(parameters.brokerDir!.allowedPattern!).source).toBe(SAFE_BROKER_DIR.source);
    expect(parameters.region!.allowedPattern).toBe(SAFE_REGION.source);
    expect(parameters.zone!.allowedPattern).toBe(SAFE_REGION.source);
    expect(parameters.action!.allowedValues).toEqual(['add-node', 'set-region', 'remove-node', 'deactivate-node', 'activate-node', 'move', 'list-gears', 'node-facts', 'node-district', 'gear-location']);
  });

  it('SSM refuses a value outside its pattern (the emulator as SSM does), and the adapter refuses it before sending', async () => {
    const raw = broker.client();
    const { SendCommandCommand } = await import('@aws-sdk/client-ssm');
    const refused = await rejection(raw.send(new SendCommandCommand({ InstanceIds: [BROKER], DocumentName: DOCUMENT, Parameters: { action: ['remove-node'], node: ["n1; reboot'"] } })));
    expect((refused as Error).name).toBe('InvalidParameters');
    expect(await rejection(platform.removeNode('d1', "n1; reboot'"))).toBeInstanceOf(ValidationError);
  });

  it('a wildcard broker instance is refused', () => {
    expect(() => new OpenShiftBrokerPlatform(new SSMClient({ region: 'us-east-1' }), { brokerInstanceId: '*', documentName: DOCUMENT, commandTimeoutMs: 1000, brokerDir: '/x' })).toThrow(ValidationError);
  });
});
