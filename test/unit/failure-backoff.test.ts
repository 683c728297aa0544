import { describe, expect, it } from 'vitest';
import { failureBackoff } from '../../lib/domain/failure-backoff.js';

const DELAY = 30_000;
const HOST = '2025-03-10T10:00:00.000Z';
const DRAIN = '2025-03-10T10:00:10.000Z';

describe('failure backoff: a failed host holds both directions, a failed drain only scale-down', () => {
  it('holds scale-up only for a host failure', () => {
    expect(failureBackoff({ lastDrainFailureAt: DRAIN }, DELAY, 'scale-up')).toBeUndefined();
    expect(failureBackoff({ lastFailureAt: HOST, lastDrainFailureAt: DRAIN }, DELAY, 'scale-up')).toEqual({ since: HOST, untilMs: Date.parse(HOST) + DELAY });
  });

  it('holds scale-down from the later of the two failures', () => {
    expect(failureBackoff({ lastFailureAt: HOST, lastDrainFailureAt: DRAIN }, DELAY, 'scale-down')).toEqual({ since: DRAIN, untilMs: Date.parse(DRAIN) + DELAY });
    expect(failureBackoff({ lastFailureAt: DRAIN, lastDrainFailureAt: HOST }, DELAY, 'scale-down')?.since).toBe(DRAIN);
    expect(failureBackoff({ lastFailureAt: HOST }, DELAY, 'scale-down')?.since).toBe(HOST);
    expect(failureBackoff({}, DELAY, 'scale-down')).toBeUndefined();
  });
});
