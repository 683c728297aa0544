/**
 * The drain's item layout on dynalite (issue 18, item 2g): a drain keeps each
 * gear move in its own item, so a node of any size is planned and drained
 * without an item near DynamoDB's 400 KB limit, and drains written in the old
 * layout (moves inside the drain item) are read and resumed after an upgrade.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDbStateStore } from '../../lib/adapters/dynamodb/state-store.js';
import { drainIdFor } from '../../lib/domain/drain.js';
import type { DrainRecord, GearMove } from '../../lib/domain/model.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { POOL, World, apps } from '../support/gear-mover-world.js';

const harness = dynaliteHarness();
afterAll(() => harness.close());

const ITEM_LIMIT = 400 * 1024;

async function tableOf(store: DynamoDbStateStore) {
  const tableName = (store as unknown as { tableName: string }).tableName;
  const client = DynamoDbStateStore.documentClient(harness.local!.client);
  return {
    tableName,
    client,
    /** Every item's size as DynamoDB counts it, near enough (names and values as JSON). */
    async itemSizes(): Promise<Array<{ key: string; bytes: number }>> {
      const sizes: Array<{ key: string; bytes: number }> = [];
      let start: Record<string, unknown> | undefined;
      do {
        const page = await client.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: start }));
        for (const item of page.Items ?? []) sizes.push({ key: `${item.pk} / ${item.sk}`, bytes: Buffer.byteLength(JSON.stringify(item)) });
        start = page.LastEvaluatedKey;
      } while (start);
      return sizes;
    },
  };
}

describe('drain item layout on dynalite', () => {
  it(
    'plans and drains a 6,000-gear node end to end: every gear moved once, no item near 400 KB, a move transition writes one small item',
    async () => {
      const store = await harness.create();
      const w = new World(store, {
        moveDurationMs: 1_000,
        config: { scaleDown: { maxConcurrentMoves: 1_000, drainTimeout: '24h', antiAffinity: 'preferred' } },
      });
      // Short uuids keep the source's own stats item (it lists its gears) small; the drain is what is measured.
      const gears = apps(Number(process.env.BIGN ?? 600), 10);
      await w.node('src.example.com', { gears, max: 6_000 });
      for (let i = 1; i <= 40; i++) await w.node(`t${i}.example.com`, { max: 200, gears: [] });
      const mover = w.mover(w.sim);
      const message = await w.decideScaleDown('src.example.com');
      await mover.handleScaleDown(message);

      // Planned: the old layout could not hold this plan in one item (about 250 bytes a move).
      let drain: DrainRecord | undefined;
      for (let round = 0; round < 10 && !(drain?.plannedAt && drain.moves.length === gears.length); round++) {
        await mover.run(w.budget(50_000));
        drain = await store.getDrain(drainIdFor(message.decisionId));
      }
      expect(drain?.moves).toHaveLength(gears.length);
      expect(new Set(drain!.moves.map((m) => m.gear.uuid))).toEqual(new Set(gears.map((g) => g.uuid)));
      const table = await tableOf(store);
      const planned = await table.itemSizes();
      const header = planned.find((i) => i.key === `DRAIN#${drain!.drainId} / DRAIN`)!;
      expect(header.bytes).toBeLessThan(2_048);
      const moveItems = planned.filter((i) => i.key.startsWith(`DRAIN#${drain!.drainId} / MOVE#`));
      expect(moveItems).toHaveLength(gears.length);
      expect(Math.max(...moveItems.map((i) => i.bytes))).toBeLessThan(1_024);

      await w.tickUntilIdle(() => mover, 200);
      const done = (await store.listDrains(POOL, 'completed'))[0]!;
      expect(done.moves).toHaveLength(gears.length);
      expect(done.moves.every((m) => m.state === 'moved' && m.attempts === 1)).toBe(true);
      expect(await store.getNode('src.example.com')).toMatchObject({ state: 'drained' });
      expect(await w.sim.listGears('src.example.com')).toEqual([]);
      w.checkGears();
      const history = w.sim.moveHistory();
      expect(history).toHaveLength(gears.length);
      expect(new Set(history.map((m) => m.uuid)).size).toBe(gears.length);
      expect(w.queue.sent('decommission')).toHaveLength(1);
      const sizes = await table.itemSizes();
      const largest = sizes.reduce((max, item) => (item.bytes > max.bytes ? item : max));
      expect(largest.bytes).toBeLessThan(ITEM_LIMIT);
      expect(sizes.find((i) => i.key === `DRAIN#${done.drainId} / DRAIN`)!.bytes).toBeLessThan(2_048);
    },
    30 * 60_000,
  );

  it('reads and resumes a drain written in the old layout (moves inside the drain item) after an upgrade', async () => {
    const store = await harness.create();
    const w = new World(store);
    const gears = apps(4, 5);
    await w.node('src.example.com', { gears });
    for (let i = 1; i <= 3; i++) await w.node(`t${i}.example.com`, { gears: [] });
    const message = await w.decideScaleDown('src.example.com');
    await store.transitionNode('src.example.com', { from: 'active', to: 'draining', patch: { drainId: 'drain:old' } }, w.clock.now());
    await w.sim.deactivateNode('d1', 'src.example.com');

    // What the previous release wrote mid-drain: closed, planned, five gears moved, one in flight; moves inline.
    const moves: GearMove[] = gears.map((gear, i) => ({ gear, target: `t${(i % 3) + 1}.example.com`, state: 'planned', attempts: 0 }));
    for (const move of moves.slice(0, 5)) {
      const handle = await w.sim.startMove(move.gear, 'src.example.com', move.target, { idempotencyKey: `old-${move.gear.uuid}`, mayExist: false });
      void handle;
    }
    w.clock.advance(31_000);
    for (const move of moves.slice(0, 5)) Object.assign(move, { state: 'moved', attempts: 1, finishedAt: w.clock.now().toISOString() });
    const inFlight = await w.sim.startMove(moves[5]!.gear, 'src.example.com', moves[5]!.target, { idempotencyKey: 'old-in-flight', mayExist: false });
    Object.assign(moves[5]!, { state: 'moving', attempts: 1, commandId: inFlight.commandId, startedAt: w.clock.now().toISOString() });
    const table = await tableOf(store);
    const startedAt = w.clock.now().toISOString();
    await table.client.send(
      new PutCommand({
        TableName: table.tableName,
        Item: {
          pk: 'DRAIN#drain:old',
          sk: 'DRAIN',
          gsi1pk: `POOL#${POOL}`,
          gsi1sk: 'DRAIN#active#drain:old',
          drainId: 'drain:old',
          decisionId: message.decisionId,
          nodeId: 'src.example.com',
          pool: POOL,
          state: 'active',
          version: 7,
          startedAt,
          updatedAt: startedAt,
          reason: 'pool under-used',
          moves,
          closedAt: startedAt,
          plannedAt: startedAt,
          phase: 'moving',
        },
      }),
    );

    const read = (await store.getDrain('drain:old'))!;
    expect(read.movesInline).toBe(true);
    expect(read.moves).toHaveLength(20);
    expect((await store.listDrains(POOL))[0]).toMatchObject({ drainId: 'drain:old', movesInline: true });

    await w.tickUntilIdle(() => w.mover(), 60);
    const done = (await store.getDrain('drain:old'))!;
    expect(done).toMatchObject({ state: 'completed' });
    expect(done.movesInline).toBeUndefined();
    expect(done.moves.every((m) => m.state === 'moved')).toBe(true);
    // Each gear moved once: the five moved before the upgrade were not moved again, the one in flight was polled, not restarted.
    const history = w.sim.moveHistory();
    expect(history).toHaveLength(20);
    expect(new Set(history.map((m) => m.uuid)).size).toBe(20);
    w.checkGears();
    const sizes = await table.itemSizes();
    expect(sizes.filter((i) => i.key.startsWith('DRAIN#drain:old / MOVE#'))).toHaveLength(20);
    expect(sizes.find((i) => i.key === 'DRAIN#drain:old / DRAIN')!.bytes).toBeLessThan(2_048);
  });
});
