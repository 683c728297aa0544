import { cloudFor } from '../../adapters/cloud/from-settings.js';
import { ec2LaunchTemplateVersionsFor } from '../../adapters/ec2/launch-template-versions.js';
import { adaptersOf } from '../../config/adapters.js';
import { lambdaRuntime } from '../../adapters/lambda/runtime.js';
import { platformFor } from '../../adapters/platform/from-settings.js';
import type { Settings } from '../../config/index.js';
import type { HandlerDeps } from '../../handlers/deps.js';
import type { ProvisionerPorts } from '../../workflows/launch/context.js';
import { common, type LambdaRuntime } from './common.js';
import { hostPorts } from './hosts.js';

/** The node provisioner on AWS: DynamoDB, the configured cloud (with DNS and notices when configured), the platform; EC2 to read what `$Latest` launch templates stand for. */
export function awsNodeProvisioner(settings: Settings, runtime: LambdaRuntime = lambdaRuntime('nodeProvisioner', settings)): HandlerDeps<ProvisionerPorts> {
  const ports = hostPorts(settings, runtime, cloudFor(settings, runtime.log));
  // The platform says whether a node past its provisioning time joined after all (holding gears) before its host is released.
  const shared = common(settings, runtime);
  const versions = adaptersOf(settings.config).launchTemplateVersions ? { launchTemplateVersions: ec2LaunchTemplateVersionsFor(settings) } : {};
  return { ...shared, ports: { ...ports, platform: platformFor(settings, ports.clock, shared.deadline), ...versions } };
}
