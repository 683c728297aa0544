/** Hostile and malformed bodies: bad timestamps, clocks in the future, bad JSON, and inputs that must never throw. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_BODY_BYTES,
  locateJsonError,
  normalizeIsoDateTime,
  parseMessage,
  type ParseResult,
} from '../../lib/messages/index.js';
import { sample, accepted, rejected, paths, nodeStats, scaleUp, scaleDown, drainComplete } from '../support/messages.js';

describe('timestamps', () => {
  it.each([
    ['2026-03-01T12:00:00Z', '2026-03-01T12:00:00.000Z'],
    ['2026-03-01T14:00:00+02:00', '2026-03-01T12:00:00.000Z'],
    ['2026-03-01T06:30:00-05:30', '2026-03-01T12:00:00.000Z'],
    ['2026-03-01T12:00Z', '2026-03-01T12:00:00.000Z'],
    ['2026-03-01T12:00:00.5Z', '2026-03-01T12:00:00.500Z'],
    ['2026-03-01T12:00:00.123456789Z', '2026-03-01T12:00:00.123Z'],
    ['2026-03-01T00:30:00+01:00', '2026-02-28T23:30:00.000Z'],
    ['2024-02-29T12:00:00Z', '2024-02-29T12:00:00.000Z'],
  ])('normalizes %s to %s', (input, output) => {
    expect(normalizeIsoDateTime(input)).toBe(output);
    const message = accepted(parseMessage({ ...nodeStats(), reportedAt: input }));
    expect(message).toMatchObject({ reportedAt: output });
  });

  it('normalizes every timestamp field, EC2 event times included', () => {
    expect(accepted(parseMessage({ ...scaleUp(), decidedAt: '2026-03-01T13:00:30+01:00' }))).toMatchObject({
      decidedAt: '2026-03-01T12:00:30.000Z',
    });
    expect(accepted(parseMessage({ ...scaleDown(), decidedAt: '2026-03-01T13:10Z' }))).toMatchObject({
      decidedAt: '2026-03-01T13:10:00.000Z',
    });
    expect(accepted(parseMessage({ ...drainComplete(), completedAt: '2026-03-01T13:14:27.5123Z' }))).toMatchObject({
      completedAt: '2026-03-01T13:14:27.512Z',
    });
    const event = sample('ec2-rebalance.json');
    expect(accepted(parseMessage({ ...event, time: '2026-03-01T16:10:00+02:00' }))).toMatchObject({
      time: '2026-03-01T14:10:00.000Z',
    });
  });

  it('takes a canonical UTC time exactly when it is a real instant (as Date reads it back)', () => {
    const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));
    const canonical = fc
      // Fields just past their ranges as well as within them: month 13, day 32, hour 24, a 60th minute or second.
      .tuple(fc.integer({ min: 0, max: 9999 }), two(13), two(32), two(24), two(60), two(60), fc.integer({ min: 0, max: 999 }))
      .map(([y, mo, d, h, mi, s, ms]) => `${String(y).padStart(4, '0')}-${mo}-${d}T${h}:${mi}:${s}.${String(ms).padStart(3, '0')}Z`);
    fc.assert(
      fc.property(canonical, (value) => {
        const time = Date.parse(value);
        const real = Number.isFinite(time) && new Date(time).toISOString() === value;
        expect(normalizeIsoDateTime(value)).toBe(real ? value : undefined);
      }),
      { numRuns: 2000 },
    );
  });

  it('makes string order equal time order across offsets', () => {
    const a = normalizeIsoDateTime('2026-03-01T12:59:00+01:00'); // 11:59Z
    const b = normalizeIsoDateTime('2026-03-01T12:00:00Z');
    expect(a).toBeDefined();
    expect(b).toBeDefined();
    expect((a as string) < (b as string)).toBe(true);
  });

  it.each([
    ['2026-13-45T00:00:00Z', 'month 13'],
    ['2026-02-30T00:00:00Z', 'no 30 February'],
    ['2025-02-29T00:00:00Z', 'not a leap year'],
    ['2026-03-01', 'a plain date'],
    ['2026-03-01T12:00:00', 'no zone'],
    ['2026-03-01 12:00:00Z', 'space separator'],
    ['2026-03-01T24:00:00Z', 'hour 24'],
    ['2026-03-01T12:60:00Z', 'minute 60'],
    ['2026-03-01T12:00:60Z', 'leap second'],
    ['2026-03-01T12:00:00+2:00', 'one-digit offset'],
    ['2026-03-01T12:00:00+24:00', 'offset 24h'],
    ['2026-03-01t12:00:00z', 'lowercase'],
    ['20260301T120000Z', 'basic format'],
    ['Sun, 01 Mar 2026 12:00:00 GMT', 'RFC 2822, which Date parses'],
    ['1772366400000', 'epoch millis as a string'],
    ['9999-12-31T23:59:00-01:00', 'year 10000 in UTC'],
    ['yesterday', 'words'],
    ['', 'empty'],
  ])('rejects %s (%s), naming the field', (input) => {
    expect(normalizeIsoDateTime(input)).toBeUndefined();
    const error = rejected(parseMessage({ ...nodeStats(), reportedAt: input }));
    expect(error.field).toBe('reportedAt');
    expect(error.issues).toHaveLength(1);
    expect(error.message).toContain('reportedAt: must be an ISO 8601 date-time with Z or an offset');
  });

  it.each<[unknown, string]>([
    [1772366400000, 'epoch millis'],
    [1772366400, 'epoch seconds'],
    [null, 'null'],
    [{ $date: '2026-03-01T12:00:00Z' }, 'an object'],
  ])('rejects %j (%s) for every timestamp field', (input, _kind) => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [nodeStats(), 'reportedAt'],
      [scaleUp(), 'decidedAt'],
      [scaleDown(), 'decidedAt'],
      [drainComplete(), 'completedAt'],
      [sample('ec2-state-change.json'), 'time'],
    ];
    for (const [body, field] of cases) {
      const error = rejected(parseMessage({ ...body, [field]: input }));
      expect(error.field).toBe(field);
      expect(error.issues[0]?.message).toMatch(/^must be an ISO 8601 date-time/);
    }
  });

  it('says "required" for a missing timestamp', () => {
    const { reportedAt: _omitted, ...body } = nodeStats();
    const error = rejected(parseMessage(body));
    expect(error.field).toBe('reportedAt');
    expect(error.message).toBe('invalid node-stats v1 message: reportedAt: required');
  });
});

describe('reportedAt in the future', () => {
  const now = new Date('2026-03-01T12:00:00Z');

  it('rejects a report more than 5 minutes ahead of now', () => {
    const error = rejected(parseMessage({ ...nodeStats(), reportedAt: '2026-03-01T12:06:00Z' }, { now }));
    expect(error.field).toBe('reportedAt');
    expect(error.issues).toHaveLength(1);
    expect(error.message).toContain('reportedAt: is 360s in the future (now is 2026-03-01T12:00:00.000Z)');
    expect(error.message).toContain('at most 5 minutes ahead');
  });

  it('compares instants, not strings (offsets count)', () => {
    const error = rejected(parseMessage({ ...nodeStats(), reportedAt: '2026-03-01T13:05:01+01:00' }, { now }));
    expect(error.field).toBe('reportedAt');
    expect(error.issues[0]?.message).toMatch(/^is 301s in the future/);
  });

  it('accepts up to exactly 5 minutes ahead, and any past time', () => {
    expect(accepted(parseMessage({ ...nodeStats(), reportedAt: '2026-03-01T12:05:00Z' }, { now }))).toMatchObject({
      reportedAt: '2026-03-01T12:05:00.000Z',
    });
    expect(accepted(parseMessage({ ...nodeStats(), reportedAt: '2020-01-01T00:00:00Z' }, { now }))).toMatchObject({
      reportedAt: '2020-01-01T00:00:00.000Z',
    });
  });

  it('skips the check when no now is given (or now is an invalid Date)', () => {
    const body = { ...nodeStats(), reportedAt: '2099-01-01T00:00:00Z' };
    expect(accepted(parseMessage(body))).toMatchObject({ reportedAt: '2099-01-01T00:00:00.000Z' });
    expect(accepted(parseMessage(body, { now: new Date(Number.NaN) }))).toMatchObject({ type: 'node-stats' });
  });

  it('is reported together with the other problems of the message', () => {
    const error = rejected(
      parseMessage({ ...nodeStats(), activeGears: -1, reportedAt: '2026-03-01T13:00:00Z' }, { now }),
    );
    expect(paths(error)).toEqual(['activeGears', 'reportedAt']);
  });
});

describe('bad JSON and bad bodies', () => {
  it.each([
    ['{"type":"node-stats",}', 21, "expected a property name in double quotes, got \"}\""],
    ['{"a":1 x}', 7, "expected ',' or '}', got \"x\""],
    ['{"a":}', 5, 'expected a JSON value, got "}"'],
    ['', 0, 'expected a JSON value, got the end of the input'],
    ['{"type":"scale-up"', 18, "expected ',' or '}', got the end of the input"],
    ['{"a":"unterminated', 18, 'unterminated string'],
    ['{"a":"\u0001"}', 6, 'control character in string'],
    ['{"a":tru}', 8, 'expected "true"'],
    ['{"a":01}', 6, "expected ',' or '}', got \"1\""],
    ['{"a":"\\x"}', 7, 'invalid escape in string'],
    ['{}{}', 2, 'unexpected data after the JSON value'],
    ["{'type':'scale-up'}", 1, 'expected a property name in double quotes'],
    ['[1,2,]', 5, 'expected a JSON value, got "]"'],
  ])('rejects %j with field body and the position', (body, position, reason) => {
    const error = rejected(parseMessage(body));
    expect(error.field).toBe('body');
    expect(error.issues).toHaveLength(1);
    expect(error.message).toContain(`body: invalid JSON at position ${position} (line 1, column ${position + 1}): ${reason}`);
    expect(locateJsonError(body)?.position).toBe(position);
  });

  it('agrees with V8 where V8 reports a position', () => {
    for (const body of ['{"a":1 x}', '{"a":"\u0001"}', '{"a" 1}', '[1 2]', '{"a":1}x']) {
      let v8: string | undefined;
      try {
        JSON.parse(body);
      } catch (error) {
        v8 = (error as Error).message;
      }
      const match = /position (\d+)/.exec(v8 ?? '');
      expect(v8).toBeDefined();
      if (match) expect(locateJsonError(body)?.position).toBe(Number(match[1]));
      expect(rejected(parseMessage(body)).field).toBe('body');
    }
  });

  it('reports line and column in a multi-line body', () => {
    const error = rejected(parseMessage('{\n  "type": "scale-up",\n  "v": 1,,\n}'));
    expect(error.message).toContain('invalid JSON at position 33 (line 3, column 10)');
  });

  it('finds no error in valid JSON', () => {
    for (const body of ['{}', '[]', '"x"', '-0.5e+10', 'null', ' { "a" : [ true , false , null , "\\u00e9\\n" ] } ']) {
      expect(locateJsonError(body)).toBeUndefined();
    }
  });

  it('rejects a body over 256 KiB before parsing it', () => {
    const reason = 'x'.repeat(MAX_BODY_BYTES);
    const body = JSON.stringify({ ...scaleUp(), reason });
    const error = rejected(parseMessage(body));
    expect(error.field).toBe('body');
    expect(error.issues).toHaveLength(1);
    expect(error.message).toContain(`message body is ${body.length} bytes, over the SQS limit of 262144 bytes (256 KiB)`);
    // Not even JSON: still the size that is reported.
    const garbage = rejected(parseMessage('{'.repeat(MAX_BODY_BYTES + 1)));
    expect(garbage.field).toBe('body');
    expect(garbage.message).toContain('over the SQS limit');
  });

  it('counts the size in UTF-8 bytes, not characters', () => {
    const body = JSON.stringify({ ...scaleUp(), reason: 'é'.repeat(140_000) }); // 140,000 chars, 280,000 bytes
    expect(body.length).toBeLessThan(MAX_BODY_BYTES);
    const error = rejected(parseMessage(body));
    expect(error.field).toBe('body');
    expect(error.message).toMatch(/message body is 280\d{3} bytes, over the SQS limit/);
  });

  it('accepts a body of exactly 256 KiB as far as size goes', () => {
    const base = JSON.stringify({ ...scaleUp(), padding: '' });
    const body = JSON.stringify({ ...scaleUp(), padding: 'p'.repeat(MAX_BODY_BYTES - base.length) });
    expect(Buffer.byteLength(body)).toBe(MAX_BODY_BYTES);
    expect(accepted(parseMessage(body))).toMatchObject({ type: 'scale-up' });
  });

  it.each([
    ['null', 'null'],
    ['42', 'a number'],
    ['"node-stats"', 'a string'],
    ['[]', 'an array'],
    ['[{"type":"scale-up"}]', 'an array'],
    ['true', 'a boolean'],
  ])('rejects the JSON body %s: not an object', (body, kind) => {
    const error = rejected(parseMessage(body));
    expect(error.field).toBe('');
    expect(error.message).toBe(`invalid message: (root): message must be a JSON object, got ${kind}`);
  });

  it.each([
    [null, 'null'],
    [undefined, 'a undefined'],
    [42, 'a number'],
    [Number.NaN, 'NaN'],
    [Number.POSITIVE_INFINITY, 'Infinity'],
    [[], 'an array'],
    [true, 'a boolean'],
    [10n, 'a bigint'],
    [Symbol('x'), 'a symbol'],
    [() => 1, 'a function'],
    [new Uint8Array([123, 125]), 'binary data'],
  ])('rejects the decoded value %s: not an object', (input, kind) => {
    const error = rejected(parseMessage(input));
    expect(error.field).toBe('');
    expect(error.message).toContain(`message must be a JSON object, got ${kind}`);
  });
});

describe('never throws', () => {
  const deep = (depth: number): unknown => {
    let value: unknown = 1;
    for (let i = 0; i < depth; i++) value = { a: [value] };
    return value;
  };
  const deepArray = (depth: number): unknown => {
    let value: unknown = [];
    for (let i = 0; i < depth; i++) value = [value];
    return value;
  };

  it('handles 10,000 levels of nesting as a body', () => {
    const arrays = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    expect(rejected(parseMessage(arrays)).message).toContain('must be a JSON object, got an array');
    const objects = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    expect(rejected(parseMessage(objects)).field).toBe('type');
    const unbalanced = `{"type":"node-stats","v":1,"gears":${'['.repeat(10_000)}`;
    const error = rejected(parseMessage(unbalanced));
    expect(error.field).toBe('body');
    expect(error.message).toContain('got the end of the input');
  });

  it('handles deep nesting inside a field, as a body and as an object', () => {
    const body = `{"type":"node-stats","v":1,"nodeId":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    expect(body.length).toBeLessThan(MAX_BODY_BYTES);
    const fromBody = rejected(parseMessage(body));
    expect(fromBody.field).toBe('nodeId');
    expect(fromBody.issues[0]?.message).toBe('must be a string');
    const fromObject = rejected(parseMessage({ ...nodeStats(), gears: [deepArray(10_000)], cpu: deep(10_000) }));
    expect(paths(fromObject)).toEqual(['gears.0', 'cpu']);
    // The offending values are too deep for JSON.stringify; the message still renders.
    expect(fromObject.message).toContain('gears.0: must be an object {uuid, app, size} (got [unprintable value])');
    expect(rejected(parseMessage(deep(10_000))).field).toBe('type');
  });

  it('handles cycles, throwing getters and proxies', () => {
    const cyclic: Record<string, unknown> = { ...nodeStats() };
    cyclic.nodeId = cyclic;
    expect(rejected(parseMessage(cyclic)).field).toBe('nodeId');

    const getter = { ...scaleUp() };
    Object.defineProperty(getter, 'reason', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    const fromGetter = rejected(parseMessage(getter));
    expect(fromGetter.field).toBe('');
    expect(fromGetter.message).toContain('cannot validate message: boom');

    const proxy = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
        getOwnPropertyDescriptor() {
          throw new Error('trap');
        },
      },
    );
    expect(rejected(parseMessage(proxy)).message).toContain('trap');

    const hostile = {
      ...nodeStats(),
      nodeId: {
        toJSON() {
          throw new Error('no json');
        },
        toString() {
          throw new Error('no string');
        },
      },
    };
    const fromHostile = rejected(parseMessage(hostile));
    expect(fromHostile.field).toBe('nodeId');
    expect(fromHostile.message).toContain('[unprintable value]');
  });

  it('survives a pile of hostile inputs, always with a ValidationError', () => {
    const inputs: unknown[] = [
      '',
      ' ',
      '\u0000',
      '\uFEFF{}',
      '\ud800',
      '{"type":"\ud800"}',
      '{"type":"node-stats","v":1e999}',
      '{"__proto__":{"type":"node-stats"}}',
      '{"type":"node-stats","v":1,"__proto__":{"nodeId":"x"}}',
      'x'.repeat(5_000_000),
      '💥'.repeat(70_000),
      Object.create(null),
      Object.create({ type: 'node-stats', v: 1 }),
      new Date(),
      new Map([['type', 'node-stats']]),
      { type: 'node-stats', v: 1, gears: new Array(1_000_000) },
      { type: 'scale-up', v: 1, count: 10n },
      { type: 'scale-up', v: 1, count: Symbol('c'), reason: () => 1 },
      { source: 42 },
      { 'detail-type': null },
    ];
    for (const input of inputs) {
      let result: ParseResult | undefined;
      expect(() => {
        result = parseMessage(input, { now: new Date() });
      }).not.toThrow();
      const error = rejected(result as ParseResult);
      expect(typeof error.field).toBe('string');
      expect(error.message.length).toBeGreaterThan(0);
    }
  });
});
