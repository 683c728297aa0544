import { describe, expect, it } from 'vitest';
import { launchedFromTemplate, templateIdentity } from '../../lib/domain/drift.js';
import { capLiftTest } from '../../lib/domain/renewal-grace.js';
import { config, node, poolConfigOf } from '../support/builders.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const now = Date.parse('2026-11-21T10:00:00.000Z');
const template = poolConfigOf(config({}, { template: { imageId: 'ami-0bbbbbbbbbbbbbbbb' } } as never)).template;
const seenDaysAgo = (days: number) => ({ templateSeen: { identity: templateIdentity(template), since: new Date(now - days * DAY).toISOString() } });
/** A node launched `days` ago, from the old image when `drifted`. */
const host = (days: number, drifted: boolean, origin: 'provisioned' | 'adopted' = 'provisioned') => ({
  ...node('n-1', { origin }),
  createdAt: new Date(now - days * DAY).toISOString(),
  launchedFrom: { ...launchedFromTemplate(template), ...(drifted ? { image: 'ami-0aaaaaaaaaaaaaaaa' } : {}) },
});

describe('capLiftTest', () => {
  const rules = { expireAfter: 10 * DAY, expireGrace: 2 * DAY, driftGrace: DAY, template, pool: seenDaysAgo(3) };

  it('lifts the cap at the earlier grace\'s end, naming its setting', () => {
    // Expired 5 days ago (grace ends 3 days ago) and drifted 3 days ago (grace ends 2 days ago): expiry's is earlier.
    expect(capLiftTest(rules)(host(15, true))).toEqual({ atMs: now - 3 * DAY, setting: 'scaleDown.expireGrace', graceMs: 2 * DAY });
    // Launched 11 days ago: expireGrace ends tomorrow, driftGrace ended 2 days ago.
    expect(capLiftTest(rules)(host(11, true))).toEqual({ atMs: now - 2 * DAY, setting: 'scaleDown.driftGrace', graceMs: DAY });
    // Not drifted: only expiry's.
    expect(capLiftTest(rules)(host(11, false))).toEqual({ atMs: now + DAY, setting: 'scaleDown.expireGrace', graceMs: 2 * DAY });
  });

  it('lifts nothing without a grace, for a node never expired and not drifted, or for an adopted node not drifted', () => {
    expect(capLiftTest({ ...rules, expireGrace: undefined, driftGrace: undefined })(host(15, true))).toBeUndefined();
    expect(capLiftTest({ ...rules, expireAfter: undefined })(host(15, false))).toBeUndefined();
    expect(capLiftTest({ ...rules, driftGrace: undefined, expireAfter: undefined })(host(15, true))).toBeUndefined();
    expect(capLiftTest(rules)(host(15, false, 'adopted'))).toBeUndefined();
    // Without the pool's template, drift lifts nothing.
    expect(capLiftTest({ ...rules, template: undefined, expireAfter: undefined })(host(15, true))).toBeUndefined();
  });
});
