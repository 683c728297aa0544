import { describe, expect, it } from 'vitest';
import { lastAddedAt } from '../../lib/domain/last-added.js';
import { minutesAgo, node } from '../support/builders.js';

describe('lastAddedAt', () => {
  it('is the last scale-up decision while no node joined after it', () => {
    const joinedBefore = { ...node('old'), joinedAt: minutesAgo(60) };
    expect(lastAddedAt({ lastScaleUpAt: minutesAgo(12) }, [joinedBefore])).toBe(minutesAgo(12));
  });

  it("is a node's join when it came after the decision (the boot outlasted the delay)", () => {
    const booted = { ...node('new'), joinedAt: minutesAgo(1) };
    expect(lastAddedAt({ lastScaleUpAt: minutesAgo(11) }, [node('old'), booted])).toBe(minutesAgo(1));
  });

  it('counts only nodes that are active: a joined node now draining or gone does not hold scale-down', () => {
    const draining = { ...node('leaving', { state: 'draining' }), joinedAt: minutesAgo(1) };
    expect(lastAddedAt({ lastScaleUpAt: minutesAgo(30) }, [draining])).toBe(minutesAgo(30));
    expect(lastAddedAt({}, [draining])).toBeUndefined();
  });
});
