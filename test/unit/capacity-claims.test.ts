import { describe, expect, it } from 'vitest';
import {
  RESERVATION_INVOCATION_MARGIN_MS,
  RESERVATION_SETTLE_MS,
  claimStillValid,
  reservedNodes,
  unlistedSlots,
  type CapacityRecord,
  type CapacityReservation,
} from '../../lib/domain/capacity-claims.js';
import { NOW, minutesAgo, node } from '../support/builders.js';

const VALIDITY = 15 * 60_000;

function reservation(ids: string[], minutes: number, pool = 'd1/small'): CapacityReservation {
  return { pool, slots: ids.map((nodeId) => ({ nodeId, cloudName: nodeId.split('.')[0]! })), at: minutesAgo(minutes) };
}

function capacity(reservations: Record<string, CapacityReservation>): CapacityRecord {
  return { version: 3, reservations };
}

const run = (record: CapacityRecord, listed: string[], read: Record<string, ReturnType<typeof node> | undefined> = {}) =>
  reservedNodes({ capacity: record, listed: listed.map((id) => node(id)), read: new Map(Object.entries(read)), now: NOW, validityMs: VALIDITY });

describe('reserved nodes: what claims add to the pool lists for the global limits', () => {
  it('counts a claimed node not created yet as provisioning in its pool, once, and keeps its reservation', () => {
    const record = capacity({ 'up:b': reservation(['b-3.example.com'], 0, 'd1/b') });
    expect(unlistedSlots(record, [node('a-1.example.com')])).toEqual(['b-3.example.com']);
    const result = run(record, ['a-1.example.com']);
    expect(result.nodes).toMatchObject([{ nodeId: 'b-3.example.com', pool: 'd1/b', district: 'd1', profile: 'b', state: 'provisioning' }]);
    expect(result.kept).toEqual(record.reservations);
  });

  it('counts a listed node by the list alone, and lets its reservation go once it is a minute old', () => {
    const fresh = capacity({ 'up:b': reservation(['b-3.example.com'], 0) });
    expect(unlistedSlots(fresh, [node('b-3.example.com')])).toEqual([]);
    expect(run(fresh, ['b-3.example.com'])).toEqual({ nodes: [], kept: fresh.reservations });
    const settled = capacity({ 'up:b': { ...reservation(['b-3.example.com'], 0), at: new Date(NOW.getTime() - RESERVATION_SETTLE_MS - 1).toISOString() } });
    expect(run(settled, ['b-3.example.com'])).toEqual({ nodes: [], kept: {} });
  });

  it('counts a created node the lists do not show yet as read, and nothing for a terminated one', () => {
    const record = capacity({ 'up:b': reservation(['b-3.example.com', 'b-4.example.com'], 5) });
    const result = run(record, [], { 'b-3.example.com': node('b-3.example.com', { state: 'provisioning', instanceType: 'm5.large' }), 'b-4.example.com': node('b-4.example.com', { state: 'terminated' }) });
    expect(result.nodes).toMatchObject([{ nodeId: 'b-3.example.com', instanceType: 'm5.large' }]);
    expect(result.kept).toEqual(record.reservations);
  });

  it('counts a node never created until the claim is past its validity and an invocation\'s margin, then lets it go', () => {
    const edge = (VALIDITY + RESERVATION_INVOCATION_MARGIN_MS) / 60_000;
    const holding = capacity({ 'up:a': reservation(['a-3.example.com'], edge) });
    expect(run(holding, []).nodes).toHaveLength(1);
    const expired = capacity({ 'up:a': { ...reservation(['a-3.example.com'], edge), at: new Date(NOW.getTime() - VALIDITY - RESERVATION_INVOCATION_MARGIN_MS - 1).toISOString() } });
    expect(run(expired, [])).toEqual({ nodes: [], kept: {} });
  });

  it('lets a claim create its nodes up to its validity, not after', () => {
    expect(claimStillValid({ createdAt: minutesAgo(15) }, NOW, VALIDITY)).toBe(true);
    expect(claimStillValid({ createdAt: new Date(NOW.getTime() - VALIDITY - 1).toISOString() }, NOW, VALIDITY)).toBe(false);
  });
});
