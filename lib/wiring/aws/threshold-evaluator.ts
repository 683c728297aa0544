import { lambdaRuntime } from '../../adapters/lambda/runtime.js';
import type { EvaluatorPorts } from '../../app/evaluate.js';
import type { Settings } from '../../config/index.js';
import type { HandlerDeps } from '../../handlers/deps.js';
import { common, type LambdaRuntime } from './common.js';
import { messagingPorts } from './messaging.js';

/** The threshold evaluator on AWS: DynamoDB, SQS, the configured platform, the real clock. */
export function awsThresholdEvaluator(settings: Settings, runtime: LambdaRuntime = lambdaRuntime('thresholdEvaluator', settings)): HandlerDeps<EvaluatorPorts> {
  const shared = common(settings, runtime);
  return { ...shared, ports: messagingPorts(settings, runtime, shared.deadline) };
}
