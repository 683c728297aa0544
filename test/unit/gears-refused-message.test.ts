/**
 * The gears-refused message (the broker's count of refused gear creations):
 * validated like every other message, each bad field named with its value.
 */
import { describe, expect, it } from 'vitest';
import { MAX_REFUSED_GEARS, parseMessage, serializeMessage, type GearsRefusedMessage } from '../../lib/messages/index.js';
import { rejected } from '../support/messages.js';

const NOW = new Date('2026-03-01T12:00:30Z');
const good = (): Record<string, unknown> => ({
  type: 'gears-refused',
  v: 1,
  district: 'd1',
  profile: 'small',
  refused: 12,
  windowStart: '2026-03-01T11:59:00Z',
  windowEnd: '2026-03-01T12:00:00Z',
});

describe('gears-refused message', () => {
  it('parses, normalizing the window, with or without a district', () => {
    const parsed = parseMessage(JSON.stringify(good()), { now: NOW });
    expect(parsed).toEqual({ ok: true, message: { ...good(), windowStart: '2026-03-01T11:59:00.000Z', windowEnd: '2026-03-01T12:00:00.000Z' } });
    const { district: _none, ...profileOnly } = good();
    expect(parseMessage(profileOnly, { now: NOW }).ok).toBe(true);
    expect(JSON.parse(serializeMessage({ ...good(), refused: 0 } as unknown as GearsRefusedMessage))).toMatchObject({ refused: 0 });
  });

  it.each([
    ['refused', -1],
    ['refused', 2.5],
    ['refused', '12'],
    ['refused', MAX_REFUSED_GEARS + 1],
    ['profile', ''],
    ['profile', 'small; rm -rf /'],
    ['district', 'd1/../d2'],
    ['windowEnd', 'yesterday'],
    ['windowStart', 1_700_000_000],
    ['zonesRequired', 'yes'],
  ])('names %s when it is %j', (field, value) => {
    const error = rejected(parseMessage({ ...good(), [field]: value }, { now: NOW }));
    expect(error.field).toBe(field);
    expect(error.message).toContain(field);
    expect(error.message).toContain(JSON.stringify(value).slice(0, 10));
  });

  it('takes zonesRequired, the broker asking for a node in a zone, when given', () => {
    expect(parseMessage({ ...good(), zonesRequired: true }, { now: NOW })).toMatchObject({ ok: true, message: { zonesRequired: true } });
  });

  it('requires every field but district', () => {
    for (const field of ['profile', 'refused', 'windowStart', 'windowEnd']) {
      const { [field]: _omitted, ...body } = good();
      const error = rejected(parseMessage(body, { now: NOW }));
      expect(error.field).toBe(field);
      expect(error.message).toContain('required');
    }
  });

  it('refuses a window that ends before it starts or spans more than an hour', () => {
    const backwards = rejected(parseMessage({ ...good(), windowStart: '2026-03-01T12:00:00Z', windowEnd: '2026-03-01T11:59:00Z' }, { now: NOW }));
    expect(backwards.field).toBe('windowEnd');
    expect(backwards.message).toContain('must be after windowStart');
    const long = rejected(parseMessage({ ...good(), windowStart: '2026-03-01T10:59:00Z' }, { now: NOW }));
    expect(long.field).toBe('windowStart');
    expect(long.message).toContain('61 minutes is longer than 60');
  });

  it('refuses a window ending more than 5 minutes in the future (it would shadow every later report)', () => {
    const error = rejected(parseMessage({ ...good(), windowStart: '2026-03-01T12:05:00Z', windowEnd: '2026-03-01T12:06:00Z' }, { now: NOW }));
    expect(error.field).toBe('windowEnd');
    expect(error.message).toContain('in the future');
  });

  it('refuses a gear count beyond 100,000 and an unknown version', () => {
    expect(parseMessage({ ...good(), refused: 100_000 }, { now: NOW }).ok).toBe(true);
    expect(rejected(parseMessage({ ...good(), refused: 100_001 }, { now: NOW })).message).toContain('100001');
    expect(rejected(parseMessage({ ...good(), type: 'gears-refused', v: 2 }, { now: NOW })).field).toBe('v');
  });
});
