import type { Context, SQSBatchResponse, SQSEvent, ScheduledEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedCloud } from '../../lib/adapters/local/simulated-cloud.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import type { ProvisionerTickReport } from '../../lib/app/provision.js';
import { parseConfig } from '../../lib/config/index.js';
import { nodeProvisionerHandler } from '../../lib/handlers/node-provisioner.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { lambdaContext, scheduledEvent, sqsEvent, sqsRecord } from '../support/sqs-events.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';

type Handler = (event: SQSEvent | ScheduledEvent, context: Context) => Promise<SQSBatchResponse | ProvisionerTickReport>;

/** The real handler built over the test's ports, as the local runtime builds it: no AWS at all. */
describe('nodeProvisioner handler over simulated ports (simulated cloud, virtual clock, dynalite)', () => {
  const harness = dynaliteHarness();
  const clock = new VirtualClock('2026-11-21T10:00:00Z');
  let cloud: SimulatedCloud;
  const metrics = new InMemoryMetrics();
  const log = new MemoryLog();
  let store: StateStore;
  let handler: Handler;
  const scaleUp = (count: number) => {
    const decidedAt = clock.now().toISOString();
    return sqsEvent([
      sqsRecord(
        { type: 'scale-up', v: 1, decisionId: `up:d1_small:${clock.nowMs()}`, pool: 'd1/small', count, reason: 'test', decidedAt },
        { eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:nodescaler-dev-scale.fifo', attributes: { MessageGroupId: 'd1/small' } },
      ),
    ]);
  };

  beforeAll(async () => {
    store = await harness.create();
    cloud = new SimulatedCloud(clock, { bootDelayMs: 120_000, maxHosts: 3 });
    const config = parseConfig({ handler: 'ec2', pools: [{ district: 'd1', profile: 'small', max: 10, naming: { base: 'sim' }, template: { imageId: 'ami-1', instanceTypes: [{ name: 'sim.large', vcpus: 2, memoryGiB: 8 }], subnets: ['subnet-1'] } }] }, 'test configuration');
    handler = nodeProvisionerHandler({ config, ports: { store, cloud, clock, log, metrics, sleep: async (ms) => void clock.advance(ms) } }) as unknown as Handler;
  });

  afterAll(async () => {
    await harness.close();
  });

  it('launches hosts in the simulated cloud up to its capacity and marks the pool exhausted', async () => {
    const result = (await handler(scaleUp(4), lambdaContext())) as SQSBatchResponse;
    expect(result.batchItemFailures, JSON.stringify(log.lines.filter((l) => l.level !== 'info'))).toEqual([]);
    expect(cloud.hosts().map((h) => h.hostName)).toEqual(['sim-1.example.com', 'sim-2.example.com', 'sim-3.example.com']);
    expect((await store.listNodes('d1/small')).map((n) => [n.nodeId, n.state, n.instanceId !== undefined])).toEqual([
      ['sim-1.example.com', 'provisioning', true],
      ['sim-2.example.com', 'provisioning', true],
      ['sim-3.example.com', 'provisioning', true],
      ['sim-4.example.com', 'failed', false],
    ]);
    expect((await store.getPool('d1/small'))?.exhaustedBackoffMs).toBe(300_000);
    expect(metrics.sum('CapacityExhausted')).toBe(1);
  });

  it('on the tick, releases the node that got no host and leaves the booting ones', async () => {
    clock.advance(120_000);
    const report = (await handler(scheduledEvent(clock.now()), lambdaContext())) as ProvisionerTickReport;
    expect(report.released).toEqual(['sim-4.example.com']);
    expect(report.timedOut).toEqual([]);
    expect((await store.getNode('sim-1.example.com'))).toMatchObject({ state: 'provisioning', volumeId: expect.stringMatching(/^vol-/) });
  });

  it('fails and releases the hosts that never joined, deleting their volumes', async () => {
    clock.advance(15 * 60_000);
    const report = (await handler(scheduledEvent(clock.now()), lambdaContext())) as ProvisionerTickReport;
    expect(report.timedOut).toHaveLength(3);
    expect(report.released).toHaveLength(3);
    expect(cloud.hosts().every((h) => h.state === 'terminated')).toBe(true);
    expect(cloud.liveVolumes()).toEqual([]);
    for (const n of [1, 2, 3]) expect((await store.getNode(`sim-${n}.example.com`))?.state).toBe('terminated');
  });
});
