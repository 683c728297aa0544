import type { Context, SQSBatchResponse, SQSEvent, ScheduledEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedCloud } from '../../lib/adapters/local/simulated-cloud.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import type { DecommissionerTickReport } from '../../lib/app/decommission.js';
import { parseConfig } from '../../lib/config/index.js';
import { decommissionerHandler } from '../../lib/handlers/decommissioner.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { dynaliteHarness } from '../support/dynalite.js';
import { FakePlatform } from '../support/fake-platform.js';
import { lambdaContext, scheduledEvent, sqsEvent, sqsRecord } from '../support/sqs-events.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';

type Handler = (event: SQSEvent | ScheduledEvent, context: Context) => Promise<SQSBatchResponse | DecommissionerTickReport>;

/** The real handler built over the test's ports (simulated cloud, virtual clock), as the local runtime builds it: no AWS at all. */
describe('decommissioner handler over simulated ports (simulated cloud, dynalite)', () => {
  const harness = dynaliteHarness();
  const clock = new VirtualClock('2026-11-21T12:00:00Z');
  const metrics = new InMemoryMetrics();
  const platform = new FakePlatform();
  let cloud: SimulatedCloud;
  let store: StateStore;
  let handler: Handler;
  let log: MemoryLog;
  let instanceId: string;
  const drainComplete = () =>
    sqsEvent([sqsRecord({ type: 'drain-complete', v: 1, drainId: 'drain:sim-1:1', nodeId: 'sim-1.example.com', pool: 'd1/small', completedAt: clock.now().toISOString() })]);

  beforeAll(async () => {
    store = await harness.create();
    cloud = new SimulatedCloud(clock, { bootDelayMs: 0, volumeDetachMs: 45_000 });
    const host = await cloud.createHost({ pool: 'd1/small', district: 'd1', profile: 'small', cloudName: 'sim_1', hostName: 'sim-1.example.com', decisionId: 'up:1', idempotencyToken: 'up:1#0' });
    instanceId = host.instanceId!;
    platform.node('sim-1.example.com', 'd1');
    await store.createNode(
      { nodeId: 'sim-1.example.com', pool: 'd1/small', district: 'd1', profile: 'small', state: 'drained', createdAt: '2026-11-21T10:00:00.000Z', joinedAt: '2026-11-21T10:02:00.000Z', origin: 'provisioned', protected: false, cloudName: 'sim_1', instanceId, volumeId: host.volumeId!, privateIp: host.privateIp! },
      clock.now(),
    );
    const config = parseConfig({ handler: 'ec2', pools: [{ district: 'd1', profile: 'small', max: 10, naming: { base: 'sim' }, template: { imageId: 'ami-1', instanceTypes: [{ name: 'sim.large', vcpus: 2, memoryGiB: 8 }], subnets: ['subnet-1'], volume: {} } }] }, 'test configuration');
    log = new MemoryLog();
    handler = decommissionerHandler({ config, ports: { store, cloud, platform, clock, log, metrics, sleep: async (ms) => void clock.advance(ms) } }) as unknown as Handler;
  });

  afterAll(async () => {
    await harness.close();
  });

  it('terminates the host, then deletes its volume on the tick once it detached', async () => {
    const result = (await handler(drainComplete(), lambdaContext())) as SQSBatchResponse;
    expect(result.batchItemFailures).toEqual([]);
    expect(cloud.hosts()[0]?.state).toBe('terminated');
    expect(cloud.liveVolumes()).toHaveLength(1);
    expect((await store.getNode('sim-1.example.com'))?.state).toBe('terminating');

    clock.advance(60_000);
    const report = (await handler(scheduledEvent(clock.now()), lambdaContext())) as DecommissionerTickReport;
    expect(report.terminated).toEqual(['sim-1.example.com']);
    expect(cloud.liveVolumes()).toEqual([]);
    expect(cloud.calls.filter((call) => call.op === 'terminateHost').map((call) => call.arg)).toEqual([instanceId]);
    // The lifetime is in the log line, not a metric series of its own (the bill: docs/BENCHMARKS.md).
    expect(log.lines.find((line) => line.message === 'node terminated')?.attributes.lifetimeSeconds).toBe(2 * 3600 + 60);
    expect(metrics.points.filter((p) => p.name === 'NodeLifetime')).toEqual([]);
  });
});
