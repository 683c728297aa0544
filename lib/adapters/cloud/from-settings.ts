import { EC2Client } from '@aws-sdk/client-ec2';
import { Route53Client } from '@aws-sdk/client-route-53';
import { S3Client } from '@aws-sdk/client-s3';
import { SNSClient } from '@aws-sdk/client-sns';
import type { Settings } from '../../config/index.js';
import type { Cloud } from '../../ports/cloud.js';
import type { Dns } from '../../ports/dns.js';
import type { Log } from '../../ports/log.js';
import type { Notifier } from '../../ports/notifier.js';
import { Ec2Cloud } from '../ec2/cloud.js';
import { Route53Dns } from '../route53/dns.js';
import { S3SpoolCloud } from '../s3/spool-cloud.js';
import { SnsNotifier } from '../sns/notifier.js';
import { SnsNotifyCloud } from '../sns/notify-cloud.js';
import { LogCloud } from './log-cloud.js';
import { systemClock } from '../../ports/clock.js';
import type { Metrics } from '../../ports/metrics.js';
import { stateStoreFor } from '../dynamodb/from-settings.js';
import type { InjectablePorts } from '../local/injection.js';

/**
 * The `Cloud` of the configured `handler`: adding a handler is one adapter
 * and one line here, never a change to a use case. `log` builds no AWS
 * client at all.
 */
export function cloudFor(settings: Settings, log: Log): Cloud {
  const { config, deployment } = settings;
  switch (config.handler) {
    case 'ec2':
      // With the stats queue known, every host launched installs the stats agent that reports to it.
      return new Ec2Cloud(new EC2Client({ region: deployment.region }), config, {
        stage: deployment.stage,
        ...(deployment.queues.stats !== undefined && { statsAgent: { queueUrl: deployment.queues.stats, region: deployment.region } }),
      });
    case 'spool':
      return new S3SpoolCloud(new S3Client({ region: deployment.region }), config.spool!, config);
    case 'notify':
      return new SnsNotifyCloud(new SNSClient({ region: deployment.region }), config.notify!.topicArn, config);
    case 'log':
      return new LogCloud(log, config);
  }
}

/** Route 53 records for the hosts `ec2` launches, when `dns` is configured; the other handlers have no addresses. */
export function dnsFor(settings: Settings): Dns | undefined {
  const { config, deployment } = settings;
  if (config.handler !== 'ec2' || !config.dns) return undefined;
  return new Route53Dns(new Route53Client({ region: deployment.region }), config.dns);
}

/** Operator notices through SNS, when `notify.topicArn` is configured (with any handler but `log`). */
export function notifierFor(settings: Settings): Notifier | undefined {
  const { config, deployment } = settings;
  if (!config.notify || config.handler === 'log') return undefined;
  return new SnsNotifier(new SNSClient({ region: deployment.region }), config.notify.topicArn);
}

/**
 * The ports of a function that creates or releases hosts (provisioner,
 * decommissioner), built once per cold start: injected ones first (local
 * runtime, tests), AWS adapters from the settings otherwise.
 */
export function hostPorts(settings: Settings, local: InjectablePorts, runtime: { log: Log; metrics: Metrics }) {
  const log = local.log ?? runtime.log;
  const dns = local.dns ?? dnsFor(settings);
  const notifier = local.notifier ?? notifierFor(settings);
  return {
    store: local.store ?? stateStoreFor(settings.deployment),
    cloud: local.cloud ?? cloudFor(settings, log),
    clock: local.clock ?? systemClock,
    metrics: local.metrics ?? runtime.metrics,
    log,
    ...(dns ? { dns } : {}),
    ...(notifier ? { notifier } : {}),
    ...(local.sleep ? { sleep: local.sleep } : {}),
  };
}
