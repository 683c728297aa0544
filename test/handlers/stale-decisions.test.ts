/**
 * Issue 18, item 2f: a scale-up re-driven from the dead-letter queue three
 * days later launched 3 hosts. Every consumer of decisions (the provisioner's
 * scale-up, the gear mover's scale-down, an operator's drain) refuses one
 * older than `decisionMaxAge` (default: leaseTtl), before its first effect,
 * through the real handlers.
 */
import type { Context, SQSBatchResponse, SQSEvent, ScheduledEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { SimulatedCloud } from '../../lib/adapters/local/simulated-cloud.js';
import { SimulatedPlatform } from '../../lib/adapters/local/simulated-platform.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { parseConfig, type ConfigInput } from '../../lib/config/index.js';
import { staleDecisionReason } from '../../lib/domain/decision-message.js';
import { drainIdFor } from '../../lib/domain/drain.js';
import { gearMoverHandler } from '../../lib/handlers/gear-mover.js';
import { nodeProvisionerHandler } from '../../lib/handlers/node-provisioner.js';
import { lambdaContext, sqsEvent, sqsRecord } from '../support/sqs-events.js';
import { RecordingQueue } from '../support/recording-queue.js';

type Handler = (event: SQSEvent | ScheduledEvent, context: Context) => Promise<SQSBatchResponse>;
const DAY = 24 * 3_600_000;
const input = (extra: Partial<ConfigInput> = {}): ConfigInput => ({
  handler: 'ec2',
  pools: [{ district: 'd1', profile: 'small', max: 10, naming: { base: 'sim' }, template: { imageId: 'ami-1', instanceTypes: [{ name: 'sim.large', vcpus: 2, memoryGiB: 8 }], subnets: ['subnet-1'] } }],
  ...extra,
});

function world(extra: Partial<ConfigInput> = {}) {
  const clock = new VirtualClock('2026-11-21T10:00:00Z');
  const store = new InMemoryStateStore();
  const cloud = new SimulatedCloud(clock, { bootDelayMs: 120_000, maxHosts: 10 });
  const platform = new SimulatedPlatform(clock, { moveDurationMs: 30_000, moveFailureRate: 0 });
  const metrics = new InMemoryMetrics();
  const log = new MemoryLog();
  const config = parseConfig(input(extra), 'test configuration');
  const provisioner = nodeProvisionerHandler({ config, ports: { store, cloud, clock, log, metrics, sleep: async (ms) => void clock.advance(ms) } }) as unknown as Handler;
  const mover = gearMoverHandler({ config, ports: { store, platform, queue: new RecordingQueue({ fifo: ['scale', 'drain'] }), clock, log, metrics } }) as unknown as Handler;
  return { clock, store, cloud, platform, metrics, log, provisioner, mover };
}

const scaleUp = (decidedAt: Date) =>
  sqsEvent([
    sqsRecord(
      { type: 'scale-up', v: 1, decisionId: `up:d1_small:${decidedAt.getTime()}`, pool: 'd1/small', count: 3, reason: 'pool full', decidedAt: decidedAt.toISOString() },
      { eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:nodescaler-dev-scale.fifo', attributes: { MessageGroupId: 'd1/small', ApproximateReceiveCount: '4' } },
    ),
  ]);

describe('decisions older than decisionMaxAge are refused by every consumer', () => {
  it('a scale-up re-driven from the dead-letter queue three days later launches nothing; one 10 minutes old launches', async () => {
    const w = world();
    const decidedAt = w.clock.now();
    w.clock.advance(3 * DAY);
    const response = await w.provisioner(scaleUp(decidedAt), lambdaContext());
    expect(response.batchItemFailures).toEqual([]);
    expect(w.cloud.hosts()).toEqual([]);
    expect(await w.store.listNodes('d1/small')).toEqual([]);
    const claim = await w.store.getScaleUp(`up:d1_small:${decidedAt.getTime()}`);
    expect(claim?.slots).toEqual([]);
    expect(claim?.reason).toBe(`stale: decision up:d1_small:${decidedAt.getTime()} was made at ${decidedAt.toISOString()}, 4320m ago, more than decisionMaxAge (15m); the evaluator decides again`);
    expect(w.metrics.sum('StaleDecisions')).toBe(1);

    const fresh = w.clock.now();
    w.clock.advance(10 * 60_000);
    await w.provisioner(scaleUp(fresh), lambdaContext());
    expect(w.cloud.hosts()).toHaveLength(3);
  });

  it('decisionMaxAge is one key: a longer one lets a day-old scale-up through; a shorter one than leaseTtl is refused at parse', async () => {
    const w = world({ decisionMaxAge: '2d' });
    const decidedAt = w.clock.now();
    w.clock.advance(DAY);
    await w.provisioner(scaleUp(decidedAt), lambdaContext());
    expect(w.cloud.hosts()).toHaveLength(3);
    expect(() => parseConfig(input({ decisionMaxAge: '10m' }), 'test configuration')).toThrow(/decisionMaxAge.*must not be shorter than leaseTtl \(900s\)/s);
  });

  it('a scale-down and an operator drain re-driven a day later start no drain and close no node', async () => {
    const w = world();
    w.platform.registerNode('d1', 'small', 'n1.example.com', 100);
    w.platform.putGear('n1.example.com', { uuid: 'g1', app: 'shop', size: 'small' });
    await w.store.createNode({ nodeId: 'n1.example.com', pool: 'd1/small', district: 'd1', profile: 'small', state: 'active', createdAt: w.clock.now().toISOString(), origin: 'provisioned', protected: false }, w.clock.now());
    const decidedAt = w.clock.now();
    const down = { type: 'scale-down', v: 1, decisionId: `down:d1_small:${decidedAt.getTime()}`, pool: 'd1/small', nodeId: 'n1.example.com', reason: 'under-used', decidedAt: decidedAt.toISOString() };
    const manual = { ...down, decisionId: `manual:ops-1`, reason: 'operator' };
    w.clock.advance(DAY);
    const drainQueue = { eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:nodescaler-dev-drain.fifo', attributes: { MessageGroupId: 'd1/small' } };
    const response = await w.mover(sqsEvent([sqsRecord(down, drainQueue), sqsRecord(manual, drainQueue)]), lambdaContext());
    expect(response.batchItemFailures).toEqual([]);
    expect(await w.store.getDrain(drainIdFor(down.decisionId))).toBeUndefined();
    expect(await w.store.getDrain(drainIdFor(manual.decisionId))).toBeUndefined();
    expect(await w.store.getNode('n1.example.com')).toMatchObject({ state: 'active' });
    expect(w.platform.nodeFacts('n1.example.com').active).toBe(true);
    // The evaluator's scale-down lost its lease first (decisionMaxAge >= leaseTtl); the operator's drain, leaseless, is refused by age.
    expect(w.log.lines.find((line) => line.attributes?.decisionId === down.decisionId)?.attributes?.reason).toMatch(/^stale: the pool's lease of this decision expired/);
    expect(w.log.lines.find((line) => line.attributes?.decisionId === manual.decisionId)?.attributes?.reason).toMatch(/^stale: decision manual:ops-1 was made at .*, 1440m ago, more than decisionMaxAge \(15m\)/);
    expect(w.metrics.sum('StaleDecisions')).toBe(1);
  });

  it('a decision dated in the future is refused too (it would never grow old)', () => {
    const now = new Date('2026-11-21T10:00:00Z');
    expect(staleDecisionReason({ decisionId: 'd', decidedAt: '2026-11-21T11:00:00.000Z' }, now, 15 * 60_000)).toMatch(/^refused: decision d is dated .* in the future/);
    expect(staleDecisionReason({ decisionId: 'd', decidedAt: '2026-11-21T10:02:00.000Z' }, now, 15 * 60_000)).toBeUndefined();
    expect(staleDecisionReason({ decisionId: 'd', decidedAt: '2026-11-21T09:50:00.000Z' }, now, 15 * 60_000)).toBeUndefined();
  });
});
