import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  capacityScope,
  clientToken,
  exhaustionPatch,
  findOrphans,
  isOfferingUnavailable,
  markOfferingUnavailable,
  nameNumber,
  nodeNames,
  nodeUserData,
  offeringsFor,
  parseOfferingKey,
  offeringKey,
  provisionTimedOut,
  scaleUpRoom,
  shellQuote,
} from '../../lib/domain/provisioning.js';
import { resourceRooms } from '../../lib/domain/scale-up-limits.js';
import type { NodeRecord } from '../../lib/domain/model.js';
import type { Config, PoolConfig } from '../../lib/config/index.js';

const NOW = new Date('2026-11-21T10:00:00.000Z');
const MIN = 60_000;
const type = (name: string) => ({ name, vcpus: 4, memoryGiB: 16 });

describe('names and tokens', () => {
  it('names node N as in the seed: <base>_<N> in the cloud, <base>-<N>.<domain> as host name', () => {
    expect(nodeNames({ base: 'd1-small', domain: 'Example.COM' }, 12)).toEqual({ nodeId: 'd1-small-12.example.com', cloudName: 'd1-small_12' });
    expect(nameNumber('d1-small_12')).toBe(12);
    expect(nameNumber('weird')).toBeUndefined();
    expect(nameNumber(undefined)).toBeUndefined();
  });

  it('derives a readable ClientToken from decision, slot and attempt, hashed when longer than 64 characters', () => {
    expect(clientToken('up:d1_small:1795255200000', 0, 0)).toBe('up:d1_small:1795255200000#0');
    expect(clientToken('up:d1_small:1795255200000', 2, 3)).toBe('up:d1_small:1795255200000#2#3');
    const long = `up:${'x'.repeat(100)}:1`;
    const token = clientToken(long, 1, 0);
    expect(token).toMatch(/^ns-[0-9a-f]{61}$/);
    expect(token).toHaveLength(64);
    expect(clientToken(long, 1, 0)).toBe(token);
    expect(clientToken(long, 1, 1)).not.toBe(token);
  });
});

describe('offerings', () => {
  const template = { instanceTypes: [type('m5.xlarge'), type('m5a.xlarge')], subnets: ['subnet-a', 'subnet-b', 'subnet-c'] };

  it('tries the types in order of preference, each in every subnet, starting at node N\'s own subnet', () => {
    expect(offeringsFor(template, 1).map(offeringKey)).toEqual([
      'm5.xlarge@subnet-a',
      'm5.xlarge@subnet-b',
      'm5.xlarge@subnet-c',
      'm5a.xlarge@subnet-a',
      'm5a.xlarge@subnet-b',
      'm5a.xlarge@subnet-c',
    ]);
    expect(offeringsFor(template, 2).map(offeringKey).slice(0, 3)).toEqual(['m5.xlarge@subnet-b', 'm5.xlarge@subnet-c', 'm5.xlarge@subnet-a']);
    expect(offeringsFor(template, 6).map(offeringKey)[0]).toBe('m5.xlarge@subnet-c');
  });

  it('leaves to the cloud what the template does not name', () => {
    expect(offeringsFor({ instanceTypes: [], subnets: [] }, 1)).toEqual([{}]);
    expect(offeringsFor({ instanceTypes: [type('t3.large')], subnets: [] }, 1)).toEqual([{ instanceType: 't3.large' }]);
    expect(offeringsFor({ instanceTypes: [], subnets: ['s-1'] }, 1)).toEqual([{ subnetId: 's-1' }]);
    expect(parseOfferingKey('*@*')).toEqual({});
    expect(parseOfferingKey('m5.xlarge@subnet-a')).toEqual({ instanceType: 'm5.xlarge', subnetId: 'subnet-a' });
  });

  it('scopes each capacity error: offering, instance type everywhere, or subnet for every type', () => {
    expect(capacityScope('InsufficientInstanceCapacity')).toBe('offering');
    expect(capacityScope('Unsupported')).toBe('offering');
    expect(capacityScope('InstanceLimitExceeded')).toBe('instance-type');
    expect(capacityScope('VcpuLimitExceeded')).toBe('instance-type');
    expect(capacityScope('MaxSpotInstanceCountExceeded')).toBe('instance-type');
    expect(capacityScope('InsufficientFreeAddressesInSubnet')).toBe('subnet');
    expect(capacityScope('SomethingNew')).toBe('offering');
  });

  it('remembers an unavailable offering until its time runs out, and forgets expired ones', () => {
    const a = { instanceType: 'm5.xlarge', subnetId: 'subnet-a' };
    const b = { instanceType: 'm5.xlarge', subnetId: 'subnet-b' };
    const other = { instanceType: 'm5a.xlarge', subnetId: 'subnet-a' };
    let map = markOfferingUnavailable(undefined, a, 'InsufficientInstanceCapacity', NOW, 3 * MIN);
    expect(map).toEqual({ 'm5.xlarge@subnet-a': '2026-11-21T10:03:00.000Z' });
    expect(isOfferingUnavailable(map, a, NOW)).toBe(true);
    expect(isOfferingUnavailable(map, b, NOW)).toBe(false);
    expect(isOfferingUnavailable(map, a, new Date(NOW.getTime() + 3 * MIN))).toBe(false);

    map = markOfferingUnavailable(map, b, 'VcpuLimitExceeded', new Date(NOW.getTime() + MIN), 3 * MIN);
    expect(isOfferingUnavailable(map, { instanceType: 'm5.xlarge', subnetId: 'subnet-z' }, NOW)).toBe(true);
    map = markOfferingUnavailable(map, other, 'InsufficientFreeAddressesInSubnet', new Date(NOW.getTime() + 3.5 * MIN), 3 * MIN);
    expect(map).toEqual({ 'm5.xlarge@*': '2026-11-21T10:04:00.000Z', '*@subnet-a': '2026-11-21T10:06:30.000Z' });
    expect(isOfferingUnavailable(map, { instanceType: 't3.large', subnetId: 'subnet-a' }, new Date(NOW.getTime() + 4 * MIN))).toBe(true);
  });
});

describe('exhaustion backoff', () => {
  it('starts at 5m and doubles to at most 30m', () => {
    const backoff = { initial: 5 * MIN, max: 30 * MIN };
    let pool: { exhaustedBackoffMs?: number } = {};
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      const patch = exhaustionPatch(pool, NOW, backoff);
      seen.push(patch.exhaustedBackoffMs / MIN);
      expect(patch.exhaustedUntil).toBe(new Date(NOW.getTime() + patch.exhaustedBackoffMs).toISOString());
      expect(patch.lastFailureAt).toBe(NOW.toISOString());
      pool = patch;
    }
    expect(seen).toEqual([5, 10, 20, 30, 30]);
  });

  it('draws full-jitter delays below min(max, base * 2^retry)', () => {
    expect([0, 1, 2, 3, 4, 5].map((retry) => backoffDelay(retry, 1000, 8000, () => 0.999))).toEqual([999, 1998, 3996, 7992, 7992, 7992]);
    expect(backoffDelay(3, 1000, 8000, () => 0)).toBe(0);
  });
});

describe('limits at claim time', () => {
  const live = (pool: string, n: number, state: 'active' | 'provisioning' | 'terminated' | 'failed' = 'active') => Array.from({ length: n }, () => ({ pool, state }));

  it('grants what pool.max and maxNodesTotal leave, counting only nodes that hold a host', () => {
    const base = { requested: 4, pool: 'd1/small', poolMax: 10, maxNodesTotal: 20 };
    expect(scaleUpRoom({ ...base, allNodes: [...live('d1/small', 5), ...live('d1/small', 9, 'terminated'), ...live('d1/small', 3, 'failed')] })).toEqual({ granted: 4 });
    expect(scaleUpRoom({ ...base, allNodes: [...live('d1/small', 7), ...live('d1/small', 1, 'provisioning')] })).toEqual({
      granted: 2,
      reason: '2 of 4 nodes fit: pool.max=10 (8 live in d1/small)',
    });
    expect(scaleUpRoom({ ...base, allNodes: [...live('d1/small', 2), ...live('d2/big', 17)] })).toEqual({
      granted: 1,
      reason: '1 of 4 nodes fit: maxNodesTotal=20 (19 live in all pools)',
    });
    expect(scaleUpRoom({ ...base, allNodes: live('d1/small', 12) }).granted).toBe(0);
  });

  it('grants what maxCores and maxMemoryGiB leave too, with the evaluator\'s arithmetic (resourceRooms)', () => {
    const pool = { district: 'd1', profile: 'small', min: 0, max: 10, template: { instanceTypes: [type('m5.xlarge')] } } as unknown as PoolConfig;
    const config = { pools: [pool], limits: { maxNodesTotal: 20, maxCores: 24, maxMemoryGiB: 80 } } as unknown as Config;
    const nodes = (n: number) => Array.from({ length: n }, (_, i) => ({ nodeId: `n${i}`, pool: 'd1/small', state: 'active', instanceType: 'm5.xlarge' }) as NodeRecord);
    const room = (n: number) =>
      scaleUpRoom({ requested: 4, pool: 'd1/small', poolMax: 10, maxNodesTotal: 20, allNodes: nodes(n), resourceRooms: resourceRooms(config, pool, nodes(n)) });
    // 3 nodes: 12 of 24 cores (room for 3 more m5.xlarge), 48 of 80 GiB (room for 2).
    expect(room(3)).toEqual({
      granted: 2,
      reason: '2 of 4 nodes fit: maxCores=24 (12 in use, 4 per m5.xlarge), maxMemoryGiB=80 (48 GiB in use, 16 GiB per m5.xlarge)',
    });
    expect(room(1)).toEqual({ granted: 4 });
    expect(room(5)).toEqual({ granted: 0, reason: '0 of 4 nodes fit: maxCores=24 (20 in use, 4 per m5.xlarge), maxMemoryGiB=80 (80 GiB in use, 16 GiB per m5.xlarge)' });
  });
});

describe('user data', () => {
  it('writes the node identity, shell-quoted, then the template\'s own script', () => {
    const text = nodeUserData({ pool: "d'1/small", district: "d'1", profile: 'small', hostName: 'n-1.example.com', cloudName: 'n_1' }, 'echo hi\n\n');
    expect(text).toContain("NODESCALER_DISTRICT='d'\\''1'");
    expect(text.endsWith('# From the pool template:\necho hi\n')).toBe(true);
    expect(nodeUserData({ pool: 'a/b', district: 'a', profile: 'b', hostName: 'h', cloudName: 'c' })).not.toContain('From the pool template');
    expect(shellQuote("it's")).toBe("'it'\\''s'");
  });
});

describe('timeouts and orphans', () => {
  it('times out a provisioning node at maxNodeProvisionTime after its creation', () => {
    const node = { state: 'provisioning' as const, createdAt: new Date(NOW.getTime() - 15 * MIN).toISOString() };
    expect(provisionTimedOut(node, NOW, 15 * MIN)).toBe(true);
    expect(provisionTimedOut(node, new Date(NOW.getTime() - 1), 15 * MIN)).toBe(false);
    expect(provisionTimedOut({ ...node, state: 'active' }, NOW, 15 * MIN)).toBe(false);
  });

  it('counts the provisioning time from the host request when the host was launched late (a reliability-suite counterexample)', () => {
    const late = { state: 'provisioning' as const, createdAt: new Date(NOW.getTime() - 15 * MIN).toISOString(), steps: { hostRequested: new Date(NOW.getTime() - MIN).toISOString() } };
    expect(provisionTimedOut(late, NOW, 15 * MIN)).toBe(false);
    expect(provisionTimedOut(late, new Date(NOW.getTime() + 14 * MIN), 15 * MIN)).toBe(true);
  });

  it('finds hosts the table does not know, old enough; a host of a provisioning node without an id is adoptable', () => {
    const ago = (minutes: number) => new Date(NOW.getTime() - minutes * MIN).toISOString();
    const hosts = [
      { instanceId: 'i-known', launchedAt: ago(60) },
      { instanceId: 'i-old', launchedAt: ago(11) },
      { instanceId: 'i-young', launchedAt: ago(9) },
      { instanceId: 'i-of-dead-node', launchedAt: ago(60) },
      { instanceId: 'i-lost-record', launchedAt: ago(1), tags: { 'nodescaler:node': 'n-3.example.com' } },
      { launchedAt: ago(60) },
    ];
    const nodes = [
      { nodeId: 'n-1.example.com', state: 'active' as const, instanceId: 'i-known' },
      { nodeId: 'n-2.example.com', state: 'terminated' as const, instanceId: 'i-of-dead-node' },
      { nodeId: 'n-3.example.com', state: 'provisioning' as const },
    ];
    const { orphans, adoptable } = findOrphans(hosts, nodes, NOW, 10 * MIN);
    expect(orphans.map((h) => h.instanceId)).toEqual(['i-old', 'i-of-dead-node']);
    expect(adoptable).toEqual([{ host: hosts[4], nodeId: 'n-3.example.com' }]);
  });

  it('adopts the unrecorded host of a node that joined since (RunInstances took effect, the caller saw an error)', () => {
    const hosts = [{ instanceId: 'i-unrecorded', launchedAt: NOW.toISOString(), tags: { 'nodescaler:node': 'n-4.example.com' } }];
    for (const state of ['active', 'draining', 'drained', 'terminating', 'failed'] as const) {
      expect(findOrphans(hosts, [{ nodeId: 'n-4.example.com', state }], NOW, 10 * MIN).adoptable).toEqual([{ host: hosts[0], nodeId: 'n-4.example.com' }]);
    }
    expect(findOrphans(hosts, [{ nodeId: 'n-4.example.com', state: 'terminated' }], NOW, 0).orphans).toEqual(hosts);
  });
});
