import { describe, expect, it } from 'vitest';
import { observedBootMs, poolBootMs, withAgentFlags } from '../../lib/domain/node-stats.js';
import { node } from '../support/builders.js';

const joined = (nodeId: string, createdAt: string, joinedAt: string) => ({ ...node(nodeId), origin: 'provisioned' as const, createdAt, joinedAt });

describe('the pool\'s boot delay', () => {
  it('is the median of its provisioned nodes\' creation-to-join times, and nothing before one joined', () => {
    expect(observedBootMs([node('adopted')].map((n) => ({ ...n, origin: 'adopted' as const })))).toBeUndefined();
    const nodes = [
      joined('a', '2026-11-24T10:00:00Z', '2026-11-24T10:02:00Z'),
      joined('b', '2026-11-24T10:00:00Z', '2026-11-24T10:05:00Z'),
      joined('c', '2026-11-24T10:00:00Z', '2026-11-24T10:03:00Z'),
    ];
    expect(observedBootMs(nodes)).toBe(180_000);
  });

  it('is the observed one once known, the configured one before', () => {
    expect(poolBootMs({ observedBootMs: 180_000 }, 120_000)).toBe(180_000);
    expect(poolBootMs({}, 120_000)).toBe(120_000);
  });
});

describe("the platform's gear list with the agent's flags", () => {
  const gear = (uuid: string, flags = {}) => ({ uuid, app: `app-${uuid}`, size: 'small', ...flags });

  it("adds what the node's agent said of a gear (do-not-move, a tenant's restart); a gear it did not list, or did not flag, stays as listed", () => {
    const reported = { stats: { activeGears: 3, maxActiveGears: 10, reportedAt: '2025-03-10T10:00:00.000Z', gears: [gear('a', { disruptive: true }), gear('b', { doNotMove: true }), gear('c')] } };
    const listed = [gear('a'), gear('b'), gear('c'), gear('d')];
    expect(withAgentFlags(listed, reported)).toEqual([gear('a', { disruptive: true }), gear('b', { doNotMove: true }), gear('c'), gear('d')]);
    // A stopped or idled gear, as the agent marked it: its move takes no slot (drain-plan.ts).
    const idled = { stats: { ...reported.stats, gears: [gear('c', { idle: true }), gear('d', { idle: true, doNotMove: true })] } };
    expect(withAgentFlags(listed, idled)).toEqual([gear('a'), gear('b'), gear('c', { idle: true }), gear('d', { doNotMove: true, idle: true })]);
    // No stats, or stats without a gear list: the platform's list as it is.
    expect(withAgentFlags(listed, {})).toEqual(listed);
    // A flag the platform itself lists is kept.
    expect(withAgentFlags([gear('e', { doNotMove: true })], reported)).toEqual([gear('e', { doNotMove: true })]);
  });
});
