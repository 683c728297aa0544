/**
 * Whose node-stats to believe (issue 18, item 3), as pure functions of the
 * data: the message's sender as SQS stamped it (`SenderId`), the node record
 * the table holds, and, on first sight of an instance, what the cloud says of
 * it (its tags). The threshold evaluator (lib/app/stats-sender.ts) reads those
 * and acts on the verdict.
 *
 * Why SenderId: SQS sets it from the credentials that signed SendMessage, so a
 * host cannot choose it. An EC2 instance-profile session is named after its
 * instance: `<role id>:i-...`. A node host therefore proves which instance it
 * is, and may report for the node recorded on that instance only.
 */
import type { NodeRecord, PoolId } from './model.js';
import { NODE_TAG } from './provisioning.js';

/** The tag every host of a pool carries (lib/adapters/ec2/cloud.ts TAGS.pool; adopted hosts are tagged by the operator). */
export const POOL_TAG = 'nodescaler:pool';
/**
 * The sender of local runs (lib/adapters/local: in-process queues, the CLI,
 * the simulated world's broker-side reports): trusted like a reporter. SQS
 * never stamps it: a SenderId is always an AWS unique id, in capitals.
 */
export const LOCAL_SENDER = 'nodescaler-local';

export interface StatsAuthRules {
  enabled: boolean;
  nodeRoleIds: readonly string[];
  reporterIds: readonly string[];
}

export type StatsSender =
  /** Allowed to report for every node: the broker-side report-stats, local runs, or every sender with the check off. */
  | { kind: 'reporter'; senderId: string }
  /** A node host's instance-profile session. */
  | { kind: 'instance'; senderId: string; instanceId: string }
  | { kind: 'unknown'; senderId: string; why: string };

const INSTANCE_ID = /^i-[0-9a-f]{8,17}$/;

/** Who sent a message, from its SenderId (undefined: the event carried none). */
export function classifySender(senderId: string | undefined, rules: StatsAuthRules): StatsSender {
  const id = senderId ?? '';
  if (!rules.enabled || id === LOCAL_SENDER) return { kind: 'reporter', senderId: id };
  if (id === '') return { kind: 'unknown', senderId: id, why: 'the message carries no SenderId' };
  const colon = id.indexOf(':');
  const principal = colon < 0 ? id : id.slice(0, colon);
  const session = colon < 0 ? '' : id.slice(colon + 1);
  if (rules.reporterIds.includes(principal)) return { kind: 'reporter', senderId: id };
  if (!INSTANCE_ID.test(session)) {
    return { kind: 'unknown', senderId: id, why: 'not an instance-profile session (<role id>:<instance id>) nor a configured reporter (statsAuth.reporterIds)' };
  }
  if (rules.nodeRoleIds.length > 0 && !rules.nodeRoleIds.includes(principal)) {
    return { kind: 'unknown', senderId: id, why: `role ${principal} is not the node role (statsAuth.nodeRoleIds: ${rules.nodeRoleIds.join(', ')})` };
  }
  return { kind: 'instance', senderId: id, instanceId: session };
}

/** What the cloud says of the sending instance: its tags, or undefined when it does not know it. */
export interface SenderHost {
  instanceId: string;
  tags: Readonly<Record<string, string>>;
  /** What a node adopted from it is priced by (node-price.ts): the type it runs as, the zone it runs in. */
  instanceType?: string;
  zone?: string;
}

/** What a node adopted from a message records of its host: the instance its stats must come from, and what prices it. */
export interface AdoptedHost {
  instanceId?: string;
  instanceType?: string;
  zone?: string;
}

export type SenderVerdict =
  | ({ ok: true } & /** Set when the message may adopt its node: the host to record on it. */ AdoptedHost)
  | { ok: false; reason: string }
  /** The instance must be looked up first (first sight): call again with its host. */
  | { ok: 'lookup'; instanceId: string };

/**
 * The verdict on stats for `nodeId` in `pool` from `sender`, given the node
 * record (undefined: not in the table, the message would adopt it) and, once
 * looked up, the sending host (null: the cloud does not know the instance).
 */
export function judgeSender(input: { sender: StatsSender; nodeId: string; pool: PoolId; node: NodeRecord | undefined; host?: SenderHost | null }): SenderVerdict {
  const { sender, nodeId, pool, node, host } = input;
  if (sender.kind === 'reporter') return { ok: true };
  if (sender.kind === 'unknown') return { ok: false, reason: `sender ${JSON.stringify(sender.senderId)}: ${sender.why}` };
  const from = sender.instanceId;
  // The node's own instance, recorded at launch or adoption: nothing to look up.
  if (node?.instanceId !== undefined) {
    return node.instanceId === from ? { ok: true } : { ok: false, reason: `node ${nodeId} is instance ${node.instanceId}; the message came from instance ${from}` };
  }
  if (host === undefined) return { ok: 'lookup', instanceId: from };
  if (host === null) return { ok: false, reason: `instance ${from} is unknown to the cloud` };
  const taggedNode = host.tags[NODE_TAG];
  if (taggedNode !== undefined && taggedNode !== nodeId) return { ok: false, reason: `instance ${from} is node ${taggedNode} (tag ${NODE_TAG}), not ${nodeId}` };
  const recordedPool = node?.pool ?? pool;
  const taggedPool = host.tags[POOL_TAG];
  if (taggedPool !== recordedPool) {
    const has = taggedPool === undefined ? 'has no' : `has ${POOL_TAG}=${taggedPool}, not the`;
    return { ok: false, reason: `instance ${from} ${has} tag ${POOL_TAG}=${recordedPool}: ${node ? 'it cannot report for that pool' : 'a node is adopted only from a host tagged for its pool'}` };
  }
  return { ok: true, instanceId: from, ...(host.instanceType ? { instanceType: host.instanceType } : {}), ...(host.zone ? { zone: host.zone } : {}) };
}
