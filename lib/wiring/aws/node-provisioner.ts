import { cloudFor } from '../../adapters/cloud/from-settings.js';
import { lambdaRuntime } from '../../adapters/lambda/runtime.js';
import { platformFor } from '../../adapters/platform/from-settings.js';
import type { Settings } from '../../config/index.js';
import type { HandlerDeps } from '../../handlers/deps.js';
import type { ProvisionerPorts } from '../../workflows/launch/context.js';
import { common, type LambdaRuntime } from './common.js';
import { hostPorts } from './hosts.js';

/** The node provisioner on AWS: DynamoDB, the configured cloud (with DNS and notices when configured), the platform. */
export function awsNodeProvisioner(settings: Settings, runtime: LambdaRuntime = lambdaRuntime('nodeProvisioner', settings)): HandlerDeps<ProvisionerPorts> {
  const ports = hostPorts(settings, runtime, cloudFor(settings, runtime.log));
  // The platform says whether a node past its provisioning time joined after all (holding gears) before its host is released.
  const shared = common(settings, runtime);
  return { ...shared, ports: { ...ports, platform: platformFor(settings, ports.clock, shared.deadline) } };
}
