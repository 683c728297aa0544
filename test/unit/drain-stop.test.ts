import { describe, expect, it } from 'vitest';
import { drainStop } from '../../lib/domain/drain-stop.js';

const AT = '2026-03-01T12:00:00.000Z';

describe('how an aborted drain ended: only a started drain stopped for a fault pages and backs off', () => {
  it('pages and backs the scale-down off for a started drain with no mark', () => {
    expect(drainStop({}, true)).toMatchObject({ kind: 'failed', metric: 'DrainsAborted', backsOff: true, ended: 'aborted', decisionKind: 'failure' });
  });

  it('counts a call-off and an outgrown drain apart, started or not, and never backs off for them', () => {
    for (const started of [true, false]) {
      expect(drainStop({ calledOffAt: AT }, started)).toMatchObject({ kind: 'called-off', metric: 'DrainsCalledOff', backsOff: false, decisionKind: 'scale-up' });
      expect(drainStop({ outgrownAt: AT }, started)).toMatchObject({ kind: 'outgrown', metric: 'DrainsOutgrown', backsOff: false, ended: 'outgrown', decisionKind: 'scale-down' });
    }
    // A call-off is the first mark read: it wins over a later one.
    expect(drainStop({ calledOffAt: AT, outgrownAt: AT }, true).kind).toBe('called-off');
  });

  it('a drain whose node outgrew its price ends as no failure and pages no one', () => {
    const repriced = drainStop({ repricedAt: AT }, true);
    expect(repriced).toMatchObject({ kind: 'repriced', backsOff: false, ended: 'repriced', decisionKind: 'scale-down' });
    expect(repriced.metric).toBeUndefined();
  });

  it("records no count for an operator's cancel (its audit entry says who) and none for a refusal at the start", () => {
    const cancelled = drainStop({ cancelledAt: AT }, true);
    expect(cancelled).toMatchObject({ kind: 'cancelled', backsOff: false, ended: 'stopped', decisionKind: 'scale-down' });
    expect(cancelled.metric).toBeUndefined();
    const refused = drainStop({}, false);
    expect(refused).toMatchObject({ kind: 'refused', backsOff: false, decisionKind: 'refused' });
    expect(refused.metric).toBeUndefined();
  });
});
