/**
 * Issue 18, item 2c, on the broker's real answers: a failed add-node at a
 * node's first report was logged and the node marked active anyway, in no
 * district, taking no gears, and nothing tried again. The node now stays
 * `provisioning` until add-node succeeds; its next stats try again. State on
 * dynalite, the broker through its adapter over the emulator.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { ThresholdEvaluator } from '../../lib/app/evaluate.js';
import { parseConfig } from '../../lib/config/index.js';
import { brokerOnEmulator } from '../support/broker-platform.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { RecordingQueue } from '../support/recording-queue.js';

const NODE = 'small-7.example.com';
const config = parseConfig({ pools: [{ district: 'd1', profile: 'small', max: 10, gearsPerNode: 100 }], scaleUp: { forecast: { enabled: false } } });

describe('a node whose add-node failed joins on a later report (dynalite, broker emulator)', () => {
  const harness = dynaliteHarness();
  afterAll(() => harness.close());

  it('stays provisioning while the broker cannot reach it, and is in district d1 and active after the next stats', async () => {
    const store = await harness.create();
    const clock = new VirtualClock(new Date('2026-11-24T01:00:00Z'));
    const { broker, platform } = brokerOnEmulator(clock);
    broker.createDistrict('d1', 'small');
    broker.addNodeHost(NODE, 'small', 100);
    broker.unreachable(NODE);
    await store.createNode(
      { nodeId: NODE, pool: 'd1/small', district: 'd1', profile: 'small', state: 'provisioning', createdAt: clock.now().toISOString(), origin: 'provisioned', protected: false, decisionId: 'up:d1_small:1' },
      clock.now(),
    );
    const metrics = new InMemoryMetrics();
    const evaluator = new ThresholdEvaluator({ store, queue: new RecordingQueue(), clock, metrics, log: new MemoryLog(), platform }, config);
    const report = () => ({
      id: `m-${clock.now().getTime()}`,
      message: { type: 'node-stats' as const, v: 1 as const, nodeId: NODE, district: 'd1', profile: 'small', activeGears: 0, maxActiveGears: 100, reportedAt: clock.now().toISOString() },
    });

    clock.advance(150_000);
    expect((await evaluator.handleBatch([report()])).failures).toEqual([]);
    expect(broker.membership(NODE)).toBeUndefined();
    expect(await store.getNode(NODE)).toMatchObject({ state: 'provisioning' });
    expect((await store.getNode(NODE))?.reason).toMatch(/^joining: add-node to district d1 failed: /);
    expect(metrics.sum('JoinFailures')).toBe(1);

    // The host's MCollective agent comes up: the next report's add-node goes through.
    broker.addNodeHost(NODE, 'small', 100);
    clock.advance(60_000);
    const second = clock.now().toISOString();
    await evaluator.handleBatch([report()]);
    expect(broker.membership(NODE)).toEqual({ district: 'd1', active: true });
    const joined = await store.getNode(NODE);
    expect(joined?.state).toBe('active');
    expect(joined!.joinedAt! >= second).toBe(true);
    const adds = broker.sent.filter((input) => input.Parameters?.action?.[0] === 'add-node');
    expect(adds).toHaveLength(2);
  });
});
