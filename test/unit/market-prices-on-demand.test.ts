/**
 * Every pool's drains priced at its region's on-demand price, read from the
 * AWS Price List (lib/domain/market-prices.ts, lib/app/market-prices.ts):
 * the built-in list is us-east-1's and knows 20 types.
 */
import { describe, expect, it } from 'vitest';
import { onceABatch, readDueMarketPrices, readDueOnDemandPrices } from '../../lib/app/market-prices.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { renderStatus, statusView } from '../../lib/cli/status.js';
import { Style } from '../../lib/cli/render.js';
import { NO_CONTROLS } from '../../lib/domain/controls.js';
import { decidePool } from '../../lib/domain/evaluate.js';
import {
  ON_DEMAND_PRICE_MAX_AGE_MS,
  ON_DEMAND_PRICE_REFRESH_MS,
  ON_DEMAND_PRICE_RETRY_MS,
  onDemandPricesByType,
  onDemandPricesDue,
  usableOnDemandPrices,
} from '../../lib/domain/market-prices.js';
import { nodeHourPriceOf } from '../../lib/domain/node-price.js';
import { TransientError } from '../../lib/errors.js';
import { NOW, config, evaluation, minutesAgo, onDemandPriceRecord, pool, spotPriceRecord } from '../support/builders.js';
import { quietDay, withGears } from '../support/decisions.js';
import { ScriptedPriceList, ScriptedSpotMarket } from '../support/markets.js';

const typed = (...names: string[]) => ({ instanceTypes: names.map((name) => ({ name, vcpus: 4, memoryGiB: 16 })) });
const onDemandPool = (...names: string[]) => ({ template: typed(...names) });
const later = (ms: number) => new Date(NOW.getTime() + ms);
const scaleDown = { enabled: true, payoff: { enabled: true } };
const read = { byType: { 'm5.xlarge': 0.214, 'm7g.2xlarge': 0.3672 }, region: 'eu-west-1', readAt: '2025-03-10T09:40:00.000Z' };

describe("a pool is priced at its region's on-demand price", () => {
  it("the node's type's price as read for the region, naming the region and when; a type the built-in list does not know too", () => {
    expect(nodeHourPriceOf({}, onDemandPool('m5.xlarge'), { instanceType: 'm5.xlarge' }, { onDemand: read })).toEqual({ dollars: 0.214, source: 'm5.xlarge on demand, eu-west-1, read 2025-03-10T09:40Z' });
    expect(nodeHourPriceOf({}, onDemandPool('m7g.2xlarge'), {}, { onDemand: read }).dollars).toBe(0.3672);
    // Without the read the built-in list knows no m7g.2xlarge: the default price, half what it costs.
    expect(nodeHourPriceOf({}, onDemandPool('m7g.2xlarge'), {}, {})).toEqual({ dollars: 0.192, source: 'the default: an m5.xlarge on demand' });
  });

  it("a node's own type, even at the built-in list's price, comes before the pool's first type read for the region", () => {
    expect(nodeHourPriceOf({}, onDemandPool('m5.xlarge'), { instanceType: 'm5.4xlarge' }, { onDemand: read })).toEqual({ dollars: 0.768, source: 'm5.4xlarge on demand, us-east-1 (built-in list)' });
    expect(nodeHourPriceOf({}, onDemandPool('m5.xlarge'), { instanceType: 'x9.huge' }, { onDemand: read }).dollars).toBe(0.214);
  });

  it('what the operator wrote, then a spot pool\'s spot price, come first; a type the spot market does not quote gets its on-demand read', () => {
    expect(nodeHourPriceOf({ nodeHourPrice: 0.1 }, onDemandPool('m5.xlarge'), { instanceType: 'm5.xlarge' }, { onDemand: read }).dollars).toBe(0.1);
    const spot = { byType: { 'm5.xlarge': 0.07 }, readAt: read.readAt };
    const spotPool = { template: { ...typed('m5.xlarge'), spot: true } };
    expect(nodeHourPriceOf({}, spotPool, { instanceType: 'm5.xlarge' }, { spot, onDemand: read }).dollars).toBe(0.07);
    expect(nodeHourPriceOf({}, spotPool, { instanceType: 'm5.xlarge' }, { onDemand: read }).dollars).toBe(0.214);
  });

  it('of several products for one type the lowest counts; what is not a positive price is left out', () => {
    const quotes = [
      { instanceType: 'm5.xlarge', dollars: 0.23 },
      { instanceType: 'm5.xlarge', dollars: 0.214 },
      { instanceType: 'c5.xlarge', dollars: 0 },
      { instanceType: 'r5.xlarge', dollars: Number.NaN },
    ];
    expect(onDemandPricesByType(quotes)).toEqual({ 'm5.xlarge': 0.214 });
  });

  it('a read is used for 30 days; one that never succeeded, not at all', () => {
    const record = onDemandPriceRecord({ 'm5.xlarge': 0.214 });
    expect(usableOnDemandPrices(record, later(ON_DEMAND_PRICE_MAX_AGE_MS))).toEqual({ byType: { 'm5.xlarge': 0.214 }, region: 'eu-west-1', readAt: NOW.toISOString() });
    expect(usableOnDemandPrices(record, later(ON_DEMAND_PRICE_MAX_AGE_MS + 1))).toBeUndefined();
    expect(usableOnDemandPrices(onDemandPriceRecord({}, 'eu-west-1', null, { failedAt: NOW.toISOString() }), NOW)).toBeUndefined();
  });
});

describe("when a pool's on-demand prices are read", () => {
  const pool2 = onDemandPool('m5.xlarge', 'm5.2xlarge');
  const fresh = onDemandPriceRecord({ 'm5.xlarge': 0.214, 'm5.2xlarge': 0.428 });

  it('first sight, then twice a day; at once when the pool names other types or the stage is in another region', () => {
    expect(onDemandPricesDue(scaleDown, pool2, undefined, 'eu-west-1', NOW)).toEqual(['m5.xlarge', 'm5.2xlarge']);
    expect(onDemandPricesDue(scaleDown, pool2, fresh, 'eu-west-1', later(ON_DEMAND_PRICE_REFRESH_MS - 1))).toEqual([]);
    expect(onDemandPricesDue(scaleDown, pool2, fresh, 'eu-west-1', later(ON_DEMAND_PRICE_REFRESH_MS))).toHaveLength(2);
    expect(onDemandPricesDue(scaleDown, onDemandPool('m6i.xlarge'), fresh, 'eu-west-1', later(60_000))).toEqual(['m6i.xlarge']);
    expect(onDemandPricesDue(scaleDown, pool2, fresh, 'ap-southeast-2', later(60_000))).toHaveLength(2);
    // A spot pool too: its on-demand price prices a type the spot market does not quote.
    expect(onDemandPricesDue(scaleDown, { template: { ...typed('m5.xlarge'), spot: true } }, undefined, 'eu-west-1', NOW)).toEqual(['m5.xlarge']);
  });

  it('ten minutes after a failed read; never for a priced pool or while no drain is priced', () => {
    const failed = { ...fresh, failedAt: later(ON_DEMAND_PRICE_REFRESH_MS).toISOString(), failure: 'throttled' };
    expect(onDemandPricesDue(scaleDown, pool2, failed, 'eu-west-1', later(ON_DEMAND_PRICE_REFRESH_MS + ON_DEMAND_PRICE_RETRY_MS - 1))).toEqual([]);
    expect(onDemandPricesDue(scaleDown, pool2, failed, 'eu-west-1', later(ON_DEMAND_PRICE_REFRESH_MS + ON_DEMAND_PRICE_RETRY_MS))).toHaveLength(2);
    expect(onDemandPricesDue(scaleDown, { ...pool2, nodeHourPrice: 0.2 }, undefined, 'eu-west-1', NOW)).toEqual([]);
    expect(onDemandPricesDue({ enabled: true, payoff: { enabled: true, nodeHourPrice: 0.2 } }, pool2, undefined, 'eu-west-1', NOW)).toEqual([]);
    expect(onDemandPricesDue({ enabled: true, payoff: { enabled: false } }, pool2, undefined, 'eu-west-1', NOW)).toEqual([]);
  });
});

describe("the evaluator's on-demand read (lib/app/market-prices.ts)", () => {
  const cfg = config({}, { template: typed('m5.xlarge', 'm9.unknown') } as object);
  const poolConfig = cfg.pools[0]!;

  it('stores the prices with the region and time read, warns of a type the region has no price for; nothing when not due or no list is reachable', async () => {
    const list = new ScriptedPriceList('eu-west-1').quote('m5.xlarge', 0.214);
    const log = new MemoryLog();
    const ports = { onDemandPrices: list, log, metrics: new InMemoryMetrics() };
    const record = await readDueOnDemandPrices(ports, cfg, poolConfig, pool(), NOW);
    expect(record).toEqual({ types: ['m5.xlarge', 'm9.unknown'], byType: { 'm5.xlarge': 0.214 }, region: 'eu-west-1', readAt: NOW.toISOString() });
    expect(log.lines.find((line) => line.level === 'warn')).toMatchObject({ message: expect.stringContaining('no on-demand price for these instance types in eu-west-1'), attributes: { unquoted: ['m9.unknown'] } });
    expect(await readDueOnDemandPrices(ports, cfg, poolConfig, pool({ onDemandPrices: record! }), later(60_000))).toBeUndefined();
    expect(await readDueOnDemandPrices({ log, metrics: ports.metrics }, cfg, poolConfig, pool(), NOW)).toBeUndefined();
    expect(list.requests).toEqual([['m5.xlarge', 'm9.unknown']]);
  });

  it('a failed read keeps the last prices, records why, warns and counts it', async () => {
    const list = new ScriptedPriceList().failNext(new TransientError('GetProducts failed: ThrottlingException: Rate exceeded'));
    const log = new MemoryLog();
    const metrics = new InMemoryMetrics();
    const last = onDemandPriceRecord({ 'm5.xlarge': 0.214 });
    const when = later(ON_DEMAND_PRICE_REFRESH_MS);
    const record = await readDueOnDemandPrices({ onDemandPrices: list, log, metrics }, cfg, poolConfig, pool({ onDemandPrices: last }), when);
    expect(record).toMatchObject({ ...last, failedAt: when.toISOString(), failure: expect.stringContaining('ThrottlingException') });
    expect(usableOnDemandPrices(record, when)?.byType).toEqual({ 'm5.xlarge': 0.214 });
    expect(log.lines.find((line) => line.message.startsWith('on-demand prices not read'))).toMatchObject({ level: 'warn', attributes: { pool: 'd1/small', retryable: true } });
    expect(metrics.sum('OnDemandPriceReadFailures')).toBe(1);
    expect(metrics.sum('SpotPriceReadFailures')).toBe(0);
  });

  it("reads both markets of a spot pool, and pools that share types make one request of each market a batch", async () => {
    const spotCfg = config({}, { template: { ...typed('m5.xlarge'), spot: true } } as object);
    const market = new ScriptedSpotMarket().quote('m5.xlarge', { 'eu-west-1a': 0.07 });
    const list = new ScriptedPriceList().quote('m5.xlarge', 0.214);
    const batch = { ...onceABatch({ spotPrices: market, onDemandPrices: list }), log: new MemoryLog(), metrics: new InMemoryMetrics() };
    const first = await readDueMarketPrices(batch, spotCfg, spotCfg.pools[0]!, pool(), NOW);
    const second = await readDueMarketPrices(batch, spotCfg, spotCfg.pools[0]!, pool({ pool: 'd2/small' }), NOW);
    expect(first).toEqual(second);
    expect(first).toMatchObject({ spotPrices: { byType: { 'm5.xlarge': 0.07 } }, onDemandPrices: { byType: { 'm5.xlarge': 0.214 }, region: 'eu-west-1' } });
    expect(market.requests).toEqual([['m5.xlarge']]);
    expect(list.requests).toEqual([['m5.xlarge']]);
  });

  it("after a market's read fails, its other reads of the batch fail at once, with no request; a new batch asks again", async () => {
    const list = new ScriptedPriceList().quote('m5.xlarge', 0.214).quote('c5.xlarge', 0.194).failNext(new TransientError('GetProducts failed: TimeoutError: no answer'));
    const ports = () => ({ ...onceABatch({ onDemandPrices: list }), log: new MemoryLog(), metrics: new InMemoryMetrics() });
    const batch = ports();
    const first = await readDueOnDemandPrices(batch, cfg, poolConfig, pool(), NOW);
    const other = config({}, { template: typed('c5.xlarge') } as object);
    const second = await readDueOnDemandPrices(batch, other, other.pools[0]!, pool({ pool: 'd2/small' }), NOW);
    expect([first?.failure, second?.failure]).toEqual([expect.stringContaining('TimeoutError'), expect.stringContaining('TimeoutError')]);
    expect(list.requests).toEqual([['m5.xlarge', 'm9.unknown']]);
    expect(batch.metrics.sum('OnDemandPriceReadFailures')).toBe(2);
    const next = await readDueOnDemandPrices(ports(), other, other.pools[0]!, pool({ pool: 'd2/small' }), NOW);
    expect(next?.byType).toEqual({ 'c5.xlarge': 0.194 });
  });
});

describe('decisions and status name the on-demand price read', () => {
  it("the evaluator's decision prices a drain at the region's price, and at the type's own where the built-in list knows none", () => {
    const decide = (template: object, prices: Parameters<typeof pool>[0] = {}) =>
      decidePool(
        evaluation({
          config: config({}, { template } as object),
          nodes: withGears([40, 40, 32, 12]),
          pool: pool({ demandHistory: quietDay, lowSince: minutesAgo(7), ...prices }),
        }),
      ).decision;
    expect(decide(typed('m5.4xlarge'))).toMatchObject({ kind: 'scale-down', reason: expect.stringContaining('at $0.768/h') });
    expect(decide(typed('m5.4xlarge'), { onDemandPrices: onDemandPriceRecord({ 'm5.4xlarge': 0.856 }) })).toMatchObject({ kind: 'scale-down', reason: expect.stringContaining('at $0.856/h') });
    expect(decide(typed('m7g.4xlarge'))).toMatchObject({ reason: expect.stringContaining('at $0.192/h') });
    expect(decide(typed('m7g.4xlarge'), { onDemandPrices: onDemandPriceRecord({ 'm7g.4xlarge': 0.7344 }) })).toMatchObject({ kind: 'scale-down', reason: expect.stringContaining('at $0.7344/h') });
    // A spot price read for the pool does not price an on-demand pool.
    expect(decide(typed('m5.4xlarge'), { spotPrices: spotPriceRecord({ 'm5.4xlarge': 0.005 }) })).toMatchObject({ kind: 'scale-down', reason: expect.stringContaining('at $0.768/h') });
  });

  it('status shows the price read for the region, and a failed read newer than the last good one', () => {
    const cfg = config({}, { template: typed('m5.xlarge') } as object);
    const view = (onDemandPrices: ReturnType<typeof onDemandPriceRecord>) =>
      statusView({ now: NOW, config: cfg, allNodes: [], controls: NO_CONTROLS, pools: [{ pool: 'd1/small', config: cfg.pools[0]!, record: pool({ onDemandPrices }), nodes: [], drains: [] }] }, 'local state');
    const ok = view(onDemandPriceRecord({ 'm5.xlarge': 0.214 }, 'eu-west-1', later(-20 * 60_000)));
    expect(ok.pools[0]).toMatchObject({ nodeHourPrice: { dollars: 0.214, source: 'm5.xlarge on demand, eu-west-1, read 2025-03-10T09:40Z' }, priceReadFailures: [] });
    const failed = view(onDemandPriceRecord({ 'm5.xlarge': 0.214 }, 'eu-west-1', later(-13 * 60 * 60_000), { failedAt: later(-5 * 60_000).toISOString(), failure: 'ValidationError: AccessDeniedException' }));
    expect(failed.pools[0]!.priceReadFailures).toEqual([{ market: 'on-demand', at: later(-5 * 60_000).toISOString(), failure: 'ValidationError: AccessDeniedException' }]);
    const text = renderStatus(failed, { style: new Style(false), width: 120 }).join('\n');
    expect(text).toContain('drains priced at $0.214 a node-hour (m5.xlarge on demand, eu-west-1, read 2025-03-09T21:00Z)');
    expect(text).toMatch(/on-demand prices not read .*: ValidationError: AccessDeniedException/);
  });
});
