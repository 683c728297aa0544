/**
 * `nodescaler report-stats [--pool P]`: the broker-side stats report
 * (lib/app/report-stats.ts) wired to a target. One-shot; a schedule (cron, an
 * EventBridge rule) runs it every minute where no agent runs on the nodes.
 * Locally the platform is the simulated one of `npm run invoke`
 * (`<state dir>/platform.json`, read, never written) and the stats go to the
 * state's queue file; deployed, the OpenShift broker through SSM and the
 * stage's SQS stats queue.
 */
import { join } from 'node:path';
import { PersistedPlatform } from '../adapters/local/persisted-platform.js';
import { brokerSsmClients } from '../adapters/platform/broker-ssm.js';
import { brokerDocumentName, OpenShiftBrokerPlatform } from '../adapters/platform/openshift-broker.js';
import { reportStats, type ReportStatsResult } from '../app/report-stats.js';
import type { Config } from '../config/index.js';
import type { Clock } from '../ports/clock.js';
import type { Platform } from '../ports/platform.js';
import { usageError } from './exit.js';
import type { OpenTarget } from './target.js';

export interface ReportStatsView extends ReportStatsResult {
  queue: string;
}

export async function reportStatsCommand(target: OpenTarget, config: Config, clock: Clock, pool: string | undefined, warn: (line: string) => void): Promise<ReportStatsView> {
  const platform = await platformOf(target, config, clock);
  const result = await reportStats({ store: target.store, platform, queue: target.queue, clock, warn }, config, pool);
  return { queue: target.queueLocation('stats'), ...result };
}

async function platformOf(target: OpenTarget, config: Config, clock: Clock): Promise<Platform> {
  const spec = target.spec;
  if (spec.kind === 'local') return PersistedPlatform.open(join(spec.stateDir, 'platform.json'), target.store, config, clock);
  if (config.platform.kind !== 'openshift-broker') {
    throw usageError(`report-stats on a deployed stage needs platform.kind openshift-broker (the configuration says ${config.platform.kind})`);
  }
  const clients = brokerSsmClients(spec.region);
  return new OpenShiftBrokerPlatform(clients.client, {
    senderClient: clients.senderClient,
    brokerInstanceId: config.platform.brokerInstanceId!,
    documentName: brokerDocumentName(spec.stage),
    commandTimeoutMs: config.platform.commandTimeout,
    brokerDir: config.platform.brokerDir,
    clock,
  });
}
