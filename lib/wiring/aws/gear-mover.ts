import { stateStoreFor } from '../../adapters/dynamodb/from-settings.js';
import { lambdaRuntime } from '../../adapters/lambda/runtime.js';
import { platformFor } from '../../adapters/platform/from-settings.js';
import { sqsQueueFor } from '../../adapters/sqs/from-settings.js';
import type { GearMoverPorts } from '../../app/drain.js';
import { realSleep } from '../../app/steps.js';
import type { Settings } from '../../config/index.js';
import type { HandlerDeps } from '../../handlers/deps.js';
import { systemClock } from '../../ports/clock.js';
import { common, type LambdaRuntime } from './common.js';

/** The gear mover on AWS: DynamoDB, SQS, the configured platform, and a real timer to wait for moves in flight. */
export function awsGearMover(settings: Settings, runtime: LambdaRuntime = lambdaRuntime('gearMover', settings)): HandlerDeps<GearMoverPorts> {
  const clock = systemClock;
  return {
    ...common(settings, runtime),
    ports: {
      store: stateStoreFor(settings.deployment),
      queue: sqsQueueFor(settings.deployment),
      platform: platformFor(settings, clock),
      clock,
      metrics: runtime.metrics,
      log: runtime.log,
      // Real time passes while moves run: an invocation waits for them within its budget.
      wait: realSleep,
    },
  };
}
