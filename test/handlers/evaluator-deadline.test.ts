/**
 * One slow pool must not starve the others: its scale-down candidates are
 * listed on the broker (the shipped agent's stats count gears; the emulator
 * takes 15 s a command) and every one holds a gear at its move limit, so each
 * evaluation would list a candidate after another until its count
 * (candidateReads) ran out, past the function's end. The handler sets the
 * deadline from the Lambda context; the listings stop 10 s before it
 * (CANDIDATE_CHECKS_RESERVE_MS), the other pool scales up meanwhile.
 */
import type { Context, ScheduledEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { CHECKS_CUT_SHORT } from '../../lib/app/move-history.js';
import { CANDIDATE_CHECKS_RESERVE_MS } from '../../lib/app/pool-batch.js';
import { GEAR_MOVE_WINDOW_MS } from '../../lib/domain/budget.js';
import { DEADLINE_MARGIN_MS } from '../../lib/handlers/deps.js';
import { thresholdEvaluatorHandler } from '../../lib/handlers/threshold-evaluator.js';
import { InvocationDeadline } from '../../lib/ports/deadline.js';
import { brokerOnEmulator } from '../support/broker-platform.js';
import { RecordingQueue } from '../support/recording-queue.js';
import { lambdaContext, scheduledEvent } from '../support/sqs-events.js';
import { SLOW_NODES, seedTwoPools, twoPoolsConfig } from '../support/two-pools.js';

type Handler = (event: ScheduledEvent, context: Context) => Promise<unknown>;
const COMMAND_MS = 15_000;

describe('a slow pool on the broker within a 60 s evaluator (broker emulator, 15 s per command)', () => {
  it('its listings stop at the deadline, its reason says so, and the other pool scales up', async () => {
    const clock = new VirtualClock(new Date('2026-11-24T01:00:00Z'));
    const deadline = new InvocationDeadline(clock);
    const { broker, platform } = brokerOnEmulator(clock, { commandLatencyMs: COMMAND_MS, deadline });
    const store = new InMemoryStateStore();
    broker.createDistrict('d1', 'small');
    for (let n = 1; n <= SLOW_NODES; n++) {
      const nodeId = `slow-${n}.example.com`;
      broker.addNodeHost(nodeId, 'small', 100);
      broker.joinDistrict('d1', nodeId);
      broker.placeGear(nodeId, { uuid: `g-${n}`, app: `app-${n}`, size: 'small' });
      // Moved twice this week: at maxMovesPerGear, so each candidate is refused once listed and read.
      await store.recordGearMoves([1, 2].map((d) => ({ uuid: `g-${n}`, at: new Date(clock.nowMs() - d * 86_400_000).toISOString(), key: `d${d}#${n}` })), GEAR_MOVE_WINDOW_MS);
    }
    await seedTwoPools(store, clock.now());
    const config = twoPoolsConfig;
    const queue = new RecordingQueue({ fifo: ['scale', 'drain'] });
    const ports = { store, queue, clock, metrics: new InMemoryMetrics(), log: new MemoryLog(), platform, deadline };
    const handler = thresholdEvaluatorHandler({ config, deadline, ports }) as unknown as Handler;

    const started = clock.nowMs();
    await handler(scheduledEvent(clock.now()), lambdaContext({ remainingMs: 60_000 }));
    const spent = clock.nowMs() - started;

    // Listings start until 60 - 5 - 10 = 45 s: three of the four a 6-node pool reads (the fourth, past 45 s, would
    // have run into the function's end).
    expect(60_000 - DEADLINE_MARGIN_MS - CANDIDATE_CHECKS_RESERVE_MS).toBe(3 * COMMAND_MS);
    expect(broker.sent.filter((input) => input.Parameters?.action?.[0] === 'list-gears')).toHaveLength(3);
    expect(spent).toBeLessThan(60_000 - DEADLINE_MARGIN_MS);
    const [decision] = await store.listDecisions('d1/slow', 1);
    expect(decision).toMatchObject({ kind: 'no-action', reason: expect.stringContaining(CHECKS_CUT_SHORT) });
    expect(queue.sent('drain')).toEqual([]);
    expect(queue.sent('scale')).toMatchObject([{ type: 'scale-up', pool: 'd1/hot' }]);
  });
});
