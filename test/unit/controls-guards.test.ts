/**
 * The pause as every function honours it: the provisioner and the gear mover
 * refuse a paused pool's decision before its first effect (a decision sent
 * before the pause), the evaluator reads the controls once per batch, and a
 * drain waiting for its replacement starts once that node has joined.
 */
import { describe, expect, it } from 'vitest';
import { LogCloud } from '../../lib/adapters/cloud/log-cloud.js';
import { RecordingQueue } from '../support/recording-queue.js';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { MANUAL_DECISION_PREFIX } from '../../lib/app/drain.js';
import { ThresholdEvaluator } from '../../lib/app/evaluate.js';
import { NodeProvisioner } from '../../lib/app/provision.js';
import { advancePendingDrains, MANUAL_PREFIX, RENEWAL_BY, recordRenewalDrains } from '../../lib/app/replace-drain.js';
import { parseConfig } from '../../lib/config/index.js';
import { nodesAsDecided, type PauseRecord } from '../../lib/domain/controls.js';
import { decisionIdFor } from '../../lib/domain/decision-message.js';
import { drainIdFor } from '../../lib/domain/drain.js';
import { drain as drainRecord, node as nodeBuilt } from '../support/builders.js';
import type { ScaleUpMessage } from '../../lib/messages/index.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { POOL, World, apps } from '../support/gear-mover-world.js';

const T0 = new Date('2026-11-21T10:00:00.000Z');
const config = parseConfig({ pools: [{ district: 'd1', profile: 'small', min: 0, max: 10, gearsPerNode: 100, naming: { base: 'd1-small' } }] });
const paused = (actions: PauseRecord['actions'], pool = POOL): PauseRecord => ({ pool, actions, reason: 'incident 42', by: 'local user alice', at: T0.toISOString() });

describe('the provisioner under a pause', () => {
  it('refuses a scale-up of a paused pool before claiming any name, releases the lease and logs why', async () => {
    const store = new InMemoryStateStore();
    const log = new MemoryLog();
    const provisioner = new NodeProvisioner({ store, cloud: new LogCloud(log, config), clock: { now: () => T0 }, metrics: new InMemoryMetrics(), log }, config);
    const message: ScaleUpMessage = { type: 'scale-up', v: 1, decisionId: decisionIdFor('scale-up', POOL, T0), pool: POOL, count: 2, reason: 'full', decidedAt: T0.toISOString() };
    await store.acquireLease(POOL, { holder: message.decisionId, kind: 'scale-up', ttlMs: config.leaseTtl }, T0);
    await store.putPause(paused('scale-up'));

    const outcome = await provisioner.scaleUp(message);
    expect(outcome).toMatchObject({ kind: 'refused', nodes: [] });
    expect(outcome.reason).toBe('refused: scale-up paused by local user alice since 2026-11-21T10:00:00.000Z until resumed: incident 42');
    expect(await store.getScaleUp(message.decisionId)).toMatchObject({ slots: [], reason: outcome.reason });
    expect(await store.listNodes(POOL)).toEqual([]);
    expect((await store.getPool(POOL))?.lease).toBeUndefined();
    expect((await store.listDecisions(POOL, 1))[0]).toMatchObject({ kind: 'refused', decisionId: message.decisionId });
  });

  it('is not held back by a pause of scale-down only', async () => {
    const store = new InMemoryStateStore();
    const log = new MemoryLog();
    const provisioner = new NodeProvisioner({ store, cloud: new LogCloud(log, config), clock: { now: () => T0 }, metrics: new InMemoryMetrics(), log }, config);
    await store.putPause(paused('scale-down'));
    const outcome = await provisioner.scaleUp({ type: 'scale-up', v: 1, decisionId: 'up:d1_small:1', pool: POOL, count: 1, reason: 'full', decidedAt: T0.toISOString() });
    expect(outcome.kind).toBe('provisioned');
    expect(await store.listNodes(POOL)).toHaveLength(1);
  });
});

describe('the provisioner and runtime overrides', () => {
  it("claims up to the pool's max as overridden, as the evaluator clamped it", async () => {
    const store = new InMemoryStateStore();
    const log = new MemoryLog();
    const small = parseConfig({ pools: [{ district: 'd1', profile: 'small', max: 1, gearsPerNode: 100, naming: { base: 'd1-small' } }] });
    const provisioner = new NodeProvisioner({ store, cloud: new LogCloud(log, small), clock: { now: () => T0 }, metrics: new InMemoryMetrics(), log }, small);
    await store.putOverrides({ pool: POOL, values: { max: 3 }, updatedAt: T0.toISOString(), updatedBy: 'local user alice', reason: 'peak' }, 0);
    const outcome = await provisioner.scaleUp({ type: 'scale-up', v: 1, decisionId: 'up:d1_small:1', pool: POOL, count: 3, reason: 'full', decidedAt: T0.toISOString() });
    expect(outcome.nodes).toHaveLength(3);
  });
});

describe('the gear mover under a pause', () => {
  it("refuses the evaluator's scale-down of a paused pool before closing the node, and frees the pool", async () => {
    const w = new World(new InMemoryStateStore());
    await w.node('src.example.com', { gears: apps(1, 2) });
    await w.node('t1.example.com');
    const message = await w.decideScaleDown('src.example.com');
    await w.store.putPause(paused('all', '*'));
    const outcome = await w.mover().handleScaleDown(message);
    expect(outcome).toMatchObject({ created: false, refused: expect.stringContaining('refused: scale-up and scale-down paused (every pool) by local user alice') });
    expect(await w.store.listDrains(POOL)).toEqual([]);
    expect(await w.store.getNode('src.example.com')).toMatchObject({ state: 'active' });
    expect(w.sim.nodeFacts('src.example.com').active).toBe(true);
    expect((await w.store.getPool(POOL))?.lease).toBeUndefined();
  });

  it("carries out an operator's manual drain: the pause holds the autoscaler back, not the operator", async () => {
    const w = new World(new InMemoryStateStore());
    await w.node('src.example.com', { gears: apps(1, 2) });
    await w.node('t1.example.com');
    await w.store.putPause(paused('scale-down'));
    const manual = { ...w.scaleDown('src.example.com'), decisionId: `${MANUAL_DECISION_PREFIX}x1` };
    expect(await w.mover().handleScaleDown(manual)).toMatchObject({ created: true });
  });

  it("refuses an operator's drain cancelled before it began (its message on its way), and every redelivery of it; another node's is carried out", async () => {
    const w = new World(new InMemoryStateStore());
    await w.node('src.example.com', { gears: apps(1, 2) });
    await w.node('t1.example.com');
    const decisionId = `${MANUAL_DECISION_PREFIX}20261121T100000Z:0a1b2c3d`;
    await w.store.createPendingDrain({ nodeId: 'src.example.com', pool: POOL, decisionId, reason: 'kernel update', by: 'local user alice', at: T0.toISOString(), sentAt: T0.toISOString() });
    expect(await w.store.cancelPendingDrain('src.example.com', { at: T0.toISOString(), by: 'local user bob', reason: 'wrong node' })).toBe('cancelled');
    const manual = { ...w.scaleDown('src.example.com'), decisionId };
    for (let delivery = 0; delivery < 2; delivery++) {
      expect(await w.mover().handleScaleDown(manual)).toMatchObject({ created: false, refused: `cancelled by local user bob at ${T0.toISOString()} before it began: wrong node` });
    }
    expect(await w.store.listDrains(POOL)).toEqual([]);
    expect(await w.store.getNode('src.example.com')).toMatchObject({ state: 'active' });
    expect(w.sim.nodeFacts('src.example.com').active).toBe(true);
    // The cancel names one drain: another decision for the node is not refused by it.
    expect(await w.mover().handleScaleDown({ ...manual, decisionId: `${MANUAL_DECISION_PREFIX}20261121T100500Z:0b1b2c3d` })).toMatchObject({ created: true });
  });
});

/** Counts listControls calls, the rest passes through. */
function counting(store: StateStore): { store: StateStore; reads: () => number } {
  let reads = 0;
  const wrapped = new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (name === 'listControls') return () => (reads++, target.listControls());
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: wrapped, reads: () => reads };
}

describe('the evaluator and the controls', () => {
  it('reads the controls once per batch, however many pools it evaluates', async () => {
    const many = parseConfig({
      pools: Array.from({ length: 5 }, (_, i) => ({ district: 'd1', profile: `p${i}`, max: 5, naming: { base: `d1-p${i}` } })),
    });
    const { store, reads } = counting(new InMemoryStateStore());
    const evaluator = new ThresholdEvaluator({ store, queue: new RecordingQueue({ fifo: ['scale', 'drain'] }), clock: { now: () => T0 }, metrics: new InMemoryMetrics(), log: new MemoryLog() }, many);
    const outcomes = await evaluator.tick();
    expect(outcomes).toHaveLength(5);
    expect(reads()).toBe(1);
  });

  it('records a renewal\u2019s drains all or none: a node already waiting for a replacement refuses the batch', async () => {
    const store = new InMemoryStateStore();
    const common = { pool: POOL, replacementDecisionId: 'up:d1_small:2', reason: 'renew', at: T0.toISOString() };
    await store.createPendingDrain({ ...common, nodeId: 'b', replacementDecisionId: 'up:d1_small:1', by: 'local user alice' });
    expect(await recordRenewalDrains(store, ['a', 'b'], common)).toEqual({ recorded: [], refused: 'b already waits for a replacement' });
    expect((await store.listControls()).pendingDrains.map((pending) => pending.nodeId)).toEqual(['b']);
    expect(await recordRenewalDrains(store, ['a', 'c'], common)).toEqual({ recorded: ['a', 'c'] });
    expect((await store.listControls()).pendingDrains.filter((pending) => pending.by === RENEWAL_BY).map((pending) => pending.nodeId)).toEqual(['a', 'c']);
  });

  it('starts a renewal drain recorded before expiry existed (by "nodescaler (scaleDown.renewDrifted)") as a renewal: an id per node', async () => {
    const store = new InMemoryStateStore();
    const queue = new RecordingQueue({ fifo: ['scale', 'drain'] });
    const ports = { store, queue, clock: { now: () => new Date(T0.getTime() + 120_000) }, log: new MemoryLog() };
    const common = { pool: POOL, replacementDecisionId: 'up:d1_small:1', reason: 'renew', at: T0.toISOString() };
    await store.createPendingDrain({ ...common, nodeId: 'a', by: 'nodescaler (scaleDown.renewDrifted)' });
    await store.createPendingDrain({ ...common, nodeId: 'b', by: RENEWAL_BY });
    const slots = ['n-8', 'n-9'].map((nodeId) => ({ nodeId, cloudName: nodeId }));
    await store.claimScaleUp({ decisionId: 'up:d1_small:1', pool: POOL, requested: 2, slots, createdAt: T0.toISOString() }, 86_400_000);
    for (const { nodeId } of slots) {
      await store.createNode({ nodeId, pool: POOL, district: 'd1', profile: 'small', state: 'provisioning', createdAt: T0.toISOString(), origin: 'provisioned', protected: false }, T0);
      await store.transitionNode(nodeId, { from: 'provisioning', to: 'active' }, new Date(T0.getTime() + 60_000));
    }
    await advancePendingDrains(ports, config, (await store.listControls()).pendingDrains);
    const ids = queue.recorded('drain').map((sent) => (sent.message as { decisionId: string }).decisionId);
    expect(ids).toHaveLength(2);
    for (const id of ids) expect(id).toMatch(/^manual:renew:up:d1_small:1:[0-9a-f]{8}$/);
    expect(new Set(ids).size).toBe(2);
  });

  it('starts a drain waiting for its replacement once the replacement has joined, once', async () => {
    const store = new InMemoryStateStore();
    const queue = new RecordingQueue({ fifo: ['scale', 'drain'] });
    let now = T0;
    const ports = { store, queue, clock: { now: () => now }, log: new MemoryLog() };
    await store.createPendingDrain({ nodeId: 'd1-small-1.example.com', pool: POOL, replacementDecisionId: 'up:d1_small:1', reason: 'kernel update', by: 'local user alice', at: T0.toISOString() });
    await store.claimScaleUp({ decisionId: 'up:d1_small:1', pool: POOL, requested: 1, slots: [{ nodeId: 'd1-small-9.example.com', cloudName: 'd1-small_9' }], createdAt: T0.toISOString() }, 86_400_000);
    await store.createNode({ nodeId: 'd1-small-9.example.com', pool: POOL, district: 'd1', profile: 'small', state: 'provisioning', createdAt: T0.toISOString(), origin: 'provisioned', protected: false }, T0);

    await advancePendingDrains(ports, config, (await store.listControls()).pendingDrains);
    expect(queue.recorded('drain')).toEqual([]);

    now = new Date(T0.getTime() + 120_000);
    await store.transitionNode('d1-small-9.example.com', { from: 'provisioning', to: 'active' }, now);
    await advancePendingDrains(ports, config, (await store.listControls()).pendingDrains);
    await advancePendingDrains(ports, config, (await store.listControls()).pendingDrains);
    expect(queue.recorded('drain')).toMatchObject([
      { message: { type: 'scale-down', decisionId: 'manual:after:up:d1_small:1', nodeId: 'd1-small-1.example.com', pool: POOL }, groupId: POOL },
    ]);
    // Kept, marked sent, until the gear mover has begun the drain: meanwhile the evaluator counts the node as draining.
    expect((await store.listControls()).pendingDrains).toMatchObject([{ nodeId: 'd1-small-1.example.com', sentAt: now.toISOString() }]);
    expect((await store.listDecisions(POOL, 1))[0]).toMatchObject({ kind: 'scale-down', reason: 'drain of d1-small-1.example.com started: replacement d1-small-9.example.com joined', by: 'local user alice' });
    expect(await store.listDecisions(POOL, 10)).toHaveLength(1);
    await store.createDrain(drainRecord('d1-small-1.example.com', [], { drainId: drainIdFor('manual:after:up:d1_small:1'), decisionId: 'manual:after:up:d1_small:1', kind: 'manual' }), now);
    await advancePendingDrains(ports, config, (await store.listControls()).pendingDrains);
    expect((await store.listControls()).pendingDrains).toEqual([]);
    expect(queue.recorded('drain')).toHaveLength(1);
    // The gear mover makes it a manual drain: the evaluator's copy of the prefix is the gear mover's.
    expect(MANUAL_PREFIX).toBe(MANUAL_DECISION_PREFIX);
  });

  it('drops a drain cancelled while it waited for its replacement; keeps one cancelled after it was sent until its message is past decisionMaxAge, without a failure', async () => {
    const store = new InMemoryStateStore();
    const queue = new RecordingQueue({ fifo: ['scale', 'drain'] });
    let now = T0;
    const ports = { store, queue, clock: { now: () => now }, log: new MemoryLog() };
    const cancel = { at: T0.toISOString(), by: 'local user bob', reason: 'wrong node' };
    await store.createPendingDrain({ nodeId: 'd1-small-1.example.com', pool: POOL, replacementDecisionId: 'up:d1_small:1', reason: 'kernel update', by: 'local user alice', at: T0.toISOString() });
    await store.claimScaleUp({ decisionId: 'up:d1_small:1', pool: POOL, requested: 1, slots: [{ nodeId: 'd1-small-9.example.com', cloudName: 'd1-small_9' }], createdAt: T0.toISOString() }, 86_400_000);
    await store.createNode({ nodeId: 'd1-small-9.example.com', pool: POOL, district: 'd1', profile: 'small', state: 'active', createdAt: T0.toISOString(), origin: 'provisioned', protected: false }, T0);
    await store.cancelPendingDrain('d1-small-1.example.com', cancel);
    // The replacement has joined, but the drain was cancelled: nothing is sent.
    expect(await advancePendingDrains(ports, config, (await store.listControls()).pendingDrains)).toEqual([]);
    expect((await store.listControls()).pendingDrains).toEqual([]);
    expect(queue.recorded('drain')).toEqual([]);

    await store.createPendingDrain({ nodeId: 'd1-small-2.example.com', pool: POOL, decisionId: 'manual:20261121T100000Z:0a1b2c3d', reason: 'kernel update', by: 'local user alice', at: T0.toISOString(), sentAt: T0.toISOString() });
    await store.cancelPendingDrain('d1-small-2.example.com', cancel);
    const kept = await advancePendingDrains(ports, config, (await store.listControls()).pendingDrains);
    expect(kept.map((pending) => pending.nodeId)).toEqual(['d1-small-2.example.com']);
    // Kept for the gear mover to refuse its message by, but its node is staying: not counted as draining.
    expect(nodesAsDecided([nodeBuilt('d1-small-2.example.com')], kept, POOL).map((node) => node.state)).toEqual(['active']);
    now = new Date(T0.getTime() + config.leaseTtl + 1000);
    expect(await advancePendingDrains(ports, config, (await store.listControls()).pendingDrains)).toEqual([]);
    expect((await store.listControls()).pendingDrains).toEqual([]);
    expect(await store.listDecisions(POOL, 10)).toEqual([]);
  });

  it('gives up a sent drain the gear mover never began once its message is older than decisionMaxAge, and says so', async () => {
    const store = new InMemoryStateStore();
    const queue = new RecordingQueue({ fifo: ['scale', 'drain'] });
    const sentAt = T0.toISOString();
    let now = new Date(T0.getTime() + config.leaseTtl);
    const ports = { store, queue, clock: { now: () => now }, log: new MemoryLog() };
    await store.createPendingDrain({ nodeId: 'd1-small-1.example.com', pool: POOL, replacementDecisionId: 'up:d1_small:1', reason: 'kernel update', by: 'local user alice', at: T0.toISOString() });
    expect(await store.markPendingDrainSent('d1-small-1.example.com', sentAt)).toBe('marked');

    const kept = await advancePendingDrains(ports, config, (await store.listControls()).pendingDrains);
    expect(kept.map((pending) => pending.nodeId)).toEqual(['d1-small-1.example.com']);

    now = new Date(T0.getTime() + config.leaseTtl + 1000);
    expect(await advancePendingDrains(ports, config, (await store.listControls()).pendingDrains)).toEqual([]);
    expect((await store.listControls()).pendingDrains).toEqual([]);
    expect(queue.recorded('drain')).toEqual([]);
    expect((await store.listDecisions(POOL, 1))[0]).toMatchObject({
      kind: 'failure',
      reason: `drain of d1-small-1.example.com not begun: its message, sent at ${sentAt}, was not taken up within decisionMaxAge (15m)`,
    });
  });
});
