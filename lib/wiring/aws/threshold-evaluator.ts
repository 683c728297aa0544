import { adaptersOf } from '../../config/adapters.js';
import { ec2LaunchTemplateVersionsFor } from '../../adapters/ec2/launch-template-versions.js';
import { ec2SenderHostsFor } from '../../adapters/ec2/sender-hosts.js';
import { ec2SpotPricesFor } from '../../adapters/ec2/spot-prices.js';
import { awsOnDemandPricesFor } from '../../adapters/pricing/on-demand-prices.js';
import { lambdaRuntime } from '../../adapters/lambda/runtime.js';
import type { EvaluatorPorts } from '../../app/evaluate.js';
import type { Settings } from '../../config/index.js';
import type { HandlerDeps } from '../../handlers/deps.js';
import { common, type LambdaRuntime } from './common.js';
import { messagingPorts } from './messaging.js';

/** The threshold evaluator on AWS: DynamoDB, SQS, the configured platform, the real clock and the invocation's deadline; EC2 to look up node-stats senders, to read spot pools' prices and what `$Latest` launch templates stand for; the Price List for the region's on-demand prices. */
export function awsThresholdEvaluator(settings: Settings, runtime: LambdaRuntime = lambdaRuntime('thresholdEvaluator', settings)): HandlerDeps<EvaluatorPorts> {
  const shared = common(settings, runtime);
  // The deadline twice: the broker adapter waits no command past it, and the evaluator stops candidate checks before it.
  const ports: EvaluatorPorts = { ...messagingPorts(settings, runtime, shared.deadline), deadline: shared.deadline };
  const adapters = adaptersOf(settings.config);
  if (adapters.senderHosts) ports.hosts = ec2SenderHostsFor(settings);
  if (adapters.spotPrices) ports.spotPrices = ec2SpotPricesFor(settings, ports.clock);
  const onDemandPrices = adapters.onDemandPrices ? awsOnDemandPricesFor(settings) : undefined;
  if (onDemandPrices) ports.onDemandPrices = onDemandPrices;
  if (adapters.launchTemplateVersions) ports.launchTemplateVersions = ec2LaunchTemplateVersionsFor(settings);
  return { ...shared, ports };
}
