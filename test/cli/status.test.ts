/** `nodescaler status` as it renders the state it reads (lib/cli/status.ts): zones and drifted nodes. */
import { describe, expect, it } from 'vitest';
import { Style } from '../../lib/cli/render.js';
import { renderStatus, statusView } from '../../lib/cli/status.js';
import { NO_CONTROLS } from '../../lib/domain/controls.js';
import { launchedFromTemplate, templateIdentity } from '../../lib/domain/drift.js';
import type { NodeRecord } from '../../lib/domain/model.js';
import { NOW, POOL, config, node, pool } from '../support/builders.js';

const cfg = config({}, { template: { imageId: 'ami-0bbbbbbbbbbbbbbbb' } } as never);
const current = launchedFromTemplate(cfg.pools[0]!.template);

function status(nodes: NodeRecord[]) {
  const view = statusView({ now: NOW, config: cfg, allNodes: nodes, controls: NO_CONTROLS, pools: [{ pool: POOL, config: cfg.pools[0]!, record: pool(), nodes, drains: [] }] }, 'local state');
  return { view, text: renderStatus(view, { style: new Style(false), width: 160 }).join('\n') };
}

describe('nodescaler status', () => {
  it('lists drifted nodes, flags each with why (--json), and says how they are renewed', () => {
    const { view, text } = status([
      node('a', { gears: 40, launchedFrom: current, zone: 'us-east-1a' }),
      node('b', { gears: 30, launchedFrom: { ...current, image: 'ami-0aaaaaaaaaaaaaaaa' }, zone: 'us-east-1b' }),
      node('c', { state: 'terminated', launchedFrom: { ...current, image: 'ami-0aaaaaaaaaaaaaaaa' } }),
      { ...node('d', { gears: 10 }), origin: 'adopted' },
    ]);
    const [poolView] = view.pools;
    expect(poolView!.driftedNodes).toEqual(['b']);
    expect(poolView!.nodeList.map((n) => [n.nodeId, n.zone, n.drift])).toEqual([
      ['a', 'us-east-1a', null],
      ['b', 'us-east-1b', 'drifted: image ami-0aaaaaaaaaaaaaaaa -> ami-0bbbbbbbbbbbbbbbb'],
      ['c', null, null],
      ['d', null, null],
    ]);
    expect(text).toContain("drifted from the pool's template: b (drained first among equal candidates; nodescaler drain NODE --replace renews one now)");
    expect(text).toMatch(/NODE\s+STATE\s+ZONE\s+GEARS/);
    expect(text).toMatch(/\n\s+b\s+active\s+us-east-1b\s+30\/100\s+0\.30\s+\S+\s+drifted\s/);
    expect(text).toMatch(/\n\s+d\s+active\s+-\s+10\/100\s+0\.10\s+\S+\s+adopted$/m);
  });

  it('says when the evaluator renews drifted nodes itself (scaleDown.renewDrifted)', () => {
    const renewing = config({ scaleDown: { renewDrifted: true } }, { template: { imageId: 'ami-0bbbbbbbbbbbbbbbb' } } as never);
    const nodes = [node('b', { gears: 30, launchedFrom: { ...current, image: 'ami-0aaaaaaaaaaaaaaaa' } })];
    const view = statusView({ now: NOW, config: renewing, allNodes: nodes, controls: NO_CONTROLS, pools: [{ pool: POOL, config: renewing.pools[0]!, record: pool(), nodes, drains: [] }] }, 'local state');
    expect(view.pools[0]!.renewsDrifted).toBe(true);
    expect(renderStatus(view, { style: new Style(false), width: 160 }).join('\n')).toContain("drifted from the pool's template: b (renewed a few at a time, replacements first (scaleDown.renewDrifted))");
  });

  it('lists the nodes launched longer ago than scaleDown.expireAfter, flags each with why, and never an adopted or terminated one', () => {
    const expiring = config({ scaleDown: { expireAfter: '30d' } });
    const launched = (id: string, days: number, extra: Partial<NodeRecord> = {}) => ({ ...node(id, { gears: 30 }), createdAt: new Date(NOW.getTime() - days * 86_400_000).toISOString(), ...extra });
    const nodes = [launched('a', 31), launched('b', 29), launched('c', 90, { origin: 'adopted' }), launched('d', 90, { state: 'terminated' })];
    const view = statusView({ now: NOW, config: expiring, allNodes: nodes, controls: NO_CONTROLS, pools: [{ pool: POOL, config: expiring.pools[0]!, record: pool(), nodes, drains: [] }] }, 'local state');
    expect(view.pools[0]!.expiredNodes).toEqual(['a']);
    expect(view.pools[0]!.nodeList.map((n) => n.expired)).toEqual(['expired: launched 31d ago (expireAfter 30d)', null, null, null]);
    const text = renderStatus(view, { style: new Style(false), width: 160 }).join('\n');
    expect(text).toContain('expired (expireAfter): a (renewed a few at a time, replacements first)');
    expect(text).toMatch(/\n\s+a\s+active\s+30\/100\s+0\.30\s+\S+\s+expired\s/);
    expect(status(nodes).view.pools[0]!.expiredNodes).toEqual([]);
  });

  it('says when the pool\'s template was first seen and when each due node\'s renewal stops honouring the gear cap (driftGrace, expireGrace)', () => {
    const HOUR = 3_600_000;
    const graced = config({ scaleDown: { renewDrifted: true, driftGrace: '12h', expireAfter: '30d', expireGrace: '2d' } }, { template: { imageId: 'ami-0bbbbbbbbbbbbbbbb' } } as never);
    const seenAt = new Date(NOW.getTime() - 3 * HOUR).toISOString();
    const record = pool({ templateSeen: { identity: templateIdentity(graced.pools[0]!.template), since: seenAt } });
    const aged = (id: string, days: number, image = current.image) => ({ ...node(id, { gears: 30, launchedFrom: { ...current, image } }), createdAt: new Date(NOW.getTime() - days * 86_400_000).toISOString() });
    const nodes = [aged('a', 10, 'ami-0aaaaaaaaaaaaaaaa'), aged('b', 31), aged('c', 5)];
    const view = statusView({ now: NOW, config: graced, allNodes: nodes, controls: NO_CONTROLS, pools: [{ pool: POOL, config: graced.pools[0]!, record, nodes, drains: [] }] }, 'local state');
    const [poolView] = view.pools;
    expect(poolView!.templateSeenSince).toBe(seenAt);
    // a: drifted 3 hours ago, a 12-hour grace; b: expired a day ago, a 2-day grace; c is not due.
    expect(poolView!.nodeList.map((n) => [n.nodeId, n.gearCapLiftsAt])).toEqual([
      ['a', new Date(NOW.getTime() + 9 * HOUR).toISOString()],
      ['b', new Date(NOW.getTime() + 24 * HOUR).toISOString()],
      ['c', null],
    ]);
    const text = renderStatus(view, { style: new Style(false), width: 200 }).join('\n');
    expect(text).toMatch(/drifted from the pool's template \(template first seen \S+ \(3h ago\)\): a /);
    expect(text).toMatch(/renewals move gears at their move limit \(expireGrace, driftGrace\) from: a 19:00:00Z \(in 9h\), b 2025-03-11 10:00:00Z \(in 1d\)$/m);
    // Seen as another template, or no grace: no drift clock.
    const other = statusView({ now: NOW, config: graced, allNodes: nodes, controls: NO_CONTROLS, pools: [{ pool: POOL, config: graced.pools[0]!, record: pool({ templateSeen: { identity: 'other', since: seenAt } }), nodes, drains: [] }] }, 'local state');
    expect(other.pools[0]!.templateSeenSince).toBeNull();
    // a's drift starts no clock; its expiry's grace still ends, 30d + 2d after its launch.
    expect(other.pools[0]!.nodeList[0]!.gearCapLiftsAt).toBe(new Date(NOW.getTime() + 22 * 24 * HOUR).toISOString());
    expect(status(nodes).view.pools[0]!.nodeList.every((n) => n.gearCapLiftsAt === null)).toBe(true);
  });

  it("shows a node's idle gears beside its active ones: they hold no slot, but a drain moves them and the node goes only without them", () => {
    const holding = node('a', { gears: 2 });
    holding.stats!.gears = [
      { uuid: 'g1', app: 'shop', size: 'small' },
      { uuid: 'g2', app: 'blog', size: 'small' },
      ...['i1', 'i2', 'i3'].map((uuid) => ({ uuid, app: 'wiki', size: 'small', idle: true })),
    ];
    const { view, text } = status([holding, node('b', { gears: 30 })]);
    expect(view.pools[0]!.nodeList.map((n) => [n.nodeId, n.activeGears, n.idleGears])).toEqual([
      ['a', 2, 3],
      ['b', 30, null],
    ]);
    expect(text).toMatch(/\n\s+a\s+active\s+2\/100 \+3 idle\s+0\.02\s/);
    expect(text).toMatch(/\n\s+b\s+active\s+30\/100\s+0\.30\s/);
  });

  it('shows no zone column where no host has a zone, and no drift line when every node runs the template', () => {
    const { text } = status([node('a', { gears: 40, launchedFrom: current }), node('b', { gears: 30 })]);
    expect(text).toMatch(/NODE\s+STATE\s+GEARS/);
    expect(text).not.toContain('ZONE');
    expect(text).not.toContain('drifted');
  });
});
