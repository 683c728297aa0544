/**
 * Two provisioner invocations, one per pool (the scale queue runs two
 * message groups at once), race for the last room under a global limit. One
 * invocation is paused after it read its room, just before its claiming
 * write, until the other has carried out its whole decision: without the
 * capacity record both would claim (lib/workflows/launch/claim.ts). The real
 * state table protocol (dynalite), the simulated cloud, a virtual clock.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { SimulatedCloud } from '../../lib/adapters/local/simulated-cloud.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { NodeProvisioner } from '../../lib/app/provision.js';
import { parseConfig, type ConfigInput } from '../../lib/config/index.js';
import { LIVE_STATES } from '../../lib/domain/provisioning.js';
import type { ScaleUpMessage } from '../../lib/messages/index.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { dynaliteHarness } from '../support/dynalite.js';

const harness = dynaliteHarness();
afterAll(() => harness.close());

const PROFILES = ['a', 'b'] as const;

/**
 * `store`, but the first claiming write (the capacity record, or the claim
 * record where nothing reserves room) waits for `open`: the invocation has
 * read its room and not claimed it yet. `reached` resolves when it waits.
 */
function pausedBeforeClaim(store: StateStore, methods: readonly string[]): { store: StateStore; reached: Promise<void>; open: () => void } {
  let reach!: () => void;
  let open!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const gate = new Promise<void>((resolve) => (open = resolve));
  let paused = false;
  const wrapped = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        if (!paused && methods.includes(String(property))) {
          paused = true;
          reach();
          await gate;
        }
        return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
      };
    },
  });
  return { store: wrapped, reached, open };
}

async function world(limits: ConfigInput['limits']) {
  const store = await harness.create();
  const clock = new VirtualClock('2026-11-21T10:00:00Z');
  const template = { imageId: 'ami-1', instanceTypes: [{ name: 'sim.xlarge', vcpus: 4, memoryGiB: 16 }], subnets: ['subnet-1'] };
  const config = parseConfig({
    handler: 'ec2',
    limits,
    pools: PROFILES.map((profile) => ({ district: 'd1', profile, max: 10, naming: { base: profile }, template })),
  });
  // Two active nodes in each pool: 4 live, 16 cores.
  for (const profile of PROFILES) {
    for (let n = 1; n <= 2; n++) {
      const nodeId = `${profile}-${n}.example.com`;
      await store.createNode({ nodeId, pool: `d1/${profile}`, district: 'd1', profile, state: 'active', createdAt: clock.now().toISOString(), origin: 'provisioned', protected: false }, clock.now());
    }
  }
  for (const profile of PROFILES) await store.allocateNameNumber(profile).then(() => store.allocateNameNumber(profile));
  const provisioner = (forStore: StateStore, log: MemoryLog) =>
    new NodeProvisioner({ store: forStore, cloud: new SimulatedCloud(clock, { bootDelayMs: 120_000 }), clock, metrics: new InMemoryMetrics(), log, sleep: async (ms) => void clock.advance(ms) }, config);
  const message = (profile: string): ScaleUpMessage => ({
    type: 'scale-up',
    v: 1,
    decisionId: `up:d1_${profile}:${clock.now().getTime()}`,
    pool: `d1/${profile}`,
    count: 1,
    reason: `pool d1/${profile} is full`,
    decidedAt: clock.now().toISOString(),
  });
  const live = async () => (await Promise.all(PROFILES.map((p) => store.listNodes(`d1/${p}`)))).flat().filter((node) => LIVE_STATES.has(node.state));
  return { store, clock, provisioner, message, live };
}

describe('two pools claim the last room under a global limit at once', () => {
  const cases = [
    { limit: 'maxNodesTotal', limits: { maxNodesTotal: 5 }, reason: '0 of 1 nodes fit: maxNodesTotal=5 (5 live in all pools)' },
    { limit: 'maxCores', limits: { maxCores: 20 }, reason: '0 of 1 nodes fit: maxCores=20 (20 in use, 4 per sim.xlarge)' },
  ];

  it.each(cases)('$limit: exactly the limit is provisioned; the loser reads the room again, gets 0 and is refused naming the limit', async ({ limits, reason }) => {
    const { store, provisioner, message, live } = await world(limits);
    const loserLog = new MemoryLog();
    const paused = pausedBeforeClaim(store, ['putCapacity', 'claimScaleUp']);
    const loser = provisioner(paused.store, loserLog);
    const winner = provisioner(store, new MemoryLog());
    const [forA, forB] = [message('a'), message('b')];

    const a = loser.scaleUp(forA);
    await paused.reached; // a read the room: one node fits
    const b = await winner.scaleUp(forB);
    paused.open();
    const outcome = await a;

    expect(b).toMatchObject({ pool: 'd1/b', kind: 'provisioned', nodes: [{ nodeId: 'b-3.example.com' }] });
    expect(outcome).toMatchObject({ pool: 'd1/a', kind: 'refused', nodes: [], reason });
    expect(await live()).toHaveLength(5);
    // As today's refusal: a warning, the decision log's `refused` entry, the claim kept with no slot.
    expect(loserLog.lines.map((line) => `${line.level} ${line.message}`)).toEqual(
      expect.arrayContaining(['info room claimed by another scale-up meanwhile; reading the room again', `warn scale-up ${forA.decisionId} refused: ${reason}`]),
    );
    expect(await store.listDecisions('d1/a', 5)).toMatchObject([{ kind: 'refused', decisionId: forA.decisionId, reason }]);
    expect(await store.getScaleUp(forA.decisionId)).toMatchObject({ slots: [], reason });
  });

  it('counts the winner\'s claimed node before it exists: the loser reads after the claim, before the node is created', async () => {
    const { store, provisioner, message, live } = await world({ maxNodesTotal: 5 });
    const paused = pausedBeforeClaim(store, ['claimScaleUp']);
    const first = provisioner(paused.store, new MemoryLog());
    const second = provisioner(store, new MemoryLog());
    const [forA, forB] = [message('a'), message('b')];

    const a = first.scaleUp(forA);
    await paused.reached; // a reserved the room on the capacity record; no claim record, no node yet
    expect(await live()).toHaveLength(4);
    const b = await second.scaleUp(forB);
    paused.open();

    expect(b).toMatchObject({ kind: 'refused', reason: '0 of 1 nodes fit: maxNodesTotal=5 (5 live in all pools)' });
    expect(await a).toMatchObject({ kind: 'provisioned', nodes: [{ nodeId: 'a-3.example.com' }] });
    expect(await live()).toHaveLength(5);
  });

  it('gives the room of a claim that never created its node back once the claim can no longer create it', async () => {
    const { store, clock, provisioner, message, live } = await world({ maxNodesTotal: 5 });
    const crashed = message('a');
    // A crash right after the reservation: no claim record, no node; the message is dead-lettered.
    const crashing = new Proxy(store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (property === 'claimScaleUp') return async () => Promise.reject(new Error('crash'));
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    await expect(provisioner(crashing, new MemoryLog()).scaleUp(crashed)).rejects.toThrow('crash');
    expect(await provisioner(store, new MemoryLog()).scaleUp(message('b'))).toMatchObject({ kind: 'refused' });

    // Re-driven past decisionMaxAge (leaseTtl, 15m): the claim is taken from its reservation and creates nothing.
    clock.advance(20 * 60_000);
    const redriven = await provisioner(store, new MemoryLog()).scaleUp(crashed);
    expect(redriven.nodes).toEqual([]);
    expect(await store.getScaleUp(crashed.decisionId)).toMatchObject({ slots: [{ nodeId: 'a-3.example.com' }] });
    expect(await store.getNode('a-3.example.com')).toBeUndefined();
    // Its room still counts while an invocation that checked the claim in time could be creating the node ...
    expect(await provisioner(store, new MemoryLog()).scaleUp(message('b'))).toMatchObject({ kind: 'refused' });
    // ... and is free again 15m past the claim's validity.
    clock.advance(10 * 60_000 + 1);
    const later = await provisioner(store, new MemoryLog()).scaleUp(message('b'));
    expect(later).toMatchObject({ kind: 'provisioned', nodes: [{ nodeId: 'b-3.example.com' }] });
    expect(await live()).toHaveLength(5);
    expect(Object.keys((await store.getCapacity()).reservations)).toEqual([later.decisionId]);
  });
});
