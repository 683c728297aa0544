/**
 * A district's UIDs (lib/domain/district-capacity.ts): refusals the district's
 * UIDs caused buy no node, a partial read counts only as many as it has left,
 * and a read too old to trust decides as before.
 */
import { describe, expect, it } from 'vitest';
import {
  DISTRICT_CAPACITY_FRESH_MS,
  districtCapacityText,
  districtNodeRoom,
  districtRunningOut,
  freshDistrictCapacity,
  refusalsNodesCanPlace,
} from '../../lib/domain/district-capacity.js';
import { renderStatus, statusView } from '../../lib/cli/status.js';
import { Style } from '../../lib/cli/render.js';
import { NO_CONTROLS } from '../../lib/domain/controls.js';
import { decidePool } from '../../lib/domain/evaluate.js';
import { explainPool } from '../../lib/domain/explain.js';
import { waitingGears } from '../../lib/domain/waiting.js';
import { NOW, config, evaluation, flatDemand, minutesAgo, nodes, pool, refusedReport } from '../support/builders.js';

const uids = (availableCapacity: number, readMinutesAgo = 2, maxCapacity = 6000) => ({ maxCapacity, availableCapacity, readAt: minutesAgo(readMinutesAgo) });
/** The product's thresholds (pools run full), no forecast; 30 gears of headroom. */
const product = () => config({ limits: { maxNodesTotal: 500 }, scaleUp: { threshold: 0.98, target: 0.96, headroomGears: 30, forecast: { enabled: false } } }, { max: 200 });

describe('freshDistrictCapacity and refusalsNodesCanPlace', () => {
  it('trusts a read up to DISTRICT_CAPACITY_FRESH_MS old, not an older one nor one from the future', () => {
    const freshMinutes = DISTRICT_CAPACITY_FRESH_MS / 60_000;
    expect(freshDistrictCapacity({ districtCapacity: uids(0, freshMinutes) }, NOW)).toEqual(uids(0, freshMinutes));
    expect(freshDistrictCapacity({ districtCapacity: uids(0, freshMinutes + 0.1) }, NOW)).toBeUndefined();
    expect(freshDistrictCapacity({ districtCapacity: uids(0, -1) }, NOW)).toBeUndefined();
    expect(freshDistrictCapacity({}, NOW)).toBeUndefined();
  });

  it('counts every refusal without a read, at most the UIDs left with one', () => {
    expect(refusalsNodesCanPlace(400, undefined)).toBe(400);
    expect(refusalsNodesCanPlace(400, uids(0))).toBe(0);
    expect(refusalsNodesCanPlace(400, uids(150))).toBe(150);
    expect(refusalsNodesCanPlace(40, uids(150))).toBe(40);
  });

  it('says how many UIDs are left and when they were read; running out below a tenth', () => {
    expect(districtCapacityText('d1', uids(0, 2), NOW)).toBe('district d1 has 0 of 6000 UIDs left (read 2m ago)');
    expect(districtRunningOut(uids(599))).toBe(true);
    expect(districtRunningOut(uids(600))).toBe(false);
  });
});

describe('waitingGears with the district read', () => {
  it('calls no refused gear waiting for a node when the district has no UIDs left, and says why and what cures it', () => {
    const waiting = waitingGears({ pool: 'd1/small', refused: refusedReport(400), districtCapacity: uids(0) }, flatDemand(950), NOW, 950, nodes(10, 95))!;
    expect(waiting).toMatchObject({ refused: 400, demand: 950, unplaced: 0, uncured: true });
    expect(waiting.text).toBe(
      '400 gear creations refused in the last 1m (broker), district d1 has 0 of 6000 UIDs left (read 2m ago): no node would place them; add UIDs (oo-admin-ctl-district -c add-capacity -n d1 -s N) or a district for the profile',
    );
  });

  it('counts only as many refusals as the district has UIDs left', () => {
    const waiting = waitingGears({ pool: 'd1/small', refused: refusedReport(400), districtCapacity: uids(150) }, flatDemand(1000), NOW, 1000)!;
    expect(waiting).toMatchObject({ refused: 400, demand: 1150, unplaced: 150 });
    expect(waiting.uncured).toBeUndefined();
    expect(waiting.text).toBe('400 gear creations refused in the last 1m (broker), 150 not placed yet (district d1 has 150 of 6000 UIDs left (read 2m ago))');
  });

  it('decides as before on a read too old to trust', () => {
    const stale = uids(0, DISTRICT_CAPACITY_FRESH_MS / 60_000 + 1);
    expect(waitingGears({ pool: 'd1/small', refused: refusedReport(400), districtCapacity: stale }, flatDemand(1000), NOW, 1000)).toMatchObject({ demand: 1400, unplaced: 400 });
  });
});

describe('decidePool with a district out of UIDs', () => {
  // 20 nodes of 100 at 75 gears each: a quarter of the slots free, and the broker refusing for want of UIDs.
  const halfEmpty = nodes(20, 75);
  const refusing = (districtCapacity?: ReturnType<typeof uids>) =>
    evaluation({ config: product(), nodes: halfEmpty, pool: pool({ demandHistory: flatDemand(1500), refused: refusedReport(1600), ...(districtCapacity ? { districtCapacity } : {}) }) });

  it('buys no node for the refusals, and the decision says the district, not the nodes, refused them', () => {
    const result = decidePool(refusing(uids(0)));
    expect(result.decision.kind).toBe('no-action');
    expect(result.decision.reason).toContain('1600 gear creations refused in the last 1m (broker), district d1 has 0 of 6000 UIDs left (read 2m ago): no node would place them');
  });

  it('without the read, the same refusals buy the nodes for every refused gear (what a full pool needs)', () => {
    const result = decidePool(refusing());
    expect(result.decision.kind).toBe('scale-up');
    expect(result.decision.reason).toContain('1600 not placed yet');
  });

  it('with some UIDs left, buys for those gears only', () => {
    const result = decidePool(refusing(uids(300)));
    if (result.decision.kind !== 'scale-up') throw new Error(`expected scale-up: ${result.decision.reason}`);
    // Every open slot taken when refused (2,000) + 300 = 2,300 / 0.96 = 2,396 slots: 4 nodes beyond the 20.
    expect(result.decision.count).toBe(4);
    expect(result.decision.reason).toContain('300 not placed yet (district d1 has 300 of 6000 UIDs left (read 2m ago))');
  });

  it('explain shows the district UIDs among the scale-up checks, failing with the cure when none are left', () => {
    const { scaleUp } = explainPool(refusing(uids(0)));
    expect(scaleUp.find((c) => c.name === 'district UIDs')).toMatchObject({ ok: false });
    expect(scaleUp.find((c) => c.name === 'district UIDs')!.detail).toContain('refused gears buy no node; add UIDs (oo-admin-ctl-district -c add-capacity -n d1 -s N)');
    expect(scaleUp.find((c) => c.name === 'trigger')).toMatchObject({ ok: false });
    expect(explainPool(refusing(uids(300))).scaleUp.find((c) => c.name === 'district UIDs')).toMatchObject({ ok: true });
    expect(explainPool(refusing()).scaleUp.find((c) => c.name === 'district UIDs')).toBeUndefined();
  });
});

describe('nodescaler status shows the district UIDs', () => {
  const view = (districtCapacity?: ReturnType<typeof uids>) => {
    const cfg = product();
    return statusView(
      { now: NOW, config: cfg, allNodes: [], controls: NO_CONTROLS, pools: [{ pool: 'd1/small', config: cfg.pools[0]!, record: pool(districtCapacity ? { districtCapacity } : {}), nodes: [], drains: [] }] },
      'local state',
    );
  };
  const text = (districtCapacity?: ReturnType<typeof uids>) => renderStatus(view(districtCapacity), { style: new Style(false), width: 140 }).join('\n');

  it('as read, and warns under a tenth left that nodes will not help', () => {
    expect(view(uids(2400)).pools[0]!.districtUids).toEqual({ ...uids(2400), low: false });
    expect(text(uids(2400))).toMatch(/district UIDs: 2400 of 6000 left \(read [^)]+\)/);
    expect(text(uids(2400))).not.toContain('new gears are refused');
    expect(text(uids(12))).toMatch(/district UIDs: 12 of 6000 left \(read .*\): new gears are refused once none is left, whatever nodes the pool has/);
    expect(view().pools[0]!.districtUids).toBeNull();
    expect(text()).not.toContain('district UIDs');
  });
});

describe('a scale-up never buys past the gears the district can hold', () => {
  it('districtNodeRoom: the nodes its UIDs can fill, less those the pool has, never below what min asks', () => {
    expect(districtNodeRoom(uids(0, 2, 6000), 100, 58, 0)).toBe(2);
    expect(districtNodeRoom(uids(0, 2, 6050), 100, 58, 0)).toBe(3);
    expect(districtNodeRoom(uids(0, 2, 6000), 100, 64, 0)).toBe(0);
    expect(districtNodeRoom(uids(0, 2, 6000), 100, 64, 3)).toBe(3);
  });

  it('clamps a full pool near its UIDs to the nodes they can fill, and names the limit', () => {
    // 58 full nodes of 100: 5,800 active gears of a district of 6,000 UIDs; the headroom alone would buy 2 and more.
    const full = evaluation({ config: product(), nodes: nodes(58, 100), pool: pool({ highSince: minutesAgo(10), demandHistory: flatDemand(5800), districtCapacity: uids(200, 2, 6000) }) });
    const result = decidePool(full);
    if (result.decision.kind !== 'scale-up') throw new Error(`expected scale-up: ${result.decision.reason}`);
    expect(result.decision.count).toBe(2);
    expect(result.decision.clampedBy).toEqual([{ limit: 'district.maxCapacity', value: 6000 }]);
    expect(result.decision.reason).toContain('clamped by district.maxCapacity=6000');
    // At 60 nodes nothing more is bought, and the decision says which limit.
    const atRoom = decidePool(evaluation({ config: product(), nodes: nodes(60, 100), pool: pool({ highSince: minutesAgo(10), demandHistory: flatDemand(6000), districtCapacity: uids(0, 2, 6000) }) }));
    expect(atRoom.decision.kind).toBe('no-action');
    expect(atRoom.decision.reason).toContain('cannot add any: at limit district.maxCapacity=6000');
    // Without a read, as before.
    const unread = decidePool(evaluation({ config: product(), nodes: nodes(58, 100), pool: pool({ highSince: minutesAgo(10), demandHistory: flatDemand(5800) }) }));
    expect(unread.decision).toMatchObject({ kind: 'scale-up', clampedBy: [] });
    expect((unread.decision as { count: number }).count).toBeGreaterThan(2);
  });
});
