import { describe, expect, it } from 'vitest';
import { launchedFromTemplate } from '../../lib/domain/drift.js';
import { expireAfterOf, expiryTest, renewalDueTest } from '../../lib/domain/expiry.js';
import { NOW, minutesAgo, node } from '../support/builders.js';

const DAY_MS = 86_400_000;
const nowMs = NOW.getTime();
const aged = (minutes: number, origin: 'provisioned' | 'adopted' = 'provisioned') => ({ ...node('n', { origin }), createdAt: minutesAgo(minutes) });

describe('expireAfterOf: the pool\'s own, else scaleDown\'s; never is none', () => {
  it('reads the pool first', () => {
    expect(expireAfterOf({ expireAfter: DAY_MS }, {})).toBe(DAY_MS);
    expect(expireAfterOf({ expireAfter: DAY_MS }, { expireAfter: 2 * DAY_MS })).toBe(2 * DAY_MS);
    expect(expireAfterOf({ expireAfter: DAY_MS }, { expireAfter: 'never' })).toBeUndefined();
    expect(expireAfterOf({ expireAfter: 'never' }, { expireAfter: 3 * DAY_MS })).toBe(3 * DAY_MS);
    expect(expireAfterOf({}, undefined)).toBeUndefined();
  });
});

describe('expiryTest: a node nodescaler launched longer ago than expireAfter', () => {
  it('is expired from the moment its age reaches expireAfter, its age read to the minute', () => {
    const expired = expiryTest(30 * DAY_MS, nowMs);
    expect(expired(aged(30 * 1440 - 1))).toBeUndefined();
    expect(expired(aged(30 * 1440))).toBe('expired: launched 30d ago (expireAfter 30d)');
    expect(expired({ ...node('n'), createdAt: new Date(nowMs - 31 * DAY_MS - 5 * 60_000 - 17_412).toISOString() })).toBe('expired: launched 31d5m ago (expireAfter 30d)');
  });

  it('never expires an adopted node, a node whose launch time does not parse, or any node without expireAfter', () => {
    expect(expiryTest(DAY_MS, nowMs)(aged(400 * 1440, 'adopted'))).toBeUndefined();
    expect(expiryTest(DAY_MS, nowMs)({ ...node('n'), createdAt: 'yesterday' })).toBeUndefined();
    expect(expiryTest(undefined, nowMs)(aged(400 * 1440))).toBeUndefined();
  });
});

describe('renewalDueTest: drifted or expired', () => {
  const template = { imageId: 'ami-0bbbbbbbbbbbbbbbb', securityGroups: [], tags: {}, spot: false, instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }] } as never;
  const old = { ...launchedFromTemplate(template), image: 'ami-0aaaaaaaaaaaaaaaa' };
  const both = { ...aged(40 * 1440), launchedFrom: old };

  it('names drift before age, and age alone when drift does not count', () => {
    expect(renewalDueTest({ template, expireAfter: 30 * DAY_MS, nowMs, drift: true })(both)).toBe('drifted: image ami-0aaaaaaaaaaaaaaaa -> ami-0bbbbbbbbbbbbbbbb');
    expect(renewalDueTest({ template, expireAfter: 30 * DAY_MS, nowMs, drift: false })(both)).toBe('expired: launched 40d ago (expireAfter 30d)');
    expect(renewalDueTest({ template, expireAfter: undefined, nowMs, drift: false })(both)).toBeUndefined();
    expect(renewalDueTest({ expireAfter: undefined, nowMs, drift: true })(both)).toBeUndefined();
  });
});
