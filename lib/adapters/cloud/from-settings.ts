import { adaptersOf } from '../../config/adapters.js';
import type { Settings } from '../../config/index.js';
import type { Cloud, ReleasingCloud } from '../../ports/cloud.js';
import type { Dns } from '../../ports/dns.js';
import type { Log } from '../../ports/log.js';
import type { Notifier } from '../../ports/notifier.js';
import { ec2CloudFor, ec2HostsFor } from '../ec2/cloud.js';
import { route53DnsFor } from '../route53/dns.js';
import { s3SpoolCloudFor } from '../s3/spool-cloud.js';
import { snsNotifierFor } from '../sns/notifier.js';
import { snsNotifyCloudFor } from '../sns/notify-cloud.js';
import { LogCloud } from './log-cloud.js';

/**
 * The `Cloud` of the configured `handler`: adding a handler is one adapter
 * and one line here (and in lib/config/adapters.ts), never a change to a use
 * case. `log` builds no AWS client at all. A stage's Lambda bundles hold only
 * the adapter of its handler (infra/esbuild-plugins.cjs, `stage-adapters`).
 */
export function cloudFor(settings: Settings, log: Log): Cloud {
  switch (adaptersOf(settings.config).cloud) {
    case 'ec2':
      return ec2CloudFor(settings);
    case 'spool':
      return s3SpoolCloudFor(settings);
    case 'notify':
      return snsNotifyCloudFor(settings);
    case 'log':
      return new LogCloud(log, settings.config);
  }
}

/**
 * The `Cloud` of the configured `handler` for a function that only releases
 * hosts (the decommissioner): for `ec2` without the launch code, which then
 * stays out of its bundle; the other handlers' clouds are small and whole.
 */
export function releasingCloudFor(settings: Settings, log: Log): ReleasingCloud {
  // Not through cloudFor: a reference to ec2CloudFor would keep the launch code in the bundle.
  switch (adaptersOf(settings.config).cloud) {
    case 'ec2':
      return ec2HostsFor(settings);
    case 'spool':
      return s3SpoolCloudFor(settings);
    case 'notify':
      return snsNotifyCloudFor(settings);
    case 'log':
      return new LogCloud(log, settings.config);
  }
}

/** Route 53 records for the hosts `ec2` launches, when `dns` is configured; the other handlers have no addresses. */
export function dnsFor(settings: Settings): Dns | undefined {
  return adaptersOf(settings.config).dns ? route53DnsFor(settings) : undefined;
}

/** Operator notices through SNS, when `notify.topicArn` is configured (with any handler but `log`). */
export function notifierFor(settings: Settings): Notifier | undefined {
  return adaptersOf(settings.config).notifier ? snsNotifierFor(settings) : undefined;
}
