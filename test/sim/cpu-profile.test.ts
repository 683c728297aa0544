import { describe, expect, it } from 'vitest';
import { profileLines, summarizeProfile, type CpuProfile } from '../../lib/sim/cpu-profile.js';

const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0 });

/** (root) -> decide (lib/domain/evaluate.ts) -> check -> check (recursion) ; (root) -> bill (lib/sim/bill.ts). */
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)', ''), children: [2, 5] },
    { id: 2, callFrame: frame('decide', 'file:///repo/lib/domain/evaluate.ts'), children: [3] },
    { id: 3, callFrame: frame('check', 'file:///repo/lib/domain/payoff-gate.ts'), children: [4] },
    { id: 4, callFrame: frame('check', 'file:///repo/lib/domain/payoff-gate.ts') },
    { id: 5, callFrame: frame('', 'file:///repo/lib/sim/bill.ts') },
  ],
  // Microseconds: decide 1 s of its own, check 2 s then 3 s in its recursive call, the anonymous bill function 4 s.
  samples: [2, 3, 4, 5],
  timeDeltas: [1_000_000, 2_000_000, 3_000_000, 4_000_000],
};

describe('summarizeProfile', () => {
  it("sums each function's own time, and its time with callees counting a recursion's samples once", () => {
    const summary = summarizeProfile(profile, '/repo');
    expect(summary.seconds).toBe(10);
    const byName = Object.fromEntries(summary.functions.map((f) => [f.name, f]));
    expect(byName['check (lib/domain/payoff-gate.ts)']).toEqual({ name: 'check (lib/domain/payoff-gate.ts)', self: 5, total: 5 });
    expect(byName['decide (lib/domain/evaluate.ts)']).toMatchObject({ self: 1, total: 6 });
    expect(byName['(anonymous) (lib/sim/bill.ts)']).toMatchObject({ self: 4, total: 4 });
    expect(byName['(root)']).toMatchObject({ self: 0, total: 10 });
    // Most total time first.
    expect(summary.functions.map((f) => f.name)).toEqual(['(root)', 'decide (lib/domain/evaluate.ts)', 'check (lib/domain/payoff-gate.ts)', '(anonymous) (lib/sim/bill.ts)']);
  });

  it('lists the functions that took most of their own time, with their shares, without the root', () => {
    const lines = profileLines(summarizeProfile(profile, '/repo'), 2);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^ +5\.00 s +50\.0 % own, +5\.00 s +50\.0 % with callees {2}check \(lib\/domain\/payoff-gate\.ts\)$/);
    expect(lines[1]).toMatch(/4\.00 s +40\.0 % own, .*\(anonymous\) \(lib\/sim\/bill\.ts\)$/);
  });
});
