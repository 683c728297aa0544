import { describe, expect, it } from 'vitest';
import { RecordingQueue } from '../support/recording-queue.js';
import { ValidationError } from '../../lib/errors.js';
import type { DrainCompleteMessage, NodeStatsMessage, ScaleUpMessage } from '../../lib/messages/index.js';

const stats = (n: number, reportedAt = '2026-03-01T12:00:00.000Z'): NodeStatsMessage => ({
  type: 'node-stats',
  v: 1,
  nodeId: `node-${n}.example.com`,
  district: 'd1',
  profile: 'small',
  activeGears: n,
  maxActiveGears: 100,
  reportedAt,
});

const scaleUp: ScaleUpMessage = {
  type: 'scale-up',
  v: 1,
  decisionId: 'up:d1_small:2026-03-01T12:00:30.000Z',
  pool: 'd1/small',
  count: 2,
  reason: 'utilization 91%',
  decidedAt: '2026-03-01T12:00:30.000Z',
};

const drainComplete: DrainCompleteMessage = {
  type: 'drain-complete',
  v: 1,
  drainId: 'drain:node-3.example.com:2026-03-01T13:10:00.000Z',
  nodeId: 'node-3.example.com',
  pool: 'd1/small',
  completedAt: '2026-03-01T13:14:27.512Z',
};

describe('RecordingQueue', () => {
  it('keeps the parsed bodies per queue, in order, as a consumer would read them', async () => {
    const queue = new RecordingQueue();
    expect(await queue.send('stats', [{ body: stats(1, '2026-03-01T12:00:00Z') }, { body: stats(2) }])).toStrictEqual({ failed: [] });
    await queue.send('decommission', [{ body: drainComplete }]);
    await queue.send('stats', [{ body: stats(3) }]);

    expect(queue.sent('stats')).toStrictEqual([stats(1), stats(2), stats(3)]); // reportedAt normalized
    expect(queue.sent('decommission')).toStrictEqual([drainComplete]);
    expect(queue.sent('drain')).toStrictEqual([]);
  });

  it('fails the next n messages across calls, without keeping them', async () => {
    const queue = new RecordingQueue();
    queue.failNext(3, false);
    const first = await queue.send('stats', [{ body: stats(1) }, { body: stats(2) }]);
    const second = await queue.send('stats', [{ body: stats(3) }, { body: stats(4) }]);

    expect(first.failed).toStrictEqual([
      { index: 0, error: 'InjectedFailure: failNext', retryable: false },
      { index: 1, error: 'InjectedFailure: failNext', retryable: false },
    ]);
    expect(second.failed).toStrictEqual([{ index: 0, error: 'InjectedFailure: failNext', retryable: false }]);
    expect(queue.sent('stats')).toStrictEqual([stats(4)]);
  });

  it('checks FIFO ids on the queues named FIFO, like SqsQueue', async () => {
    const queue = new RecordingQueue({ fifo: ['scale'] });
    await expect(queue.send('scale', [{ body: scaleUp, deduplicationId: scaleUp.decisionId }])).rejects.toThrow(ValidationError);
    expect(queue.sent('scale')).toStrictEqual([]);

    await queue.send('scale', [{ body: scaleUp, groupId: 'd1/small', deduplicationId: scaleUp.decisionId }]);
    expect(queue.recorded('scale')).toStrictEqual([{ message: scaleUp, groupId: 'd1/small', deduplicationId: scaleUp.decisionId }]);
  });

  it('rejects an invalid message whole, keeping none of the call', async () => {
    const queue = new RecordingQueue();
    const bad = { ...stats(2), activeGears: -1 };
    await expect(queue.send('stats', [{ body: stats(1) }, { body: bad }])).rejects.toMatchObject({
      name: 'ValidationError',
      field: 'messages.1.body.activeGears',
    });
    expect(queue.sent('stats')).toStrictEqual([]);
  });
});
