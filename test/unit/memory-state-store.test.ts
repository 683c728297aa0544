import { describe, expect, it } from 'vitest';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { drain } from '../support/builders.js';
import { instanceLookupContract } from '../support/instance-lookup-contract.js';
import { stateStoreContract } from '../support/state-store-contract.js';

stateStoreContract('in-memory', { create: async () => new InMemoryStateStore() });
instanceLookupContract('in-memory', { create: async () => new InMemoryStateStore() });

describe('InMemoryStateStore indexes', () => {
  const T0 = new Date('2026-01-05T00:00:00.000Z');
  const node = (nodeId: string) => ({ nodeId, pool: 'd1/small', district: 'd1', profile: 'small', state: 'active' as const, createdAt: T0.toISOString(), origin: 'provisioned' as const, protected: false });

  it('keeps listNodes in id order as nodes join after a listing and leave', async () => {
    const store = new InMemoryStateStore();
    await store.createNode(node('m.example.com'), T0);
    expect((await store.listNodes('d1/small')).map((n) => n.nodeId)).toEqual(['m.example.com']);
    await store.createNode(node('a.example.com'), T0);
    await store.createNode(node('z.example.com'), T0);
    expect((await store.listNodes('d1/small')).map((n) => n.nodeId)).toEqual(['a.example.com', 'm.example.com', 'z.example.com']);
    await store.transitionNode('m.example.com', { from: 'active', to: 'draining' }, T0);
    await store.transitionNode('m.example.com', { from: 'draining', to: 'drained' }, T0);
    await store.transitionNode('m.example.com', { from: 'drained', to: 'terminating' }, T0);
    await store.transitionNode('m.example.com', { from: 'terminating', to: 'terminated' }, T0);
    expect((await store.listNodes('d1/small')).map((n) => n.nodeId)).toEqual(['a.example.com', 'z.example.com']);
  });

  it('lists drains by state as they finish, however many finished before', async () => {
    const store = new InMemoryStateStore();
    const newDrain = (drainId: string, startedAt: string) => {
      const { version: _v, state: _s, updatedAt: _u, ...fields } = drain(`${drainId}.example.com`, [], { drainId, pool: 'd1/small', startedAt });
      return fields;
    };
    for (let i = 0; i < 50; i++) {
      const created = await store.createDrain(newDrain(`old-${String(i).padStart(2, '0')}`, T0.toISOString()), T0);
      await store.updateDrain(created.drainId, created.version, { state: 'completed' }, T0);
    }
    await store.createDrain(newDrain('b', '2026-01-05T00:02:00.000Z'), T0);
    await store.createDrain(newDrain('a', '2026-01-05T00:01:00.000Z'), T0);
    expect((await store.listDrains('d1/small')).map((d) => d.drainId)).toEqual(['a', 'b']);
    expect(await store.listDrains('d1/small', 'completed')).toHaveLength(50);
    expect(await store.listDrains('d2/small')).toEqual([]);
  });
});
