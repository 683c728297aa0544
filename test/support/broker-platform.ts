/**
 * The broker adapter (lib/adapters/platform/openshift-broker.ts) over the
 * broker emulator, on a test's clock: its polling sleeps advance that clock,
 * so a command's latency is simulated time, never wall-clock time.
 */
import { OpenShiftBrokerPlatform, type OpenShiftBrokerOptions } from '../../lib/adapters/platform/openshift-broker.js';
import { parseConfig, type Config } from '../../lib/config/index.js';
import { BrokerEmulator } from './broker-emulator.js';

export const BROKER = 'i-0b10c0ffee0123456';
export const DOCUMENT = 'nodescaler-test-broker-admin';

export interface AdvancingClock {
  now(): Date;
  advance(ms: number): unknown;
}

export function brokerOnEmulator(
  clock: AdvancingClock,
  options: Partial<OpenShiftBrokerOptions> & { commandLatencyMs?: number; moveDurationMs?: number } = {},
): { broker: BrokerEmulator; platform: OpenShiftBrokerPlatform } {
  const { commandLatencyMs, moveDurationMs, ...adapter } = options;
  const broker = new BrokerEmulator({
    clock,
    brokerInstanceId: BROKER,
    documentName: DOCUMENT,
    ...(commandLatencyMs !== undefined ? { commandLatencyMs } : {}),
    ...(moveDurationMs !== undefined ? { moveDurationMs } : {}),
  });
  const platform = new OpenShiftBrokerPlatform(broker.client(), {
    brokerInstanceId: BROKER,
    documentName: DOCUMENT,
    commandTimeoutMs: 20 * 60_000,
    brokerDir: '/var/www/openshift/broker',
    sleep: async (ms) => void clock.advance(ms),
    clock,
    ...adapter,
  });
  return { broker, platform };
}

/** The configuration of the broker tests: EC2 hosts for one pool, d1/small, on this broker; `extra` adds top-level settings. */
export function ec2OnBrokerConfig(extra: Record<string, unknown> = {}): Config {
  return parseConfig({
    handler: 'ec2',
    platform: { kind: 'openshift-broker', brokerInstanceId: BROKER },
    ...extra,
    pools: [
      {
        district: 'd1',
        profile: 'small',
        max: 10,
        naming: { base: 'd1-small', domain: 'example.com' },
        template: { imageId: 'ami-0abc', instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }], subnets: ['subnet-aaa'], securityGroups: ['sg-111'] },
      },
    ],
  });
}
