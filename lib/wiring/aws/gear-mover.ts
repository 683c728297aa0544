import { lambdaRuntime } from '../../adapters/lambda/runtime.js';
import type { GearMoverPorts } from '../../app/drain.js';
import { realSleep } from '../../app/steps.js';
import type { Settings } from '../../config/index.js';
import type { HandlerDeps } from '../../handlers/deps.js';
import { common, type LambdaRuntime } from './common.js';
import { messagingPorts } from './messaging.js';

/** The gear mover on AWS: DynamoDB, SQS, the configured platform, and a real timer to wait for moves in flight. */
export function awsGearMover(settings: Settings, runtime: LambdaRuntime = lambdaRuntime('gearMover', settings)): HandlerDeps<GearMoverPorts> {
  const shared = common(settings, runtime);
  return {
    ...shared,
    // Real time passes while moves run: an invocation waits for them within its budget.
    ports: { ...messagingPorts(settings, runtime, shared.deadline), wait: realSleep },
  };
}
