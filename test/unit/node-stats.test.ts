import { describe, expect, it } from 'vitest';
import { observedBootMs, poolBootMs } from '../../lib/domain/node-stats.js';
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
