import { describe, expect, it } from 'vitest';
import { readDueSpotPrices } from '../../lib/app/market-prices.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { renderStatus, statusView } from '../../lib/cli/status.js';
import { Style } from '../../lib/cli/render.js';
import { NO_CONTROLS } from '../../lib/domain/controls.js';
import { decidePool } from '../../lib/domain/evaluate.js';
import { nodeHourPriceOf } from '../../lib/domain/node-price.js';
import {
  SPOT_PRICE_MAX_AGE_MS,
  SPOT_PRICE_REFRESH_MS,
  SPOT_PRICE_RETRY_MS,
  spotPricesByType,
  spotPricesDue,
  usableSpotPrices,
} from '../../lib/domain/market-prices.js';
import { TransientError } from '../../lib/errors.js';
import { NOW, config, evaluation, minutesAgo, pool, spotPriceRecord } from '../support/builders.js';
import { quietDay, withGears } from '../support/decisions.js';
import { ScriptedSpotMarket } from '../support/markets.js';

const typed = (...names: string[]) => ({ instanceTypes: names.map((name) => ({ name, vcpus: 4, memoryGiB: 16 })) });
const spotPool = (...names: string[]) => ({ template: { ...typed(...names), spot: true } });
const later = (ms: number) => new Date(NOW.getTime() + ms);
const scaleDown = { enabled: true, payoff: { enabled: true } };

describe('a spot pool is priced by the spot market', () => {
  const read = { byType: { 'm5.xlarge': 0.07, 'm5.2xlarge': 0.15 }, zones: { 'm5.xlarge': 3, 'm5.2xlarge': 1 }, readAt: '2025-03-10T09:40:00.000Z' };

  it("the node's type's spot price, else the pool's first type's; naming the zones and the time it was read", () => {
    const pool = spotPool('m5.xlarge', 'm5.2xlarge');
    expect(nodeHourPriceOf({}, pool, { instanceType: 'm5.2xlarge' }, { spot: read })).toEqual({ dollars: 0.15, source: 'm5.2xlarge spot in 1 zone, read 2025-03-10T09:40Z' });
    expect(nodeHourPriceOf({}, pool, {}, { spot: read })).toEqual({ dollars: 0.07, source: 'm5.xlarge spot, the median of 3 zones, read 2025-03-10T09:40Z' });
    // A type EC2 did not quote is priced as the pool's first type's spot price, not as an on-demand node.
    expect(nodeHourPriceOf({}, pool, { instanceType: 'm5.4xlarge' }, { spot: read }).dollars).toBe(0.07);
  });

  it("a node whose zone is known is priced at its zone's spot price; an unquoted zone, at the type's median", () => {
    const zonal = { ...read, byZone: { 'm5.xlarge': { 'us-east-1a': 0.061, 'us-east-1b': 0.07, 'us-east-1c': 0.094 } } };
    const pool = spotPool('m5.xlarge');
    expect(nodeHourPriceOf({}, pool, { instanceType: 'm5.xlarge', zone: 'us-east-1c' }, { spot: zonal })).toEqual({ dollars: 0.094, source: 'm5.xlarge spot in us-east-1c, read 2025-03-10T09:40Z' });
    expect(nodeHourPriceOf({}, pool, { instanceType: 'm5.xlarge', zone: 'us-east-1f' }, { spot: zonal }).dollars).toBe(0.07);
    expect(nodeHourPriceOf({}, pool, { instanceType: 'm5.xlarge' }, { spot: zonal }).dollars).toBe(0.07);
    // An on-demand pool's node is priced by the list, whatever its zone.
    expect(nodeHourPriceOf({}, { template: typed('m5.xlarge') }, { instanceType: 'm5.xlarge', zone: 'us-east-1c' }, { spot: zonal }).dollars).toBe(0.192);
  });

  it('what the operator wrote still comes first; an on-demand pool, or a spot pool nothing was read for, is priced by the list', () => {
    expect(nodeHourPriceOf({}, { ...spotPool('m5.xlarge'), nodeHourPrice: 0.05 }, { instanceType: 'm5.xlarge' }, { spot: read }).dollars).toBe(0.05);
    expect(nodeHourPriceOf({ nodeHourPrice: 0.06 }, spotPool('m5.xlarge'), { instanceType: 'm5.xlarge' }, { spot: read }).dollars).toBe(0.06);
    expect(nodeHourPriceOf({}, { template: typed('m5.xlarge') }, { instanceType: 'm5.xlarge' }, { spot: read })).toEqual({ dollars: 0.192, source: 'm5.xlarge on demand, us-east-1' });
    expect(nodeHourPriceOf({}, spotPool('m5.xlarge'), { instanceType: 'm5.xlarge' }, {}).dollars).toBe(0.192);
    expect(nodeHourPriceOf({}, spotPool('r5.xlarge'), { instanceType: 'r5.xlarge' }, { spot: read }).dollars).toBe(0.252);
  });

  it("each type's price is the median of its zones; what is not a positive price is left out", () => {
    const quotes = [
      { instanceType: 'm5.xlarge', zone: 'a', dollars: 0.09 },
      { instanceType: 'm5.xlarge', zone: 'b', dollars: 0.05 },
      { instanceType: 'm5.xlarge', zone: 'c', dollars: 0.07 },
      { instanceType: 'm5.2xlarge', zone: 'a', dollars: 0.1 },
      { instanceType: 'm5.2xlarge', zone: 'b', dollars: 0.2 },
      { instanceType: 'm5.2xlarge', zone: 'c', dollars: 0 },
      { instanceType: 'c5.xlarge', zone: 'a', dollars: Number.NaN },
    ];
    const { byType, zones } = spotPricesByType(quotes);
    expect(byType['m5.xlarge']).toBe(0.07);
    expect(byType['m5.2xlarge']).toBeCloseTo(0.15, 10);
    expect(zones).toEqual({ 'm5.2xlarge': 2, 'm5.xlarge': 3 });
    expect(spotPricesByType(quotes).byZone).toEqual({ 'm5.2xlarge': { a: 0.1, b: 0.2 }, 'm5.xlarge': { a: 0.09, b: 0.05, c: 0.07 } });
    expect(byType['c5.xlarge']).toBeUndefined();
  });

  it('prices read more than a day ago are not used', () => {
    const record = spotPriceRecord({ 'm5.xlarge': 0.07 });
    expect(usableSpotPrices(record, later(SPOT_PRICE_MAX_AGE_MS))?.byType).toEqual({ 'm5.xlarge': 0.07 });
    expect(usableSpotPrices(record, later(SPOT_PRICE_MAX_AGE_MS + 1))).toBeUndefined();
    expect(usableSpotPrices(spotPriceRecord({}, null, { failedAt: NOW.toISOString() }), NOW)).toBeUndefined();
    expect(usableSpotPrices(undefined, NOW)).toBeUndefined();
  });
});

describe('when a spot pool\'s prices are read', () => {
  const spot = spotPool('m5.xlarge', 'm5.2xlarge');
  const fresh = spotPriceRecord({ 'm5.xlarge': 0.07, 'm5.2xlarge': 0.15 });

  it('first sight, then once an hour, and at once when the pool names other types', () => {
    expect(spotPricesDue(scaleDown, spot, undefined, NOW)).toEqual(['m5.xlarge', 'm5.2xlarge']);
    expect(spotPricesDue(scaleDown, spot, fresh, later(SPOT_PRICE_REFRESH_MS - 1))).toEqual([]);
    expect(spotPricesDue(scaleDown, spot, fresh, later(SPOT_PRICE_REFRESH_MS))).toEqual(['m5.xlarge', 'm5.2xlarge']);
    expect(spotPricesDue(scaleDown, spotPool('m5.xlarge', 'm6i.xlarge'), fresh, later(60_000))).toEqual(['m5.xlarge', 'm6i.xlarge']);
    // A type EC2 quoted nothing for was asked: it is not asked again every minute.
    const unquoted = spotPriceRecord({ 'm5.xlarge': 0.07 }, NOW, { types: ['m5.xlarge', 'm5.2xlarge'] });
    expect(spotPricesDue(scaleDown, spot, unquoted, later(60_000))).toEqual([]);
  });

  it('ten minutes after a failed read, not at every evaluation', () => {
    const failed = { ...fresh, failedAt: later(2 * SPOT_PRICE_REFRESH_MS).toISOString(), failure: 'throttled' };
    expect(spotPricesDue(scaleDown, spot, failed, later(2 * SPOT_PRICE_REFRESH_MS + SPOT_PRICE_RETRY_MS - 1))).toEqual([]);
    expect(spotPricesDue(scaleDown, spot, failed, later(2 * SPOT_PRICE_REFRESH_MS + SPOT_PRICE_RETRY_MS))).toHaveLength(2);
  });

  it('never for an on-demand pool, a priced pool, or while no drain is priced', () => {
    expect(spotPricesDue(scaleDown, { template: typed('m5.xlarge') }, undefined, NOW)).toEqual([]);
    expect(spotPricesDue(scaleDown, { ...spot, nodeHourPrice: 0.05 }, undefined, NOW)).toEqual([]);
    expect(spotPricesDue({ enabled: true, payoff: { enabled: true, nodeHourPrice: 0.05 } }, spot, undefined, NOW)).toEqual([]);
    expect(spotPricesDue({ enabled: false, payoff: { enabled: true } }, spot, undefined, NOW)).toEqual([]);
    expect(spotPricesDue({ enabled: true, payoff: { enabled: false } }, spot, undefined, NOW)).toEqual([]);
  });
});

describe("the evaluator's spot read (lib/app/market-prices.ts)", () => {
  const cfg = config({}, { template: { ...typed('m5.xlarge'), spot: true } } as object);
  const poolConfig = cfg.pools[0]!;

  it('stores each type\'s median with the time it was read; nothing when nothing is due or no market is reachable', async () => {
    const market = new ScriptedSpotMarket().quote('m5.xlarge', { 'us-east-1a': 0.06, 'us-east-1b': 0.08, 'us-east-1c': 0.07 });
    const ports = { spotPrices: market, log: new MemoryLog(), metrics: new InMemoryMetrics() };
    const record = await readDueSpotPrices(ports, cfg, poolConfig, pool(), NOW);
    expect(record).toEqual({
      types: ['m5.xlarge'],
      byType: { 'm5.xlarge': 0.07 },
      zones: { 'm5.xlarge': 3 },
      byZone: { 'm5.xlarge': { 'us-east-1a': 0.06, 'us-east-1b': 0.08, 'us-east-1c': 0.07 } },
      readAt: NOW.toISOString(),
    });
    expect(await readDueSpotPrices(ports, cfg, poolConfig, pool({ spotPrices: record! }), later(60_000))).toBeUndefined();
    expect(await readDueSpotPrices({ log: ports.log, metrics: ports.metrics }, cfg, poolConfig, pool(), NOW)).toBeUndefined();
    expect(market.requests).toEqual([['m5.xlarge']]);
  });

  it('a failed read keeps the last prices, records why, warns and counts it; the evaluation goes on', async () => {
    const market = new ScriptedSpotMarket().failNext(new TransientError('DescribeSpotPriceHistory failed: RequestLimitExceeded: Rate exceeded'));
    const log = new MemoryLog();
    const metrics = new InMemoryMetrics();
    const last = spotPriceRecord({ 'm5.xlarge': 0.07 });
    const when = later(SPOT_PRICE_REFRESH_MS);
    const record = await readDueSpotPrices({ spotPrices: market, log, metrics }, cfg, poolConfig, pool({ spotPrices: last }), when);
    expect(record).toMatchObject({ ...last, failedAt: when.toISOString(), failure: expect.stringContaining('RequestLimitExceeded') });
    expect(usableSpotPrices(record, when)?.byType).toEqual({ 'm5.xlarge': 0.07 });
    expect(log.lines.find((line) => line.message.startsWith('spot prices not read'))).toMatchObject({ level: 'warn', attributes: { pool: 'd1/small', retryable: true } });
    expect(metrics.sum('SpotPriceReadFailures')).toBe(1);
  });
});

describe('decisions and status name the spot price', () => {
  it("the evaluator's decision prices a drain of a spot pool by its stored spot price: cheap nodes are not worth their tenants' restarts", () => {
    const decide = (spotPrices?: ReturnType<typeof spotPriceRecord>) =>
      decidePool(
        evaluation({
          config: config({}, spotPool('m5.4xlarge') as object),
          nodes: withGears([40, 40, 32, 12]),
          pool: pool({ demandHistory: quietDay, lowSince: minutesAgo(7), ...(spotPrices ? { spotPrices } : {}) }),
        }),
      ).decision;
    // Priced as an on-demand m5.4xlarge (nothing read), the drain pays: $18.43 against 2 x $0.27.
    expect(decide()).toMatchObject({ kind: 'scale-down', reason: expect.stringContaining('at $0.768/h') });
    expect(decide(spotPriceRecord({ 'm5.4xlarge': 0.23 }))).toMatchObject({ kind: 'scale-down', reason: expect.stringContaining('saves $5.52 at $0.23/h') });
    // At $0.005 an hour a day's saving ($0.12) is less than twice what its restarts cost.
    expect(decide(spotPriceRecord({ 'm5.4xlarge': 0.005 }))).toMatchObject({ kind: 'no-action', reason: expect.stringContaining('at $0.005/h <') });
    // Read a day and more ago: the list price again.
    expect(decide(spotPriceRecord({ 'm5.4xlarge': 0.005 }, later(-SPOT_PRICE_MAX_AGE_MS - 60_000)))).toMatchObject({ kind: 'scale-down', reason: expect.stringContaining('at $0.768/h') });
  });

  it("a node is priced at its own zone's spot price when its zone is known", () => {
    const nodes = withGears([40, 40, 32, 12]).map((n) => ({ ...n, instanceType: 'm5.4xlarge' }));
    const inZone = (zone?: string) =>
      decidePool(
        evaluation({
          config: config({}, spotPool('m5.4xlarge') as object),
          nodes: nodes.map((n) => (n.nodeId === 'node-4.example.com' && zone ? { ...n, zone } : n)),
          pool: pool({ demandHistory: quietDay, lowSince: minutesAgo(7), spotPrices: spotPriceRecord({ 'm5.4xlarge': 0.23 }, NOW, { byZone: { 'm5.4xlarge': { 'us-east-1a': 0.005, 'us-east-1b': 0.23, 'us-east-1c': 0.31 } } }) }),
        }),
      ).decision;
    // The emptiest node, in us-east-1a, costs $0.005 an hour there: its day's saving does not pay its 12 restarts, and
    // the next candidate, whose zone is not known, is priced at the median and drains instead.
    const cheapZone = inZone('us-east-1a');
    expect(cheapZone).toMatchObject({ kind: 'scale-down', nodeId: 'node-3.example.com', reason: expect.stringContaining('at $0.23/h >=') });
    expect((cheapZone as { rejected?: unknown[] }).rejected).toEqual([
      { nodeId: 'node-4.example.com', reason: "does not pay: 24.0h unneeded (yesterday's demand) saves $0.12 at $0.005/h < 2 x $0.27 for 12 disruptive moves", pending: true },
    ]);
    // Its zone unknown, it is priced at the median: it drains.
    expect(inZone()).toMatchObject({ kind: 'scale-down', nodeId: 'node-4.example.com', reason: expect.stringContaining('at $0.23/h >=') });
  });

  it('status shows the spot price and its source, and a failed read newer than the last good one', () => {
    const cfg = config({}, spotPool('m5.xlarge') as object);
    const view = (spotPrices: ReturnType<typeof spotPriceRecord>) =>
      statusView({ now: NOW, config: cfg, allNodes: [], controls: NO_CONTROLS, pools: [{ pool: 'd1/small', config: cfg.pools[0]!, record: pool({ spotPrices }), nodes: [], drains: [] }] }, 'local state');
    const ok = view(spotPriceRecord({ 'm5.xlarge': 0.0712 }, later(-20 * 60_000), { zones: { 'm5.xlarge': 6 } }));
    expect(ok.pools[0]).toMatchObject({ nodeHourPrice: { dollars: 0.0712, source: 'm5.xlarge spot, the median of 6 zones, read 2025-03-10T09:40Z' }, priceReadFailures: [] });
    const failed = view(spotPriceRecord({ 'm5.xlarge': 0.0712 }, later(-90 * 60_000), { failedAt: later(-5 * 60_000).toISOString(), failure: 'TransientError: throttled' }));
    expect(failed.pools[0]!.priceReadFailures).toEqual([{ market: 'spot', at: later(-5 * 60_000).toISOString(), failure: 'TransientError: throttled' }]);
    const text = renderStatus(failed, { style: new Style(false), width: 120 }).join('\n');
    expect(text).toContain('drains priced at $0.0712 a node-hour (m5.xlarge spot, read 2025-03-10T08:30Z)');
    expect(text).toMatch(/spot prices not read .*: TransientError: throttled/);
  });
});
