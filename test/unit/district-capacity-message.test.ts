/**
 * The district-capacity message (a district's UIDs, from the broker-side
 * reporter): validated like every other message, each bad field named with
 * its value; a read claiming more UIDs left than the district has, or read in
 * the future, is refused.
 */
import { describe, expect, it } from 'vitest';
import { MAX_DISTRICT_UIDS, parseMessage } from '../../lib/messages/index.js';
import { rejected } from '../support/messages.js';

const NOW = new Date('2026-03-01T12:00:30Z');
const good = (): Record<string, unknown> => ({ type: 'district-capacity', v: 1, district: 'd1', profile: 'small', maxCapacity: 6000, availableCapacity: 120, readAt: '2026-03-01T12:00:00Z' });

describe('district-capacity message', () => {
  it('parses, normalizing the read time', () => {
    expect(parseMessage(JSON.stringify(good()), { now: NOW })).toEqual({ ok: true, message: { ...good(), readAt: '2026-03-01T12:00:00.000Z' } });
    expect(parseMessage({ ...good(), availableCapacity: 0 }, { now: NOW }).ok).toBe(true);
    expect(parseMessage({ ...good(), maxCapacity: MAX_DISTRICT_UIDS, availableCapacity: MAX_DISTRICT_UIDS }, { now: NOW }).ok).toBe(true);
  });

  it.each([
    ['maxCapacity', 0],
    ['maxCapacity', MAX_DISTRICT_UIDS + 1],
    ['availableCapacity', -1],
    ['availableCapacity', 12.5],
    ['availableCapacity', '120'],
    ['district', 'd1/../d2'],
    ['profile', 'small; rm -rf /'],
    ['readAt', 'a minute ago'],
  ])('names %s when it is %j', (field, value) => {
    const error = rejected(parseMessage({ ...good(), [field]: value }, { now: NOW }));
    expect(error.field).toBe(field);
    expect(error.message).toContain(JSON.stringify(value).slice(0, 10));
  });

  it('requires every field', () => {
    for (const field of ['district', 'profile', 'maxCapacity', 'availableCapacity', 'readAt']) {
      const { [field]: _omitted, ...body } = good();
      const error = rejected(parseMessage(body, { now: NOW }));
      expect(error.field).toBe(field);
      expect(error.message).toContain('required');
    }
  });

  it('refuses more UIDs left than the district has, and a read more than 5 minutes in the future', () => {
    const more = rejected(parseMessage({ ...good(), availableCapacity: 6001 }, { now: NOW }));
    expect(more.field).toBe('availableCapacity');
    expect(more.message).toContain('must be at most maxCapacity 6000');
    const ahead = rejected(parseMessage({ ...good(), readAt: '2026-03-01T12:06:00Z' }, { now: NOW }));
    expect(ahead.field).toBe('readAt');
    expect(ahead.message).toContain('in the future');
  });
});
