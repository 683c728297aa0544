import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { BillMeter } from '../../lib/sim/bill.js';
import { drainBytes, itemBytes } from '../../lib/sim/item-sizes.js';
import { SERVICE_PRICES } from '../../lib/sim/prices.js';
import { statsToStore } from '../../lib/domain/node-stats.js';

describe('the autoscaler bill', () => {
  it('bills a hand-counted month line by line', () => {
    const meter = new BillMeter(new Set(['scale']));
    // A 730-hour run (one month, so no scaling): counts set by hand.
    Object.assign(meter.counts, { invocations: 1_000_000, dynamoCalls: 2_000_000, rru: 4_000_000, wru: 3_000_000, sqsStandard: 5_000_000, sqsFifo: 1_000_000, sqsSendCalls: 500_000, logBytes: 650_000_000, scheduleTicks: 175_200 });
    // Two series, each with points in every hour of the month: two whole metric-months.
    let hour = 0;
    const metrics = meter.metrics({ now: () => new Date(hour * 3_600_000) });
    for (hour = 0; hour < 730; hour++) {
      metrics.record('ScaleUps', 1, 'Count', { pool: 'a/b' });
      metrics.record('ScaleUps', 1, 'Count', { pool: 'c/d' });
    }
    const logBytesAfterMetrics = meter.counts.logBytes;
    const bill = meter.bill(730 * 3600, 512, 5);
    const cost = Object.fromEntries(bill.lines.map((line) => [line.item, line.cost]));
    expect(cost['Lambda requests']).toBeCloseTo(0.2, 6);
    // 1M x 3 ms + 2M x 8 ms + 0.5M x 15 ms = 26,500 s at 0.5 GB = 13,250 GB-s.
    expect(cost['Lambda duration']).toBeCloseTo(13_250 * SERVICE_PRICES.lambdaPerGbSecond, 6);
    expect(cost['DynamoDB writes']).toBeCloseTo(3 * 0.625, 6);
    expect(cost['DynamoDB reads']).toBeCloseTo(4 * 0.125, 6);
    expect(cost['SQS requests']).toBeCloseTo(5 * 0.4 + 1 * 0.5, 6);
    // 5 queues x 5 pollers x 3 polls a minute x 60 x 730.
    expect(cost['SQS idle polling']).toBeCloseTo(3_285_000 * 0.4e-6, 6);
    expect(cost['CloudWatch metrics']).toBeCloseTo(2 * 0.3, 6);
    expect(cost['CloudWatch logs']).toBeCloseTo(((logBytesAfterMetrics + 1_000_000 * 350) / 1e9) * 0.5, 6);
    expect(bill.total).toBeCloseTo(bill.lines.reduce((sum, line) => sum + line.cost, 0), 9);
  });

  it('meters DynamoDB from item sizes: 1 KB write units, doubled for indexed items, 4 KB strongly consistent reads', async () => {
    const meter = new BillMeter(new Set());
    const store = meter.store(new InMemoryStateStore());
    const node = await store.createNode(
      { nodeId: 'n1', pool: 'd/p', district: 'd', profile: 'p', state: 'active', createdAt: '2026-01-01T00:00:00.000Z', origin: 'provisioned', protected: false },
      new Date('2026-01-01T00:00:00.000Z'),
    );
    const size = itemBytes(node);
    expect(size).toBeLessThan(1024);
    expect(meter.counts.wru).toBe(2);
    // The node item and its stats item (a missing item's read costs too).
    await store.getNode('n1');
    expect(meter.counts.rru).toBe(2);
    // The pool index query and the pool's stats partition, eventually consistent.
    await store.listNodes('d/p');
    expect(meter.counts.rru).toBe(3);
    expect(meter.counts.dynamoCalls).toBe(3);
  });

  it("reads a node's items at their current sizes: after a bigger stats report, and after a write of the node", async () => {
    const meter = new BillMeter(new Set());
    const store = meter.store(new InMemoryStateStore());
    const at = new Date('2026-01-01T00:00:00.000Z');
    await store.createNode({ nodeId: 'n1', pool: 'd/p', district: 'd', profile: 'p', state: 'active', createdAt: at.toISOString(), origin: 'provisioned', protected: false }, at);
    const readUnits = async () => {
      const before = meter.counts.rru;
      await store.getNode('n1');
      return meter.counts.rru - before;
    };
    expect(await readUnits()).toBe(2);
    // A gear list (some 5 KB as JSON) is its own item, gzipped: one read unit more.
    const gears = Array.from({ length: 80 }, (_, i) => ({ uuid: `gear-${i}-${'x'.repeat(20)}`, app: 'shop', size: 'small' }));
    await store.putNodeStats('n1', { activeGears: 80, maxActiveGears: 100, gears, reportedAt: '2026-01-01T00:01:00.000Z' });
    expect(await readUnits()).toBe(3);
    await store.putNodeStats('n1', { activeGears: 0, maxActiveGears: 100, reportedAt: '2026-01-01T00:02:00.000Z' });
    expect(await readUnits()).toBe(2);
    // A write of the node item (a new version) over 4 KB: read at its new size.
    const node = await store.getNode('n1');
    await store.updateNode('n1', node!.version, { reason: 'r'.repeat(5000) });
    expect(await readUnits()).toBe(3);
  });

  it('bills the gear move history by the gears read and written, one small item each', async () => {
    const meter = new BillMeter(new Set());
    const store = meter.store(new InMemoryStateStore());
    const at = '2026-01-01T00:00:00.000Z';
    await store.recordGearMoves([{ uuid: 'g1', at, key: 'dr:1' }, { uuid: 'g2', at, key: 'dr:2' }, { uuid: 'g3', at, key: 'dr:3' }], 7 * 86_400_000);
    expect(meter.counts.wru).toBe(3);
    // 80 gears of a node (one listed twice), found or not: 0.5 each, eventually consistent.
    await store.getGearMoves([...Array.from({ length: 80 }, (_, i) => `g${i}`), 'g1']);
    expect(meter.counts.rru).toBe(40);
  });

  it('bills a stats report as one write of its own item plus the node read, not two indexed writes', async () => {
    const meter = new BillMeter(new Set());
    const store = meter.store(new InMemoryStateStore());
    await store.createNode(
      { nodeId: 'n1', pool: 'd/p', district: 'd', profile: 'p', state: 'active', createdAt: '2026-01-01T00:00:00.000Z', origin: 'provisioned', protected: false },
      new Date('2026-01-01T00:00:00.000Z'),
    );
    const before = { ...meter.counts };
    await store.putNodeStats('n1', { activeGears: 10, maxActiveGears: 100, reportedAt: '2026-01-01T00:01:00.000Z' });
    expect(meter.counts.wru - before.wru).toBe(1);
    // Without a gear list, the node alone is read: no digest to compare.
    expect(meter.counts.rru - before.rru).toBe(1);
  });

  it("bills a gear list's write only when it changed, and a pool's listing without the lists", async () => {
    const meter = new BillMeter(new Set());
    const store = meter.store(new InMemoryStateStore());
    const at = new Date('2026-01-01T00:00:00.000Z');
    await store.createNode({ nodeId: 'n1', pool: 'd/p', district: 'd', profile: 'p', state: 'active', createdAt: at.toISOString(), origin: 'provisioned', protected: false }, at);
    // 100 gears as the shipped agent lists them: random 32-hex uuids, about 9 KB of JSON, under 3 KB gzipped.
    const uuid = (i: number) => createHash('md5').update(`g${i}`).digest('hex');
    const gears = Array.from({ length: 100 }, (_, i) => ({ uuid: uuid(i), app: `app${i}`, size: 'small', ...(i % 2 ? { disruptive: true } : {}) }));
    const report = (minute: number, list: typeof gears) => statsToStore({ activeGears: list.length, maxActiveGears: 100, gears: list, reportedAt: new Date(at.getTime() + minute * 60_000).toISOString() });
    const writeUnits = async (minute: number, list: typeof gears) => {
      const before = meter.counts.wru;
      await store.putNodeStats('n1', report(minute, list));
      return meter.counts.wru - before;
    };
    const first = await writeUnits(1, gears);
    expect(first).toBeGreaterThanOrEqual(3);
    expect(first).toBeLessThanOrEqual(5);
    expect(await writeUnits(5, gears)).toBe(1);
    expect(await writeUnits(6, gears.slice(1))).toBe(first);
    // An older report than the one held: read, and nothing written.
    expect(await writeUnits(2, gears)).toBe(0);
    const before = meter.counts.rru;
    await store.listNodes('d/p');
    expect(meter.counts.rru - before).toBe(1);
  });

  it('bills a move transition of a 100-gear drain as that move alone, and a drain update as its small header', async () => {
    const meter = new BillMeter(new Set());
    const store = meter.store(new InMemoryStateStore());
    const moves = Array.from({ length: 100 }, (_, i) => ({ gear: { uuid: `gear-${i}`, app: `app-${i}`, size: 'small' }, target: 'node-2.example.com', state: 'planned' as const, attempts: 0 }));
    const drain = await store.createDrain({ drainId: 'dr', decisionId: 'dec', nodeId: 'n1', pool: 'd/p', startedAt: '2026-01-01T00:00:00.000Z', reason: 'low', moves }, new Date('2026-01-01T00:00:00.000Z'));
    // Header (indexed: twice) and 100 move items of under 1 KB.
    expect(meter.counts.wru).toBe(2 + 100);
    const before = meter.counts.wru;
    const move = drain.moves[0]!;
    await store.writeMoves('dr', [{ kind: 'update', move: { ...move, state: 'moving', attempts: 1 }, expectedVersion: move.version! }]);
    expect(meter.counts.wru - before).toBe(1);
    const closed = await store.updateDrain('dr', drain.version, { closedAt: '2026-01-01T00:01:00.000Z' }, new Date('2026-01-01T00:01:00.000Z'), 86_400_000);
    expect(meter.counts.wru - before).toBe(3);
    // Reading it back: header and 100 moves, about 15 KB, in one strongly consistent query.
    const rru = meter.counts.rru;
    await store.getDrain('dr');
    expect(meter.counts.rru - rru).toBe(Math.ceil(itemBytes(await store.getDrain('dr')) / 4096));
    // Sized from its header and its (cached) moves, to the byte, as one JSON item: with moves, with one, with none,
    // with its moves key first, and with names beyond ASCII.
    const read = (await store.getDrain('dr'))!;
    const { moves: all, ...header } = read;
    const shapes = [read, { ...header, moves: all.slice(0, 1) }, { ...header, moves: [] }, { moves: all.slice(0, 3), ...header }, { moves: all.slice(0, 2) }, { ...header, reason: 'zu wenig Last für Knoten ü', moves: all.slice(0, 2) }];
    for (const shape of shapes) expect(drainBytes(shape)).toBe(itemBytes(shape));
    // Its end with keepEndedFor: the header, then each of the 100 move items stamped to expire, their keys read first.
    const [ending, endingRru] = [meter.counts.wru, meter.counts.rru];
    await store.writeMoves('dr', [{ kind: 'delete', uuid: 'gear-99', expectedVersion: 1 }]);
    await store.updateDrain('dr', closed.version, { state: 'completed' }, new Date('2026-01-01T00:30:00.000Z'), 86_400_000);
    expect(meter.counts.wru - ending).toBe(1 + 2 + 99);
    expect(meter.counts.rru - endingRru).toBe(Math.ceil((99 * 100) / 4096));
  });

  it('prorates a metric series by the hours it had points in, each function its own series (the service dimension)', () => {
    const meter = new BillMeter(new Set());
    let now = 0;
    const metrics = meter.metrics({ now: () => new Date(now) });
    meter.service = 'thresholdEvaluator';
    // A gauge every minute of a 10-hour run: a whole month. An event in one hour: a tenth.
    for (now = 0; now < 10 * 3_600_000; now += 60_000) metrics.record('PoolUtilization', 50, 'Percent', { pool: 'a/b' });
    now = 3 * 3_600_000;
    metrics.record('ScaleUps', 1, 'Count', { pool: 'a/b' });
    metrics.record('ScaleUps', 1, 'Count', { pool: 'a/b' });
    meter.service = 'nodeProvisioner';
    metrics.record('ScaleUps', 1, 'Count', { pool: 'a/b' });
    const line = meter.bill(10 * 3600, 512, 0).lines.find((l) => l.item === 'CloudWatch metrics')!;
    expect(line.quantity).toBeCloseTo(1.2, 9);
    expect(line.cost).toBeCloseTo(1.2 * SERVICE_PRICES.metricPerMonth, 9);
    expect(meter.metricSeries()).toEqual([
      'PoolUtilization {"pool":"a/b","service":"thresholdEvaluator"} 10 h',
      'ScaleUps {"pool":"a/b","service":"nodeProvisioner"} 1 h',
      'ScaleUps {"pool":"a/b","service":"thresholdEvaluator"} 1 h',
    ]);
  });

  it('counts the gear listings each function asks of the platform, passing their answers through', async () => {
    const meter = new BillMeter(new Set());
    const platform = meter.platform({ listGears: async (nodeId: string) => [{ uuid: `${nodeId}-g`, app: 'a', size: 'small' }] });
    meter.service = 'thresholdEvaluator';
    expect(await platform.listGears('n-1')).toEqual([{ uuid: 'n-1-g', app: 'a', size: 'small' }]);
    await platform.listGears('n-2');
    meter.service = 'gearMover';
    await platform.listGears('n-1');
    expect([...meter.gearListings]).toEqual([['thresholdEvaluator', 2], ['gearMover', 1]]);
  });

  it('a month of a run is scaled from its length', () => {
    const meter = new BillMeter(new Set());
    meter.invoked(1000, 0);
    const day = meter.bill(86400, 512, 0);
    expect(day.lines.find((l) => l.item === 'Lambda requests')!.quantity).toBeCloseTo((1000 * 730) / 24, 6);
  });
});
