import { SSMClient } from '@aws-sdk/client-ssm';
import type { Settings } from '../../config/index.js';
import type { Clock } from '../../ports/clock.js';
import type { Platform } from '../../ports/platform.js';
import { SimulatedPlatform } from '../local/simulated-platform.js';
import { OpenShiftBrokerPlatform } from './openshift-broker.js';

/**
 * The platform of `platform.kind`: the broker through SSM, or a simulated one
 * (in memory: it starts empty in every process, so it only makes sense with
 * the local runtime, which injects its own populated instance).
 */
export function platformFor(settings: Settings, clock: Clock): Platform {
  const platform = settings.config.platform;
  if (platform.kind === 'openshift-broker') {
    return new OpenShiftBrokerPlatform(new SSMClient({ region: settings.deployment.region }), {
      brokerInstanceId: platform.brokerInstanceId!,
      commandTimeoutMs: platform.commandTimeout,
      brokerDir: platform.brokerDir,
      clock,
    });
  }
  return new SimulatedPlatform(clock, { moveDurationMs: platform.moveDuration, moveFailureRate: platform.moveFailureRate });
}
