import { describe, expect, it } from 'vitest';
import { decidePool } from '../../lib/domain/evaluate.js';
import { explainPool } from '../../lib/domain/explain.js';
import type { DemandSample, NodeRecord } from '../../lib/domain/model.js';
import { REFUSED_GRACE_MS, nodesForWaiting, slotsFullAt, waitingGears, waitingRise, waitingSighting } from '../../lib/domain/waiting.js';
import { epochMinute } from '../../lib/domain/forecast.js';
import { NOW, config, evaluation, flatDemand, minutesAgo, node, nodes, pool, refusedReport } from '../support/builders.js';

/** The product's thresholds (pools run full), no forecast; 30 gears of headroom. */
const product = (scaleUp: Record<string, unknown> = {}, max = 200) =>
  config({ limits: { maxNodesTotal: 500 }, scaleUp: { threshold: 0.98, target: 0.96, headroomGears: 30, forecast: { enabled: false }, ...scaleUp } }, { max });

function scaleUp(result: ReturnType<typeof decidePool>) {
  if (result.decision.kind !== 'scale-up') throw new Error(`expected scale-up, got ${result.decision.kind}: ${result.decision.reason}`);
  return result.decision;
}

describe('waitingGears', () => {
  it('is nothing without a report, for a report of 0, for a malformed window, and once the report is older than its window + grace', () => {
    expect(waitingGears({}, flatDemand(500), NOW, 500)).toBeUndefined();
    expect(waitingGears({ refused: refusedReport(0) }, flatDemand(500), NOW, 500)).toBeUndefined();
    expect(waitingGears({ refused: { gears: 5, windowStart: minutesAgo(1), windowEnd: minutesAgo(2) } }, flatDemand(500), NOW, 500)).toBeUndefined();
    const graceMinutes = REFUSED_GRACE_MS / 60_000;
    expect(waitingGears({ refused: refusedReport(5, 1 + graceMinutes) }, flatDemand(500), NOW, 500)).toMatchObject({ refused: 5 });
    expect(waitingGears({ refused: refusedReport(5, 1 + graceMinutes + 0.1) }, flatDemand(500), NOW, 500)).toBeUndefined();
  });

  it('counts the waiting demand from the placed gears when the window ended, so gears placed since count once', () => {
    // 2,000 placed when the minute ended with 400 refused; 300 of them placed since (new nodes joined).
    const samples: DemandSample[] = [...flatDemand(2000, 5).slice(0, 4), [epochMinute(NOW) - 1, 2000], [epochMinute(NOW), 2300]];
    const waiting = waitingGears({ refused: refusedReport(400) }, samples, NOW, 2300)!;
    expect(waiting).toMatchObject({ refused: 400, demand: 2400, unplaced: 100, windowMs: 60_000 });
    expect(waiting.text).toBe('400 gear creations refused in the last 1m (broker), 100 not placed yet');
    // All placed: nothing waits any more, though the report is still fresh.
    expect(waitingGears({ refused: refusedReport(400) }, [...samples.slice(0, -1), [epochMinute(NOW), 2400]], NOW, 2400)).toMatchObject({ unplaced: 0 });
  });

  it('takes today\'s demand as the base when the history starts after the window', () => {
    expect(waitingGears({ refused: refusedReport(1) }, [[epochMinute(NOW), 70]], NOW, 70)).toMatchObject({ demand: 71, unplaced: 1 });
    expect(waitingGears({ refused: refusedReport(1) }, undefined, NOW, 70)!.text).toBe('1 gear creation refused in the last 1m (broker), 1 not placed yet');
  });

  it('counts no refusal that asked for a zone when the pool\'s nodes join in none, with the cure; counts them as any when they do, or when not said', () => {
    const zoned = { pool: 'd1/small', refused: { ...refusedReport(40)!, zonesRequired: true } };
    const none = waitingGears(zoned, flatDemand(500), NOW, 500, undefined, { nodesJoinInZones: false })!;
    expect(none).toMatchObject({ refused: 40, unplaced: 0, uncured: true });
    expect(none.text).toContain('pool d1/small names no openshiftRegion: a node it adds joins in no zone and would place none; name the region and zones its nodes join (pools[].openshiftRegion)');
    expect(waitingGears(zoned, flatDemand(500), NOW, 500, undefined, { nodesJoinInZones: true })).toMatchObject({ unplaced: 40, demand: 540 });
    // Attrition reopens closed nodes for them whatever the pool's region: those an operator added may be in a zone.
    expect(waitingGears(zoned, flatDemand(500), NOW, 500)).toMatchObject({ unplaced: 40 });
    expect(waitingGears({ ...zoned, refused: refusedReport(40) }, flatDemand(500), NOW, 500, undefined, { nodesJoinInZones: false })).toMatchObject({ unplaced: 40 });
  });
});

describe('slotsFullAt: a refusal means every open slot was taken', () => {
  const refusedAt = Date.parse(minutesAgo(1));
  const cases: Array<{ name: string; node: NodeRecord; slots: number }> = [
    { name: 'an open node active since before the refusal, whatever its report says', node: node('a', { gears: 40, max: 100 }), slots: 100 },
    { name: 'its own maxActiveGears', node: node('b', { gears: 0, max: 80 }), slots: 80 },
    { name: 'not a node that joined after the refusal (its slots took refused gears since)', node: node('c', { gears: 100, max: 100, createdMinutesAgo: 0 }), slots: 0 },
    { name: 'not a node closed for attrition (the broker could not place on it)', node: { ...node('d', { gears: 10, max: 100 }), attritionSince: minutesAgo(30) }, slots: 0 },
    { name: 'not a draining node', node: node('e', { state: 'draining', gears: 10, max: 100 }), slots: 0 },
    { name: 'not a provisioning node', node: node('f', { state: 'provisioning', gears: null }), slots: 0 },
    { name: 'not a node that never reported', node: node('g', { gears: null }), slots: 0 },
  ];
  it.each(cases)('$name: $slots', ({ node: record, slots }) => {
    expect(slotsFullAt([record], refusedAt)).toBe(slots);
  });
  it('sums the pool', () => {
    expect(slotsFullAt(cases.map((c) => c.node), refusedAt)).toBe(180);
  });
});

describe('waitingGears with the pool\'s nodes: reports older than the spike do not shrink it', () => {
  // 12 nodes of 100, all full when 112 creations were refused; the history and the reports still show 1,135 placed
  // (one node reported before the spike filled it).
  const twelve = nodes(12, 100);
  const stale: DemandSample[] = [...flatDemand(933, 5), [epochMinute(NOW), 1135]];
  const cases: Array<{ name: string; nodes?: NodeRecord[]; demand: number; unplaced: number }> = [
    { name: 'without the nodes, the stale placed count is the base (as before)', demand: 1247, unplaced: 112 },
    { name: 'with them, every open slot was taken: 1,200 + 112', nodes: twelve, demand: 1312, unplaced: 112 },
    { name: 'a node that joined since does not count', nodes: [...twelve, ...nodes(1, 100, 100, 'joined', { createdMinutesAgo: 0 })], demand: 1312, unplaced: 112 },
  ];
  it.each(cases)('$name', ({ nodes: poolNodes, demand, unplaced }) => {
    expect(waitingGears({ refused: refusedReport(112, 0) }, stale, NOW, 1135, poolNodes)).toMatchObject({ refused: 112, demand, unplaced });
  });
  it('never calls more gears unplaced than the broker refused', () => {
    expect(waitingGears({ refused: refusedReport(10, 0) }, stale, NOW, 1135, twelve)).toMatchObject({ demand: 1210, unplaced: 10 });
  });
});

describe('nodesForWaiting', () => {
  const waiting = { refused: 1600, demand: 3600, unplaced: 1600, windowMs: 60_000, text: '' };
  it('sizes for the waiting gears and the headroom in one go, beyond what is running and booting', () => {
    // 2,000 slots: 3,600 / 0.96 = 3,750 -> 18 nodes; 3,600 + 30 = 3,630 -> 17: the target rules.
    expect(nodesForWaiting(waiting, 2000, 100, { threshold: 0.98, target: 0.96, headroomGears: 30 })).toBe(18);
    // 3,600 + 300 = 3,900 -> 19: the headroom rules.
    expect(nodesForWaiting(waiting, 2000, 100, { threshold: 0.98, target: 0.96, headroomGears: 300 })).toBe(19);
  });
  it('asks for nothing when the nodes booting already hold them, or when nothing is unplaced', () => {
    expect(nodesForWaiting(waiting, 3800, 100, { threshold: 0.98, target: 0.96, headroomGears: 30 })).toBe(0);
    expect(nodesForWaiting({ ...waiting, unplaced: 0 }, 2000, 100, { threshold: 0.98, target: 0.96, headroomGears: 30 })).toBe(0);
  });
});

describe('waitingRise: the pace waiting gears kept arriving at, for as long as they have waited, at most a boot', () => {
  const waiting = { refused: 400, demand: 1400, unplaced: 400, windowMs: 60_000, text: '' };
  const bootMs = 120_000;
  const seen = (minutes: number, gears: number, waitedMinutes = minutes) => ({ at: minutesAgo(minutes), gears, since: minutesAgo(waitedMinutes) });
  it('projects the rise since the last sighting for as long again as gears have waited, at most one boot delay', () => {
    // 1,200 a minute ago, 1,400 now: 200 a minute.
    expect(waitingRise(waiting, seen(1, 1200), NOW, bootMs)).toBe(200);
    expect(waitingRise(waiting, seen(1, 1200, 2), NOW, bootMs)).toBe(400);
    expect(waitingRise(waiting, seen(1, 1200, 9), NOW, bootMs)).toBe(400);
    expect(waitingRise(waiting, seen(1, 1200, 9), NOW, 600_000)).toBe(1800);
    expect(waitingRise(waiting, seen(2, 1200), NOW, bootMs)).toBe(200);
  });
  it('is 0 on the first refused minute, after a step (no rise since), when demand fell, and for a sighting older than a boot or not in the past', () => {
    expect(waitingRise(waiting, undefined, NOW, bootMs)).toBe(0);
    expect(waitingRise(waiting, seen(1, 1400), NOW, bootMs)).toBe(0);
    expect(waitingRise(waiting, seen(1, 1500), NOW, bootMs)).toBe(0);
    expect(waitingRise(waiting, seen(2.5, 1000), NOW, bootMs)).toBe(0);
    expect(waitingRise(waiting, seen(0, 1000), NOW, bootMs)).toBe(0);
  });
  it('a sighting carries on since when gears have waited while the sightings are at most a boot apart, and starts anew after', () => {
    expect(waitingSighting(waiting, undefined, NOW, bootMs)).toEqual({ at: NOW.toISOString(), gears: 1400, since: NOW.toISOString() });
    expect(waitingSighting(waiting, seen(1, 1200, 5), NOW, bootMs)).toEqual({ at: NOW.toISOString(), gears: 1400, since: minutesAgo(5) });
    expect(waitingSighting(waiting, seen(3, 1200, 5), NOW, bootMs).since).toBe(NOW.toISOString());
  });
});

describe('decidePool: refused gear creations are demand that waits', () => {
  const full: NodeRecord[] = nodes(20, 100);

  it('scales up at once (no sustain), for every waiting gear plus headroom in one decision, past the default 10 per decision, and says why', () => {
    const result = decidePool(evaluation({ config: product(), nodes: full, pool: pool({ highSince: NOW.toISOString(), demandHistory: flatDemand(2000), refused: refusedReport(1600) }) }));
    // 3,600 gears / 0.96 = 3,750 slots: 18 nodes beyond the 20 running.
    expect(scaleUp(result)).toMatchObject({ count: 18, wanted: 18, clampedBy: [] });
    expect(result.decision.reason).toContain('1600 gear creations refused in the last 1m (broker), 1600 not placed yet: sized for them + headroomGears 30 at once');
    expect(result.decision.reason).toContain('+18 nodes to 0.95');
  });

  it('sizes one decision for the full pool when a report predates the spike, and says the spike outran the boot delay', () => {
    // 12 full nodes; one reported 65 free slots before the spike filled them; 112 creations refused.
    const twelve = [...nodes(11, 100), node('late', { gears: 35, max: 100 })];
    const samples: DemandSample[] = [...flatDemand(933, 5), [epochMinute(NOW), 1135]];
    const result = decidePool(evaluation({ config: product({ headroomGears: 26 }), nodes: twelve, pool: pool({ demandHistory: samples, refused: refusedReport(112, 0) }) }));
    // 1,312 gears / 0.96 = 1,367 slots: 2 nodes, not the 1 that 1,135 + 112 asked for (one more came a minute later).
    expect(scaleUp(result)).toMatchObject({ count: 2, wanted: 2 });
    expect(result.decision.reason).toContain('demand outran the boot delay: 112 gears over capacity, new gears wait about');
  });

  it('without the report, the same full pool waits for the sustain window', () => {
    const result = decidePool(evaluation({ config: product(), nodes: full, pool: pool({ highSince: NOW.toISOString(), demandHistory: flatDemand(2000) }) }));
    expect(result.decision.kind).toBe('scale-up'); // free slots 0 < headroom 30
    expect(scaleUp(result).count).toBe(1);
  });

  it('honours an operator-set maxNodesPerDecision and pool.max', () => {
    const capped = decidePool(evaluation({ config: product({ maxNodesPerDecision: 5 }), nodes: full, pool: pool({ demandHistory: flatDemand(2000), refused: refusedReport(1600) }) }));
    expect(scaleUp(capped)).toMatchObject({ count: 5, wanted: 18, clampedBy: [{ limit: 'maxNodesPerDecision', value: 5 }] });
    const small = decidePool(evaluation({ config: product({}, 24), nodes: full, pool: pool({ demandHistory: flatDemand(2000), refused: refusedReport(1600) }) }));
    expect(scaleUp(small)).toMatchObject({ count: 4, clampedBy: [{ limit: 'pool.max', value: 24 }] });
  });

  it('buys nothing more while the nodes it asked for boot, though the broker keeps refusing', () => {
    const booting = Array.from({ length: 18 }, (_, i) => node(`new-${i}`, { state: 'provisioning', gears: null, createdMinutesAgo: 1 }));
    const result = decidePool(evaluation({ config: product(), nodes: [...full, ...booting], pool: pool({ demandHistory: flatDemand(2000), refused: refusedReport(1600) }) }));
    expect(result.decision.kind).toBe('no-action');
  });

  it('counts a refused gear once the nodes joined and it is placed: no second scale-up for the same gears', () => {
    // The 18 nodes joined after the refusal: their slots took the waiting gears, they were not full when it came.
    const joined = [...full, ...nodes(16, 100, 100, 'joined', { createdMinutesAgo: 0 })];
    const samples: DemandSample[] = [...flatDemand(2000, 5), [epochMinute(NOW), 3600]];
    const result = decidePool(evaluation({ config: product(), nodes: [...joined, ...nodes(2, 0, 100, 'spare', { createdMinutesAgo: 0 })], pool: pool({ demandHistory: samples, refused: refusedReport(1600) }) }));
    expect(result.decision.kind).toBe('no-action');
  });

  it('with waitingRise, buys on top the pace gears kept arriving at for one boot, says so, and keeps what it saw', () => {
    // 20 full nodes, 1,600 refused: 3,600 waiting; a minute ago the waiting demand was 3,300, so 300 more a minute.
    const seen = { at: minutesAgo(1), gears: 3300, since: minutesAgo(2) };
    const input = (waitingRise: boolean) =>
      evaluation({ config: product({ waitingRise, forecast: { enabled: false, bootDelay: '2m' } }), nodes: full, pool: pool({ demandHistory: flatDemand(2000), refused: refusedReport(1600), waitingSeen: seen }) });
    const off = decidePool(input(false));
    expect(scaleUp(off).count).toBe(18);
    expect(off.poolPatch.waitingSeen).toBeUndefined();
    const on = decidePool(input(true));
    // 3,600 + 600 = 4,200 gears / 0.96 = 4,375 slots: 44 nodes, 24 beyond the 20 running.
    expect(scaleUp(on)).toMatchObject({ count: 24, wanted: 24 });
    expect(on.decision.reason).toContain('sized for them + 600 more over the next 2m, the pace they kept arriving at + headroomGears 30 at once');
    expect(on.poolPatch.waitingSeen).toEqual({ at: NOW.toISOString(), gears: 3600, since: minutesAgo(2) });
  });

  it('forgets a report older than its window and the grace', () => {
    const result = decidePool(evaluation({ config: product({ headroomGears: 0 }), nodes: nodes(20, 90), pool: pool({ demandHistory: flatDemand(1800), refused: refusedReport(1600, 4) }) }));
    expect(result.decision.kind).toBe('no-action');
    expect(result.decision.reason).not.toContain('refused');
  });
});

describe('explainPool names the refused gears among the scale-up triggers', () => {
  it('with the nodes they need, or as covered while the nodes boot', () => {
    const waitingPool = pool({ demandHistory: flatDemand(2000), refused: refusedReport(1600) });
    const trigger = explainPool(evaluation({ config: product(), nodes: nodes(20, 100), pool: waitingPool })).scaleUp.find((c) => c.name === 'trigger')!;
    expect(trigger.ok).toBe(true);
    expect(trigger.detail).toContain('1600 gear creations refused in the last 1m (broker), 1600 not placed yet: +18 node(s)');
    const booting = Array.from({ length: 18 }, (_, i) => node(`new-${i}`, { state: 'provisioning', gears: null, createdMinutesAgo: 1 }));
    const covered = explainPool(evaluation({ config: product(), nodes: [...nodes(20, 100), ...booting], pool: waitingPool })).scaleUp.find((c) => c.name === 'trigger')!;
    expect(covered.ok).toBe(false);
    expect(covered.detail).toContain('1600 not placed yet: covered by the nodes running and booting');
  });

  it('with waitingRise, the same nodes the evaluator buys for the gears still to come', () => {
    const rising = pool({ demandHistory: flatDemand(2000), refused: refusedReport(1600), waitingSeen: { at: minutesAgo(1), gears: 3300, since: minutesAgo(2) } });
    const cfg = product({ waitingRise: true, forecast: { enabled: false, bootDelay: '2m' } });
    const trigger = explainPool(evaluation({ config: cfg, nodes: nodes(20, 100), pool: rising })).scaleUp.find((c) => c.name === 'trigger')!;
    expect(trigger.detail).toContain('1600 not placed yet: +24 node(s) (with 600 more gears to come while they boot, the pace they kept arriving at)');
    expect(scaleUp(decidePool(evaluation({ config: cfg, nodes: nodes(20, 100), pool: rising }))).count).toBe(24);
  });
});
