/**
 * Issue 18, item 2l: an event of a shape a function does not take (an
 * EventBridge event sent to an SQS consumer, `{}` from a console test) failed
 * with `Cannot read properties of undefined`. Every handler now fails it with
 * a ValidationError naming what the function takes and what it got, before it
 * reads or writes anything.
 */
import type { Context, SQSEvent, ScheduledEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { SimulatedCloud } from '../../lib/adapters/local/simulated-cloud.js';
import { SimulatedPlatform } from '../../lib/adapters/local/simulated-platform.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { parseConfig } from '../../lib/config/index.js';
import { ValidationError } from '../../lib/errors.js';
import { decommissionerHandler } from '../../lib/handlers/decommissioner.js';
import { describeEvent } from '../../lib/handlers/event-shape.js';
import { gearMoverHandler } from '../../lib/handlers/gear-mover.js';
import { nodeProvisionerHandler } from '../../lib/handlers/node-provisioner.js';
import { thresholdEvaluatorHandler } from '../../lib/handlers/threshold-evaluator.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { RecordingQueue } from '../support/recording-queue.js';
import { lambdaContext } from '../support/sqs-events.js';

type Handler = (event: SQSEvent | ScheduledEvent, context: Context) => Promise<unknown>;

const EC2_EVENT = {
  version: '0',
  id: 'e1',
  'detail-type': 'EC2 Instance State-change Notification',
  source: 'aws.ec2',
  account: '123456789012',
  time: '2026-11-21T10:00:00Z',
  region: 'us-east-1',
  resources: ['arn:aws:ec2:us-east-1:123456789012:instance/i-0abc'],
  detail: { 'instance-id': 'i-0abc', state: 'terminated' },
};
const SNS_EVENT = { Records: [{ EventSource: 'aws:sns', Sns: { Message: '{}' } }] };

function handlers(): { store: StateStore; log: MemoryLog; all: Record<string, Handler> } {
  const clock = new VirtualClock('2026-11-21T10:00:00Z');
  const store = new InMemoryStateStore();
  const log = new MemoryLog();
  const metrics = new InMemoryMetrics();
  const platform = new SimulatedPlatform(clock, { moveDurationMs: 30_000, moveFailureRate: 0 });
  const cloud = new SimulatedCloud(clock, { bootDelayMs: 60_000, maxHosts: 3 });
  const queue = new RecordingQueue({ fifo: ['scale', 'drain'] });
  const config = parseConfig({ pools: [{ district: 'd1', profile: 'small', max: 10 }] }, 'test configuration');
  return {
    store,
    log,
    all: {
      thresholdEvaluator: thresholdEvaluatorHandler({ config, ports: { store, queue, clock, metrics, log, platform } }) as unknown as Handler,
      nodeProvisioner: nodeProvisionerHandler({ config, ports: { store, cloud, clock, metrics, log, platform } }) as unknown as Handler,
      gearMover: gearMoverHandler({ config, ports: { store, platform, queue, clock, metrics, log } }) as unknown as Handler,
      decommissioner: decommissionerHandler({ config, ports: { store, cloud, platform, clock, metrics, log } }) as unknown as Handler,
    },
  };
}

describe('an event of a shape the function does not take', () => {
  const cases: Array<[string, unknown, string]> = [
    ['{}', {}, 'an empty object ({})'],
    ['an EC2 event sent straight to the function', EC2_EVENT, 'an EventBridge event (source "aws.ec2", detail-type "EC2 Instance State-change Notification") sent to the function directly'],
    ['an SNS event', SNS_EVENT, 'Records that are not SQS records (the first has eventSource "aws:sns")'],
    ['null', null, 'null'],
  ];

  for (const name of ['thresholdEvaluator', 'nodeProvisioner', 'gearMover', 'decommissioner']) {
    it.each(cases)(`${name}: %s fails with a ValidationError naming what it takes, and changes nothing`, async (_label, event, got) => {
      const { store, log, all } = handlers();
      const error = await all[name]!(event as SQSEvent, lambdaContext()).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(ValidationError);
      const message = (error as ValidationError).message;
      expect(message).toContain(`${name} takes an SQS batch (Records from its queue: `);
      expect(message).toContain('or its one-minute schedule (an EventBridge "Scheduled Event" from aws.events)');
      expect(message).toContain(`got ${got}`);
      expect((error as ValidationError).field).toBe('event');
      expect(log.lines.find((line) => line.level === 'error')).toMatchObject({ message: 'event of a shape this function does not take; nothing done', attributes: { function: name, got: expect.stringContaining(got) } });
      expect(await store.listPools()).toEqual([]);
    });
  }

  it('names the events queue for an EC2 event, and never echoes a whole body', () => {
    expect(describeEvent(EC2_EVENT)).toContain('EC2 events reach the gear mover through its events queue');
    const huge = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 'x'.repeat(10_000)]));
    const described = describeEvent(huge);
    expect(described).toMatch(/^an object with keys "k0", .*"k7", and 42 more$/);
    expect(described.length).toBeLessThan(200);
  });
});
