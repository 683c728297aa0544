import { adaptersOf } from '../../config/adapters.js';
import type { Settings } from '../../config/index.js';
import type { Clock } from '../../ports/clock.js';
import type { InvocationDeadline } from '../../ports/deadline.js';
import type { Platform } from '../../ports/platform.js';
import { SimulatedPlatform } from '../local/simulated-platform.js';
import { openShiftBrokerPlatformFor } from './openshift-broker.js';

/**
 * The platform of `platform.kind`: the broker through SSM, or a simulated one
 * (in memory: it starts empty in every process, so it only makes sense with
 * the local runtime, which injects its own populated instance). A stage's
 * Lambda bundles hold only the platform it configures (infra/esbuild-plugins.cjs,
 * `stage-adapters`): the SSM client only with `openshift-broker`.
 */
export function platformFor(settings: Settings, clock: Clock, deadline?: InvocationDeadline): Platform {
  if (adaptersOf(settings.config).platform === 'openshift-broker') return openShiftBrokerPlatformFor(settings, clock, deadline);
  const { platform } = settings.config;
  return new SimulatedPlatform(clock, { moveDurationMs: platform.moveDuration, moveFailureRate: platform.moveFailureRate });
}
