import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { ValidationError } from '../../lib/errors.js';
import {
  MAX_BODY_BYTES,
  MESSAGE_VERSION,
  locateJsonError,
  normalizeIsoDateTime,
  parseMessage,
  serializeMessage,
  type Ec2Event,
  type Message,
  type NodeStatsMessage,
  type ParsedMessage,
  type ParseResult,
} from '../../lib/messages/index.js';

const SAMPLES = new URL('../../events/messages/', import.meta.url);

function sampleText(name: string): string {
  return readFileSync(new URL(name, SAMPLES), 'utf8');
}

function sample(name: string): Record<string, unknown> {
  return JSON.parse(sampleText(name)) as Record<string, unknown>;
}

function accepted(result: ParseResult): ParsedMessage {
  if (!result.ok) throw new Error(`expected the message to be accepted, got: ${result.error.message}`);
  return result.message;
}

function rejected(result: ParseResult): ValidationError {
  if (result.ok) throw new Error(`expected the message to be rejected, got ${JSON.stringify(result.message)}`);
  expect(result.error).toBeInstanceOf(ValidationError);
  expect(result.error.retryable).toBe(false);
  return result.error;
}

const paths = (error: ValidationError): string[] => error.issues.map((issue) => issue.path);

const nodeStats = (): Record<string, unknown> => sample('node-stats.json');
const scaleUp = (): Record<string, unknown> => sample('scale-up.json');
const scaleDown = (): Record<string, unknown> => sample('scale-down.json');
const drainComplete = (): Record<string, unknown> => sample('drain-complete.json');

describe('sample bodies in events/messages', () => {
  const expected: Record<string, ParsedMessage> = {
    'node-stats.json': {
      type: 'node-stats',
      v: 1,
      nodeId: 'node-3.example.com',
      district: 'd1',
      profile: 'small',
      activeGears: 3,
      maxActiveGears: 100,
      gears: [
        { uuid: '5f3c9a1e2b7d4c0e8a6f1d2c3b4a5968', app: 'shop-frontend', size: 'small' },
        { uuid: '8a1b2c3d4e5f60718293a4b5c6d7e8f9', app: 'shop-api', size: 'small' },
        { uuid: '0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f', app: 'blog', size: 'small' },
      ],
      cpu: 37.5,
      memory: 62.1,
      reportedAt: '2026-03-01T12:00:00.000Z',
    },
    'scale-up.json': {
      type: 'scale-up',
      v: 1,
      decisionId: 'up:d1_small:2026-03-01T12:00:30.000Z',
      pool: 'd1/small',
      count: 2,
      reason: 'utilization 91% >= scale-up threshold 90% for 5m; 2 nodes bring it to the 70% target',
      decidedAt: '2026-03-01T12:00:30.000Z',
    },
    'scale-down.json': {
      type: 'scale-down',
      v: 1,
      decisionId: 'down:d1_small:2026-03-01T13:10:00.000Z',
      pool: 'd1/small',
      nodeId: 'node-3.example.com',
      reason: 'utilization 22% <= scale-down threshold 50% for 10m; node-3.example.com holds the fewest gears (3)',
      decidedAt: '2026-03-01T13:10:00.000Z',
    },
    'drain-complete.json': {
      type: 'drain-complete',
      v: 1,
      drainId: 'drain:node-3.example.com:2026-03-01T13:10:00.000Z',
      nodeId: 'node-3.example.com',
      pool: 'd1/small',
      completedAt: '2026-03-01T13:14:27.512Z',
    },
    'gears-refused.json': {
      type: 'gears-refused',
      v: 1,
      district: 'd1',
      profile: 'small',
      refused: 37,
      windowStart: '2026-03-01T11:59:00.000Z',
      windowEnd: '2026-03-01T12:00:00.000Z',
    },
    'ec2-state-change.json': {
      type: 'ec2-state-change',
      eventId: '7bf73129-1428-4cd3-a780-95db273d1602',
      instanceId: 'i-0abcd1234ef567890',
      state: 'running',
      time: '2026-03-01T12:03:41.000Z',
    },
    'ec2-spot-interruption.json': {
      type: 'ec2-spot-interruption',
      eventId: '12345678-1234-1234-1234-123456789012',
      instanceId: 'i-1234567890abcdef0',
      action: 'terminate',
      time: '2026-03-01T14:20:05.000Z',
    },
    'ec2-rebalance.json': {
      type: 'ec2-rebalance',
      eventId: 'a9b2c7e4-5f61-4d3b-8e2a-0c1d2e3f4a5b',
      instanceId: 'i-1234567890abcdef0',
      time: '2026-03-01T14:10:00.000Z',
    },
  };

  it('has one sample per kind, and nothing else', () => {
    const files = readdirSync(SAMPLES).filter((file) => file.endsWith('.json'));
    expect(files.sort()).toEqual(Object.keys(expected).sort());
  });

  it.each(Object.entries(expected))('%s parses, from the SQS body string, to the typed value', (file, value) => {
    expect(accepted(parseMessage(sampleText(file)))).toEqual(value);
  });

  it.each(Object.entries(expected))('%s parses the same from an already-decoded object', (file, value) => {
    expect(accepted(parseMessage(sample(file), { now: new Date('2026-03-01T12:00:00Z') }))).toEqual(value);
  });

  it('has the EventBridge envelope shape for the EC2 samples', () => {
    for (const file of ['ec2-state-change.json', 'ec2-spot-interruption.json', 'ec2-rebalance.json']) {
      const event = sample(file);
      expect(Object.keys(event).sort()).toEqual(
        ['account', 'detail', 'detail-type', 'id', 'region', 'resources', 'source', 'time', 'version'].sort(),
      );
      expect(event.source).toBe('aws.ec2');
      expect(event.version).toBe('0');
      expect(locateJsonError(sampleText(file))).toBeUndefined();
    }
  });

  it('types the union by `type`', () => {
    const message = accepted(parseMessage(sampleText('node-stats.json')));
    expectTypeOf(message).toEqualTypeOf<ParsedMessage>();
    expectTypeOf<Message | Ec2Event>().toEqualTypeOf<ParsedMessage>();
    expectTypeOf<NodeStatsMessage['v']>().toEqualTypeOf<1>();
    expectTypeOf<NodeStatsMessage['reportedAt']>().toEqualTypeOf<string>();
    expect(MESSAGE_VERSION).toBe(1);
    if (message.type !== 'node-stats') throw new Error('expected node-stats');
    expectTypeOf(message).toEqualTypeOf<NodeStatsMessage>();
    expect(message.gears?.[2]?.app).toBe('blog');
  });

  it('drops fields it does not know (a newer producer may add some)', () => {
    const message = accepted(parseMessage({ ...scaleUp(), extra: { nested: true } }));
    expect(message).not.toHaveProperty('extra');
    expect(message).toEqual(expected['scale-up.json']);
  });
});

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

describe('type and version dispatch', () => {
  it('rejects a missing type, listing the known ones', () => {
    const { type: _omitted, ...body } = scaleUp();
    const error = rejected(parseMessage(body));
    expect(error.field).toBe('type');
    expect(error.issues).toHaveLength(1);
    expect(error.message).toContain('type: required; known types: node-stats, scale-up, scale-down, drain-complete, gears-refused');
  });

  it.each(['scale-sideways', 'Node-Stats', '', 'constructor', '__proto__', 'toString'])(
    'rejects the unknown type %j with one clear issue',
    (type) => {
      const error = rejected(parseMessage({ ...nodeStats(), type, activeGears: -5, nodeId: 'BAD' }));
      expect(error.field).toBe('type');
      expect(error.issues).toHaveLength(1);
      expect(error.message).toBe(
        'invalid message: type: unknown message type; known types: node-stats, scale-up, scale-down, drain-complete, gears-refused ' +
          `(an EC2 event needs source and detail-type instead) (got ${JSON.stringify(type)})`,
      );
    },
  );

  it.each([1, null, ['node-stats'], { name: 'node-stats' }])('rejects the non-string type %j', (type) => {
    const error = rejected(parseMessage({ ...nodeStats(), type }));
    expect(error.field).toBe('type');
    expect(error.message).toContain('unknown message type; known types:');
  });

  it('rejects a known type without v, saying which versions are supported', () => {
    const { v: _omitted, ...body } = drainComplete();
    const error = rejected(parseMessage(body));
    expect(error.field).toBe('v');
    expect(error.issues).toHaveLength(1);
    expect(error.message).toBe(
      'invalid drain-complete message: v: required (the schema version); supported versions of drain-complete: 1',
    );
  });

  it.each([2, 0, -1, 1.5, '1', null, Number.NaN, true])('rejects the unknown version %j', (v) => {
    const error = rejected(parseMessage({ ...nodeStats(), v, activeGears: -5 }));
    expect(error.field).toBe('v');
    expect(error.issues).toHaveLength(1);
    expect(error.message).toContain('v: unsupported schema version; supported versions of node-stats: 1');
  });

  it('rejects a JSON body with an unknown type the same way', () => {
    const error = rejected(parseMessage('{"type":"reboot","v":1}'));
    expect(error.field).toBe('type');
    expect(error.message).toContain('unknown message type');
  });
});

describe('node-stats fields', () => {
  it('rejects a negative gear count', () => {
    const error = rejected(parseMessage({ ...nodeStats(), activeGears: -1 }));
    expect(error.field).toBe('activeGears');
    expect(error.issues).toHaveLength(1);
    expect(error.message).toBe('invalid node-stats v1 message: activeGears: must be an integer from 0 to 12000 (got -1)');
  });

  it('rejects a non-integer gear count', () => {
    const error = rejected(parseMessage({ ...nodeStats(), activeGears: 2.5 }));
    expect(error.field).toBe('activeGears');
    expect(error.issues).toHaveLength(1);
    expect(error.message).toContain('activeGears: must be an integer (got 2.5)');
  });

  it('rejects a gear count given as a string', () => {
    const error = rejected(parseMessage({ ...nodeStats(), activeGears: '3' }));
    expect(error.field).toBe('activeGears');
    expect(error.message).toContain('activeGears: must be a finite number (got "3")');
  });

  it('takes optional idleGears and disruptiveGears, at most activeGears together', () => {
    const ok = parseMessage({ ...nodeStats(), activeGears: 10, idleGears: 4, disruptiveGears: 6 });
    expect(ok).toMatchObject({ ok: true, message: { idleGears: 4, disruptiveGears: 6 } });
    const error = rejected(parseMessage({ ...nodeStats(), activeGears: 10, idleGears: 4, disruptiveGears: 7 }));
    expect(error.field).toBe('disruptiveGears');
    expect(error.message).toContain('idleGears 4 + disruptiveGears 7 is more than activeGears 10');
    expect(rejected(parseMessage({ ...nodeStats(), idleGears: -1 })).field).toBe('idleGears');
  });

  it('rejects activeGears beyond twice maxActiveGears, naming both numbers', () => {
    const error = rejected(parseMessage({ ...nodeStats(), activeGears: 13, maxActiveGears: 6 }));
    expect(error.field).toBe('activeGears');
    expect(error.issues).toHaveLength(1);
    expect(error.message).toContain('activeGears: activeGears 13 is more than twice maxActiveGears 6 (at most 12) (got 13)');
  });

  it('accepts an overcommitted node up to twice its capacity', () => {
    expect(accepted(parseMessage({ ...nodeStats(), activeGears: 7, maxActiveGears: 6 }))).toMatchObject({ activeGears: 7 });
    expect(accepted(parseMessage({ ...nodeStats(), activeGears: 12, maxActiveGears: 6 }))).toMatchObject({ activeGears: 12 });
    expect(accepted(parseMessage({ ...nodeStats(), activeGears: 0, maxActiveGears: 1 }))).toMatchObject({ activeGears: 0 });
  });

  it('checks the 2x rule even when other fields are wrong', () => {
    const error = rejected(parseMessage({ ...nodeStats(), nodeId: 'Node_3!', activeGears: 300, maxActiveGears: 100 }));
    expect(paths(error)).toEqual(['nodeId', 'activeGears']);
  });

  it.each([0, 6001, -1, 1.5])('rejects maxActiveGears %s', (maxActiveGears) => {
    const error = rejected(parseMessage({ ...nodeStats(), maxActiveGears, activeGears: 0 }));
    expect(error.field).toBe('maxActiveGears');
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]?.message).toMatch(/^must be an integer( from 1 to 6000 \(the district UID pool\))?$/);
    expect(error.issues[0]?.value).toBe(maxActiveGears);
  });

  it('accepts maxActiveGears 1 and 6000', () => {
    expect(accepted(parseMessage({ ...nodeStats(), maxActiveGears: 6000 }))).toMatchObject({ maxActiveGears: 6000 });
    expect(accepted(parseMessage({ ...nodeStats(), maxActiveGears: 1, activeGears: 2 }))).toMatchObject({
      maxActiveGears: 1,
    });
  });

  it.each([
    ['activeGears', Number.NaN],
    ['activeGears', Number.POSITIVE_INFINITY],
    ['maxActiveGears', Number.NEGATIVE_INFINITY],
    ['cpu', Number.NaN],
    ['memory', Number.POSITIVE_INFINITY],
  ])('rejects %s = %s given in a decoded object', (field, value) => {
    const error = rejected(parseMessage({ ...nodeStats(), [field]: value }));
    expect(error.field).toBe(field);
    expect(error.issues).toHaveLength(1);
    expect(error.message).toContain(`${field}: must be a finite number (got ${String(value)})`);
  });

  it('turns 1e999 in a JSON body into a clear error, not Infinity', () => {
    const body = sampleText('node-stats.json').replace('"activeGears": 3', '"activeGears": 1e999');
    const error = rejected(parseMessage(body));
    expect(error.field).toBe('activeGears');
    expect(error.message).toContain('must be a finite number (got Infinity)');
  });

  it.each([
    ['cpu', -0.1],
    ['cpu', 100.5],
    ['memory', 250],
  ])('rejects %s = %s outside 0..100', (field, value) => {
    const error = rejected(parseMessage({ ...nodeStats(), [field]: value }));
    expect(error.field).toBe(field);
    expect(error.message).toContain(`${field}: must be a percentage from 0 to 100 (got ${value})`);
  });

  it('accepts a report without the optional gears, cpu and memory', () => {
    const { gears: _g, cpu: _c, memory: _m, ...body } = nodeStats();
    const message = accepted(parseMessage(body));
    expect(message).not.toHaveProperty('gears');
    expect(message).not.toHaveProperty('cpu');
    expect(message).toMatchObject({ activeGears: 3, reportedAt: '2026-03-01T12:00:00.000Z' });
  });

  it.each([
    ['Node-3.example.com', 'must be a host name'],
    ['node 3', 'must be a host name'],
    ['nöde-3', 'must be a host name'],
    ['', 'must not be empty'],
    ['n'.repeat(254), 'must be at most 253 characters (got 254)'],
  ])('rejects the node id %j', (nodeId, message) => {
    const error = rejected(parseMessage({ ...nodeStats(), nodeId }));
    expect(error.field).toBe('nodeId');
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]?.message).toContain(message);
  });

  it('accepts a 253-character node id with _ and .', () => {
    const nodeId = `node_1.${'a'.repeat(246)}`;
    expect(nodeId).toHaveLength(253);
    expect(accepted(parseMessage({ ...nodeStats(), nodeId }))).toMatchObject({ nodeId });
  });

  it.each([
    ['district', 'd1/x', "must not contain '/'"],
    ['district', '', 'must not be empty'],
    ['profile', 'p'.repeat(65), 'must be at most 64 characters (got 65)'],
    ['profile', 'small\n', 'must not contain control characters'],
    ['profile', 7, 'must be a string'],
  ])('rejects %s = %j', (field, value, message) => {
    const error = rejected(parseMessage({ ...nodeStats(), [field]: value }));
    expect(error.field).toBe(field);
    expect(error.issues[0]?.message).toContain(message);
  });

  it('accepts unicode where the rules allow it', () => {
    const message = accepted(
      parseMessage({ ...nodeStats(), district: 'zürich-1', gears: [{ uuid: 'g1', app: 'café ☕', size: 'small' }] }),
    );
    expect(message).toMatchObject({ district: 'zürich-1', gears: [{ app: 'café ☕' }] });
  });
});

describe('gear lists', () => {
  const gear = (i: number) => ({ uuid: `gear${i}`, app: `app${i}`, size: 'small' });

  it('names the bad entry and field: gears.3.uuid', () => {
    const gears = [gear(0), gear(1), gear(2), { ...gear(3), uuid: '' }];
    const error = rejected(parseMessage({ ...nodeStats(), gears }));
    expect(error.field).toBe('gears.3.uuid');
    expect(error.issues).toHaveLength(1);
    expect(error.message).toContain('gears.3.uuid: must not be empty (got "")');
  });

  it('reports every bad entry', () => {
    const gears = [
      gear(0),
      5,
      { uuid: 'u'.repeat(65), app: 'a', size: 's' },
      { uuid: 'u', size: 's' },
      { uuid: 'u', app: 'a'.repeat(129), size: '' },
      null,
    ];
    const error = rejected(parseMessage({ ...nodeStats(), gears }));
    expect(paths(error)).toEqual(['gears.1', 'gears.2.uuid', 'gears.3.app', 'gears.4.app', 'gears.4.size', 'gears.5']);
    expect(error.issues[0]?.message).toBe('must be an object {uuid, app, size}');
    expect(error.issues[1]?.message).toBe('must be at most 64 characters (got 65)');
    expect(error.issues[2]?.message).toBe('required');
    expect(error.issues[3]?.message).toBe('must be at most 128 characters (got 129)');
  });

  it('rejects gears that is not an array', () => {
    const error = rejected(parseMessage({ ...nodeStats(), gears: { 0: gear(0) } }));
    expect(error.field).toBe('gears');
    expect(error.message).toContain('gears: must be an array of gears');
  });

  it('accepts 6000 gears and rejects 6001', () => {
    const many = Array.from({ length: 6000 }, (_, i) => gear(i));
    expect(accepted(parseMessage({ ...nodeStats(), gears: many }))).toMatchObject({ type: 'node-stats' });
    const error = rejected(parseMessage({ ...nodeStats(), gears: [...many, gear(6000)] }));
    expect(error.field).toBe('gears');
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]?.message).toBe('must list at most 6000 gears');
  });

  it('lists at most 50 issues, then counts the rest', () => {
    const gears = Array.from({ length: 100 }, () => ({ uuid: '', app: '', size: '' }));
    const error = rejected(parseMessage({ ...nodeStats(), gears }));
    expect(error.issues).toHaveLength(51);
    expect(error.field).toBe('gears.0.uuid');
    expect(error.issues[50]?.message).toBe('and 250 more problems not listed');
  });
});

describe('scale-up, scale-down and drain-complete fields', () => {
  it.each([
    ['d1small', "must be district/profile (no '/' found)"],
    ['d1/', 'must be district/profile; the profile must not be empty'],
    ['/small', 'must be district/profile; the district must not be empty'],
    ['d1/small/x', "must be district/profile with exactly one '/'"],
    ['d1/\u0007', 'must be district/profile; the profile must not contain control characters'],
    [`d1/${'p'.repeat(65)}`, 'must be district/profile; the profile must be at most 64 characters (got 65)'],
  ])('rejects the pool %j', (pool, message) => {
    for (const body of [scaleUp(), scaleDown(), drainComplete()]) {
      const error = rejected(parseMessage({ ...body, pool }));
      expect(error.field).toBe('pool');
      expect(error.issues).toHaveLength(1);
      expect(error.issues[0]?.message).toBe(message);
    }
  });

  it.each([0, 1001, 2.5, -3])('rejects the scale-up count %s', (count) => {
    const error = rejected(parseMessage({ ...scaleUp(), count }));
    expect(error.field).toBe('count');
    expect(error.issues[0]?.message).toMatch(/^must be an integer( from 1 to 1000)?$/);
  });

  it('accepts count 1 and 1000', () => {
    expect(accepted(parseMessage({ ...scaleUp(), count: 1 }))).toMatchObject({ count: 1 });
    expect(accepted(parseMessage({ ...scaleUp(), count: 1000 }))).toMatchObject({ count: 1000 });
  });

  it.each([
    ['decisionId', 'has space', "must use only letters, digits, '_', ':', '.' and '-'"],
    ['decisionId', 'up/d1', "must use only letters, digits, '_', ':', '.' and '-'"],
    ['decisionId', 'x'.repeat(129), 'must be at most 128 characters (got 129)'],
    ['reason', '', 'must not be empty'],
    ['reason', 'r'.repeat(1025), 'must be at most 1024 characters (got 1025)'],
  ])('rejects scale-down %s = %j', (field, value, message) => {
    const error = rejected(parseMessage({ ...scaleDown(), [field]: value }));
    expect(error.field).toBe(field);
    expect(error.issues[0]?.message).toBe(message);
  });

  it('applies the decisionId rule to drainId', () => {
    const error = rejected(parseMessage({ ...drainComplete(), drainId: 'drain#1' }));
    expect(error.field).toBe('drainId');
    expect(error.message).toContain("drainId: must use only letters, digits, '_', ':', '.' and '-'");
  });

  it('says required for every missing field', () => {
    const error = rejected(parseMessage({ type: 'scale-down', v: 1 }));
    expect(paths(error)).toEqual(['decisionId', 'pool', 'nodeId', 'reason', 'decidedAt']);
    expect(error.issues.every((issue) => issue.message === 'required')).toBe(true);
    expect(error.message).toMatch(/^invalid scale-down v1 message: 5 problems\n {2}- decisionId: required/);
  });

  it('reports three issues for a message with three problems', () => {
    const error = rejected(
      parseMessage({ ...scaleUp(), pool: 'd1small', count: 0, decidedAt: '2026-03-01' }),
    );
    expect(error.issues).toHaveLength(3);
    expect(paths(error)).toEqual(['pool', 'count', 'decidedAt']);
    expect(error.field).toBe('pool');
    expect(error.message).toMatch(/^invalid scale-up v1 message: 3 problems\n/);
    expect(error.message).toContain('count: must be an integer from 1 to 1000 (got 0)');
  });

  it('reports three issues for a node-stats with three problems', () => {
    const error = rejected(
      parseMessage({ ...nodeStats(), nodeId: 'NODE', maxActiveGears: 0, reportedAt: 'now' }),
    );
    expect(paths(error)).toEqual(['nodeId', 'maxActiveGears', 'reportedAt']);
  });
});

describe('EC2 events', () => {
  it('rejects an unknown detail-type, naming detail-type and listing the known ones', () => {
    const event = { ...sample('ec2-state-change.json'), 'detail-type': 'EC2 AMI State Change' };
    const error = rejected(parseMessage(event));
    expect(error.field).toBe('detail-type');
    expect(error.issues).toHaveLength(1);
    expect(error.message).toContain(
      'detail-type: unsupported EC2 event; known detail-types: "EC2 Instance State-change Notification", ' +
        '"EC2 Spot Instance Interruption Warning", "EC2 Instance Rebalance Recommendation" (got "EC2 AMI State Change")',
    );
  });

  it('rejects a missing detail-type', () => {
    const { 'detail-type': _omitted, ...event } = sample('ec2-rebalance.json');
    const error = rejected(parseMessage(event));
    expect(error.field).toBe('detail-type');
    expect(error.message).toContain('detail-type: required; known detail-types:');
  });

  it('rejects another source, naming source', () => {
    const event = { ...sample('ec2-spot-interruption.json'), source: 'aws.autoscaling' };
    const error = rejected(parseMessage(event));
    expect(error.field).toBe('source');
    expect(error.issues).toHaveLength(1);
    expect(error.message).toBe(
      'invalid EC2 event: source: unsupported event source; expected "aws.ec2" (got "aws.autoscaling")',
    );
  });

  it('rejects an envelope without source', () => {
    const { source: _omitted, ...event } = sample('ec2-spot-interruption.json');
    const error = rejected(parseMessage(event));
    expect(error.field).toBe('source');
    expect(error.message).toContain('source: required; expected "aws.ec2"');
  });

  it.each(['i-123', 'i-1234567890abcdef01', 'i-1234567G', 'I-12345678', 'node-3', ''])(
    'rejects the instance id %j',
    (instanceId) => {
      for (const file of ['ec2-state-change.json', 'ec2-spot-interruption.json', 'ec2-rebalance.json']) {
        const event = sample(file);
        const error = rejected(parseMessage({ ...event, detail: { ...(event.detail as object), 'instance-id': instanceId } }));
        expect(error.field).toBe('detail.instance-id');
        expect(error.issues).toHaveLength(1);
        expect(error.issues[0]?.message).toBe('must be an EC2 instance id (i- and 8 to 17 hex digits)');
      }
    },
  );

  it('accepts 8 and 17 hex digit instance ids', () => {
    const event = sample('ec2-rebalance.json');
    for (const instanceId of ['i-abcd1111', 'i-0123456789abcdef0']) {
      expect(accepted(parseMessage({ ...event, detail: { 'instance-id': instanceId } }))).toMatchObject({ instanceId });
    }
  });

  it('rejects an unknown state or spot action', () => {
    const state = sample('ec2-state-change.json');
    const badState = rejected(parseMessage({ ...state, detail: { 'instance-id': 'i-abcd1111', state: 'exploded' } }));
    expect(badState.field).toBe('detail.state');
    expect(badState.message).toContain('must be one of pending, running, stopping, stopped, shutting-down, terminated');
    const spot = sample('ec2-spot-interruption.json');
    const badAction = rejected(
      parseMessage({ ...spot, detail: { 'instance-id': 'i-abcd1111', 'instance-action': 'reboot' } }),
    );
    expect(badAction.field).toBe('detail.instance-action');
    expect(badAction.message).toContain('must be one of terminate, stop, hibernate');
  });

  it('accepts every EC2 state and spot action', () => {
    const state = sample('ec2-state-change.json');
    for (const s of ['pending', 'running', 'stopping', 'stopped', 'shutting-down', 'terminated']) {
      expect(accepted(parseMessage({ ...state, detail: { 'instance-id': 'i-abcd1111', state: s } }))).toMatchObject({
        state: s,
      });
    }
    const spot = sample('ec2-spot-interruption.json');
    for (const action of ['terminate', 'stop', 'hibernate']) {
      expect(
        accepted(parseMessage({ ...spot, detail: { 'instance-id': 'i-abcd1111', 'instance-action': action } })),
      ).toMatchObject({ action });
    }
  });

  it('reports every envelope problem', () => {
    const event = { ...sample('ec2-state-change.json'), id: '', time: '2026-03-01', detail: 'x' };
    const error = rejected(parseMessage(event));
    expect(paths(error)).toEqual(['id', 'time', 'detail']);
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

describe('serializeMessage', () => {
  it('round-trips every message kind', () => {
    for (const file of ['node-stats.json', 'scale-up.json', 'scale-down.json', 'drain-complete.json']) {
      const message = accepted(parseMessage(sampleText(file))) as Message;
      const body = serializeMessage(message);
      expect(JSON.parse(body)).toEqual(message);
      expect(accepted(parseMessage(body))).toEqual(message);
    }
  });

  it('normalizes timestamps and drops unknown fields on the way out', () => {
    const message = {
      type: 'scale-up',
      v: MESSAGE_VERSION,
      decisionId: 'd-1',
      pool: 'd1/small',
      count: 1,
      reason: 'test',
      decidedAt: '2026-03-01T13:00:00+01:00',
      extra: true,
    } as Message;
    expect(serializeMessage(message)).toBe(
      '{"type":"scale-up","v":1,"decisionId":"d-1","pool":"d1/small","count":1,"reason":"test","decidedAt":"2026-03-01T12:00:00.000Z"}',
    );
  });

  it('refuses to produce a body its consumer would reject', () => {
    const message = { ...(scaleUp() as unknown as Message), pool: 'nope' } as Message;
    expect(() => serializeMessage(message)).toThrow(ValidationError);
    expect(() => serializeMessage(message)).toThrow("pool: must be district/profile (no '/' found)");
  });

  it('refuses a node-stats whose gear list does not fit in one SQS message', () => {
    const gears = Array.from({ length: 6000 }, (_, i) => ({
      uuid: `${String(i).padStart(32, '0')}`,
      app: `application-number-${i}`,
      size: 'small',
    }));
    const message = { ...(nodeStats() as unknown as NodeStatsMessage), gears };
    expect(() => serializeMessage(message)).toThrow(/body: message body is \d+ bytes, over the SQS limit/);
  });
});
