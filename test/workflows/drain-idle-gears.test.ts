/**
 * origin-server counts only active gears against `max_active_gears`
 * ("Stopped and idled gears are not limited", resource_limits.conf), and the
 * shipped agent reports `activeGears` that way. A drain still moves a node's
 * idle gears; their moves must take no slot on the targets, or the plan needs
 * room the evaluator never counted and the drain stops before its first move.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import type { GearInfo } from '../../lib/domain/model.js';
import { World } from '../support/gear-mover-world.js';

const active = (n: number, prefix: string): GearInfo[] => Array.from({ length: n }, (_, i) => ({ uuid: `${prefix}${i}`, app: `${prefix}-app-${i}`, size: 'small' }));
const idle = (n: number): GearInfo[] => active(n, 'idle').map((gear) => ({ ...gear, idle: true }));

/** Targets with 1 and 2 slots below the world's 80 % threshold (8 of 10), and a source of 3 active and 6 idle gears. */
async function world(agentMarksIdle: boolean): Promise<World> {
  const w = new World(new InMemoryStateStore(), {
    idleTakesNoSlot: true,
    ...(agentMarksIdle ? { agentFlags: (gear: GearInfo) => (gear.uuid.startsWith('idle') ? { idle: true } : {}) } : {}),
  });
  await w.node('src.example.com', { max: 10, gears: [...active(3, 'src'), ...idle(6)] });
  await w.node('t1.example.com', { max: 10, gears: active(7, 't1') });
  await w.node('t2.example.com', { max: 10, gears: active(6, 't2') });
  return w;
}

describe('gear mover: idle gears take no slot', () => {
  it('reports the active gears only, as the shipped agent does', async () => {
    const w = await world(true);
    expect(w.statsOf('src.example.com')).toMatchObject({ activeGears: 3, maxActiveGears: 10 });
    expect(w.statsOf('src.example.com').gears.filter((gear) => gear.idle)).toHaveLength(6);
  });

  it('empties a node whose idle gears outnumber the room left, never past the threshold in active gears', async () => {
    const w = await world(true);
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
    await w.tickUntilIdle(() => mover);

    expect(w.sim.nodeFacts('src.example.com').gears).toEqual([]);
    expect(w.metrics.sum('GearMoves')).toBe(9);
    const t1 = w.sim.nodeFacts('t1.example.com');
    const t2 = w.sim.nodeFacts('t2.example.com');
    expect(t1.activeGears + t2.activeGears).toBe(7 + 6 + 3);
    expect([t1.activeGears, t2.activeGears]).toEqual([8, 8]);
    // The idle gears stayed idle, spread where room was left.
    expect([...t1.gears, ...t2.gears].filter((gear) => gear.idle)).toHaveLength(6);
    expect(t1.gears.length - t1.activeGears).toBeGreaterThan(0);
    expect(t2.gears.length - t2.activeGears).toBeGreaterThan(0);
    expect((await w.store.getNode('src.example.com'))?.state).toBe('drained');
  });

  it("holds its price against the active gears only: idle gears the evaluator never priced do not call the drain off", async () => {
    const w = await world(true);
    const mover = w.mover();
    // Priced as the evaluator prices it: on the agent's 3 active gears, ahead of t2 up to 3.
    const message = { ...(await w.decideScaleDown('src.example.com')), prices: [{ nodeId: 'src.example.com', gears: 3, limit: 3, next: 't2.example.com', nextGears: 6 }] };
    await mover.handleScaleDown(message);
    await w.tickUntilIdle(() => mover);
    expect(w.metrics.sum('GearMoves')).toBe(9);
    expect((await w.store.getNode('src.example.com'))?.state).toBe('drained');
    expect(await w.store.listDrains('d1/small', 'aborted')).toEqual([]);
  });

  it('is called off when active gears beyond the price reached the node, idle ones not counted', async () => {
    const w = await world(true);
    const mover = w.mover();
    const message = { ...(await w.decideScaleDown('src.example.com')), prices: [{ nodeId: 'src.example.com', gears: 3, limit: 3, next: 't2.example.com', nextGears: 6 }] };
    w.sim.putGear('src.example.com', { uuid: 'late0', app: 'late-app', size: 'small' });
    w.gears++;
    await mover.handleScaleDown(message);
    await w.tickUntilIdle(() => mover);
    const [aborted] = await w.store.listDrains('d1/small', 'aborted');
    expect(aborted?.abortReason).toMatch(/^repriced: src\.example\.com holds 4 gears, the decision priced 3 and t2\.example\.com holds 6; past 3/);
    expect(w.metrics.sum('GearMoves')).toBe(0);
  });

  it('stops before its first move when the list does not say which gears are idle (an older agent): every gear then needs a slot', async () => {
    const w = await world(false);
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
    await w.tickUntilIdle(() => mover);

    expect(w.metrics.sum('GearMoves')).toBe(0);
    expect(w.sim.nodeFacts('src.example.com').gears).toHaveLength(9);
    expect((await w.store.getNode('src.example.com'))?.state).toBe('active');
    const stopped = w.log.lines.find((line) => line.message.startsWith('drain outgrown'));
    expect(stopped?.attributes.reason).toMatch(/^cannot place 6 of 9 gear\(s\) of src\.example\.com: no room left below 80%/);
  });
});
