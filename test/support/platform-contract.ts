import { beforeEach, describe, expect, it } from 'vitest';
import type { GearInfo } from '../../lib/domain/model.js';
import { ConflictError, NotFoundError, isRetryable } from '../../lib/errors.js';
import type { MoveHandle, MoveStatus, Platform } from '../../lib/ports/platform.js';
import { NodeInOtherDistrictError, NodeNotInDistrictError } from '../../lib/ports/platform-errors.js';

/** One platform and the world behind it, set up as an operator would have it. */
export interface PlatformWorld {
  platform: Platform;
  /** A running node host of district/profile; `joined`: already added to its district (active). */
  node(district: string, profile: string, nodeId: string, maxGears: number, joined: boolean): void;
  gear(nodeId: string, gear: GearInfo): void;
  /** The next move of this gear fails (rsync error: the gear stays where it was). */
  failNextMove(uuid: string): void;
  /** Its tenant deletes the gear. */
  deleteGear(uuid: string): void;
  where(uuid: string): string | undefined;
  membership(nodeId: string): { district: string; active: boolean } | undefined;
  /** Lets (virtual) time pass. */
  advance(ms: number): void;
}

export interface PlatformHarness {
  create(): PlatformWorld;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail, it succeeded');
}

const gear = (uuid: string, app = 'shop-acme'): GearInfo => ({ uuid, app, size: 'small' });

/**
 * The one contract the simulated platform and the broker adapter (over the
 * broker emulator) must both pass, so the simulation cannot forgive what the
 * real broker refuses. Each platform's test file calls this with its harness.
 */
export function platformContract(name: string, harness: PlatformHarness): void {
  describe(`Platform contract: ${name}`, () => {
    let world: PlatformWorld;
    let platform: Platform;
    beforeEach(() => {
      world = harness.create();
      platform = world.platform;
      world.node('d1', 'small', 'n1.example.com', 10, true);
      world.node('d1', 'small', 'n2.example.com', 10, true);
      world.node('d1', 'small', 'new.example.com', 10, false);
      world.node('d2', 'small', 'other.example.com', 10, true);
    });

    async function settled(handle: MoveHandle): Promise<MoveStatus> {
      for (let i = 0; i < 100; i++) {
        const status = await platform.moveStatus(handle);
        if (status.state !== 'running') return status;
        world.advance(10_000);
      }
      throw new Error('move never ended');
    }

    it('add-node puts a new node in its district, active; a repeat is a no-op', async () => {
      expect(world.membership('new.example.com')).toBeUndefined();
      await platform.addNode('d1', 'new.example.com');
      expect(world.membership('new.example.com')).toEqual({ district: 'd1', active: true });
      await platform.addNode('d1', 'new.example.com');
      expect(world.membership('new.example.com')).toEqual({ district: 'd1', active: true });
    });

    it('add-node of a node another district holds is refused, never success, and not retryable', async () => {
      const error = await rejection(platform.addNode('d1', 'other.example.com'));
      expect(error).toBeInstanceOf(NodeInOtherDistrictError);
      expect(isRetryable(error)).toBe(false);
      expect(world.membership('other.example.com')).toEqual({ district: 'd2', active: true });
    });

    it('deactivate and activate; repeats are no-ops', async () => {
      await platform.deactivateNode('d1', 'n1.example.com');
      await platform.deactivateNode('d1', 'n1.example.com');
      expect(world.membership('n1.example.com')).toEqual({ district: 'd1', active: false });
      await platform.activateNode('d1', 'n1.example.com');
      await platform.activateNode('d1', 'n1.example.com');
      expect(world.membership('n1.example.com')).toEqual({ district: 'd1', active: true });
    });

    it.each(['deactivateNode', 'activateNode', 'removeNode'] as const)('%s of a node not in the district is NodeNotInDistrictError (a NotFoundError, not retryable)', async (call) => {
      for (const node of ['new.example.com', 'other.example.com']) {
        const error = await rejection(platform[call]('d1', node));
        expect(error).toBeInstanceOf(NodeNotInDistrictError);
        expect(error).toBeInstanceOf(NotFoundError);
        expect(isRetryable(error)).toBe(false);
      }
      expect(world.membership('other.example.com')).toEqual({ district: 'd2', active: true });
    });

    it('remove-node of an empty node removes it, deactivating it first; a second remove is NodeNotInDistrictError', async () => {
      await platform.removeNode('d1', 'n2.example.com');
      expect(world.membership('n2.example.com')).toBeUndefined();
      expect(await rejection(platform.removeNode('d1', 'n2.example.com'))).toBeInstanceOf(NodeNotInDistrictError);
    });

    it('remove-node of a node holding gears is a ConflictError and leaves the node in its district', async () => {
      world.gear('n1.example.com', gear('g1'));
      await platform.deactivateNode('d1', 'n1.example.com');
      const error = await rejection(platform.removeNode('d1', 'n1.example.com'));
      expect(error).toBeInstanceOf(ConflictError);
      expect(world.membership('n1.example.com')).toEqual({ district: 'd1', active: false });
      expect(world.where('g1')).toBe('n1.example.com');
    });

    it('lists every gear of a node, across pages', async () => {
      const many = Array.from({ length: 320 }, (_, i) => gear(`g${String(i).padStart(4, '0')}`));
      world.node('d1', 'small', 'big.example.com', 400, true);
      for (const g of many) world.gear('big.example.com', g);
      const listed = await platform.listGears('big.example.com');
      expect(listed.map((g) => g.uuid).sort()).toEqual(many.map((g) => g.uuid));
      expect(await platform.listGears('n2.example.com')).toEqual([]);
    });

    it('a move runs for a while, then the gear is on its target and nowhere else', async () => {
      world.gear('n1.example.com', gear('g1'));
      const handle = await platform.startMove(gear('g1'), 'n1.example.com', 'n2.example.com', { idempotencyKey: 'k1' });
      expect(await platform.moveStatus(handle)).toEqual({ state: 'running' });
      expect(world.where('g1')).toBe('n1.example.com');
      expect(await settled(handle)).toEqual({ state: 'succeeded' });
      expect(world.where('g1')).toBe('n2.example.com');
      expect((await platform.listGears('n2.example.com')).map((g) => g.uuid)).toEqual(['g1']);
      expect(await platform.listGears('n1.example.com')).toEqual([]);
    });

    it('a start repeated with the same key after a crash (mayExist) returns the first move, not a second', async () => {
      world.gear('n1.example.com', gear('g1'));
      const first = await platform.startMove(gear('g1'), 'n1.example.com', 'n2.example.com', { idempotencyKey: 'k1' });
      const again = await platform.startMove(gear('g1'), 'n1.example.com', 'n2.example.com', { idempotencyKey: 'k1', mayExist: true });
      expect(again).toEqual(first);
    });

    it('findMove finds the move started with a key and never starts one: an unknown key finds nothing and the gear stays', async () => {
      world.gear('n1.example.com', gear('g1'));
      world.gear('n1.example.com', gear('g2'));
      const started = await platform.startMove(gear('g1'), 'n1.example.com', 'n2.example.com', { idempotencyKey: 'k1' });
      expect(await platform.findMove(gear('g1'), 'n1.example.com', 'n2.example.com', 'k1')).toEqual(started);
      expect(await platform.findMove(gear('g2'), 'n1.example.com', 'n2.example.com', 'k2')).toBeUndefined();
      expect(await settled(started)).toEqual({ state: 'succeeded' });
      expect(world.where('g2')).toBe('n1.example.com');
      expect(await platform.findMove(gear('g2'), 'n1.example.com', 'n2.example.com', 'k2')).toBeUndefined();
    });

    it('a failed move leaves the gear on its source', async () => {
      world.gear('n1.example.com', gear('g1'));
      world.failNextMove('g1');
      const handle = await platform.startMove(gear('g1'), 'n1.example.com', 'n2.example.com');
      const status = await settled(handle);
      expect(status.state).toBe('failed');
      expect(status).not.toHaveProperty('gone');
      expect(world.where('g1')).toBe('n1.example.com');
    });

    it('a move of a gear its tenant deletes while the move runs fails as gone: nothing is left to move', async () => {
      world.gear('n1.example.com', gear('g1'));
      const handle = await platform.startMove(gear('g1'), 'n1.example.com', 'n2.example.com');
      world.deleteGear('g1');
      expect(await settled(handle)).toMatchObject({ state: 'failed', gone: true });
      expect(world.where('g1')).toBeUndefined();
    });

    it('a move to a full target is refused at its start or fails as targetFull; the gear stays on its source', async () => {
      world.node('d1', 'small', 'tiny.example.com', 1, true);
      world.gear('tiny.example.com', gear('t1'));
      world.gear('n1.example.com', gear('g1'));
      let outcome: unknown;
      try {
        outcome = await settled(await platform.startMove(gear('g1'), 'n1.example.com', 'tiny.example.com'));
      } catch (error) {
        outcome = error;
      }
      if (outcome instanceof Error) expect(outcome).toBeInstanceOf(ConflictError);
      else expect(outcome).toMatchObject({ state: 'failed', targetFull: true });
      expect(world.where('g1')).toBe('n1.example.com');
    });

    it('node facts: gear count and capacity of a node in a district; undefined for one in none', async () => {
      world.gear('n1.example.com', gear('g1'));
      expect(await platform.readNodeFacts!('n1.example.com')).toEqual({ activeGears: 1, maxActiveGears: 10 });
      expect(await platform.readNodeFacts!('new.example.com')).toBeUndefined();
    });
  });
}
