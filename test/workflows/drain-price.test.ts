/**
 * A scale-down drain is priced on its node's last report (lib/domain/drain-price.ts):
 * when the platform lists more gears on the node than the price allows, before
 * the close or before the first plan, the drain is called off with nothing
 * moved, the node re-opened, and the pool neither backed off nor paged. Within
 * its price, the drain goes on. An operator's drain carries no price.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { MANUAL_DECISION_PREFIX } from '../../lib/app/drain.js';
import type { Platform } from '../../lib/ports/platform.js';
import type { ScaleDownMessage } from '../../lib/messages/index.js';
import { POOL, World, apps } from '../support/gear-mover-world.js';

const SOURCE = 'src.example.com';

async function world(): Promise<World> {
  const w = new World(new InMemoryStateStore());
  await w.node(SOURCE);
  await w.node('t1.example.com');
  return w;
}

/** The evaluator's decision for an empty SOURCE that stays ahead of t1 up to `limit` gears. */
async function pricedDecision(w: World, limit: number): Promise<ScaleDownMessage> {
  const message = await w.decideScaleDown(SOURCE);
  return { ...message, prices: [{ nodeId: SOURCE, gears: 0, limit, next: 't1.example.com', nextGears: 0 }] };
}

/** Gears the broker places on `nodeId` (SOURCE unless named) after its report, as on the least-loaded nodes. */
function newGears(w: World, count: number, nodeId = SOURCE): void {
  for (const gear of apps(count, 1, `new-${nodeId.split('.')[0]}-`)) {
    w.sim.putGear(nodeId, gear);
    w.gears++;
  }
}

describe('gear mover: a drain priced on its node\u2019s last report', () => {
  it('is called off before the close when the node holds more gears than its price allows; nothing closed or moved, no back-off', async () => {
    const w = await world();
    const message = await pricedDecision(w, 2);
    newGears(w, 5);
    const mover = w.mover();
    await mover.handleScaleDown(message);
    await w.tickUntilIdle(() => mover);

    const [aborted] = await w.store.listDrains(POOL, 'aborted');
    expect(aborted?.price).toEqual({ gears: 0, limit: 2, next: 't1.example.com', nextGears: 0 });
    expect(aborted?.abortReason).toBe(`repriced: ${SOURCE} holds 5 gears, the decision priced 0 and t1.example.com holds 0; past 2 it no longer comes before t1.example.com: the evaluator decides again`);
    expect(aborted?.moves).toEqual([]);
    expect(aborted?.closedAt).toBeUndefined();
    expect(w.sim.nodeFacts(SOURCE)).toMatchObject({ active: true, activeGears: 5 });
    expect(await w.store.getNode(SOURCE)).toMatchObject({ state: 'active' });
    const pool = await w.store.getPool(POOL);
    expect(pool?.lease).toBeUndefined();
    expect(pool?.lastDrainFailureAt).toBeUndefined();
    expect(w.metrics.sum('DrainsAborted')).toBe(0);
  });

  it('goes on when the node holds no more than its limit', async () => {
    const w = await world();
    const message = await pricedDecision(w, 2);
    newGears(w, 2);
    const mover = w.mover();
    await mover.handleScaleDown(message);
    await w.tickUntilIdle(() => mover);

    expect((await w.store.listDrains(POOL, 'completed')).map((d) => d.nodeId)).toEqual([SOURCE]);
    expect(w.sim.nodeFacts('t1.example.com').activeGears).toBe(2);
  });

  it('goes on when the next node gained as many: the broker filled both, and the node still comes first', async () => {
    const w = await world();
    const message = await pricedDecision(w, 2);
    newGears(w, 5);
    newGears(w, 4, 't1.example.com');
    const mover = w.mover();
    await mover.handleScaleDown(message);
    await w.tickUntilIdle(() => mover);

    expect((await w.store.listDrains(POOL, 'completed')).map((d) => d.nodeId)).toEqual([SOURCE]);
    expect(w.sim.nodeFacts('t1.example.com').activeGears).toBe(9);
  });

  it('is called off at its first plan when gears reached the node while it was being closed; the node re-opens, nothing moved', async () => {
    const w = await world();
    const message = await pricedDecision(w, 2);
    // The broker places 4 more gears while the close is on its way (between the start and deactivate-node).
    const closing: Platform = Object.assign(Object.create(Object.getPrototypeOf(w.sim)) as Platform, w.sim, {
      deactivateNode: async (district: string, nodeId: string) => {
        if (nodeId === SOURCE) newGears(w, 4);
        return w.sim.deactivateNode(district, nodeId);
      },
    });
    const mover = w.mover(w.checkedPlatform(closing));
    await mover.handleScaleDown(message);
    await w.tickUntilIdle(() => mover);

    const [aborted] = await w.store.listDrains(POOL, 'aborted');
    expect(aborted?.closedAt).toBeDefined();
    expect(aborted?.repricedAt).toBeDefined();
    expect(aborted?.abortReason).toMatch(/^repriced: src\.example\.com holds 4 gears, the decision priced 0 and t1\.example\.com holds 0; past 2 /);
    expect(aborted?.moves).toEqual([]);
    expect(w.sim.nodeFacts(SOURCE)).toMatchObject({ active: true, activeGears: 4 });
    expect(await w.store.getNode(SOURCE)).toMatchObject({ state: 'active' });
    expect((await w.store.getPool(POOL))?.lastDrainFailureAt).toBeUndefined();
    expect(w.metrics.sum('DrainsAborted')).toBe(0);
  });

  it('an operator\u2019s drain is not priced: it moves what the node holds', async () => {
    const w = await world();
    newGears(w, 3);
    const mover = w.mover();
    await mover.handleScaleDown({ ...w.scaleDown(SOURCE), decisionId: `${MANUAL_DECISION_PREFIX}op-1`, prices: [{ nodeId: SOURCE, gears: 0, limit: 0, next: 't1.example.com', nextGears: 0 }] });
    await w.tickUntilIdle(() => mover);

    const [completed] = await w.store.listDrains(POOL, 'completed');
    expect(completed?.price).toBeUndefined();
    expect(w.sim.nodeFacts('t1.example.com').activeGears).toBe(3);
  });
});
