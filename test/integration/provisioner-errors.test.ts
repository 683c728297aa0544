/**
 * The node provisioner when EC2 fails (dynalite; EC2 and Route 53 mocked at the SDK): the fallback order on every
 * capacity error, the exhaustion backoff on a virtual clock, and which other errors retry.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import type { MemoryLog } from '../../lib/adapters/memory/log.js';
import type { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { TransientError, ValidationError } from '../../lib/errors.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import type { FakeEc2 } from '../support/fake-ec2.js';
import { POOL, T0, MIN, provisionerBed } from '../support/provisioner-bed.js';
import type { RecordingNotifier } from '../support/recording-notifier.js';

describe('NodeProvisioner errors (dynalite; EC2 and Route 53 mocked at the SDK)', () => {
  const bed = provisionerBed();
  const { provisioner, decide, nodesOf } = bed;
  let clock: VirtualClock;
  let fake: FakeEc2;
  let store: StateStore;
  let metrics: InMemoryMetrics;
  let log: MemoryLog;
  let notifier: RecordingNotifier;
  let sleeps: number[];
  beforeEach(() => ({ clock, fake, store, metrics, log, notifier, sleeps } = bed));

  describe('capacity errors: the fallback order', () => {
    const run = (type: string, subnet: string, decisionId: string, slot: number, attempt: number) =>
      `${type}@${subnet}#${decisionId}#${slot}${attempt === 0 ? '' : `#${attempt}`}`;

    it.each([
      ['InsufficientInstanceCapacity', 'the same type in the next subnet', ['m5.xlarge', 'subnet-bbb'], 'm5.xlarge@subnet-aaa'],
      ['Unsupported', 'the same type in the next subnet', ['m5.xlarge', 'subnet-bbb'], 'm5.xlarge@subnet-aaa'],
      ['InstanceLimitExceeded', 'the next type', ['m5a.xlarge', 'subnet-aaa'], 'm5.xlarge@*'],
      ['VcpuLimitExceeded', 'the next type', ['m5a.xlarge', 'subnet-aaa'], 'm5.xlarge@*'],
      ['MaxSpotInstanceCountExceeded', 'the next type', ['m5a.xlarge', 'subnet-aaa'], 'm5.xlarge@*'],
      ['InsufficientFreeAddressesInSubnet', 'the next subnet', ['m5.xlarge', 'subnet-bbb'], '*@subnet-aaa'],
    ] as const)('%s: tries %s and remembers the offering for 3 minutes', async (code, _what, [type, subnet], remembered) => {
      fake.failOffering('m5.xlarge', 'subnet-aaa', code, 1);
      const message = await decide(1);
      const outcome = await provisioner().scaleUp(message);

      expect(outcome.kind).toBe('provisioned');
      expect(fake.runs()).toEqual([run('m5.xlarge', 'subnet-aaa', message.decisionId, 0, 0), run(type, subnet, message.decisionId, 0, 1)]);
      const [node] = await nodesOf();
      expect(node).toMatchObject({ state: 'provisioning', instanceType: type, steps: { launchAttempt: '1', launchOffering: `${type}@${subnet}` } });
      expect((await store.getPool(POOL))?.unavailableOfferings).toEqual({ [remembered]: new Date(T0.getTime() + 3 * MIN).toISOString() });
      expect(log.lines.find((line) => line.message.startsWith('no capacity'))?.attributes).toMatchObject({ reason: code, offering: 'm5.xlarge@subnet-aaa' });
    });

    it('skips a remembered offering for the next nodes and the next decision, and tries it again after 3 minutes', async () => {
      fake.failOffering('m5.xlarge', 'subnet-aaa', 'InsufficientFreeAddressesInSubnet', 1);
      const first = await decide(3);
      await provisioner().scaleUp(first);
      const id = first.decisionId;
      // Node 1: aaa fails, bbb works. Node 2 starts in bbb. Node 3 would start in aaa: skipped without a call.
      // A skipped offering costs no call and no attempt number.
      expect(fake.runs()).toEqual([`m5.xlarge@subnet-aaa#${id}#0`, `m5.xlarge@subnet-bbb#${id}#0#1`, `m5.xlarge@subnet-bbb#${id}#1`, `m5.xlarge@subnet-bbb#${id}#2`]);
      expect((await nodesOf()).map((n) => n.steps?.launchOffering)).toEqual(['m5.xlarge@subnet-bbb', 'm5.xlarge@subnet-bbb', 'm5.xlarge@subnet-bbb']);

      clock.advance(2 * MIN);
      const second = await decide(2);
      await provisioner().scaleUp(second);
      // Nodes 4 and 5: node 5 would start in aaa, still remembered.
      expect(fake.runs().slice(4)).toEqual([`m5.xlarge@subnet-bbb#${second.decisionId}#0`, `m5.xlarge@subnet-bbb#${second.decisionId}#1`]);

      clock.advance(1 * MIN);
      const third = await decide(2);
      await provisioner().scaleUp(third);
      // Node 7 starts in aaa again: 3 minutes have passed.
      expect(fake.runs().slice(6)).toEqual([`m5.xlarge@subnet-bbb#${third.decisionId}#0`, `m5.xlarge@subnet-aaa#${third.decisionId}#1`]);
      expect((await store.getPool(POOL))?.unavailableOfferings).toEqual({});
    });
  });


  describe('capacity exhausted', () => {
    it('fails the nodes, marks the pool exhausted, reports it, and backs off 5m, 10m, 20m, 30m, 30m, reset by a success', async () => {
      for (const type of ['m5.xlarge', 'm5a.xlarge']) for (const subnet of ['subnet-aaa', 'subnet-bbb']) fake.failOffering(type, subnet, 'InsufficientInstanceCapacity');

      const expected = [5, 10, 20, 30, 30];
      for (const [round, minutes] of expected.entries()) {
        const message = await decide(2);
        const outcome = await provisioner().scaleUp(message);
        expect(outcome.kind).toBe('exhausted');
        const now = clock.now();
        const pool = await store.getPool(POOL);
        expect(pool, `round ${round}`).toMatchObject({
          exhaustedUntil: new Date(now.getTime() + minutes * MIN).toISOString(),
          exhaustedBackoffMs: minutes * MIN,
          lastFailureAt: now.toISOString(),
        });
        expect(pool?.lease).toBeUndefined();
        // Every offering was tried for the first node; the second failed without a call.
        expect(fake.runs().slice(round * 4)).toEqual([
          `m5.xlarge@subnet-aaa#${message.decisionId}#0`,
          `m5.xlarge@subnet-bbb#${message.decisionId}#0#1`,
          `m5a.xlarge@subnet-aaa#${message.decisionId}#0#2`,
          `m5a.xlarge@subnet-bbb#${message.decisionId}#0#3`,
        ]);
        const nodes = (await nodesOf()).filter((n) => n.decisionId === message.decisionId);
        expect(nodes.map((n) => n.state)).toEqual(['failed', 'failed']);
        expect(nodes[0]!.reason).toMatch(/^capacity exhausted: no offering could launch a host \(m5\.xlarge@subnet-aaa: InsufficientInstanceCapacity; /);
        clock.set(Date.parse(pool!.exhaustedUntil!));
      }
      expect(metrics.sum('CapacityExhausted')).toBe(5);
      expect(notifier.notices).toHaveLength(5);
      expect(notifier.notices[0]).toMatchObject({ subject: 'nodescaler: capacity exhausted in d1/small', pool: POOL });
      expect(notifier.notices[0]!.message).toContain('Instance types tried: m5.xlarge, m5a.xlarge.');
      expect(log.lines.filter((line) => line.level === 'error' && line.message.startsWith('capacity exhausted in pool d1/small')).map((l) => l.message)[0]).toBe(
        `capacity exhausted in pool d1/small: every offering failed; no scale-up until ${new Date(T0.getTime() + 5 * MIN).toISOString()} (backoff 5m)`,
      );

      fake.reset();
      const recovered = await decide(1);
      expect((await provisioner().scaleUp(recovered)).kind).toBe('provisioned');
      const pool = await store.getPool(POOL);
      expect(pool?.exhaustedBackoffMs).toBeUndefined();
      expect(pool?.exhaustedUntil).toBeUndefined();
    });

    it('keeps the hosts it got when capacity runs out part way', async () => {
      // Node 1 gets the last m5.xlarge in aaa; node 2 finds nothing anywhere.
      fake.failOffering('m5.xlarge', 'subnet-aaa', 'InsufficientInstanceCapacity', Infinity, 1);
      fake.failOffering('m5.xlarge', 'subnet-bbb', 'InsufficientInstanceCapacity');
      fake.failOffering('m5a.xlarge', 'subnet-aaa', 'InsufficientInstanceCapacity');
      fake.failOffering('m5a.xlarge', 'subnet-bbb', 'InsufficientInstanceCapacity');
      const message = await decide(2);
      const outcome = await provisioner().scaleUp(message);
      expect(outcome.kind).toBe('partial');
      expect(fake.runs().map((r) => r.split('#')[0])).toEqual([
        'm5.xlarge@subnet-aaa',
        'm5.xlarge@subnet-bbb',
        'm5.xlarge@subnet-aaa',
        'm5a.xlarge@subnet-bbb',
        'm5a.xlarge@subnet-aaa',
      ]);
      expect((await nodesOf()).map((n) => n.state)).toEqual(['provisioning', 'failed']);
      expect(outcome.reason).toMatch(/^scale-up .*: 1 of 2 hosts requested through handler ec2; capacity exhausted/);
      expect((await store.getPool(POOL))?.exhaustedBackoffMs).toBe(5 * MIN);
    });
  });


  describe('other errors', () => {
    it('retries throttling with jittered exponential backoff on the virtual clock, with the same ClientToken', async () => {
      fake.failRuns('RequestLimitExceeded', 'RequestLimitExceeded');
      const message = await decide(1);
      const outcome = await provisioner().scaleUp(message);

      expect(outcome.kind).toBe('provisioned');
      expect(sleeps).toEqual([500, 1000]);
      expect(clock.now().getTime() - T0.getTime()).toBe(1500);
      expect(fake.runs()).toEqual(Array(3).fill(`m5.xlarge@subnet-aaa#${message.decisionId}#0`));
      expect(fake.created).toHaveLength(1);
    });

    it('fails the record when throttling outlasts the retries; the redelivery resumes the recorded attempt', async () => {
      fake.failRuns('RequestLimitExceeded', 'RequestLimitExceeded', 'RequestLimitExceeded', 'RequestLimitExceeded');
      const message = await decide(1);
      const { failures } = await provisioner().handleBatch([{ id: 'm1', message }]);

      expect(failures).toHaveLength(1);
      expect(failures[0]!.error).toBeInstanceOf(TransientError);
      expect(sleeps).toEqual([500, 1000, 2000]);
      const [node] = await nodesOf();
      expect(node).toMatchObject({ state: 'provisioning', steps: { launchAttempt: '0', launchOffering: 'm5.xlarge@subnet-aaa' } });
      expect((await store.getPool(POOL))?.lease?.holder).toBe(message.decisionId);

      const retried = await provisioner().handleBatch([{ id: 'm1', message }]);
      expect(retried.failures).toEqual([]);
      expect(new Set(fake.runs())).toEqual(new Set([`m5.xlarge@subnet-aaa#${message.decisionId}#0`]));
      expect((await store.getPool(POOL))?.lease).toBeUndefined();
    });

    it('fails the record on any other error, without a retry, and fails the later messages of its pool', async () => {
      fake.failRuns('InvalidAMIID.NotFound');
      const first = await decide(1);
      const second = { ...first, decisionId: `${first.decisionId}-later` };
      const { failures } = await provisioner().handleBatch([
        { id: 'm1', message: first },
        { id: 'm2', message: second },
      ]);
      expect(failures.map((f) => f.id)).toEqual(['m1', 'm2']);
      expect(failures[0]!.error).toBeInstanceOf(ValidationError);
      expect((failures[0]!.error as ValidationError).message).toContain('InvalidAMIID.NotFound');
      expect(fake.runs()).toHaveLength(1);
      expect(sleeps).toEqual([]);
    });
  });

});
