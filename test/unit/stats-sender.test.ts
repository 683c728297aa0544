import { describe, expect, it } from 'vitest';
import { StatsGate } from '../../lib/app/stats-sender.js';
import { ThresholdEvaluator } from '../../lib/app/evaluate.js';
import { SimulatedCloud } from '../../lib/adapters/local/simulated-cloud.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { parseConfig } from '../../lib/config/index.js';
import { staleStatsIssue } from '../../lib/domain/ingest.js';
import { classifySender, judgeSender, LOCAL_SENDER } from '../../lib/domain/stats-sender.js';
import { ValidationError } from '../../lib/errors.js';
import type { NodeStatsMessage } from '../../lib/messages/index.js';
import { node } from '../support/builders.js';
import { RecordingQueue } from '../support/recording-queue.js';

const NODE_ROLE = 'AROANODEROLE00000001';
const BROKER_ROLE = 'AROABROKERROLE000001';
const rules = { enabled: true, nodeRoleIds: [NODE_ROLE], reporterIds: [BROKER_ROLE] };

describe('classifySender (lib/domain/stats-sender.ts)', () => {
  it('tells an instance-profile session of the node role from a reporter, another role, a user and a role session not named after an instance', () => {
    expect(classifySender(`${NODE_ROLE}:i-0123456789abcdef0`, rules)).toEqual({ kind: 'instance', senderId: `${NODE_ROLE}:i-0123456789abcdef0`, instanceId: 'i-0123456789abcdef0' });
    expect(classifySender(`${BROKER_ROLE}:i-0b0b0b0b0b0b0b0b0`, rules).kind).toBe('reporter');
    expect(classifySender(LOCAL_SENDER, rules).kind).toBe('reporter');
    expect(classifySender('AROAOTHERROLE0000001:i-0123456789abcdef0', rules)).toMatchObject({ kind: 'unknown', why: expect.stringContaining('is not the node role') });
    expect(classifySender('AIDAUSER000000000001', rules)).toMatchObject({ kind: 'unknown', why: expect.stringContaining('not an instance-profile session') });
    expect(classifySender(`${NODE_ROLE}:i-0123456789abcdef0-evil`, rules).kind).toBe('unknown');
    expect(classifySender('', rules)).toMatchObject({ kind: 'unknown', why: 'the message carries no SenderId' });
    // Unpinned node role: any role session named after an instance speaks for that instance.
    expect(classifySender('AROAOTHERROLE0000001:i-0123456789abcdef0', { ...rules, nodeRoleIds: [] }).kind).toBe('instance');
    // Turned off: every sender may report for every node.
    expect(classifySender('AIDAUSER000000000001', { ...rules, enabled: false }).kind).toBe('reporter');
  });
});

describe('judgeSender', () => {
  const from = (instanceId: string) => classifySender(`${NODE_ROLE}:${instanceId}`, rules);
  const known = { ...node('n-1.example.com'), instanceId: 'i-0000000000000000a' };

  it('takes a known node\'s stats from its recorded instance only, without a lookup', () => {
    expect(judgeSender({ sender: from('i-0000000000000000a'), nodeId: known.nodeId, pool: 'd1/small', node: known })).toEqual({ ok: true });
    expect(judgeSender({ sender: from('i-0000000000000000b'), nodeId: known.nodeId, pool: 'd1/small', node: known })).toEqual({
      ok: false,
      reason: 'node n-1.example.com is instance i-0000000000000000a; the message came from instance i-0000000000000000b',
    });
  });

  it('looks the instance up on first sight and adopts only from a host tagged for the pool, never one tagged as another node', () => {
    const sender = from('i-0000000000000000c');
    const input = { sender, nodeId: 'new.example.com', pool: 'd1/small', node: undefined };
    expect(judgeSender(input)).toEqual({ ok: 'lookup', instanceId: 'i-0000000000000000c' });
    const host = (tags: Record<string, string>) => ({ instanceId: 'i-0000000000000000c', tags });
    expect(judgeSender({ ...input, host: host({ 'nodescaler:pool': 'd1/small' }) })).toEqual({ ok: true, instanceId: 'i-0000000000000000c' });
    expect(judgeSender({ ...input, host: null })).toEqual({ ok: false, reason: 'instance i-0000000000000000c is unknown to the cloud' });
    expect(judgeSender({ ...input, host: host({}) })).toMatchObject({ ok: false, reason: expect.stringContaining('has no tag nodescaler:pool=d1/small') });
    expect(judgeSender({ ...input, host: host({ 'nodescaler:pool': 'd2/small' }) })).toMatchObject({ ok: false, reason: expect.stringContaining('has nodescaler:pool=d2/small') });
    expect(judgeSender({ ...input, host: host({ 'nodescaler:pool': 'd1/small', 'nodescaler:node': 'other.example.com' }) })).toMatchObject({
      ok: false,
      reason: 'instance i-0000000000000000c is node other.example.com (tag nodescaler:node), not new.example.com',
    });
  });

  it('checks a recorded node without an instance (launched, not yet recorded) against the pool it was recorded in, not the one the message names', () => {
    const unbound = node('n-2.example.com', { state: 'provisioning' });
    const host = { instanceId: 'i-0000000000000000d', tags: { 'nodescaler:pool': 'd1/small', 'nodescaler:node': 'n-2.example.com' } };
    expect(judgeSender({ sender: from('i-0000000000000000d'), nodeId: 'n-2.example.com', pool: 'd9/large', node: unbound, host })).toEqual({ ok: true, instanceId: 'i-0000000000000000d' });
  });
});

describe('staleStatsIssue (lib/domain/ingest.ts)', () => {
  it('names reportedAt and how old it is past statsMaxAge; fresh and slightly future stats pass', () => {
    const now = new Date('2026-11-24T10:00:00Z');
    expect(staleStatsIssue('2026-11-24T09:55:00Z', now, 300_000)).toBeUndefined();
    expect(staleStatsIssue('2026-11-24T10:01:00Z', now, 300_000)).toBeUndefined();
    expect(staleStatsIssue('2026-11-24T09:00:00Z', now, 300_000)).toEqual({
      path: 'reportedAt',
      message: 'is 3600s old (now is 2026-11-24T10:00:00.000Z); stats older than statsMaxAge (300s) count for nothing',
    });
  });
});

describe('StatsGate (lib/app/stats-sender.ts)', () => {
  const now = new Date('2026-11-24T10:00:00Z');
  const config = parseConfig({ statsAuth: { nodeRoleIds: [NODE_ROLE], reporterIds: [BROKER_ROLE] }, pools: [{ district: 'd1', profile: 'small', max: 5 }] });
  const stats = (nodeId: string, reportedAt = now.toISOString()): NodeStatsMessage => ({ type: 'node-stats', v: 1, nodeId, district: 'd1', profile: 'small', activeGears: 1, maxActiveGears: 10, reportedAt });
  const setup = async () => {
    const clock = { now: () => now };
    const cloud = new SimulatedCloud(clock, { bootDelayMs: 0 });
    const store = new InMemoryStateStore();
    const log = new MemoryLog();
    const metrics = new InMemoryMetrics();
    const launch = (hostName: string, pool = 'd1/small') =>
      cloud.createHost({ pool, district: pool.split('/')[0]!, profile: 'small', cloudName: hostName, hostName, decisionId: 'd', idempotencyToken: hostName });
    return { cloud, store, log, metrics, launch, gate: new StatsGate({ store, clock, log, metrics, hosts: cloud }, config) };
  };

  it('rejects a node host reporting for another node: a security log line, StatsRejected, and a ValidationError naming SenderId and its value', async () => {
    const { store, log, metrics, launch, gate } = await setup();
    const victim = await launch('victim.example.com');
    const attacker = await launch('attacker.example.com');
    await store.createNode({ ...node('victim.example.com'), instanceId: victim.instanceId! }, now);
    const senderId = `${NODE_ROLE}:${attacker.instanceId}`;
    const error = await gate.admit(stats('victim.example.com'), senderId).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe('SenderId');
    expect((error as ValidationError).message).toContain(senderId);
    expect((error as ValidationError).message).toContain(`node victim.example.com is instance ${victim.instanceId}; the message came from instance ${attacker.instanceId}`);
    expect(log.lines.filter((l) => l.level === 'error').map((l) => [l.message, l.attributes.senderId])).toEqual([['security: node-stats rejected: the sender may not report for this node', senderId]]);
    expect(metrics.points).toEqual([{ name: 'StatsRejected', value: 1, unit: 'Count', dimensions: { reason: 'sender' } }]);
    // Its own node: admitted.
    await expect(gate.admit(stats('victim.example.com'), `${NODE_ROLE}:${victim.instanceId}`)).resolves.toEqual({ admit: true });
  });

  it('adopts from a host tagged for the pool (recording its instance), looks each instance up once, and refuses hosts of other pools', async () => {
    const { cloud, launch, gate } = await setup();
    const fresh = await launch('fresh.example.com');
    const stranger = await launch('stranger.example.com', 'd2/small');
    // With the type it runs as: a node adopted from it is priced by its own type.
    const adopted = { admit: true, instanceId: fresh.instanceId, instanceType: fresh.instanceType };
    await expect(gate.admit(stats('fresh.example.com'), `${NODE_ROLE}:${fresh.instanceId}`)).resolves.toEqual(adopted);
    await expect(gate.admit(stats('fresh.example.com'), `${NODE_ROLE}:${fresh.instanceId}`)).resolves.toEqual(adopted);
    await expect(gate.admit(stats('stranger.example.com'), `${NODE_ROLE}:${stranger.instanceId}`)).rejects.toThrow(/has nodescaler:pool=d2\/small, not the tag nodescaler:pool=d1\/small/);
    await expect(gate.admit(stats('ghost.example.com'), `${NODE_ROLE}:i-00000000000000bad`)).rejects.toThrow('instance i-00000000000000bad is unknown to the cloud');
    expect(cloud.calls.filter((c) => c.op === 'describeHosts').map((c) => c.arg)).toEqual([[fresh.instanceId], [stranger.instanceId], ['i-00000000000000bad']]);
  });

  it('the evaluator adopts a node with its host\'s instance, instance type and zone, so its drains are priced as a launched node\'s', async () => {
    const store = new InMemoryStateStore();
    const hosts = {
      describeHosts: async (ids: readonly string[]) =>
        new Map(ids.map((id) => [id, { instanceId: id, state: 'running' as const, instanceType: 'm5.4xlarge', zone: 'us-east-1c', tags: { 'nodescaler:pool': 'd1/small' } }])),
    };
    const evaluator = new ThresholdEvaluator({ store, queue: new RecordingQueue({ fifo: ['scale', 'drain'] }), clock: { now: () => now }, log: new MemoryLog(), metrics: new InMemoryMetrics(), hosts }, config);
    const { failures } = await evaluator.handleBatch([{ id: 'm1', senderId: `${NODE_ROLE}:i-0000000000000000e`, message: stats('adopted.example.com') }]);
    expect(failures).toEqual([]);
    expect(await store.getNode('adopted.example.com')).toMatchObject({ origin: 'adopted', instanceId: 'i-0000000000000000e', instanceType: 'm5.4xlarge', zone: 'us-east-1c' });
  });

  it('admits the broker-side reporter for every node, and drops stale stats (any sender) with a warning naming reportedAt', async () => {
    const { log, metrics, gate } = await setup();
    await expect(gate.admit(stats('anything.example.com'), `${BROKER_ROLE}:i-0b0b0b0b0b0b0b0b0`)).resolves.toEqual({ admit: true });
    const old = '2026-11-24T09:00:00.000Z';
    await expect(gate.admit(stats('anything.example.com', old), `${BROKER_ROLE}:i-0b0b0b0b0b0b0b0b0`)).resolves.toMatchObject({ admit: false, reason: expect.stringContaining(`reportedAt ${old} is 3600s old`) });
    expect(log.lines.find((l) => l.message === 'node-stats dropped: too old to count')?.attributes).toMatchObject({ field: 'reportedAt', value: old });
    expect(metrics.sum('StatsDropped')).toBe(1);
  });
});
