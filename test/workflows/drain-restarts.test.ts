/**
 * A gear move is a tenant's restart when the gear is active and its
 * application's only or head gear: the node's agent marks such gears in its
 * stats (the broker does not know), and the gear mover counts their moves as
 * TenantRestarts beside GearMoves, so an operator sees the disruption next to
 * the node-hours in CloudWatch.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { Style } from '../../lib/cli/render.js';
import { renderStatus, statusView } from '../../lib/cli/status.js';
import { NO_CONTROLS } from '../../lib/domain/controls.js';
import { NOW, config, drain, move, pool } from '../support/builders.js';
import { World, apps } from '../support/gear-mover-world.js';

describe('gear mover: tenant restarts', () => {
  it("counts the moves of the gears the node's agent marked disruptive as TenantRestarts, every move as GearMoves", async () => {
    // Three applications of two gears each: the agent marks each one's first gear (its head) disruptive.
    const w = new World(new InMemoryStateStore(), { agentFlags: (gear) => (gear.uuid.endsWith('x0') ? { disruptive: true } : {}) });
    await w.node('src.example.com', { gears: apps(3, 2) });
    await w.node('t1.example.com');
    await w.node('t2.example.com');
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
    await w.tickUntilIdle(() => mover);

    expect(w.sim.nodeFacts('src.example.com').activeGears).toBe(0);
    expect(w.metrics.sum('GearMoves')).toBe(6);
    expect(w.metrics.sum('TenantRestarts')).toBe(3);
    // The platform lists no such flag: the moves carry the agent's.
    expect((await w.sim.listGears('t1.example.com')).some((gear) => gear.disruptive)).toBe(false);
  });

  it('counts no restart where the agent marks none (an older agent, or only siblings and idle gears)', async () => {
    const w = new World(new InMemoryStateStore());
    await w.node('src.example.com', { gears: apps(2, 2) });
    await w.node('t1.example.com');
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
    await w.tickUntilIdle(() => mover);
    expect(w.metrics.sum('GearMoves')).toBe(4);
    expect(w.metrics.sum('TenantRestarts')).toBe(0);
  });
});

describe('status: the tenant restarts of a drain', () => {
  it('counts the moved gears the agent marked disruptive, and says so beside the moves', () => {
    const moves = [move('t1', 'moved', 'g-a'), move('t1', 'moved', 'g-b'), move('t2', 'moved', 'g-c'), move('t2', 'moving', 'g-d')].map((m, i) =>
      i === 0 || i === 3 ? { ...m, gear: { ...m.gear, disruptive: true } } : m,
    );
    const cfg = config();
    const view = statusView(
      { now: NOW, config: cfg, allNodes: [], controls: NO_CONTROLS, pools: [{ pool: 'd1/small', config: cfg.pools[0]!, record: pool(), nodes: [], drains: [drain('node-1', moves)] }] },
      'local state',
    );
    // The moving one has restarted no one yet.
    expect(view.pools[0]!.drains[0]!.tenantRestarts).toBe(1);
    expect(renderStatus(view, { style: new Style(false), width: 160 }).join('\n')).toContain('3 of 4 gears moved (1 restarted a tenant), 1 moving');
  });
});
