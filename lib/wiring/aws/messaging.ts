import { stateStoreFor } from '../../adapters/dynamodb/from-settings.js';
import { platformFor } from '../../adapters/platform/from-settings.js';
import { sqsQueueFor } from '../../adapters/sqs/from-settings.js';
import type { Settings } from '../../config/index.js';
import { systemClock } from '../../ports/clock.js';
import type { InvocationDeadline } from '../../ports/deadline.js';
import type { LambdaRuntime } from './common.js';

/**
 * The ports of a function that decides or drains through messages: the state
 * table, the queues, the configured platform, the real clock and the Lambda
 * runtime's log and metrics (the threshold evaluator and the gear mover).
 */
export function messagingPorts(settings: Settings, runtime: LambdaRuntime, deadline?: InvocationDeadline) {
  const clock = systemClock;
  return {
    store: stateStoreFor(settings.deployment),
    queue: sqsQueueFor(settings.deployment),
    platform: platformFor(settings, clock, deadline),
    clock,
    metrics: runtime.metrics,
    log: runtime.log,
  };
}
