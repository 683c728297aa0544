import { describe, expect, it } from 'vitest';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { GearLists } from '../../lib/app/gear-lists.js';
import { decideWithMoveHistory } from '../../lib/app/move-history.js';
import type { GearInfo, NodeRecord } from '../../lib/domain/model.js';
import { statsToStore } from '../../lib/domain/node-stats.js';
import { TransientError } from '../../lib/errors.js';
import { NOW, config as ruleConfig, evaluation, minutesAgo, node, pool } from '../support/builders.js';

const POOL = 'd1/small';
const gearsOf = (k: number, count = 4): GearInfo[] => Array.from({ length: count }, (_, j) => ({ uuid: `g-${k}-${j}`, app: `app-${k}-${j}`, size: 'small' }));

/** A store holding `count` nodes n-1.. that reported four listed gears each; each batched read's nodes recorded. */
async function pooled(count: number, list: (k: number) => GearInfo[] = (k) => gearsOf(k)) {
  const store = new InMemoryStateStore();
  for (let k = 1; k <= count; k++) {
    const { version: _version, stateChangedAt: _changed, ...fresh } = node(`n-${k}`, { gears: null, pool: POOL });
    await store.createNode(fresh, NOW);
    await store.putNodeStats(`n-${k}`, statsToStore({ activeGears: 4, maxActiveGears: 100, gears: list(k), reportedAt: minutesAgo(1) }));
  }
  const reads: string[][] = [];
  const counting = {
    getGearLists: (nodeIds: readonly string[]) => (reads.push([...nodeIds]), store.getGearLists(nodeIds)),
    getGearMoves: store.getGearMoves.bind(store),
  };
  return { store, reads, counting };
}

describe('GearLists: the agents\' lists a pool listing only counts', () => {
  it('reads each list once, and again only when its digest changed', async () => {
    const { store, reads, counting } = await pooled(3);
    const lists = new GearLists();
    const listed = await store.listNodes(POOL);
    expect(listed.every((node) => node.stats?.gears === undefined && node.stats?.listed?.gears === 4)).toBe(true);

    const attached = await lists.attach(listed, counting);
    expect(attached.map((node) => node.stats?.gears)).toEqual([gearsOf(1), gearsOf(2), gearsOf(3)]);
    expect(reads).toEqual([['n-1', 'n-2', 'n-3']]);

    await lists.attach(await store.listNodes(POOL), counting);
    expect(reads).toHaveLength(1);

    await store.putNodeStats('n-2', statsToStore({ activeGears: 3, maxActiveGears: 100, gears: gearsOf(2, 3), reportedAt: NOW.toISOString() }));
    const again = await lists.attach(await store.listNodes(POOL), counting);
    expect(reads.slice(1)).toEqual([['n-2']]);
    expect(again.find((node) => node.nodeId === 'n-2')?.stats?.gears).toEqual(gearsOf(2, 3));
  });

  it('leaves a node without a list as it was, and keeps no more lists than its bound', async () => {
    const { store, reads, counting } = await pooled(3);
    await store.putNodeStats('n-3', { activeGears: 4, maxActiveGears: 100, reportedAt: NOW.toISOString() });
    const lists = new GearLists(1);
    const attached = await lists.attach(await store.listNodes(POOL), counting);
    expect(attached.find((node) => node.nodeId === 'n-3')?.stats?.gears).toBeUndefined();
    expect(reads).toEqual([['n-1', 'n-2']]);
    // Only n-2's list is kept: n-1's is read again.
    await lists.attach(await store.listNodes(POOL), counting);
    expect(reads.slice(1)).toEqual([['n-1']]);
  });
});

describe('decideWithMoveHistory reads the lists only once a drain is on the table', () => {
  const config = () => ruleConfig({ scaleDown: { payoff: { enabled: false } } }, { max: 500 });

  it('no list read for a decision that drains nothing', async () => {
    const { store, reads, counting } = await pooled(3);
    const lists = new GearLists();
    const busy = evaluation({ config: config(), nodes: await store.listNodes(POOL), pool: pool({}) });
    const result = await decideWithMoveHistory({ store: counting, gearLists: (nodes: readonly NodeRecord[]) => lists.attach(nodes, counting) }, busy);
    expect(result.decision.kind).not.toBe('scale-down');
    expect(reads).toEqual([]);
  });

  it("refuses a candidate for a do-not-move gear its stored list carries, as when the listing carried it", async () => {
    const { store, counting } = await pooled(3, (k) => (k === 1 ? gearsOf(1).map((gear, j) => (j === 0 ? { ...gear, doNotMove: true } : gear)) : gearsOf(k)));
    const lists = new GearLists();
    const low = evaluation({ config: config(), nodes: await store.listNodes(POOL), pool: pool({ lowSince: minutesAgo(30) }) });
    const result = await decideWithMoveHistory({ store: counting, gearLists: (nodes: readonly NodeRecord[]) => lists.attach(nodes, counting) }, low);
    expect(result.decision).toMatchObject({ kind: 'scale-down', nodeId: 'n-2' });
    expect(result.decision.kind === 'scale-down' && result.decision.rejected?.find((r) => r.nodeId === 'n-1')?.reason).toMatch(/do-not-move/);
  });
});

describe('decideWithMoveHistory when the lists cannot be read', () => {
  const config = () => ruleConfig({ scaleDown: { payoff: { enabled: false } } }, { max: 500 });

  it('drains nothing this time on a retryable error, and throws any other', async () => {
    const { store, counting } = await pooled(3);
    const low = evaluation({ config: config(), nodes: await store.listNodes(POOL), pool: pool({ lowSince: minutesAgo(30) }) });
    const busy = async () => {
      throw new TransientError('throttled');
    };
    const result = await decideWithMoveHistory({ store: counting, gearLists: busy }, low);
    expect(result.decision.kind).toBe('no-action');
    expect(result.decision.reason).toMatch(/not listed in this evaluation/);
    const broken = async () => {
      throw new Error('bug');
    };
    await expect(decideWithMoveHistory({ store: counting, gearLists: broken }, low)).rejects.toThrow('bug');
  });
});
