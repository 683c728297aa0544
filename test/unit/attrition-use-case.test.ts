import { beforeEach, describe, expect, it } from 'vitest';
import { applyAttrition } from '../../lib/app/attrition.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import type { NodeRecord } from '../../lib/domain/model.js';
import { TransientError } from '../../lib/errors.js';
import { FakePlatform } from '../support/fake-platform.js';

const now = new Date('2026-11-21T10:00:00Z');

describe('applyAttrition (the evaluator carrying out a close or a reopen)', () => {
  let store: InMemoryStateStore;
  let platform: FakePlatform;
  let log: MemoryLog;
  let metrics: InMemoryMetrics;
  let nodes: NodeRecord[];
  const ports = () => ({ store, platform, clock: { now: () => now }, log, metrics });

  beforeEach(async () => {
    store = new InMemoryStateStore();
    platform = new FakePlatform();
    log = new MemoryLog();
    metrics = new InMemoryMetrics();
    const base = { pool: 'd1/small', district: 'd1', profile: 'small', state: 'active' as const, createdAt: now.toISOString(), origin: 'provisioned' as const, protected: false };
    await store.createNode({ ...base, nodeId: 'a' }, now);
    await store.createNode({ ...base, nodeId: 'b', attritionSince: '2026-11-21T09:00:00.000Z' }, now);
    nodes = [(await store.getNode('a'))!, (await store.getNode('b'))!];
  });

  it('closes: marks the record first, then closes the node on the platform', async () => {
    let markedWhenClosed: string | undefined;
    const deactivate = platform.deactivateNode.bind(platform);
    platform.deactivateNode = async (district, nodeId) => {
      markedWhenClosed = (await store.getNode(nodeId))?.attritionSince;
      return deactivate(district, nodeId);
    };
    const done = await applyAttrition(ports(), { close: [{ nodeId: 'a', reason: 'close a' }], reopen: [] }, nodes, true);
    expect(done).toEqual(['close a']);
    expect(markedWhenClosed).toBe(now.toISOString());
    expect(platform.ops('deactivateNode')).toEqual([{ op: 'deactivateNode', nodeId: 'a', district: 'd1' }]);
    expect((await store.getNode('a'))?.attritionSince).toBe(now.toISOString());
    expect(metrics.points).toEqual([{ name: 'NodesClosed', value: 1, unit: 'Count', dimensions: { pool: 'd1/small' } }]);
  });

  it('reopens: opens the node on the platform first, then clears the record', async () => {
    const done = await applyAttrition(ports(), { close: [], reopen: [{ nodeId: 'b', reason: 'reopen b' }] }, nodes, true);
    expect(done).toEqual(['reopen b']);
    expect(platform.ops('activateNode')).toEqual([{ op: 'activateNode', nodeId: 'b', district: 'd1' }]);
    expect((await store.getNode('b'))?.attritionSince).toBeUndefined();
    expect(metrics.points).toEqual([{ name: 'NodesReopened', value: 1, unit: 'Count', dimensions: { pool: 'd1/small' } }]);
  });

  it('a platform that refuses to reopen leaves the node marked closed (reopened again next time), and says so', async () => {
    platform.failNext('activateNode', new TransientError('broker busy'));
    const done = await applyAttrition(ports(), { close: [], reopen: [{ nodeId: 'b', reason: 'reopen b' }] }, nodes, true);
    expect(done).toEqual([]);
    expect((await store.getNode('b'))?.attritionSince).toBe('2026-11-21T09:00:00.000Z');
    expect(log.lines.some((l) => l.level === 'warn' && l.message.startsWith('attrition: reopening a node failed'))).toBe(true);
    expect(metrics.points).toEqual([]);
  });

  it('a platform that refuses to close leaves the node unmarked: its slots count again', async () => {
    platform.failNext('deactivateNode', new TransientError('broker busy'));
    const done = await applyAttrition(ports(), { close: [{ nodeId: 'a', reason: 'close a' }], reopen: [] }, nodes, true);
    expect(done).toEqual([]);
    expect((await store.getNode('a'))?.attritionSince).toBeUndefined();
    expect(metrics.sum('NodesClosed')).toBe(0);
  });

  it('closes nothing in shadow mode or while scale-down is paused, but still reopens', async () => {
    const done = await applyAttrition(ports(), { close: [{ nodeId: 'a', reason: 'close a' }], reopen: [{ nodeId: 'b', reason: 'reopen b' }] }, nodes, false);
    expect(done).toEqual(['reopen b']);
    expect(platform.ops('deactivateNode')).toEqual([]);
    expect([metrics.sum('NodesClosed'), metrics.sum('NodesReopened')]).toEqual([0, 1]);
    expect((await store.getNode('a'))?.attritionSince).toBeUndefined();
  });
});
