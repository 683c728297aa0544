import { describe, expect, it } from 'vitest';
import { epochMinute } from '../../lib/domain/forecast.js';
import { recordMinutes, settledDemand } from '../../lib/domain/settled-demand.js';
import type { DemandSample, NodeRecord } from '../../lib/domain/model.js';
import { NOW, node } from '../support/builders.js';

const MIN = 60_000;
const OPTIONS = { window: 30 * MIN, keepDaily: true };
const nowMinute = epochMinute(NOW);
/** Half a minute into NOW's minute: the first of its reports are in, the rest still count the minute before. */
const MID_MINUTE = new Date(NOW.getTime() + 30_000);

/** A pool whose minute before NOW peaked at 60 gears a node, with `reportedThisMinute` of them already at 40 again. */
function crestPassing(count: number, reportedThisMinute: number): NodeRecord[] {
  return Array.from({ length: count }, (_, i) =>
    i < reportedThisMinute
      ? node(`n${i}`, { gears: 40, reportedMinutesAgo: 0, prior: { gears: 60, minutesAgo: 1 } })
      : node(`n${i}`, { gears: 60, reportedMinutesAgo: 1, prior: { gears: 40, minutesAgo: 2 } }),
  );
}

describe('settledDemand', () => {
  it("reads the minute before from each node's report of it, whichever of its two reports that is", () => {
    const nodes = crestPassing(20, 10);
    // The newest reports mix the two minutes: 10 x 40 + 10 x 60.
    expect(nodes.reduce((sum, n) => sum + n.stats!.activeGears, 0)).toBe(1000);
    expect(settledDemand(nodes, nowMinute - 1)).toBe(1200);
    // NOW's minute, still under way, is the newest reports.
    expect(settledDemand(nodes, nowMinute)).toBe(1000);
  });

  it('holds a node that reports on change only at its newest report before the minute', () => {
    const quiet = node('quiet', { gears: 30, reportedMinutesAgo: 3, prior: { gears: 10, minutesAgo: 7 } });
    expect(settledDemand([quiet], nowMinute - 1)).toBe(30);
  });

  it('knows nothing of a minute a node has no report of: it joined, reported twice since, or its prior is not kept', () => {
    const steady = node('steady', { gears: 40, reportedMinutesAgo: 0, prior: { gears: 60, minutesAgo: 1 } });
    const reportedTwiceSince = node('twice', { gears: 50, reportedMinutesAgo: 0, prior: { gears: 45, minutesAgo: 0 } });
    const withoutPrior = node('joined', { gears: 7, reportedMinutesAgo: 0 });
    expect(settledDemand([steady], nowMinute - 1)).toBe(60);
    expect(settledDemand([steady, reportedTwiceSince], nowMinute - 1)).toBeUndefined();
    expect(settledDemand([steady, withoutPrior], nowMinute - 1)).toBeUndefined();
  });

  it("counts active and draining nodes' gears, as the pool's demand does", () => {
    const nodes = [
      node('a', { gears: 10, reportedMinutesAgo: 0, prior: { gears: 20, minutesAgo: 1 } }),
      node('d', { state: 'draining', gears: 5, reportedMinutesAgo: 0, prior: { gears: 6, minutesAgo: 1 } }),
      node('p', { state: 'provisioning', gears: 9 }),
      node('t', { state: 'terminated', gears: 9 }),
      node('x', { gears: null }),
    ];
    expect(settledDemand(nodes, nowMinute - 1)).toBe(26);
  });

  it('reads reports written in any ISO form', () => {
    const offset = node('offset', { gears: 40, prior: { gears: 60, minutesAgo: 1 } });
    offset.stats!.reportedAt = '2025-03-10T11:00:00+01:00';
    expect(settledDemand([offset], nowMinute - 1)).toBe(60);
  });
});

describe('recordMinutes', () => {
  it('records a crest whole though its minute was evaluated with half its reports in', () => {
    // Evaluated in the crest's minute with half the nodes reported: 10 x 60 + 10 x 40.
    const during = Array.from({ length: 20 }, (_, i) =>
      i < 10 ? node(`n${i}`, { gears: 60, reportedMinutesAgo: 1, prior: { gears: 40, minutesAgo: 2 } }) : node(`n${i}`, { gears: 40, reportedMinutesAgo: 2 }),
    );
    let history: DemandSample[] = recordMinutes([], during, new Date(NOW.getTime() - MIN + 30_000), 1000, OPTIONS);
    expect(history.at(-1)).toEqual([nowMinute - 1, 1000]);
    // A minute on, every node has reported the crest's minute: it is recorded as they measured it.
    history = recordMinutes(history, crestPassing(20, 10), MID_MINUTE, 1000, OPTIONS);
    expect(history.slice(-2)).toEqual([
      [nowMinute - 1, 1200],
      [nowMinute, 1000],
    ]);
  });

  it('leaves the sample recorded during the minute when its nodes do not tell it whole', () => {
    const history: DemandSample[] = [[nowMinute - 1, 1000]];
    const joined = node('joined', { gears: 40, reportedMinutesAgo: 0 });
    expect(recordMinutes(history, [...crestPassing(20, 10), joined], MID_MINUTE, 1040, OPTIONS)).toEqual([
      [nowMinute - 1, 1000],
      [nowMinute, 1040],
    ]);
  });

  it('fills a minute no evaluation recorded, and leaves the history it is given unchanged', () => {
    const history: DemandSample[] = [[nowMinute - 3, 900]];
    const recorded = recordMinutes(history, crestPassing(20, 10), MID_MINUTE, 1000, OPTIONS);
    expect(recorded).toEqual([
      [nowMinute - 3, 900],
      [nowMinute - 1, 1200],
      [nowMinute, 1000],
    ]);
    expect(history).toEqual([[nowMinute - 3, 900]]);
  });
});
