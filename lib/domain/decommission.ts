/**
 * Releasing a host, as plain functions: whether a node may be released at
 * all, and which step comes next. The steps are recorded on the node
 * (`NodeRecord.steps`, step name -> ISO time), so an invocation that dies at
 * any point is resumed at the next step by the next delivery or tick, and no
 * step that is not idempotent runs twice.
 */
import type { DrainRecord, GearInfo, NodeRecord, PoolRecord } from './model.js';

/** Why a node is being released: a finished drain (decommissioner) or a node that never joined (provisioner). */
export type ReleaseKind = 'decommission' | 'failed';

/** The release steps, in the order they run. */
export const RELEASE_STEPS = [
  /** `Platform.removeNode`: only for a node that was ever in its district (joined or adopted). */
  'removedFromDistrict',
  /** The DNS record nodescaler wrote for the host name. */
  'dnsDeleted',
  /** The gear volume's id, read from the instance before it is terminated (after, the mapping is gone). */
  'volumeResolved',
  /** `terminateHost`; an instance that is already gone counts as terminated. */
  'instanceTerminated',
  /** A handler that creates nothing (log, spool, notify) reports the host may go. */
  'releaseReported',
  /** The gear volume, once detached (retried on the schedule until then). */
  'volumeDeleted',
] as const;
export type ReleaseStep = (typeof RELEASE_STEPS)[number];

/** The step recording why the release started (`ReleaseKind`). */
export const RELEASE_KIND_STEP = 'releaseFor';

/**
 * The step recording that `removeNode` found the node in no district. A host still booting joins its district after
 * that, and the broker places gears on it: such a node is removed again just before its host is terminated, and handed
 * back if it holds gears by then (found by a soak run, docs/RELIABILITY.md).
 */
export const REMOVAL_FOUND_NO_NODE_STEP = 'removalFoundNoNode';

export interface ReleaseOptions {
  /** DNS records are managed (a Dns port is configured). */
  dns: boolean;
  /** The pool's template has a gear volume. */
  volume: boolean;
  /** A platform adapter is at hand (a failed node is then removed from its district too, in case it joined unseen). */
  platform?: boolean;
}

function done(node: Pick<NodeRecord, 'steps'>, step: ReleaseStep): boolean {
  return node.steps?.[step] !== undefined;
}

/** The next release step of a `terminating` node, or undefined when only the final transition is left. */
export function nextReleaseStep(
  node: Pick<NodeRecord, 'steps' | 'joinedAt' | 'origin' | 'instanceId' | 'volumeId' | 'privateIp'>,
  options: ReleaseOptions,
): ReleaseStep | undefined {
  // With a platform at hand every node is removed from its district first (a no-op for a node the
  // platform does not know): the platform refuses while the node holds gears, the last guard before
  // the host goes. A node that failed to join may have joined unseen, its stats lost.
  const mayBeInDistrict = node.joinedAt !== undefined || node.origin === 'adopted' || options.platform === true;
  if (mayBeInDistrict && !done(node, 'removedFromDistrict')) return 'removedFromDistrict';
  if (options.dns && node.privateIp !== undefined && node.steps?.dnsRegistered !== undefined && !done(node, 'dnsDeleted')) return 'dnsDeleted';
  if (node.instanceId !== undefined) {
    if (options.volume && node.volumeId === undefined && !done(node, 'volumeResolved')) return 'volumeResolved';
    if (!done(node, 'instanceTerminated')) return 'instanceTerminated';
  } else if (!done(node, 'releaseReported')) {
    return 'releaseReported';
  }
  if (node.volumeId !== undefined && !done(node, 'volumeDeleted')) return 'volumeDeleted';
  return undefined;
}

export type DecommissionCheck =
  | { verdict: 'release' }
  | { verdict: 'protected'; reason: string }
  | { verdict: 'holds-gears'; reason: string; gears: GearInfo[] }
  /** Gears are moving onto the node (another drain's moves in flight): not empty until they land, so it waits. */
  | { verdict: 'receiving'; reason: string; incoming: IncomingMove[] };

/** A move in flight (`moving` in its drain) whose target is the node being checked. */
export interface IncomingMove {
  drainId: string;
  gear: GearInfo;
}

/**
 * The moves in flight onto `nodeId` among `drains` (a pool's active drains):
 * the platform lists such a gear on the node only once it lands, so until
 * then the node is not as empty as it looks.
 */
export function movesOnto(drains: readonly Pick<DrainRecord, 'drainId' | 'moves'>[], nodeId: string): IncomingMove[] {
  return drains.flatMap((drain) =>
    (drain.moves ?? []).filter((move) => move.state === 'moving' && move.target === nodeId).map((move) => ({ drainId: drain.drainId, gear: move.gear })),
  );
}

/** `N gear(s) are moving onto NODE (uuid (app), ...; drain D, ...)`. */
export function describeIncoming(nodeId: string, incoming: readonly IncomingMove[]): string {
  const drains = [...new Set(incoming.map((move) => move.drainId))].join(', ');
  return `${incoming.length === 1 ? '1 gear is' : `${incoming.length} gears are`} moving onto ${nodeId} (${describeGears(incoming.map((move) => move.gear))}; drain ${drains})`;
}

/** How many gears a refusal names in its log line and reason. */
export const GEARS_NAMED = 10;

/**
 * The last line of "a node that holds gears is never terminated": a drained
 * node is released only when it is not protected and the platform lists no
 * gear on it, nor any gear moving onto it: the platform lists a moved gear on
 * its target only once the move lands, so a node chosen as another drain's
 * target and drained meanwhile looks empty while gears are on their way.
 */
export function decommissionCheck(node: Pick<NodeRecord, 'nodeId' | 'protected'>, protectedNodes: readonly string[], gears: readonly GearInfo[], incoming: readonly IncomingMove[] = []): DecommissionCheck {
  if (node.protected || protectedNodes.includes(node.nodeId)) {
    return { verdict: 'protected', reason: `decommission refused: node ${node.nodeId} is protected` };
  }
  if (gears.length > 0) {
    return {
      verdict: 'holds-gears',
      gears: [...gears],
      reason: `decommission refused: the platform lists ${gears.length === 1 ? '1 gear' : `${gears.length} gears`} on ${node.nodeId} (${describeGears(gears)})`,
    };
  }
  if (incoming.length > 0) {
    return { verdict: 'receiving', incoming: [...incoming], reason: `${describeIncoming(node.nodeId, incoming)}: it is not empty until they land` };
  }
  return { verdict: 'release' };
}

/** `uuid (app), ...`, at most `GEARS_NAMED` of them. */
export function describeGears(gears: readonly GearInfo[]): string {
  const named = gears.slice(0, GEARS_NAMED).map((gear) => `${gear.uuid} (${gear.app})`);
  const more = gears.length - named.length;
  return more > 0 ? `${named.join(', ')} and ${more} more` : named.join(', ');
}

/** Seconds from a node's creation to `at`; undefined when the creation time is unreadable. */
export function nodeLifetimeSeconds(node: Pick<NodeRecord, 'createdAt'>, at: Date): number | undefined {
  const created = Date.parse(node.createdAt);
  if (!Number.isFinite(created)) return undefined;
  return Math.max(0, Math.round((at.getTime() - created) / 1000));
}

/**
 * Where a `terminating` node goes when its release finds it holding gears
 * after all (the platform refuses `remove-node`): `draining`, for the gear
 * mover to empty it again, or `active` when the pool needs it. Like
 * Karpenter, which un-taints the candidates of a disruption it calls off.
 */
export type HandBackTarget = 'draining' | 'active';

/** The steps a hand-back records on the node while it is in the `handingBack` phase. */
export const HAND_BACK_STEPS = {
  /** When the gears were found (ISO). */
  found: 'handBackFound',
  /** The `HandBackTarget`, decided once when the gears were found, so a resumed hand-back goes the same way. */
  to: 'handBackTo',
  /** `activateNode` done (only for `active`: remove-node deactivates the node before it refuses). */
  reopened: 'handBackReopened',
  /** The DNS record upserted again (only when the release had deleted it: a node found in no district, then joined). */
  dnsRestored: 'handBackDnsRestored',
} as const;

/**
 * Whether the pool needs the node back open, or it is drained again. A node
 * that failed to join and still took gears serves, as a protected node does;
 * a pool that has wanted more capacity since the release began takes the
 * node's room back rather than drain it and buy a host: a scale-up lease
 * held or a scale-up since, utilization at the scale-up threshold
 * (`highSince`), or gears the broker refused in a window that ends after the
 * release began.
 */
export function handBackTarget(
  node: Pick<NodeRecord, 'protected' | 'steps' | 'stateChangedAt'>,
  pool: Pick<PoolRecord, 'lease' | 'lastScaleUpAt' | 'highSince' | 'refused'> | undefined,
  now: Date,
): { to: HandBackTarget; why: string } {
  if (node.steps?.[RELEASE_KIND_STEP] === 'failed') return { to: 'active', why: 'it failed to join, yet took gears: it serves' };
  if (node.protected) return { to: 'active', why: 'it is protected' };
  const since = node.steps?.releaseStarted ?? node.stateChangedAt;
  const lease = pool?.lease;
  if (lease?.kind === 'scale-up' && Date.parse(lease.expiresAt) > now.getTime()) return { to: 'active', why: `the pool is scaling up (${lease.holder})` };
  if (pool?.lastScaleUpAt !== undefined && pool.lastScaleUpAt >= since) return { to: 'active', why: `the pool scaled up at ${pool.lastScaleUpAt}, after the release began` };
  if (pool?.highSince !== undefined) return { to: 'active', why: `the pool has been at its scale-up threshold since ${pool.highSince}` };
  if (pool?.refused !== undefined && pool.refused.gears > 0 && pool.refused.windowEnd >= since) {
    return { to: 'active', why: `the broker refused ${pool.refused.gears} gear creation(s) in the pool up to ${pool.refused.windowEnd}` };
  }
  return { to: 'draining', why: 'the pool does not need it: the gear mover empties it again' };
}

/** The node's reason while it is handed back: what the platform said, the gears it lists, and where the node goes. */
export function handBackReason(nodeId: string, refusal: string, gears: readonly GearInfo[], target: { to: HandBackTarget; why: string }): string {
  const listed = gears.length === 0 ? 'the platform lists no gear yet (moves landing)' : `the platform lists ${gears.length === 1 ? '1 gear' : `${gears.length} gears`} on it (${describeGears(gears)})`;
  return `release of ${nodeId} stopped before its host was terminated: ${refusal}; ${listed}; handed back ${target.to === 'active' ? 'as active' : 'to the gear mover'}: ${target.why}`;
}
