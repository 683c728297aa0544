/**
 * Drains priced by the markets, end to end through the evaluator: a spot
 * pool's prices read from the spot market, and a pool's on-demand prices read
 * for its region (scripted doubles at the `SpotPrices` and `OnDemandPrices`
 * ports; the adapters are tested against the SDK mock), stored on the pool
 * record in the real state table protocol (dynalite), used by the same
 * evaluation's decision, read again when due, and kept through a failure.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { ThresholdEvaluator } from '../../lib/app/evaluate.js';
import { parseConfig } from '../../lib/config/index.js';
import { TransientError } from '../../lib/errors.js';
import { NOW, POOL } from '../support/builders.js';
import { quietDay } from '../support/decisions.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { RecordingQueue } from '../support/recording-queue.js';
import { ScriptedPriceList, ScriptedSpotMarket } from '../support/markets.js';

const harness = dynaliteHarness();
afterAll(() => harness.close());

const GEARS = [40, 40, 32, 12];

async function spotPoolWorld(market: ScriptedSpotMarket) {
  return poolWorld({ spotPrices: market }, 'm5.4xlarge', true);
}

async function poolWorld(markets: { spotPrices?: ScriptedSpotMarket; onDemandPrices?: ScriptedPriceList }, instanceType: string, spot: boolean) {
  const store = await harness.create();
  const clock = new VirtualClock(NOW.toISOString());
  const config = parseConfig({
    pools: [{ district: 'd1', profile: 'small', min: 1, max: 10, gearsPerNode: 100, naming: { base: 'node' }, template: { instanceTypes: [{ name: instanceType, vcpus: 16, memoryGiB: 64 }], spot } }],
  });
  for (let n = 1; n <= GEARS.length; n++) {
    await store.createNode({ nodeId: `node-${n}.example.com`, pool: POOL, district: 'd1', profile: 'small', state: 'active', createdAt: '2025-03-01T00:00:00.000Z', origin: 'provisioned', protected: false, instanceType }, clock.now());
  }
  // A quiet day behind it, low for 7 minutes: its emptiest node is unneeded for a day, if that pays.
  const created = await store.ensurePool(POOL);
  await store.updatePool(POOL, created.version, { demandHistory: quietDay, lowSince: new Date(NOW.getTime() - 7 * 60_000).toISOString() });
  const log = new MemoryLog();
  const metrics = new InMemoryMetrics();
  const evaluator = new ThresholdEvaluator({ store, queue: new RecordingQueue({ fifo: ['scale', 'drain'] }), clock, metrics, log, ...markets }, config);
  const report = () =>
    evaluator.handleBatch(
      GEARS.map((gears, i) => ({
        id: `m${i}`,
        message: { type: 'node-stats' as const, v: 1 as const, nodeId: `node-${i + 1}.example.com`, district: 'd1', profile: 'small', activeGears: gears, maxActiveGears: 100, reportedAt: clock.now().toISOString() },
      })),
    );
  return { store, clock, log, metrics, report };
}

describe('a spot pool priced by the spot market, through the evaluator and the state table', () => {
  it('reads the prices once, stores them on the pool record, and the same evaluation refuses a drain they do not pay for', async () => {
    const market = new ScriptedSpotMarket().quote('m5.4xlarge', { 'us-east-1a': 0.004, 'us-east-1b': 0.005, 'us-east-1c': 0.009 });
    const world = await spotPoolWorld(market);

    const { outcomes } = await world.report();

    expect(market.requests).toEqual([['m5.4xlarge']]);
    expect((await world.store.getPool(POOL))?.spotPrices).toEqual({
      types: ['m5.4xlarge'],
      byType: { 'm5.4xlarge': 0.005 },
      zones: { 'm5.4xlarge': 3 },
      byZone: { 'm5.4xlarge': { 'us-east-1a': 0.004, 'us-east-1b': 0.005, 'us-east-1c': 0.009 } },
      readAt: NOW.toISOString(),
    });
    expect(outcomes).toEqual([expect.objectContaining({ kind: 'no-action', reason: expect.stringContaining('at $0.005/h <') })]);
  });

  it('the same pool at a spot price of $0.30 drains that node: the price is what decided', async () => {
    const world = await spotPoolWorld(new ScriptedSpotMarket().quote('m5.4xlarge', { 'us-east-1a': 0.3 }));
    const { outcomes } = await world.report();
    expect(outcomes).toEqual([expect.objectContaining({ kind: 'scale-down', reason: expect.stringContaining('at $0.3/h >=') })]);
  });

  it('reads again an hour later, not before; a failed read keeps the prices, records why, and is tried again ten minutes later', async () => {
    const market = new ScriptedSpotMarket().quote('m5.4xlarge', { 'us-east-1a': 0.005 });
    const world = await spotPoolWorld(market);
    await world.report();
    world.clock.advance(30 * 60_000);
    await world.report();
    expect(market.requests).toHaveLength(1);

    world.clock.advance(30 * 60_000);
    market.failNext(new TransientError('DescribeSpotPriceHistory failed: RequestLimitExceeded: Rate exceeded'));
    const { outcomes } = await world.report();
    expect(market.requests).toHaveLength(2);
    const failedAt = world.clock.now().toISOString();
    expect((await world.store.getPool(POOL))?.spotPrices).toMatchObject({ byType: { 'm5.4xlarge': 0.005 }, readAt: NOW.toISOString(), failedAt, failure: expect.stringContaining('RequestLimitExceeded') });
    // The evaluation went on, priced by the prices kept.
    expect(outcomes).toEqual([expect.objectContaining({ reason: expect.stringContaining('at $0.005/h') })]);
    expect(world.metrics.sum('SpotPriceReadFailures')).toBe(1);

    world.clock.advance(5 * 60_000);
    await world.report();
    expect(market.requests).toHaveLength(2);
    world.clock.advance(5 * 60_000);
    market.quote('m5.4xlarge', { 'us-east-1a': 0.006 });
    await world.report();
    expect(market.requests).toHaveLength(3);
    expect((await world.store.getPool(POOL))?.spotPrices).toEqual({
      types: ['m5.4xlarge'],
      byType: { 'm5.4xlarge': 0.006 },
      zones: { 'm5.4xlarge': 1 },
      byZone: { 'm5.4xlarge': { 'us-east-1a': 0.006 } },
      readAt: world.clock.now().toISOString(),
    });
  });
});

describe("a pool priced at its region's on-demand price, through the evaluator and the state table", () => {
  it('reads the price of a type the built-in list does not know, stores it with the region, and the same evaluation drains at it', async () => {
    const list = new ScriptedPriceList('eu-west-1').quote('m7g.4xlarge', 0.7344);
    const world = await poolWorld({ onDemandPrices: list }, 'm7g.4xlarge', false);

    const { outcomes } = await world.report();

    expect(list.requests).toEqual([['m7g.4xlarge']]);
    expect((await world.store.getPool(POOL))?.onDemandPrices).toEqual({ types: ['m7g.4xlarge'], byType: { 'm7g.4xlarge': 0.7344 }, region: 'eu-west-1', readAt: NOW.toISOString() });
    expect(outcomes).toEqual([expect.objectContaining({ kind: 'scale-down', reason: expect.stringContaining('at $0.7344/h >=') })]);
  });

  it('reads again twelve hours later, not before; a failed read keeps the price and counts the failure', async () => {
    const list = new ScriptedPriceList('eu-west-1').quote('m7g.4xlarge', 0.7344);
    const world = await poolWorld({ onDemandPrices: list }, 'm7g.4xlarge', false);
    await world.report();
    world.clock.advance(11 * 60 * 60_000);
    await world.report();
    expect(list.requests).toHaveLength(1);
    world.clock.advance(60 * 60_000);
    list.failNext(new TransientError('GetProducts failed: ThrottlingException: Rate exceeded'));
    const { outcomes } = await world.report();
    expect(list.requests).toHaveLength(2);
    expect((await world.store.getPool(POOL))?.onDemandPrices).toMatchObject({ byType: { 'm7g.4xlarge': 0.7344 }, readAt: NOW.toISOString(), failedAt: world.clock.now().toISOString() });
    expect(outcomes).toEqual([expect.objectContaining({ reason: expect.stringContaining('$0.7344/h') })]);
    expect(world.metrics.sum('OnDemandPriceReadFailures')).toBe(1);
  });
});
