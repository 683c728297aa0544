/**
 * What the launch workflow's parts share: the provisioner's ports and
 * configuration, the cloud retry, DNS registration, and the node fields a
 * host reports.
 */
import type { Config } from '../../config/index.js';
import { PROVISION_STEPS } from '../../domain/provisioning.js';
import type { NodeRecord } from '../../domain/model.js';
import type { Cloud, HostInfo, LaunchTemplateVersions } from '../../ports/cloud.js';
import type { Clock } from '../../ports/clock.js';
import type { Dns } from '../../ports/dns.js';
import type { Log } from '../../ports/log.js';
import type { Metrics } from '../../ports/metrics.js';
import type { Notifier } from '../../ports/notifier.js';
import type { Platform } from '../../ports/platform.js';
import type { StateStore } from '../../ports/state-store.js';
import { describeError, poolIds, recordSteps, retryOn, type Sleep } from '../../app/steps.js';
import type { HostReleaser } from '../release/release.js';

export interface ProvisionerPorts {
  store: StateStore;
  cloud: Cloud;
  clock: Clock;
  metrics: Metrics;
  log: Log;
  dns?: Dns;
  /** Operator notices (capacity exhausted); configured with `notify.topicArn`. */
  notifier?: Notifier;
  platform?: Platform;
  /** How backoff waits; the virtual clock's in tests. Default: a real timer. */
  sleep?: Sleep;
  /** Jitter source; default Math.random. */
  random?: () => number;
  /** What `$Latest` and `$Default` launch templates stand for now: a host is launched from, and records, the number (lib/app/launch-templates.ts). */
  launchTemplateVersions?: LaunchTemplateVersions;
}

export interface LaunchContext {
  ports: ProvisionerPorts;
  config: Config;
  releaser: HostReleaser;
}

export interface ProvisionedNode {
  nodeId: string;
  cloudName: string;
  state: NodeRecord['state'];
  instanceId?: string;
  instanceType?: string;
  privateIp?: string;
}

export function needsHost(node: NodeRecord, decisionId: string): boolean {
  return node.decisionId === decisionId && node.state === 'provisioning' && node.steps?.[PROVISION_STEPS.hostRequested] === undefined;
}

/** UPSERTs the node's A record once its address is known; a failure is logged and retried by the tick. */
export async function registerDns(ctx: LaunchContext, node: NodeRecord): Promise<NodeRecord> {
  const dns = ctx.ports.dns;
  if (!dns || node.origin !== 'provisioned' || node.privateIp === undefined || node.steps?.[PROVISION_STEPS.dnsRegistered] !== undefined) return node;
  if (node.state !== 'provisioning' && node.state !== 'active') return node;
  try {
    await retry(ctx, () => dns.upsertHost(node.nodeId, node.privateIp!));
  } catch (error) {
    ctx.ports.log.warn('DNS record not written; the tick tries again', { nodeId: node.nodeId, error: describeError(error) });
    return node;
  }
  ctx.ports.log.info('DNS record written', { nodeId: node.nodeId, ip: node.privateIp });
  return recordSteps(ctx.ports.store, node, { [PROVISION_STEPS.dnsRegistered]: ctx.ports.clock.now().toISOString() });
}

export async function allNodes(ctx: LaunchContext): Promise<NodeRecord[]> {
  const lists = await Promise.all((await poolIds(ctx.ports.store, ctx.config)).map((pool) => ctx.ports.store.listNodes(pool)));
  return lists.flat();
}

export function retry<T>(ctx: LaunchContext, call: () => Promise<T>): Promise<T> {
  return retryOn(ctx.ports, ctx.config.cloudRetry)(call);
}

export function hostFields(host: HostInfo): Partial<NodeRecord> {
  const fields: Partial<NodeRecord> = {};
  if (host.instanceId !== undefined) fields.instanceId = host.instanceId;
  if (host.instanceType !== undefined) fields.instanceType = host.instanceType;
  if (host.zone !== undefined) fields.zone = host.zone;
  if (host.privateIp !== undefined) fields.privateIp = host.privateIp;
  if (host.volumeId !== undefined) fields.volumeId = host.volumeId;
  return fields;
}

export function summarize(node: NodeRecord): ProvisionedNode {
  const summary: ProvisionedNode = { nodeId: node.nodeId, cloudName: node.cloudName ?? '', state: node.state };
  if (node.instanceId !== undefined) summary.instanceId = node.instanceId;
  if (node.instanceType !== undefined) summary.instanceType = node.instanceType;
  if (node.privateIp !== undefined) summary.privateIp = node.privateIp;
  return summary;
}
