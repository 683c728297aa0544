import { describe, expect, it } from 'vitest';
import { runNodescaler } from '../../lib/sim/replay.js';
import { parseTrace, type Trace } from '../../lib/sim/trace.js';

const BOOT_SECONDS = 120;
const BURST_AT = 30 * 60;

/** 400 gears, then 2,000 within one 5-minute step for an hour (a 5x burst, as in the suite's bursts-5x), then 400 again. */
function burstTrace(): Trace {
  const rows = ['timestamp,gears'];
  for (let second = 0; second < 2 * 3600; second += 300) rows.push(`${second},${second >= BURST_AT && second < BURST_AT + 3600 ? 2000 : 400}`);
  return parseTrace(rows.join('\n'), 'burst', { stepSeconds: 300, peakGears: 2000 });
}

describe('scale-up when a burst outruns the boot delay', () => {
  it('counts the waiting gears from the broker\'s refusals and adds every node they need in one decision', async () => {
    const outcome = await runNodescaler(burstTrace(), { gearsPerNode: 100, bootDelaySeconds: BOOT_SECONDS, store: 'memory', seed: 3, configOverrides: { scaleUp: { forecast: { bootDelay: `${BOOT_SECONDS}s` } } } as never });
    expect(outcome.violations).toEqual([]);
    expect(outcome.deadLetters).toEqual([]);
    const { result } = outcome;
    // The gears are refused in the burst's first minute and reported at once (the reporter runs every 15 s): one boot and a minute.
    const covered = result.series.find((p) => p.at >= BURST_AT && p.capacity >= 2000);
    expect(covered).toBeDefined();
    expect(covered!.at - BURST_AT).toBeLessThanOrEqual(BOOT_SECONDS + 60);
    const ups = result.events.filter((e) => e.kind === 'up' && e.at >= BURST_AT && e.at <= covered!.at);
    expect(ups).toHaveLength(1);
    expect(ups[0]!.reason).toMatch(/1[56]\d\d gear creations refused in the last 1m \(broker\)/);
    expect(ups[0]!.count).toBeGreaterThanOrEqual(16);
  });

  // A site without the broker reporter (a broker with several gear sizes): only the doubling helps.
  it('without the broker reporter, doubles the pool while it stays full, so 1,600 new gears wait a few boots, and no decision is provisioned twice', async () => {
    const outcome = await runNodescaler(burstTrace(), { gearsPerNode: 100, bootDelaySeconds: BOOT_SECONDS, store: 'memory', seed: 3, brokerReporter: false, configOverrides: { scaleUp: { doubleWhenFull: true, forecast: { bootDelay: `${BOOT_SECONDS}s` } } } as never });
    expect(outcome.violations).toEqual([]);
    expect(outcome.deadLetters).toEqual([]);
    const { result } = outcome;

    // One node per boot (the old sizing) needed 16 boots; doubling needs about log2(2000 / 500) + 1 rounds of a boot and a minute each.
    const covered = result.series.find((p) => p.at >= BURST_AT && p.capacity >= 2000);
    expect(covered).toBeDefined();
    expect(covered!.at - BURST_AT).toBeLessThanOrEqual(4 * (BOOT_SECONDS + 60));
    const ups = result.events.filter((e) => e.kind === 'up' && e.at >= BURST_AT && e.at <= covered!.at);
    expect(ups.some((e) => e.reason?.includes('full again after') && e.reason.includes('so the pool doubles'))).toBe(true);
    expect(ups.every((e) => e.reason?.includes('demand outran the boot delay'))).toBe(true);

    // Every decision claimed at most the nodes it asked for, each node once, and every node provisioned was claimed by one.
    const ids = result.events.filter((e) => e.kind === 'up').map((e) => ({ decisionId: e.decisionId!, count: e.count! }));
    const claimed = new Set<string>();
    for (const { decisionId, count } of ids) {
      const claim = await outcome.store.getScaleUp(decisionId);
      expect(claim, decisionId).toBeDefined();
      expect(claim!.slots.length, decisionId).toBeLessThanOrEqual(count);
      for (const slot of claim!.slots) {
        expect(claimed.has(slot.nodeId), slot.nodeId).toBe(false);
        claimed.add(slot.nodeId);
        expect((await outcome.store.getNode(slot.nodeId))?.decisionId).toBe(decisionId);
      }
    }
    const live = await outcome.store.listNodes('sim/small');
    for (const node of live.filter((n) => n.decisionId !== undefined && n.decisionId !== 'initial')) expect(claimed.has(node.nodeId), node.nodeId).toBe(true);
    expect(claimed.size).toBeGreaterThan(15);
  });
});
