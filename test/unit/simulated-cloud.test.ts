import { describe, expect, it } from 'vitest';
import { SimulatedCloud } from '../../lib/adapters/local/simulated-cloud.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { CapacityUnavailableError, ConflictError, TransientError } from '../../lib/errors.js';
import type { HostSpec } from '../../lib/ports/cloud.js';

const spec = (n: number, token = `t-${n}`): HostSpec => ({
  pool: 'd1/small',
  district: 'd1',
  profile: 'small',
  cloudName: `node_${n}`,
  hostName: `node-${n}.example.com`,
  decisionId: 'up:1',
  idempotencyToken: token,
});

describe('SimulatedCloud', () => {
  it('boots hosts after the boot delay, with EC2-like ids and our tags', async () => {
    const clock = new VirtualClock('2026-11-21T10:00:00Z');
    const cloud = new SimulatedCloud(clock, { bootDelayMs: 90_000 });
    const host = await cloud.createHost(spec(1));
    expect(host.instanceId).toMatch(/^i-[0-9a-f]{17}$/);
    expect(host.volumeId).toMatch(/^vol-[0-9a-f]{17}$/);
    expect(host).toMatchObject({ state: 'pending', privateIp: '10.0.0.1', launchedAt: '2026-11-21T10:00:00.000Z' });
    expect(host.tags).toMatchObject({ Name: 'node_1', 'nodescaler:pool': 'd1/small', 'nodescaler:node': 'node-1.example.com' });
    expect(cloud.runningHosts()).toEqual([]);
    clock.advance(90_000);
    expect(cloud.runningHosts().map((h) => [h.hostName, h.pool, h.state])).toEqual([['node-1.example.com', 'd1/small', 'running']]);
  });

  it('is idempotent on the token, and runs out of capacity at maxHosts', async () => {
    const clock = new VirtualClock(0);
    const cloud = new SimulatedCloud(clock, { bootDelayMs: 0, maxHosts: 2, random: () => 0.75 });
    const first = await cloud.createHost(spec(1));
    expect(first.instanceId).toBe('i-ccccccccccc000001');
    expect(await cloud.createHost(spec(1))).toEqual(first);
    await cloud.createHost(spec(2));
    await expect(cloud.createHost(spec(3))).rejects.toSatisfy((e: unknown) => e instanceof CapacityUnavailableError && e.reason === 'InsufficientInstanceCapacity');
    await cloud.terminateHost(first.instanceId!);
    await cloud.terminateHost(first.instanceId!);
    await cloud.terminateHost('i-unknown');
    expect((await cloud.createHost(spec(3))).state).toBe('running');
  });

  it('offers only its instance types', async () => {
    const cloud = new SimulatedCloud(new VirtualClock(0), { bootDelayMs: 0, instanceTypes: ['m5.xlarge'] });
    await expect(cloud.createHost({ ...spec(1), offering: { instanceType: 'p5.48xlarge' } })).rejects.toSatisfy(
      (e: unknown) => e instanceof CapacityUnavailableError && e.reason === 'Unsupported',
    );
    expect((await cloud.createHost({ ...spec(2), offering: { instanceType: 'm5.xlarge', subnetId: 'subnet-a' } })).subnetId).toBe('subnet-a');
  });

  it('keeps a volume attached until its host is terminated and detached; deleting it twice is fine', async () => {
    const clock = new VirtualClock(0);
    const cloud = new SimulatedCloud(clock, { bootDelayMs: 0, volumeDetachMs: 30_000 });
    const host = await cloud.createHost(spec(1));
    await expect(cloud.deleteVolume(host.volumeId!)).rejects.toBeInstanceOf(ConflictError);
    await cloud.terminateHost(host.instanceId!);
    expect((await cloud.describeHosts([host.instanceId!, 'i-nope'])).get(host.instanceId!)).toMatchObject({ state: 'terminated' });
    await expect(cloud.deleteVolume(host.volumeId!)).rejects.toBeInstanceOf(ConflictError);
    clock.advance(30_000);
    await cloud.deleteVolume(host.volumeId!);
    await cloud.deleteVolume(host.volumeId!);
    expect(cloud.liveVolumes()).toEqual([]);
    expect(await cloud.listManagedHosts()).toEqual([]);
  });

  it('fails the next call of an operation on request, and records every call', async () => {
    const cloud = new SimulatedCloud(new VirtualClock(0), { bootDelayMs: 0 });
    cloud.failNext('createHost', new TransientError('throttled'));
    await expect(cloud.createHost(spec(1))).rejects.toBeInstanceOf(TransientError);
    await cloud.createHost(spec(1));
    expect(cloud.calls.map((call) => call.op)).toEqual(['createHost', 'createHost']);
    expect(cloud.hosts()).toHaveLength(1);
  });
});
