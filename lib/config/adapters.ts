/**
 * Which adapters a configuration makes the functions build. One rule for two
 * readers: lib/adapters/cloud/from-settings.ts and platform/from-settings.ts
 * build what it names, and infra/esbuild-plugins.cjs (`stage-adapters`) leaves
 * every other adapter, and its AWS client, out of the stage's Lambda bundles.
 */
import { isSymbolicVersion } from '../domain/drift.js';
import type { Config, Handler } from './schema.js';

export interface AdapterChoice {
  /** The `Cloud` of `handler`: `log` builds no AWS client. */
  cloud: Handler;
  /** Route 53 records: only the hosts `ec2` launches have addresses, and only with `dns` configured. */
  dns: boolean;
  /** Operator notices through SNS: `notify.topicArn` configured, with any handler but `log`. */
  notifier: boolean;
  /** `openshift-broker` (SSM Run Command on the broker host) or `simulated`. */
  platform: Config['platform']['kind'];
  /** The evaluator looks node-stats senders up in EC2 (DescribeInstances): statsAuth on. */
  senderHosts: boolean;
  /** The evaluator reads spot prices from EC2 (DescribeSpotPriceHistory): handler ec2 with a spot pool. */
  spotPrices: boolean;
  /** The evaluator reads on-demand prices from the AWS Price List (GetProducts): handler ec2. */
  onDemandPrices: boolean;
  /**
   * The evaluator (for drift) and the provisioner (to launch and record the number) read what `$Latest` and `$Default`
   * stand for (DescribeLaunchTemplates): handler ec2 with a pool whose launch template version is one of them.
   */
  launchTemplateVersions: boolean;
}

export function adaptersOf(
  config: Pick<Config, 'handler' | 'dns' | 'notify' | 'platform'> & {
    statsAuth?: Pick<Config['statsAuth'], 'enabled'>;
    pools?: ReadonlyArray<{ template: { spot?: boolean; launchTemplate?: { version?: string } } }>;
  },
): AdapterChoice {
  return {
    cloud: config.handler,
    dns: config.handler === 'ec2' && config.dns !== undefined,
    notifier: config.notify !== undefined && config.handler !== 'log',
    platform: config.platform.kind,
    senderHosts: config.statsAuth?.enabled ?? false,
    // The same rule as the evaluator role's SpotPrices statement (infra/launch-scopes.cjs spotPrices).
    spotPrices: config.handler === 'ec2' && (config.pools ?? []).some((pool) => pool.template.spot === true),
    // The same rule as the evaluator role's OnDemandPrices statement (infra/launch-scopes.cjs onDemandPrices).
    onDemandPrices: config.handler === 'ec2',
    // The same rule as the evaluator role's LaunchTemplateVersions statement (infra/launch-scopes.cjs launchTemplateVersions).
    // A launch template names `$Latest` when it names no version.
    launchTemplateVersions: config.handler === 'ec2' && (config.pools ?? []).some(({ template: { launchTemplate } }) => launchTemplate !== undefined && isSymbolicVersion(launchTemplate.version ?? '$Latest')),
  };
}
