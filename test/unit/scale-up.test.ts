import { describe, expect, it } from 'vitest';
import { decidePool } from '../../lib/domain/evaluate.js';
import type { NodeRecord } from '../../lib/domain/model.js';
import { outranRamp } from '../../lib/domain/scale-up.js';
import { NOW, config, evaluation, minutesAgo, node, nodes, pool } from '../support/builders.js';

/** The product's scale-up thresholds (pools run full), no forecast and no headroom: only the ramp differs. */
const product = config({ limits: { maxNodesTotal: 500 }, scaleUp: { threshold: 0.98, target: 0.96, headroomGears: 0, doubleWhenFull: true, forecast: { enabled: false } } }, { max: 200 });
const fullPool = (count: number): NodeRecord[] => nodes(count, 100);
const sustained = { highSince: minutesAgo(5) };

function scaleUp(result: ReturnType<typeof decidePool>) {
  if (result.decision.kind !== 'scale-up') throw new Error(`expected scale-up, got ${result.decision.kind}: ${result.decision.reason}`);
  return result.decision;
}

describe('outranRamp', () => {
  const bootMs = 3 * 60_000;
  const doubling = { bootMs, doubleWhenFull: true };
  it('is off while the pool has a free slot, round 1 the first time it is full, and doubles when full again within 3 boots', () => {
    expect(outranRamp({}, { now: NOW, freeSlots: 1, poolNodes: 8, ...doubling })).toEqual({ round: 0, minNodes: 0 });
    expect(outranRamp({}, { now: NOW, freeSlots: 0, poolNodes: 8, ...doubling })).toEqual({ round: 1, minNodes: 0, record: true });
    const previous = { at: minutesAgo(9), rounds: 2, count: 4 };
    expect(outranRamp({ outran: previous }, { now: NOW, freeSlots: -3, poolNodes: 8, ...doubling })).toEqual({ round: 3, minNodes: 8, record: true });
    expect(outranRamp({ outran: { ...previous, at: minutesAgo(10) } }, { now: NOW, freeSlots: 0, poolNodes: 8, ...doubling })).toEqual({ round: 1, minNodes: 0, record: true });
  });

  it('with doubleWhenFull off, every full pool is round 1, whatever an earlier round left, and nothing is kept', () => {
    const previous = { at: minutesAgo(3), rounds: 2, count: 4 };
    expect(outranRamp({ outran: previous }, { now: NOW, freeSlots: -3, poolNodes: 8, bootMs, doubleWhenFull: false })).toEqual({ round: 1, minNodes: 0 });
  });
});

describe('decidePool: scale-up sized when demand outran the boot delay', () => {
  it('sizes a pool full for the first time to what it sees, and records the full-pool scale-up', () => {
    const result = decidePool(evaluation({ config: product, nodes: fullPool(20), pool: pool(sustained) }));
    expect(scaleUp(result)).toMatchObject({ count: 1, wanted: 1, outranRound: 1 });
    expect(result.decision.reason).toBe(
      'pool d1/small at 1.00 >= 0.98 for 5m; +1 node to 0.95; demand outran the boot delay: no free slot left, new gears wait about 3m for these nodes',
    );
    expect(result.poolPatch.outran).toEqual({ at: NOW.toISOString(), rounds: 1, count: 1 });
  });

  it('doubles a pool that is full again once the nodes of its full-pool scale-up joined, past the default 10 per decision', () => {
    const result = decidePool(evaluation({ config: product, nodes: fullPool(21), pool: pool({ ...sustained, outran: { at: minutesAgo(3), rounds: 1, count: 1 } }) }));
    expect(scaleUp(result)).toMatchObject({ count: 21, wanted: 21, clampedBy: [], outranRound: 2 });
    expect(result.decision.reason).toContain('demand outran the boot delay: no free slot left');
    expect(result.decision.reason).toContain('full again after +1 (round 2): gears wait unseen, so the pool doubles');
    expect(result.poolPatch.outran).toEqual({ at: NOW.toISOString(), rounds: 2, count: 21 });
  });

  it('keeps doubling while the pool stays full round after round, within pool.max', () => {
    const cfg = config({ limits: { maxNodesTotal: 500 }, scaleUp: { threshold: 0.98, target: 0.96, headroomGears: 0, doubleWhenFull: true, forecast: { enabled: false } } }, { max: 60 });
    const result = decidePool(evaluation({ config: cfg, nodes: fullPool(42), pool: pool({ ...sustained, outran: { at: minutesAgo(3), rounds: 2, count: 21 } }) }));
    expect(scaleUp(result)).toMatchObject({ count: 18, wanted: 42, outranRound: 3, clampedBy: [{ limit: 'pool.max', value: 60 }] });
  });

  it('starts over at round 1 when the last full-pool scale-up is older than 3 boot delays', () => {
    const result = decidePool(evaluation({ config: product, nodes: fullPool(21), pool: pool({ ...sustained, outran: { at: minutesAgo(10), rounds: 3, count: 8 } }) }));
    expect(scaleUp(result)).toMatchObject({ count: 1, outranRound: 1 });
    expect(result.decision.reason).not.toContain('doubles');
  });

  it('adds only what it sees, round after round, with doubleWhenFull off', () => {
    const off = config({ limits: { maxNodesTotal: 500 }, scaleUp: { threshold: 0.98, target: 0.96, headroomGears: 0, doubleWhenFull: false, forecast: { enabled: false } } }, { max: 200 });
    const result = decidePool(evaluation({ config: off, nodes: fullPool(21), pool: pool({ ...sustained, outran: { at: minutesAgo(3), rounds: 1, count: 1 } }) }));
    expect(scaleUp(result)).toMatchObject({ count: 1, outranRound: 1 });
    expect(result.decision.reason).toMatch(/; demand outran the boot delay: no free slot left, new gears wait about 3m for these nodes$/);
    // Only a pool that doubles reads the record back: it is not kept, and one an earlier setting left is cleared.
    expect(result.poolPatch).toHaveProperty('outran', undefined);
  });

  it('honours a maxNodesPerDecision the operator set, doubling or not', () => {
    const capped = config({ limits: { maxNodesTotal: 500 }, scaleUp: { threshold: 0.98, target: 0.96, headroomGears: 0, doubleWhenFull: true, maxNodesPerDecision: 5, forecast: { enabled: false } } }, { max: 200 });
    const result = decidePool(evaluation({ config: capped, nodes: fullPool(21), pool: pool({ ...sustained, outran: { at: minutesAgo(3), rounds: 1, count: 1 } }) }));
    expect(scaleUp(result)).toMatchObject({ count: 5, wanted: 21, clampedBy: [{ limit: 'maxNodesPerDecision', value: 5 }] });
  });

  it('clears the record on a scale-up with free slots left, and leaves it alone when nothing is decided', () => {
    const outran = { at: minutesAgo(3), rounds: 2, count: 4 };
    // 990 gears on 1,000 slots: 0.99 >= 0.98 for 5m, 10 free slots
    const roomy = decidePool(evaluation({ config: product, nodes: [...fullPool(9), node('last', { gears: 90 })], pool: pool({ ...sustained, outran }) }));
    expect(scaleUp(roomy)).toMatchObject({ count: 1 });
    expect(scaleUp(roomy).outranRound).toBeUndefined();
    expect(roomy.poolPatch).toHaveProperty('outran', undefined);
    const quiet = decidePool(evaluation({ config: product, nodes: nodes(10, 90), pool: pool({ outran }) }));
    expect(quiet.decision.kind).toBe('no-action');
    expect(quiet.poolPatch).not.toHaveProperty('outran');
  });

  it('decides again while nodes boot only for the difference: booting slots count as capacity', () => {
    // Rule-test thresholds (0.8 / 0.7): 1,000 gears on 10 full nodes want 1,429 slots, +5 nodes; 2 already boot: +3.
    const booting = [node('p1', { state: 'provisioning', createdMinutesAgo: 1 }), node('p2', { state: 'provisioning', createdMinutesAgo: 1 })];
    const again = decidePool(evaluation({ nodes: [...fullPool(10), ...booting], pool: pool(sustained) }));
    const alone = decidePool(evaluation({ nodes: fullPool(10), pool: pool(sustained) }));
    expect(scaleUp(alone).count).toBe(5);
    expect(scaleUp(again).count).toBe(3);
    expect(scaleUp(again).outranRound).toBeUndefined();
  });
});
