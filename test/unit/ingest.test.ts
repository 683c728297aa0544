import { describe, expect, it } from 'vitest';
import { applyStats, isNewerStats } from '../../lib/domain/ingest.js';
import { node } from '../support/builders.js';

const stats = (reportedAt: string, activeGears = 5) => ({ activeGears, maxActiveGears: 100, reportedAt });

describe('applyStats', () => {
  it('takes newer stats and keeps the rest of the node', () => {
    const before = node('a', { gears: 1, reportedMinutesAgo: 2 });
    const newer = stats(new Date(Date.parse(before.stats!.reportedAt) + 1).toISOString(), 9);
    const after = applyStats(before, newer);
    expect(after).not.toBe(before);
    expect(after).toEqual({ ...before, stats: newer });
  });

  it('returns the same node for older or equal stats (out-of-order or duplicate delivery)', () => {
    const current = node('a', { gears: 1 });
    expect(applyStats(current, stats('2000-01-01T00:00:00.000Z'))).toBe(current);
    expect(applyStats(current, { ...current.stats!, activeGears: 50 })).toBe(current);
  });

  it('takes any stats for a node that has none', () => {
    const silent = node('a', { gears: null });
    expect(applyStats(silent, stats('2000-01-01T00:00:00.000Z')).stats?.activeGears).toBe(5);
    expect(isNewerStats(undefined, stats('2000-01-01T00:00:00.000Z'))).toBe(true);
  });
});
