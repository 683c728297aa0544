/**
 * A pool's nodes placed in the broker's region and zone (pools[].openshiftRegion)
 * when they join, on the broker's real answers: origin-server places a new
 * gear only on a node in a zone when it requires zones for app creation, so a
 * node added without one took no gear, and the refusals went on. State on
 * dynalite, the broker through its adapter over the emulator, tenants through
 * the broker's REST side.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { ThresholdEvaluator } from '../../lib/app/evaluate.js';
import { parseConfig } from '../../lib/config/index.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { brokerOnEmulator } from '../support/broker-platform.js';
import { BrokerUserActions } from '../support/broker-user-actions.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { RecordingQueue } from '../support/recording-queue.js';

const NEW_NODE = 'small-7.example.com';
const EAST = { name: 'east', zones: { 'us-east-1a': 'east-a', 'us-east-1b': 'east-b' } };
const logs = mkdtempSync(join(tmpdir(), 'regions-'));

describe('nodes join in their region and zone (dynalite, broker emulator)', () => {
  const harness = dynaliteHarness();
  afterAll(async () => {
    await harness.close();
    rmSync(logs, { recursive: true, force: true });
  });

  /** Two full nodes in east-a, a booted host for the new node, and a broker that requires zones for app creation. */
  async function world(openshiftRegion?: Record<string, unknown>, zone = 'us-east-1b') {
    const store: StateStore = await harness.create();
    const clock = new VirtualClock(new Date('2026-11-30T06:00:00Z'));
    const { broker, platform } = brokerOnEmulator(clock);
    broker.createDistrict('d1', 'small');
    broker.createRegion('east', ['east-a', 'east-b']);
    for (const name of ['small-1.example.com', 'small-2.example.com']) {
      broker.addNodeHost(name, 'small', 2);
      broker.joinDistrict('d1', name, { region: 'east', zone: 'east-a' });
      for (let i = 0; i < 2; i++) broker.placeGear(name, { uuid: `${name.slice(0, 7)}g${i}`, app: `app${i}-ns`, size: 'small' });
    }
    broker.addNodeHost(NEW_NODE, 'small', 2);
    await store.createNode(
      { nodeId: NEW_NODE, pool: 'd1/small', district: 'd1', profile: 'small', state: 'provisioning', createdAt: clock.now().toISOString(), origin: 'provisioned', protected: false, decisionId: 'up:d1_small:1', zone },
      clock.now(),
    );
    const config = parseConfig({ pools: [{ district: 'd1', profile: 'small', max: 10, gearsPerNode: 2, ...(openshiftRegion ? { openshiftRegion } : {}) }], scaleUp: { forecast: { enabled: false } } });
    const metrics = new InMemoryMetrics();
    const evaluator = new ThresholdEvaluator({ store, queue: new RecordingQueue(), clock, metrics, log: new MemoryLog(), platform }, config);
    const users = new BrokerUserActions(broker, [{ name: 'd1', gearSize: 'small' }], join(logs, `user_action-${Math.random().toString(36).slice(2)}.log`), clock, true);
    const report = async () => {
      clock.advance(60_000);
      const message = { type: 'node-stats' as const, v: 1 as const, nodeId: NEW_NODE, district: 'd1', profile: 'small', activeGears: 0, maxActiveGears: 2, reportedAt: clock.now().toISOString() };
      expect((await evaluator.handleBatch([{ id: `m-${clock.nowMs()}`, message }])).failures).toEqual([]);
    };
    return { store, broker, users, metrics, report };
  }

  const request = { login: 'ann@example.com', domain: 'ns', app: 'shop', gearSize: 'small' };

  it('without a region, the node joins in no zone and takes no gear: the broker keeps refusing ("gear size/zone combination")', async () => {
    const { store, broker, users, report } = await world();
    await report();
    expect(broker.servers('d1').find((s) => s.name === NEW_NODE)).toEqual({ name: NEW_NODE, active: true });
    expect((await store.getNode(NEW_NODE))?.state).toBe('active');
    expect(users.create(request)).toBeUndefined();
  });

  it("with openshiftRegion, add-node places the node in the zone of its availability zone, and the broker's next gear goes there", async () => {
    const { store, broker, users, report } = await world(EAST);
    await report();
    expect(broker.servers('d1').find((s) => s.name === NEW_NODE)).toEqual({ name: NEW_NODE, active: true, region: 'east', zone: 'east-b' });
    const add = broker.sent.find((input) => input.Parameters?.action?.[0] === 'add-node');
    expect(add?.Parameters).toMatchObject({ action: ['add-node'], node: [NEW_NODE], district: ['d1'], region: ['east'], zone: ['east-b'] });
    expect((await store.getNode(NEW_NODE))?.state).toBe('active');
    expect(users.create(request)).toBe(NEW_NODE);
  });

  it('an availability zone the map does not name takes the default zone, else its own name', async () => {
    const withDefault = await world({ ...EAST, zone: 'east-a' }, 'us-east-1c');
    await withDefault.report();
    expect(withDefault.broker.servers('d1').find((s) => s.name === NEW_NODE)?.zone).toBe('east-a');
  });

  it('a zone the region lacks: the node stays provisioning and its reason names openshiftRegion and the broker\'s words; it joins once the zone exists', async () => {
    const { store, broker, metrics, report } = await world({ name: 'east' }, 'us-east-1c');
    await report();
    expect(broker.membership(NEW_NODE)).toBeUndefined();
    const node = await store.getNode(NEW_NODE);
    expect(node?.state).toBe('provisioning');
    expect(node?.reason).toContain('openshiftRegion');
    expect(node?.reason).toContain("Zone object not found, you can add zone 'us-east-1c' to region 'east' using oo-admin-ctl-region.");
    expect(metrics.sum('JoinFailures')).toBe(1);

    broker.createRegion('east', ['east-a', 'east-b', 'us-east-1c']); // the operator adds the zone
    await report();
    expect(broker.servers('d1').find((s) => s.name === NEW_NODE)).toMatchObject({ region: 'east', zone: 'us-east-1c' });
    expect((await store.getNode(NEW_NODE))?.state).toBe('active');
  });

  it('a node already in the district in no region (added by hand) is placed with set-region; one in another region is refused, and stays provisioning', async () => {
    const placed = await world(EAST);
    placed.broker.joinDistrict('d1', NEW_NODE);
    await placed.report();
    expect(placed.broker.servers('d1').find((s) => s.name === NEW_NODE)).toMatchObject({ region: 'east', zone: 'east-b' });
    expect(placed.broker.sent.map((input) => input.Parameters?.action?.[0])).toEqual(['add-node', 'node-district', 'set-region']);
    expect((await placed.store.getNode(NEW_NODE))?.state).toBe('active');

    const elsewhere = await world(EAST);
    elsewhere.broker.createRegion('west', ['west-a']);
    elsewhere.broker.joinDistrict('d1', NEW_NODE, { region: 'west', zone: 'west-a' });
    await elsewhere.report();
    const node = await elsewhere.store.getNode(NEW_NODE);
    expect(node?.state).toBe('provisioning');
    expect(node?.reason).toContain(`node ${NEW_NODE} is already in region west`);
  });
});
