/**
 * Which gears an operator's drain is judged on (lib/domain/manual-drain.ts): the agent lists every gear, idle and
 * stopped ones too, while activeGears counts the active ones alone (origin-server's count), so a node with idle gears
 * reports a list longer than its count; that list is still the node's, with its real applications.
 */
import { describe, expect, it } from 'vitest';
import { gearsOf, manualDrainFit } from '../../lib/domain/manual-drain.js';
import type { GearInfo, NodeRecord } from '../../lib/domain/model.js';
import { config, node, NOW } from '../support/builders.js';

/** A node reporting `active` active gears and the list `gears` (idle ones included). */
function reporting(nodeId: string, active: number, gears?: GearInfo[]): NodeRecord {
  const record = node(nodeId, { gears: active });
  if (gears) record.stats!.gears = gears;
  return record;
}

const shop = (n: number): GearInfo => ({ uuid: `shop-${n}`, app: 'shop', size: 'small' });

describe('gearsOf', () => {
  it('takes the reported list when it is longer than activeGears: idle and stopped gears are listed, not counted', () => {
    const gears = [shop(1), shop(2), { uuid: 'blog-1', app: 'blog', size: 'medium' }];
    expect(gearsOf(reporting('n-1', 2, gears))).toEqual(gears);
  });

  it('takes the list as it is when it holds exactly the active gears', () => {
    expect(gearsOf(reporting('n-1', 2, [shop(1), shop(2)]))).toEqual([shop(1), shop(2)]);
  });

  it('counts active gears no list names as small gears of distinct applications, next to the listed ones', () => {
    expect(gearsOf(reporting('n-1', 2))).toEqual([
      { uuid: 'n-1#0', app: 'n-1#0', size: 'small' },
      { uuid: 'n-1#1', app: 'n-1#1', size: 'small' },
    ]);
    expect(gearsOf(reporting('n-1', 3, [shop(1)]))).toEqual([shop(1), { uuid: 'n-1#0', app: 'n-1#0', size: 'small' }, { uuid: 'n-1#1', app: 'n-1#1', size: 'small' }]);
    expect(gearsOf({ nodeId: 'n-1' })).toEqual([]);
  });
});

describe('manualDrainFit on a node with an idle gear', () => {
  it('plans every listed gear with its application: two gears of one app and one other node refuse with required anti-affinity', () => {
    const cfg = config({ scaleDown: { antiAffinity: 'required' } });
    // One active shop gear and one idle one: activeGears 1, the list 2.
    const source = reporting('n-1', 1, [shop(1), shop(2)]);
    const fit = manualDrainFit({ node: source, nodes: [source, node('n-2', { gears: 10 })], drains: [], config: cfg, now: NOW });
    expect(fit).toMatchObject({ fits: false, gears: 2, unplaced: 1 });
    expect(fit.line).toMatch(/^gears do not fit below 80% on the other nodes \(2 gears, 70 free slots\): 1 could not be placed/);
    // On two other nodes the gears keep apart, and both are counted.
    const two = manualDrainFit({ node: source, nodes: [source, node('n-2', { gears: 10 }), node('n-3', { gears: 10 })], drains: [], config: cfg, now: NOW });
    expect(two).toMatchObject({ fits: true, gears: 2, unplaced: 0 });
  });
});
