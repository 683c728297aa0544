/**
 * The node provisioner's decisions, as plain functions: names, idempotency
 * tokens, the order in which offerings (instance type x subnet) are tried,
 * which offerings to skip after a capacity error and for how long, the
 * exhaustion backoff, the room limits leave, the user data a node boots
 * with, provision timeouts and orphaned hosts.
 */
import type { ResourceRoom } from './scale-up-limits.js';
import { createHash } from 'node:crypto';
import type { Naming, NodeTemplate } from '../config/index.js';
import type { NodeRecord, NodeState, PoolId, PoolRecord } from './model.js';
import { STATS_AGENT_SCRIPT, STATS_AGENT_SERVICE, STATS_AGENT_TIMER } from './stats-agent-script.js';

/** Node steps the provisioner records (`NodeRecord.steps`), so a redelivered decision resumes where it stopped. */
export const PROVISION_STEPS = {
  /** Number of the launch attempt in flight (0, 1, ...): with the decision and slot it makes the idempotency token. */
  launchAttempt: 'launchAttempt',
  /** Offering of the attempt in flight (`<type>@<subnet>`), recorded before the cloud call. */
  launchOffering: 'launchOffering',
  /**
   * The launch template version of the attempt in flight, read for the template's `$Latest` or `$Default`: a resumed
   * attempt sends the request it recorded (EC2 refuses a client token sent again with other parameters).
   */
  launchTemplateVersion: 'launchTemplateVersion',
  /** When the cloud accepted the host request (an instance id, or `requested` for report-only handlers). */
  hostRequested: 'hostRequested',
  /** When the DNS record of the host name was written. */
  dnsRegistered: 'dnsRegistered',
  /** When the node failed because no offering had capacity. */
  capacityExhausted: 'capacityExhausted',
} as const;

/** Node states that hold (or will hold) a host: what pool.max and maxNodesTotal count (as the evaluator does). */
export const LIVE_STATES: ReadonlySet<NodeState> = new Set<NodeState>(['provisioning', 'active', 'draining', 'drained', 'terminating']);

/** `<base>_<N>` (the cloud name, EC2 `Name` tag) and `<base>-<N>.<domain>` (host name and node id), as in the seed. */
export function nodeNames(naming: Naming, n: number): { nodeId: string; cloudName: string } {
  return { nodeId: `${naming.base}-${n}.${naming.domain.toLowerCase()}`, cloudName: `${naming.base}_${n}` };
}

/** The counter value N of a cloud name `<base>_<N>`, or undefined. */
export function nameNumber(cloudName: string | undefined): number | undefined {
  if (cloudName === undefined) return undefined;
  const n = Number(cloudName.slice(cloudName.lastIndexOf('_') + 1));
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

const TOKEN_TEXT = /^[\x21-\x7e]{1,64}$/;

/**
 * The cloud idempotency token (EC2 `ClientToken`, at most 64 ASCII
 * characters) of one launch attempt: `<decisionId>#<slot>`, with `#<attempt>`
 * from the second offering on. Readable when it fits, else a SHA-256 of the
 * same text. The same decision, slot and attempt always give the same token,
 * so a redelivered request returns the host created the first time.
 */
export function clientToken(decisionId: string, slot: number, attempt: number): string {
  const text = attempt === 0 ? `${decisionId}#${slot}` : `${decisionId}#${slot}#${attempt}`;
  if (TOKEN_TEXT.test(text)) return text;
  return `ns-${createHash('sha256').update(text).digest('hex').slice(0, 61)}`;
}

export interface Offering {
  instanceType?: string;
  subnetId?: string;
}

/** `<instanceType>@<subnetId>`, `*` for a part the template leaves to the cloud. */
export function offeringKey(offering: Offering): string {
  return `${offering.instanceType ?? '*'}@${offering.subnetId ?? '*'}`;
}

export function parseOfferingKey(key: string): Offering {
  const at = key.lastIndexOf('@');
  const type = at < 0 ? key : key.slice(0, at);
  const subnet = at < 0 ? '*' : key.slice(at + 1);
  const offering: Offering = {};
  if (type !== '*' && type !== '') offering.instanceType = type;
  if (subnet !== '*' && subnet !== '') offering.subnetId = subnet;
  return offering;
}

/**
 * Every offering of a template, in the order they are tried: instance types
 * in the template's order of preference, each in every subnet. The subnets
 * start at node N's own (N modulo their number), so consecutive nodes spread
 * over the subnets (and their availability zones) while the preferred type
 * still comes first. A template without types or subnets leaves that part
 * to the cloud (launch template, default subnet): one offering `*@*`.
 */
export function offeringsFor(template: Pick<NodeTemplate, 'instanceTypes' | 'subnets'>, nodeNumber: number): Offering[] {
  const types = template.instanceTypes.map((type) => type.name);
  const subnets = rotate(template.subnets, Math.max(0, nodeNumber - 1));
  if (types.length === 0 && subnets.length === 0) return [{}];
  if (types.length === 0) return subnets.map((subnetId) => ({ subnetId }));
  if (subnets.length === 0) return types.map((instanceType) => ({ instanceType }));
  return types.flatMap((instanceType) => subnets.map((subnetId) => ({ instanceType, subnetId })));
}

function rotate<T>(items: readonly T[], by: number): T[] {
  if (items.length === 0) return [];
  const start = by % items.length;
  return [...items.slice(start), ...items.slice(0, start)];
}

/**
 * What a capacity error rules out (the Karpenter way: remember the offering,
 * not the pool). No capacity or no support for a type in an availability
 * zone rules out that type in that subnet; an instance, vCPU or spot quota
 * rules out the type everywhere; a subnet without free addresses rules out
 * the subnet for every type.
 */
export type CapacityScope = 'offering' | 'instance-type' | 'subnet';

export const CAPACITY_ERROR_SCOPES: Readonly<Record<string, CapacityScope>> = {
  InsufficientInstanceCapacity: 'offering',
  Unsupported: 'offering',
  InstanceLimitExceeded: 'instance-type',
  VcpuLimitExceeded: 'instance-type',
  MaxSpotInstanceCountExceeded: 'instance-type',
  InsufficientFreeAddressesInSubnet: 'subnet',
};

export function capacityScope(reason: string): CapacityScope {
  return CAPACITY_ERROR_SCOPES[reason] ?? 'offering';
}

/** The key under which a capacity error is remembered. */
export function unavailabilityKey(offering: Offering, reason: string): string {
  const scope = capacityScope(reason);
  if (scope === 'instance-type' && offering.instanceType !== undefined) return `${offering.instanceType}@*`;
  if (scope === 'subnet' && offering.subnetId !== undefined) return `*@${offering.subnetId}`;
  return offeringKey(offering);
}

/** Whether a remembered capacity error still rules the offering out at `now`. */
export function isOfferingUnavailable(unavailable: Readonly<Record<string, string>> | undefined, offering: Offering, now: Date): boolean {
  if (!unavailable) return false;
  const nowIso = now.toISOString();
  const keys = [offeringKey(offering), `${offering.instanceType ?? '*'}@*`, `*@${offering.subnetId ?? '*'}`];
  return keys.some((key) => {
    const until = unavailable[key];
    return until !== undefined && until > nowIso;
  });
}

/** The remembered offerings with one more, and without those that expired by `now`. */
export function markOfferingUnavailable(
  unavailable: Readonly<Record<string, string>> | undefined,
  offering: Offering,
  reason: string,
  now: Date,
  forMs: number,
): Record<string, string> {
  const next = pruneUnavailable(unavailable, now);
  const key = unavailabilityKey(offering, reason);
  const until = new Date(now.getTime() + forMs).toISOString();
  if (!(next[key] !== undefined && next[key]! >= until)) next[key] = until;
  return next;
}

export function pruneUnavailable(unavailable: Readonly<Record<string, string>> | undefined, now: Date): Record<string, string> {
  const nowIso = now.toISOString();
  return Object.fromEntries(Object.entries(unavailable ?? {}).filter(([, until]) => until > nowIso));
}

/**
 * The pool fields when every offering failed: exhausted for a backoff that
 * starts at `initial` and doubles on each consecutive exhaustion up to `max`
 * (5m, 10m, 20m, 30m by default); a launch that succeeds resets it.
 */
export function exhaustionPatch(
  pool: Pick<PoolRecord, 'exhaustedBackoffMs'>,
  now: Date,
  backoff: { initial: number; max: number },
): Required<Pick<PoolRecord, 'exhaustedUntil' | 'exhaustedBackoffMs' | 'lastFailureAt'>> {
  const previous = pool.exhaustedBackoffMs;
  const next = previous === undefined ? backoff.initial : Math.min(backoff.max, Math.max(backoff.initial, previous * 2));
  return {
    exhaustedUntil: new Date(now.getTime() + next).toISOString(),
    exhaustedBackoffMs: next,
    lastFailureAt: now.toISOString(),
  };
}

/**
 * How many of the `requested` nodes fit under pool.max, maxNodesTotal and the
 * resource limits (`resourceRooms`, from the evaluator's `resourceRooms`) now.
 * The evaluator clamped the decision already; the provisioner checks again at
 * claim time, since nodes may have appeared in between (adoption, another
 * pool's scale-up, an interruption's replacement), and says which limit cut it.
 */
export function scaleUpRoom(input: {
  requested: number;
  pool: PoolId;
  poolMax: number;
  maxNodesTotal: number;
  allNodes: readonly Pick<NodeRecord, 'pool' | 'state'>[];
  resourceRooms?: readonly ResourceRoom[];
}): { granted: number; reason?: string } {
  let poolLive = 0;
  let totalLive = 0;
  for (const node of input.allNodes) {
    if (!LIVE_STATES.has(node.state)) continue;
    totalLive++;
    if (node.pool === input.pool) poolLive++;
  }
  let granted = input.requested;
  const reasons: string[] = [];
  const limit = (room: number, text: string) => {
    if (room >= granted) return;
    granted = Math.max(0, Math.floor(room));
    reasons.push(text);
  };
  limit(input.poolMax - poolLive, `pool.max=${input.poolMax} (${poolLive} live in ${input.pool})`);
  limit(input.maxNodesTotal - totalLive, `maxNodesTotal=${input.maxNodesTotal} (${totalLive} live in all pools)`);
  for (const room of input.resourceRooms ?? []) limit(room.nodes, `${room.reason.limit}=${room.reason.value} (${room.detail})`);
  return reasons.length === 0 ? { granted } : { granted, reason: `${granted} of ${input.requested} nodes fit: ${reasons.join(', ')}` };
}

/** A value as one shell word. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * The user data a node boots with (before base64): its identity in
 * /etc/nodescaler/node.env (pool, district, profile, host and cloud name),
 * read by the node's configuration scripts to join its district (the seed
 * configured new hosts into a specific district), its host name set, the
 * stats agent installed when `agent` is given (see `statsAgentUserData`),
 * then the template's own `userData`, if any.
 */
export function nodeUserData(
  node: { pool: PoolId; district: string; profile: string; hostName: string; cloudName: string },
  extra?: string,
  agent?: StatsAgentSettings,
): string {
  const env = [
    ['NODESCALER_POOL', node.pool],
    ['NODESCALER_DISTRICT', node.district],
    ['NODESCALER_PROFILE', node.profile],
    ['NODESCALER_HOST_NAME', node.hostName],
    ['NODESCALER_CLOUD_NAME', node.cloudName],
  ]
    .map(([name, value]) => `${name}=${shellQuote(value!)}`)
    .join('\n');
  const lines = [
    '#!/bin/bash',
    '# Written by nodescaler: the identity of this node.',
    'mkdir -p /etc/nodescaler',
    "cat > /etc/nodescaler/node.env <<'NODESCALER_ENV'",
    env,
    'NODESCALER_ENV',
    `hostnamectl set-hostname ${shellQuote(node.hostName)} || hostname ${shellQuote(node.hostName)}`,
  ];
  if (agent !== undefined) lines.push('', statsAgentUserData(node, agent).replace(/\n$/, ''));
  if (extra !== undefined && extra.trim() !== '') lines.push('', '# From the pool template:', extra.replace(/\s+$/, ''));
  return `${lines.join('\n')}\n`;
}

/** Where a node's stats agent sends its reports. */
export interface StatsAgentSettings {
  /** The stats queue URL (the deployment's NODESCALER_STATS_QUEUE_URL). */
  queueUrl: string;
  /** The queue's region (AWS_REGION). */
  region: string;
}

/**
 * The user data part that installs the stats agent (infra/agent/): its
 * settings in /etc/nodescaler/agent.env (district, profile, node id = the
 * host name the provisioner recorded, queue URL, region), the script as
 * /usr/local/sbin/nodescaler-agent, and its systemd timer (every 60 s),
 * or a cron line on a host without systemd.
 */
export function statsAgentUserData(
  node: { district: string; profile: string; hostName: string },
  agent: StatsAgentSettings,
): string {
  const env = [
    ['NODESCALER_DISTRICT', node.district],
    ['NODESCALER_PROFILE', node.profile],
    ['NODESCALER_NODE_ID', node.hostName],
    ['NODESCALER_STATS_QUEUE_URL', agent.queueUrl],
    ['AWS_REGION', agent.region],
  ]
    .map(([name, value]) => `${name}=${shellQuote(value!)}`)
    .join('\n');
  const file = (path: string, delimiter: string, text: string) => [`cat > ${path} <<'${delimiter}'`, text.replace(/\n$/, ''), delimiter];
  return `${[
    '# The nodescaler stats agent (infra/agent/): reports this node to the stats queue every 60 s.',
    ...file('/etc/nodescaler/agent.env', 'NODESCALER_AGENT_ENV', env),
    ...file('/usr/local/sbin/nodescaler-agent', 'NODESCALER_AGENT_SCRIPT', STATS_AGENT_SCRIPT),
    'chmod 0755 /usr/local/sbin/nodescaler-agent',
    'if command -v systemctl >/dev/null 2>&1; then',
    ...file('/etc/systemd/system/nodescaler-agent.service', 'NODESCALER_AGENT_SERVICE', STATS_AGENT_SERVICE),
    ...file('/etc/systemd/system/nodescaler-agent.timer', 'NODESCALER_AGENT_TIMER', STATS_AGENT_TIMER),
    '  systemctl daemon-reload && systemctl enable --now nodescaler-agent.timer',
    'else',
    "  echo '* * * * * root /usr/local/sbin/nodescaler-agent' > /etc/cron.d/nodescaler-agent",
    'fi',
  ].join('\n')}\n`;
}

/** A `provisioning` node that has not joined within `maxProvisionMs` of its creation. */
export function provisionTimedOut(node: Pick<NodeRecord, 'state' | 'createdAt' | 'steps'>, now: Date, maxProvisionMs: number): boolean {
  // From the host request when there is one: retries and backoff can launch a host long after its name was
  // claimed, and a host must get its full boot time (it would join unseen after being failed).
  const since = node.steps?.hostRequested ?? node.createdAt;
  return node.state === 'provisioning' && now.getTime() - Date.parse(since) >= maxProvisionMs;
}

/** What the sweeper needs of a host. */
export interface ManagedHost {
  instanceId?: string;
  launchedAt?: string;
  tags?: Record<string, string>;
}

/** The tag that carries a host's node id (host name). */
export const NODE_TAG = 'nodescaler:node';

/**
 * Hosts carrying our tags that the table does not account for:
 * - `adoptable`: a `provisioning` node of the same host name has no instance
 *   id yet (a crash between the cloud call and its record); the id is
 *   recorded instead of treating the host as an orphan;
 * - `orphans`: no node that is not `terminated` holds the instance, and the
 *   host is older than `orphanAgeMs` (younger ones may still be recorded).
 */
export function findOrphans<H extends ManagedHost>(
  hosts: readonly H[],
  nodes: readonly Pick<NodeRecord, 'nodeId' | 'state' | 'instanceId'>[],
  now: Date,
  orphanAgeMs: number,
): { orphans: H[]; adoptable: Array<{ host: H; nodeId: string }> } {
  const known = new Set<string>();
  const awaiting = new Map<string, string>();
  for (const node of nodes) {
    if (node.instanceId !== undefined && node.state !== 'terminated') known.add(node.instanceId);
    // Not only provisioning nodes: a node whose host went unrecorded (RunInstances took effect, the caller saw an
    // error) can join and live on; without its instance id its release could not terminate the host.
    if (node.instanceId === undefined && node.state !== 'terminated') awaiting.set(node.nodeId, node.nodeId);
  }
  const orphans: H[] = [];
  const adoptable: Array<{ host: H; nodeId: string }> = [];
  for (const host of hosts) {
    if (host.instanceId === undefined || known.has(host.instanceId)) continue;
    const nodeId = host.tags?.[NODE_TAG];
    if (nodeId !== undefined && awaiting.has(nodeId)) {
      adoptable.push({ host, nodeId });
      awaiting.delete(nodeId);
      continue;
    }
    const launched = host.launchedAt === undefined ? NaN : Date.parse(host.launchedAt);
    if (Number.isFinite(launched) && now.getTime() - launched >= orphanAgeMs) orphans.push(host);
  }
  return { orphans, adoptable };
}

/** Full-jitter exponential backoff: a random delay in [0, min(max, base * 2^retry)). */
export function backoffDelay(retry: number, baseMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, retry));
  return Math.floor(random() * ceiling);
}
