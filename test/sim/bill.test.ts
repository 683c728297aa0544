import { describe, expect, it } from 'vitest';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { BillMeter, itemBytes } from '../../lib/sim/bill.js';
import { SERVICE_PRICES } from '../../lib/sim/prices.js';

describe('the autoscaler bill', () => {
  it('bills a hand-counted month line by line', () => {
    const meter = new BillMeter(new Set(['scale']));
    // A 730-hour run (one month, so no scaling): counts set by hand.
    Object.assign(meter.counts, { invocations: 1_000_000, dynamoCalls: 2_000_000, rru: 4_000_000, wru: 3_000_000, sqsStandard: 5_000_000, sqsFifo: 1_000_000, sqsSendCalls: 500_000, logBytes: 650_000_000, scheduleTicks: 175_200 });
    const metrics = meter.metrics();
    metrics.record('ScaleUps', 1, 'Count', { pool: 'a/b' });
    metrics.record('ScaleUps', 1, 'Count', { pool: 'a/b' });
    metrics.record('ScaleUps', 1, 'Count', { pool: 'c/d' });
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
    await store.getNode('n1');
    expect(meter.counts.rru).toBe(1);
    await store.listNodes('d/p');
    expect(meter.counts.rru).toBe(1.5);
    expect(meter.counts.dynamoCalls).toBe(3);
  });

  it('a month of a run is scaled from its length', () => {
    const meter = new BillMeter(new Set());
    meter.invoked(1000, 0);
    const day = meter.bill(86400, 512, 0);
    expect(day.lines.find((l) => l.item === 'Lambda requests')!.quantity).toBeCloseTo((1000 * 730) / 24, 6);
  });
});
