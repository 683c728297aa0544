import { releasingCloudFor } from '../../adapters/cloud/from-settings.js';
import { lambdaRuntime } from '../../adapters/lambda/runtime.js';
import { platformFor } from '../../adapters/platform/from-settings.js';
import type { DecommissionerPorts } from '../../app/decommission.js';
import type { Settings } from '../../config/index.js';
import type { HandlerDeps } from '../../handlers/deps.js';
import { common, type LambdaRuntime } from './common.js';
import { hostPorts } from './hosts.js';

/** The decommissioner on AWS: DynamoDB, the releasing half of the configured cloud, the platform. */
export function awsDecommissioner(settings: Settings, runtime: LambdaRuntime = lambdaRuntime('decommissioner', settings)): HandlerDeps<DecommissionerPorts> {
  // Not through cloudFor: with `ec2` the launch code then stays out of the decommissioner's bundle.
  const ports = hostPorts(settings, runtime, releasingCloudFor(settings, runtime.log));
  const shared = common(settings, runtime);
  return { ...shared, ports: { ...ports, platform: platformFor(settings, ports.clock, shared.deadline) } };
}
