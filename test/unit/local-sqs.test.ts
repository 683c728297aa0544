import { describe, expect, it } from 'vitest';
import { LocalSqs } from '../../lib/adapters/local/local-sqs.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import type { Message } from '../../lib/messages/index.js';

const T0 = '2026-11-21T10:00:00.000Z';
const spec = { visibilityTimeoutMs: 60_000, maxReceiveCount: 3, batchSize: 10 };

function scaleUp(i: number, pool = 'd1/small'): Message {
  return { type: 'scale-up', v: 1, decisionId: `up:${i}`, pool, count: 1, reason: `r${i}`, decidedAt: T0 };
}

function setup() {
  const clock = new VirtualClock(T0);
  const sqs = new LocalSqs(clock, { stats: { ...spec, fifo: false }, scale: { ...spec, fifo: true } });
  return { clock, sqs };
}

const bodies = (records: Array<{ body: string }>) => records.map((r) => (JSON.parse(r.body) as { decisionId: string }).decisionId);

describe('LocalSqs: SQS semantics in process', () => {
  it('delivers batches of at most 10 and hides in-flight messages until the visibility timeout', async () => {
    const { clock, sqs } = setup();
    await sqs.send('stats', Array.from({ length: 23 }, (_, i) => ({ body: scaleUp(i) })));
    expect(sqs.receive('stats')).toHaveLength(10);
    expect(sqs.receive('stats')).toHaveLength(10);
    const last = sqs.receive('stats');
    expect(last).toHaveLength(3);
    expect(sqs.receive('stats')).toHaveLength(0);
    clock.advance(60_000);
    const again = sqs.receive('stats');
    expect(again).toHaveLength(10);
    expect(again[0]!.attributes.ApproximateReceiveCount).toBe('2');
  });

  it('redelivers a failed record after the visibility timeout and dead-letters it after maxReceiveCount, with the reason', async () => {
    const { clock, sqs } = setup();
    await sqs.send('stats', [{ body: scaleUp(1) }, { body: scaleUp(2) }]);
    for (let attempt = 1; attempt <= 3; attempt++) {
      const batch = sqs.receive('stats');
      const bad = batch.find((r) => r.body.includes('up:1'))!;
      sqs.complete('stats', batch.filter((r) => r !== bad).map((r) => r.messageId));
      sqs.fail('stats', bad.messageId, `ValidationError: attempt ${attempt}`);
      clock.advance(60_000);
    }
    expect(sqs.depth('stats')).toBe(0);
    expect(sqs.deadLetters()).toEqual([
      expect.objectContaining({ queue: 'stats', receiveCount: 3, reason: 'ValidationError: attempt 3', body: expect.stringContaining('up:1') }),
    ]);
  });

  it('keeps FIFO order within a group and holds a group while one of its messages is in flight', async () => {
    const { clock, sqs } = setup();
    await sqs.send('scale', [
      { body: scaleUp(1, 'd1/a'), groupId: 'd1/a', deduplicationId: 'up:1' },
      { body: scaleUp(2, 'd1/b'), groupId: 'd1/b', deduplicationId: 'up:2' },
    ]);
    const first = sqs.receive('scale');
    expect(bodies(first)).toEqual(['up:1', 'up:2']);
    await sqs.send('scale', [{ body: scaleUp(3, 'd1/a'), groupId: 'd1/a', deduplicationId: 'up:3' }]);
    sqs.complete('scale', [first[1]!.messageId]);
    expect(sqs.receive('scale')).toEqual([]); // up:3 waits behind up:1, in flight
    sqs.fail('scale', first[0]!.messageId, 'TransientError');
    clock.advance(60_000);
    expect(bodies(sqs.receive('scale'))).toEqual(['up:1', 'up:3']); // the failed head comes back first, order kept
  });

  it('drops a repeated FIFO deduplication id within five minutes, and not after', async () => {
    const { clock, sqs } = setup();
    const message = { body: scaleUp(7), groupId: 'd1/small', deduplicationId: 'up:7' };
    await sqs.send('scale', [message]);
    await sqs.send('scale', [message]);
    expect(sqs.depth('scale')).toBe(1);
    clock.advance(5 * 60_000);
    await sqs.send('scale', [message]);
    expect(sqs.depth('scale')).toBe(2);
  });

  it('rejects what SQS would reject: a FIFO message without a group', async () => {
    const { sqs } = setup();
    await expect(sqs.send('scale', [{ body: scaleUp(1) }])).rejects.toThrow(/messages\.0\.groupId/);
    expect(sqs.depth('scale')).toBe(0);
  });
});
