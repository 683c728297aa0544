import { stateStoreFor } from '../../adapters/dynamodb/from-settings.js';
import { lambdaRuntime } from '../../adapters/lambda/runtime.js';
import { platformFor } from '../../adapters/platform/from-settings.js';
import { sqsQueueFor } from '../../adapters/sqs/from-settings.js';
import type { EvaluatorPorts } from '../../app/evaluate.js';
import type { Settings } from '../../config/index.js';
import type { HandlerDeps } from '../../handlers/deps.js';
import { systemClock } from '../../ports/clock.js';
import { common, type LambdaRuntime } from './common.js';

/** The threshold evaluator on AWS: DynamoDB, SQS, the configured platform, the real clock. */
export function awsThresholdEvaluator(settings: Settings, runtime: LambdaRuntime = lambdaRuntime('thresholdEvaluator', settings)): HandlerDeps<EvaluatorPorts> {
  const clock = systemClock;
  return {
    ...common(settings, runtime),
    ports: {
      store: stateStoreFor(settings.deployment),
      queue: sqsQueueFor(settings.deployment),
      clock,
      metrics: runtime.metrics,
      log: runtime.log,
      platform: platformFor(settings, clock),
    },
  };
}
