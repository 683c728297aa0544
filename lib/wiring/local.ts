/**
 * The local environment (`npm run invoke`, stage `local`): the embedded state
 * (lib/adapters/local/invoke.ts) gives the store, queues, clock and simulated
 * platform; the Lambda runtime gives the log and metrics, as on AWS; the
 * cloud is the configured one, which the local stage restricts to `log`. The
 * clock runs at real speed but nothing else moves the simulated platform's
 * gears, so the gear mover gets no `wait`: one pass per invocation.
 */
import { cloudFor, dnsFor, notifierFor, releasingCloudFor } from '../adapters/cloud/from-settings.js';
import { lambdaRuntime } from '../adapters/lambda/runtime.js';
import type { Settings } from '../config/index.js';
import { decommissionerHandler } from '../handlers/decommissioner.js';
import { gearMoverHandler } from '../handlers/gear-mover.js';
import { nodeProvisionerHandler } from '../handlers/node-provisioner.js';
import { thresholdEvaluatorHandler } from '../handlers/threshold-evaluator.js';
import type { Clock } from '../ports/clock.js';
import type { Platform } from '../ports/platform.js';
import type { Queue } from '../ports/queue.js';
import type { StateStore } from '../ports/state-store.js';

/** What the embedded local state provides. */
export interface LocalPorts {
  store: StateStore;
  queue: Queue;
  clock: Clock;
  platform: Platform;
}

export type LocalFunctionName = 'thresholdEvaluator' | 'nodeProvisioner' | 'gearMover' | 'decommissioner';

/** The handler of one function over the local state, built for one invocation. */
export function localHandlerOf(name: LocalFunctionName, settings: Settings, local: LocalPorts) {
  const runtime = lambdaRuntime(name, settings);
  const { store, queue, clock, platform } = local;
  const base = { store, clock, platform, metrics: runtime.metrics, log: runtime.log };
  const deps = { config: settings.config, observability: runtime.observability };
  const dns = dnsFor(settings);
  const notifier = notifierFor(settings);
  const extras = { ...(dns ? { dns } : {}), ...(notifier ? { notifier } : {}) };
  switch (name) {
    case 'thresholdEvaluator':
      return thresholdEvaluatorHandler({ ...deps, ports: { ...base, queue } });
    case 'gearMover':
      return gearMoverHandler({ ...deps, ports: { ...base, queue } });
    case 'nodeProvisioner':
      return nodeProvisionerHandler({ ...deps, ports: { ...base, ...extras, cloud: cloudFor(settings, runtime.log) } });
    case 'decommissioner':
      return decommissionerHandler({ ...deps, ports: { ...base, ...extras, cloud: releasingCloudFor(settings, runtime.log) } });
  }
}
