/**
 * An operator's plain `drain NODE` on the state table (dynalite), between runs of the real evaluator: the drain is
 * recorded as sent before its message goes out, so until the gear mover begins it the evaluator counts the node as
 * draining and decides no second drain the budget has no room for (RELIABILITY, finding 18).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { ThresholdEvaluator } from '../../lib/app/evaluate.js';
import { CliError, EXIT } from '../../lib/cli/exit.js';
import { cancelDrain } from '../../lib/cli/nodes.js';
import { safeDrain } from '../../lib/cli/safe-drain.js';
import type { OpenTarget } from '../../lib/cli/target.js';
import { parseConfig } from '../../lib/config/index.js';
import { drainIdFor } from '../../lib/domain/drain.js';
import type { ScaleDownMessage } from '../../lib/messages/index.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { World, apps } from '../support/gear-mover-world.js';
import { RecordingQueue } from '../support/recording-queue.js';

const harness = dynaliteHarness();
afterAll(() => harness.close());

const POOL = 'd1/small';
const MIN = 60_000;
const OPERATOR = 'local user alice';

/** Three active nodes of 100 slots at 30 gears each (0.30, below scale-down's 0.50), the evaluator and the CLI's target over one recording queue. */
async function lowPool() {
  const store = await harness.create();
  const clock = new VirtualClock('2026-11-21T10:00:00Z');
  const config = parseConfig({
    handler: 'log',
    scaleUp: { threshold: 0.8, target: 0.7, headroomGears: 0, forecast: { enabled: false } },
    scaleDown: { utilizationThreshold: 0.5, unneededTime: '1m', payoff: { enabled: false } },
    pools: [{ district: 'd1', profile: 'small', max: 10, gearsPerNode: 100 }],
  });
  const ids = [1, 2, 3].map((n) => `d1-small-${n}.example.com`);
  for (const nodeId of ids) {
    await store.createNode({ nodeId, pool: POOL, district: 'd1', profile: 'small', state: 'active', createdAt: clock.now().toISOString(), origin: 'provisioned', protected: false }, clock.now());
  }
  const queue = new RecordingQueue({ fifo: ['scale', 'drain'] });
  const evaluator = new ThresholdEvaluator({ store, queue, clock, metrics: new InMemoryMetrics(), log: new MemoryLog() }, config);
  const target: OpenTarget = {
    spec: { kind: 'local', stateDir: '/nonexistent', configFile: '/nonexistent' } as unknown as OpenTarget['spec'],
    store,
    queue,
    identity: { whoAmI: async () => OPERATOR },
    queueLocation: (name) => `recording queue ${name}`,
    close: async () => undefined,
  };
  const report = () =>
    evaluator.handleBatch(
      ids.map((nodeId) => ({
        id: nodeId,
        message: { type: 'node-stats' as const, v: 1 as const, nodeId, district: 'd1', profile: 'small', activeGears: 30, maxActiveGears: 100, idleGears: 0, disruptiveGears: 30, reportedAt: clock.now().toISOString() },
      })),
    );
  return { store, clock, config, ids, queue, target, report };
}

async function refusal(work: Promise<unknown>): Promise<CliError> {
  const error = await work.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(CliError);
  return error as CliError;
}

describe('nodescaler drain NODE (safeDrain) on the state table', () => {
  it('no scale-down is decided while the operator\'s drain waits in the queue: the node counts as draining until the gear mover begins it', async () => {
    const { store, clock, config, ids, queue, target, report } = await lowPool();
    const view = await safeDrain(target, config, clock, ids[0]!, 'kernel update', false);
    expect(view).toMatchObject({ action: 'drain', nodeId: ids[0], pool: POOL });
    expect((await store.listControls()).pendingDrains).toEqual([
      { nodeId: ids[0], pool: POOL, decisionId: (view as { decisionId: string }).decisionId, reason: 'kernel update', by: OPERATOR, at: clock.now().toISOString(), sentAt: clock.now().toISOString() },
    ]);

    // The pool stays low for minutes, past unneededTime: with one node counted as draining the budget (1) is full.
    for (let minute = 0; minute < 4; minute++) {
      const { outcomes } = await report();
      expect(outcomes[0]?.kind).toBe('no-action');
      if (minute > 0) expect(outcomes[0]?.reason).toContain('scale-down blocked by scaleDown.budget.maxDraining');
      clock.advance(MIN);
    }
    expect((queue.sent('drain') as ScaleDownMessage[]).map((message) => message.nodeId)).toEqual([ids[0]]);

    // A second drain by hand is refused as the gear mover would refuse it; the same node's, as already on its way.
    const second = await refusal(safeDrain(target, config, clock, ids[1]!, 'kernel update', false));
    expect(second.exitCode).toBe(EXIT.refused);
    expect(second.message).toContain(`pool ${POOL} already drains ${ids[0]}`);
    const again = await refusal(safeDrain(target, config, clock, ids[0]!, 'kernel update', false));
    expect(again.message).toContain(`node ${ids[0]} already has a drain sent at 2026-11-21T10:00:00.000Z, for the gear mover to begin (requested by ${OPERATOR}`);
    expect(queue.sent('drain')).toHaveLength(1);

    // The gear mover begins it: the pending item goes, and the node is draining on its own record now.
    const [sent] = queue.sent('drain') as ScaleDownMessage[];
    const drainId = drainIdFor(sent!.decisionId);
    await store.createDrain({ drainId, decisionId: sent!.decisionId, nodeId: ids[0]!, pool: POOL, startedAt: clock.now().toISOString(), reason: sent!.reason, moves: [], kind: 'manual' }, clock.now());
    await store.transitionNode(ids[0]!, { from: 'active', to: 'draining', expectedVersion: (await store.getNode(ids[0]!))!.version, patch: { drainId } }, clock.now());
    const after = await report();
    expect(after.outcomes[0]?.kind).toBe('no-action');
    expect((await store.listControls()).pendingDrains).toEqual([]);
    expect(await store.listDecisions(POOL, 50)).not.toContainEqual(expect.objectContaining({ kind: 'failure' }));
  });

  it('cancel-drain before the gear mover begins it: recorded once on the pending drain, and the node no longer counts as draining', async () => {
    const { store, clock, config, ids, target, report } = await lowPool();
    const drained = (await safeDrain(target, config, clock, ids[0]!, 'kernel update', false)) as { decisionId: string };
    clock.advance(30_000);
    const view = await cancelDrain(target, config, clock, ids[0]!, 'wrong node', 'local user bob');
    expect(view).toMatchObject({ action: 'cancel-drain', nodeId: ids[0], drainId: drainIdFor(drained.decisionId), changed: true, waiting: 'gear mover', progress: { total: 0 } });
    expect((await store.listControls()).pendingDrains).toMatchObject([
      { nodeId: ids[0], decisionId: drained.decisionId, cancelledAt: clock.now().toISOString(), cancelledBy: 'local user bob', cancelReason: 'operator (nodescaler CLI): wrong node' },
    ]);
    const again = await cancelDrain(target, config, clock, ids[0]!, 'wrong node', 'local user carol');
    expect(again).toMatchObject({ changed: false, waiting: 'gear mover', stoppingSince: clock.now().toISOString() });
    // A new drain of the node waits until the old message can no longer begin one: the item the gear mover refuses it by stays.
    const redrain = await refusal(safeDrain(target, config, clock, ids[0]!, 'kernel update', false));
    expect(redrain.message).toBe(
      `node ${ids[0]}'s drain was cancelled by local user bob at ${clock.now().toISOString()} before it began; its message, sent at 2026-11-21T10:00:00.000Z, is refused until 2026-11-21T10:15:00.000Z (decisionMaxAge): nothing sent`,
    );
    // The pool is low and nothing counts as draining: the evaluator may scale down again (past unneededTime).
    await report();
    clock.advance(2 * MIN);
    const { outcomes } = await report();
    expect(outcomes[0]?.reason).not.toContain('maxDraining');
    expect(outcomes[0]?.kind).toBe('scale-down');
  });

  it('a message the queue does not take leaves nothing behind: no pending drain, exit 1', async () => {
    const { store, clock, config, ids, queue, target } = await lowPool();
    queue.failNext(1, true);
    const error = await refusal(safeDrain(target, config, clock, ids[0]!, 'kernel update', false));
    expect(error.exitCode).toBe(EXIT.error);
    expect(error.message).toContain('the drain queue did not take the request');
    expect((await store.listControls()).pendingDrains).toEqual([]);
    expect(queue.sent('drain')).toEqual([]);
  });

  it('a drain whose message never went out is given up after decisionMaxAge, with a failure in the decision log', async () => {
    const { store, clock, ids, report } = await lowPool();
    // The CLI recorded it and stopped before sending (a crash): nothing will begin it.
    await store.createPendingDrain({ nodeId: ids[0]!, pool: POOL, decisionId: 'manual:20261121T100000Z:0badc0de', reason: 'kernel update', by: OPERATOR, at: clock.now().toISOString(), sentAt: clock.now().toISOString() });
    await report();
    expect((await store.listControls()).pendingDrains).toHaveLength(1);
    clock.advance(16 * MIN);
    await report();
    expect((await store.listControls()).pendingDrains).toEqual([]);
    expect(await store.listDecisions(POOL, 50)).toContainEqual(
      expect.objectContaining({
        kind: 'failure',
        decisionId: 'manual:20261121T100000Z:0badc0de',
        reason: `drain of ${ids[0]} not begun: its message, sent at 2026-11-21T10:00:00.000Z, was not taken up within decisionMaxAge (15m)`,
        details: expect.objectContaining({ drainDecisionId: 'manual:20261121T100000Z:0badc0de' }),
      }),
    );
  });
});

/** The store, whose cancelPendingDrain runs `first` (once) just before it writes: what another function did in between. */
function before(store: StateStore, first: () => Promise<void>): StateStore {
  let ran = false;
  return new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (name === 'cancelPendingDrain') {
        return async (...args: Parameters<StateStore['cancelPendingDrain']>) => {
          if (!ran) (ran = true), await first();
          return target.cancelPendingDrain(...args);
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('cancel-drain as the gear mover takes the drain\'s message', () => {
  it('a drain the gear mover created and began between the CLI\'s look for it and the cancel\'s write is stopped as any drain', async () => {
    // Moves of ten minutes: the drain is still moving when the cancel is written.
    const w = new World(await harness.create(), { moveDurationMs: 10 * MIN });
    await w.node('src.example.com', { gears: apps(1, 2) });
    await w.node('t1.example.com');
    const mover = w.mover();
    const target: OpenTarget = {
      spec: { kind: 'local', stateDir: '/nonexistent', configFile: '/nonexistent' } as unknown as OpenTarget['spec'],
      store: before(w.store, async () => {
        const [message] = w.queue.sent('drain') as ScaleDownMessage[];
        await mover.handleScaleDown(message!);
        await mover.run(w.budget(2 * MIN));
        expect(await w.store.getNode('src.example.com')).toMatchObject({ state: 'draining' });
      }),
      queue: w.queue,
      identity: { whoAmI: async () => OPERATOR },
      queueLocation: (name) => `recording queue ${name}`,
      close: async () => undefined,
    };
    const drained = (await safeDrain(target, w.config, w.clock, 'src.example.com', 'kernel update', false)) as { decisionId: string };
    const view = await cancelDrain(target, w.config, w.clock, 'src.example.com', 'wrong node', 'local user bob');
    const drainId = drainIdFor(drained.decisionId);
    expect(view).toMatchObject({ action: 'cancel-drain', drainId, changed: true, reason: 'cancelled: operator (nodescaler CLI): wrong node' });
    expect(view).not.toHaveProperty('waiting');
    expect(await w.store.getDrain(drainId)).toMatchObject({ state: 'active', abortRequestedAt: expect.any(String) });

    await w.tickUntilIdle(() => mover);
    expect(await w.store.getDrain(drainId)).toMatchObject({ state: 'aborted', cancelledAt: expect.any(String) });
    expect(await w.store.getNode('src.example.com')).toMatchObject({ state: 'active' });
    expect(w.sim.nodeFacts('src.example.com').active).toBe(true);
    w.checkGears();
  });

  it('a pending drain given up as it was being cancelled, with no drain begun: refused, saying so (exit 4)', async () => {
    const { store, clock, config, ids, target } = await lowPool();
    await safeDrain(target, config, clock, ids[0]!, 'kernel update', false);
    // The evaluator ends the item (its message past decisionMaxAge) between the CLI's read of it and its write.
    const racing: OpenTarget = { ...target, store: before(store, async () => void (await store.deletePendingDrain(ids[0]!))) };
    const error = await refusal(cancelDrain(racing, config, clock, ids[0]!, 'wrong node', 'local user bob'));
    expect(error.exitCode).toBe(EXIT.refused);
    expect(error.message).toBe(`the drain of ${ids[0]} stopped waiting as it was being cancelled, and is not in progress: it ended or was given up`);
    expect((await store.listControls()).pendingDrains).toEqual([]);
  });

  it('a drain that ran and ended before the evaluator ended its pending item: refused, nothing written (exit 4)', async () => {
    const { store, clock, config, ids, target } = await lowPool();
    const { decisionId } = (await safeDrain(target, config, clock, ids[0]!, 'kernel update', false)) as { decisionId: string };
    // The gear mover began it, closed the node and ended it aborted (the node re-opened) within the minute.
    const drainId = drainIdFor(decisionId);
    const at = clock.now().toISOString();
    await store.createDrain({ drainId, decisionId, nodeId: ids[0]!, pool: POOL, startedAt: at, reason: 'kernel update', moves: [], kind: 'manual' }, clock.now());
    const created = (await store.getDrain(drainId))!;
    await store.updateDrain(drainId, created.version, { closedAt: at, state: 'aborted', abortReason: 'node d1-small-1.example.com is protected' }, clock.now());
    const error = await refusal(cancelDrain(target, config, clock, ids[0]!, 'wrong node', 'local user bob'));
    expect(error.exitCode).toBe(EXIT.refused);
    expect(error.message).toBe(`the drain of ${ids[0]} (${drainId}) already ran and ended aborted (node d1-small-1.example.com is protected): nothing to cancel`);
    expect((await store.listControls()).pendingDrains).toEqual([expect.not.objectContaining({ cancelledAt: expect.anything() })]);
  });
});
