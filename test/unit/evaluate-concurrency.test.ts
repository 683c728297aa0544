/**
 * The pools of a batch are evaluated several at once (lib/app/pool-batch.ts):
 * a pool whose scale-down candidates are listed on the broker (one SSM
 * command each, seconds) holds up no other pool's decision, and its checks
 * stop at the evaluation's deadline. In-memory store, recording queue, a
 * virtual clock; the broker's listings are held by the test.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { ThresholdEvaluator, type EvaluatorPorts } from '../../lib/app/evaluate.js';
import { CHECKS_CUT_SHORT } from '../../lib/app/move-history.js';
import { CANDIDATE_CHECKS_RESERVE_MS } from '../../lib/app/pool-batch.js';
import type { GearInfo } from '../../lib/domain/model.js';
import { InvocationDeadline } from '../../lib/ports/deadline.js';
import { FakePlatform } from '../support/fake-platform.js';
import { RecordingQueue } from '../support/recording-queue.js';
import { HOT, SLOW, seedTwoPools, twoPoolsConfig } from '../support/two-pools.js';

/** One broker listing, as an SSM command takes it. */
const LISTING_MS = 3_000;

/** A promise the test settles by hand. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((res) => (resolve = res));
  return { promise, resolve };
}
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
const doNotMove = (nodeId: string): GearInfo[] => [{ uuid: `g-${nodeId}`, app: `app-${nodeId}`, size: 'small', doNotMove: true }];

let clock: VirtualClock;
let store: InMemoryStateStore;
let queue: RecordingQueue;
let platform: FakePlatform;
let listed: string[];

/** The slow pool: six nodes at 10 % whose stats count gears (the shipped agent), low for an hour; the hot pool full. */
beforeEach(async () => {
  clock = new VirtualClock('2026-11-21T10:00:00Z');
  store = new InMemoryStateStore();
  queue = new RecordingQueue({ fifo: ['scale', 'drain'] });
  platform = new FakePlatform();
  listed = [];
  await seedTwoPools(store, clock.now());
});

describe('ThresholdEvaluator: the pools of a batch at once', () => {


  const evaluator = (extra: Partial<EvaluatorPorts> = {}) =>
    new ThresholdEvaluator({ store, queue, clock, metrics: new InMemoryMetrics(), log: new MemoryLog(), platform, ...extra }, twoPoolsConfig);

  it("a slow pool's listings do not delay another pool's scale-up; the outcomes stay in the pools' order", async () => {
    const broker = deferred<void>();
    platform.listGears = async (nodeId) => {
      listed.push(nodeId);
      await broker.promise;
      return doNotMove(nodeId);
    };
    const run = evaluator().tick();
    await settle();
    // The slow pool waits on its first listing; the hot pool's scale-up has been decided and sent meanwhile.
    expect(listed).toEqual(['slow-1.example.com']);
    expect(queue.sent('scale')).toMatchObject([{ type: 'scale-up', pool: HOT }]);
    broker.resolve();
    const outcomes = await run;
    expect(outcomes.map((o) => [o.pool, o.kind])).toEqual([
      [SLOW, 'no-action'],
      [HOT, 'scale-up'],
    ]);
    expect(listed).toHaveLength(4); // candidateReads of a 6-node pool, as before
  });

  it("one pool's failure is its own: it is skipped and the other decides", async () => {
    const getPool = store.getPool.bind(store);
    store.getPool = async (pool) => {
      if (pool === SLOW) throw new Error('pool record unreadable');
      return getPool(pool);
    };
    const outcomes = await evaluator().tick();
    expect(outcomes).toMatchObject([
      { pool: SLOW, kind: 'skipped', reason: 'evaluation failed: Error: pool record unreadable' },
      { pool: HOT, kind: 'scale-up' },
    ]);
  });

  it('nodes that cannot be read fail the whole evaluation, once the pools under way have ended', async () => {
    const broker = deferred<void>();
    platform.listGears = async (nodeId) => {
      listed.push(nodeId);
      await broker.promise;
      return doNotMove(nodeId);
    };
    const listNodes = store.listNodes.bind(store);
    store.listNodes = async (pool) => {
      if (pool === HOT) throw new Error('table unavailable');
      return listNodes(pool);
    };
    let settled = false;
    const run = evaluator().tick().finally(() => (settled = true));
    await settle();
    expect(settled).toBe(false); // the slow pool is still listing
    broker.resolve();
    await expect(run).rejects.toThrow('table unavailable');
  });
});

describe('ThresholdEvaluator: candidate checks stop at the evaluation deadline', () => {

  beforeEach(() => {
    // Each listing takes LISTING_MS on the evaluator's clock; the first three nodes hold a do-not-move gear, the rest none.
    platform.listGears = async (nodeId) => {
      listed.push(nodeId);
      clock.advance(LISTING_MS);
      return ['slow-1.example.com', 'slow-2.example.com', 'slow-3.example.com'].includes(nodeId) ? doNotMove(nodeId) : [];
    };
  });

  const evaluatorWith = (invocationLeftMs: number) => {
    const deadline = new InvocationDeadline(clock);
    deadline.start(invocationLeftMs);
    return new ThresholdEvaluator({ store, queue, clock, metrics: new InMemoryMetrics(), log: new MemoryLog(), platform, deadline }, twoPoolsConfig);
  };

  it('without a deadline the reads go on to a free node and drain it', async () => {
    const outcomes = await new ThresholdEvaluator({ store, queue, clock, metrics: new InMemoryMetrics(), log: new MemoryLog(), platform }, twoPoolsConfig).tick();
    expect(listed).toHaveLength(4);
    expect(outcomes[0]).toMatchObject({ pool: SLOW, kind: 'scale-down', reason: expect.stringContaining('drain slow-4.example.com') });
    expect(outcomes[0]!.reason).not.toContain(CHECKS_CUT_SHORT);
  });

  it('reads stop at the deadline: the pool decides with what it read, drains no unread node, and says so', async () => {
    // Checks may run until 2 listings' time has passed: two listings, then none.
    const outcomes = await evaluatorWith(CANDIDATE_CHECKS_RESERVE_MS + 2 * LISTING_MS - 1).tick();
    expect(listed).toEqual(['slow-1.example.com', 'slow-2.example.com']);
    expect(outcomes[0]).toMatchObject({ pool: SLOW, kind: 'no-action', reason: expect.stringContaining(`; ${CHECKS_CUT_SHORT}`) });
    expect(queue.sent('drain')).toEqual([]);
    const logged = await store.listDecisions(SLOW, 1);
    expect(logged[0]?.reason).toContain(CHECKS_CUT_SHORT);
    const rejected = (logged[0]?.details as { rejected?: Array<{ nodeId: string; reason: string }> }).rejected ?? [];
    expect(rejected.find((r) => r.nodeId === 'slow-3.example.com')?.reason).toMatch(/not listed in this evaluation/);
  });

  it('never cuts a scale-up: past the deadline the hot pool still scales up, and the slow pool lists nothing', async () => {
    const outcomes = await evaluatorWith(CANDIDATE_CHECKS_RESERVE_MS - 1).tick();
    expect(listed).toEqual([]);
    expect(outcomes).toMatchObject([
      { pool: SLOW, kind: 'no-action', reason: expect.stringContaining(CHECKS_CUT_SHORT) },
      { pool: HOT, kind: 'scale-up' },
    ]);
    expect(queue.sent('scale')).toMatchObject([{ type: 'scale-up', pool: HOT }]);
    expect(queue.sent('drain')).toEqual([]);
  });
});
