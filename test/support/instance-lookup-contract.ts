import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../lib/errors.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { newNode, type StoreHarness } from './state-store-contract.js';

const T0 = new Date('2026-11-21T10:00:00.000Z');

/**
 * `StateStore.findNodeByInstance`, the lookup an EC2 event makes: both
 * adapters' test files run it next to the main contract, with their own harness.
 */
export function instanceLookupContract(name: string, harness: StoreHarness): void {
  describe(`StateStore contract, lookup by instance: ${name}`, () => {
    let store: StateStore;
    beforeAll(async () => {
      store = await harness.create();
    });
    afterAll(async () => harness.close?.());

    it('finds the node recorded on an instance, as getNode reads it (stats included), in any pool', async () => {
      await store.createNode(newNode({ nodeId: 'other.example.com', instanceId: 'i-0aaa0000000000001' }), T0);
      const node = newNode({ nodeId: 'found.example.com', pool: 'd2/large', district: 'd2', profile: 'large', instanceId: 'i-0aaa0000000000002' });
      await store.createNode(node, T0);
      await store.putNodeStats(node.nodeId, { activeGears: 3, maxActiveGears: 100, reportedAt: T0.toISOString() });
      const found = await store.findNodeByInstance('i-0aaa0000000000002');
      expect(found).toMatchObject({ nodeId: 'found.example.com', pool: 'd2/large', instanceId: 'i-0aaa0000000000002', stats: { activeGears: 3 } });
      expect(found).toEqual(await store.getNode(node.nodeId));
    });

    it('finds nothing for an instance no node names, nor for a node without an instance', async () => {
      await store.createNode(newNode({ nodeId: 'no-instance.example.com', state: 'provisioning' }), T0);
      expect(await store.findNodeByInstance('i-0fff000000000000f')).toBeUndefined();
      expect(await store.findNodeByInstance('no-instance.example.com')).toBeUndefined();
    });

    it('follows the instance as it is recorded, changed and cleared, by update or transition', async () => {
      const node = await store.createNode(newNode({ nodeId: 'moving.example.com', state: 'provisioning' }), T0);
      const launched = await store.updateNode(node.nodeId, node.version, { instanceId: 'i-0bbb0000000000001' });
      expect((await store.findNodeByInstance('i-0bbb0000000000001'))?.nodeId).toBe('moving.example.com');

      const relaunched = await store.transitionNode(node.nodeId, { from: 'provisioning', to: 'active', patch: { instanceId: 'i-0bbb0000000000002' } }, T0);
      expect(await store.findNodeByInstance('i-0bbb0000000000001')).toBeUndefined();
      expect(await store.findNodeByInstance('i-0bbb0000000000002')).toMatchObject({ nodeId: 'moving.example.com', state: 'active', version: launched.version + 1 });

      await store.updateNode(node.nodeId, relaunched.version, { instanceId: undefined });
      expect(await store.findNodeByInstance('i-0bbb0000000000002')).toBeUndefined();
    });

    it('still finds a terminated node (its instance is history, not a stranger), and a live node before it on a shared instance', async () => {
      const instanceId = 'i-0ccc0000000000001';
      await store.createNode(newNode({ nodeId: 'a-old.example.com', state: 'terminating', instanceId }), T0);
      await store.transitionNode('a-old.example.com', { from: 'terminating', to: 'terminated' }, T0);
      expect(await store.findNodeByInstance(instanceId)).toMatchObject({ nodeId: 'a-old.example.com', state: 'terminated' });
      await store.createNode(newNode({ nodeId: 'z-new.example.com', instanceId }), T0);
      expect(await store.findNodeByInstance(instanceId)).toMatchObject({ nodeId: 'z-new.example.com', state: 'active' });
    });

    it('refuses an empty instance id, naming the field, and writes nothing', async () => {
      const created = await rejected(store.createNode(newNode({ nodeId: 'empty.example.com', instanceId: '' }), T0));
      expect(created).toBeInstanceOf(ValidationError);
      expect((created as ValidationError).field).toBe('instanceId');
      expect(await store.getNode('empty.example.com')).toBeUndefined();

      const node = await store.createNode(newNode({ nodeId: 'kept.example.com', instanceId: 'i-0ddd0000000000001' }), T0);
      expect(await rejected(store.updateNode(node.nodeId, node.version, { instanceId: '' }))).toBeInstanceOf(ValidationError);
      expect(await rejected(store.transitionNode(node.nodeId, { from: 'active', to: 'draining', patch: { instanceId: '' } }, T0))).toBeInstanceOf(ValidationError);
      expect(await store.findNodeByInstance('i-0ddd0000000000001')).toMatchObject({ nodeId: 'kept.example.com', state: 'active', version: 1 });
    });
  });
}

async function rejected(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail, it succeeded');
}
