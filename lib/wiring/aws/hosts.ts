import { dnsFor, notifierFor } from '../../adapters/cloud/from-settings.js';
import { stateStoreFor } from '../../adapters/dynamodb/from-settings.js';
import type { Settings } from '../../config/index.js';
import { systemClock } from '../../ports/clock.js';
import type { LambdaRuntime } from './common.js';

/**
 * The ports of a function that creates or releases hosts, around its cloud.
 * Not in common.ts: the clouds' module would bring EC2, Route 53 and SNS into
 * the other functions' bundles.
 */
export function hostPorts<C>(settings: Settings, runtime: LambdaRuntime, cloud: C) {
  const dns = dnsFor(settings);
  const notifier = notifierFor(settings);
  return {
    store: stateStoreFor(settings.deployment),
    cloud,
    clock: systemClock,
    metrics: runtime.metrics,
    log: runtime.log,
    ...(dns ? { dns } : {}),
    ...(notifier ? { notifier } : {}),
  };
}
