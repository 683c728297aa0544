/** Sample bodies (events/messages) parse, dispatch by type and version, and serialize back. */
import { ValidationError } from '../../lib/errors.js';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  MESSAGE_VERSION,
  locateJsonError,
  parseMessage,
  serializeMessage,
  type Ec2Event,
  type Message,
  type NodeStatsMessage,
  type ParsedMessage,
} from '../../lib/messages/index.js';
import { sampleText, sample, accepted, rejected, nodeStats, scaleUp, drainComplete, SAMPLES } from '../support/messages.js';
import { readdirSync } from 'node:fs';

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
    'district-capacity.json': {
      type: 'district-capacity',
      v: 1,
      district: 'd1',
      profile: 'small',
      maxCapacity: 6000,
      availableCapacity: 0,
      readAt: '2026-03-01T11:58:00.000Z',
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

describe('type and version dispatch', () => {
  it('rejects a missing type, listing the known ones', () => {
    const { type: _omitted, ...body } = scaleUp();
    const error = rejected(parseMessage(body));
    expect(error.field).toBe('type');
    expect(error.issues).toHaveLength(1);
    expect(error.message).toContain('type: required; known types: node-stats, scale-up, scale-down, drain-complete, gears-refused, district-capacity');
  });

  it.each(['scale-sideways', 'Node-Stats', '', 'constructor', '__proto__', 'toString'])(
    'rejects the unknown type %j with one clear issue',
    (type) => {
      const error = rejected(parseMessage({ ...nodeStats(), type, activeGears: -5, nodeId: 'BAD' }));
      expect(error.field).toBe('type');
      expect(error.issues).toHaveLength(1);
      expect(error.message).toBe(
        'invalid message: type: unknown message type; known types: node-stats, scale-up, scale-down, drain-complete, gears-refused, district-capacity ' +
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
