/** Each message kind's fields: node-stats, gear lists, the decisions and drain-complete, EC2 events. */
import { describe, expect, it } from 'vitest';
import {
  parseMessage,
} from '../../lib/messages/index.js';
import { sampleText, sample, accepted, rejected, paths, nodeStats, scaleUp, scaleDown, drainComplete } from '../support/messages.js';

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

  it('rejects a list that marks gears idle yet leaves more unmarked than activeGears: active gears passed off as idle take no slot', () => {
    const idle = (i: number) => ({ ...gear(i), idle: true });
    const base = { ...nodeStats(), activeGears: 2 };
    expect(parseMessage({ ...base, gears: [gear(0), gear(1), idle(2), idle(3)] }).ok).toBe(true);
    const error = rejected(parseMessage({ ...base, gears: [gear(0), gear(1), gear(2), idle(3)] }));
    expect(error.field).toBe('gears');
    expect(error.message).toContain('gears: gears lists 3 gear(s) not marked idle, more than activeGears 2');
    // A list that marks no gear idle takes a slot for every gear, whatever the count says.
    expect(parseMessage({ ...base, gears: [gear(0), gear(1), gear(2)] }).ok).toBe(true);
    expect(rejected(parseMessage({ ...base, gears: [{ ...gear(0), idle: 'yes' }] })).field).toBe('gears.0.idle');
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

  it('accepts a scale-down priced on the nodes it drains', () => {
    const body = scaleDown();
    const prices = [{ nodeId: body.nodeId, gears: 3, limit: 18, next: 'node-9.example.com', nextGears: 18 }];
    expect(accepted(parseMessage({ ...body, prices }))).toMatchObject({ prices });
  });

  it.each<[string, unknown, string, string]>([
    ['a price for a node it does not drain', [{ nodeId: 'other.example.com', gears: 0, limit: 1, next: 'n.example.com', nextGears: 1 }], 'prices.0.nodeId', 'must name a node the decision drains (got "other.example.com")'],
    ['a limit below the gears priced', [{ nodeId: 'SELF', gears: 5, limit: 4, next: 'n.example.com', nextGears: 4 }], 'prices.0.limit', 'must be at least gears (5), got 4'],
    ['a fractional gear count', [{ nodeId: 'SELF', gears: 2.5, limit: 4, next: 'n.example.com', nextGears: 4 }], 'prices.0.gears', 'must be an integer'],
    ['a missing next node', [{ nodeId: 'SELF', gears: 0, limit: 4, nextGears: 4 }], 'prices.0.next', 'required'],
    ['a negative gear count on the next node', [{ nodeId: 'SELF', gears: 0, limit: 4, next: 'n.example.com', nextGears: -1 }], 'prices.0.nextGears', 'must be an integer from 0 to 6000'],
    ['prices that is not an array', { nodeId: 'SELF' }, 'prices', 'must be an array of node prices'],
    ['more prices than a decision drains nodes', Array.from({ length: 101 }, () => ({ nodeId: 'SELF', gears: 0, limit: 0, next: 'n.example.com', nextGears: 0 })), 'prices', 'must price at most 100 nodes'],
  ])('rejects a scale-down with %s, naming the field', (_case, prices, field, message) => {
    const body = scaleDown();
    const named = JSON.parse(JSON.stringify(prices).replaceAll('"SELF"', JSON.stringify(body.nodeId)));
    const error = rejected(parseMessage({ ...body, prices: named }));
    expect(error.field).toBe(field);
    expect(error.issues[0]?.message).toBe(message.replace('SELF', String(body.nodeId)));
    expect(error.message).toContain(`${field}: `);
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
