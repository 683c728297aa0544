/**
 * Releasing a host, as plain functions: whether a node may be released at
 * all, and which step comes next. The steps are recorded on the node
 * (`NodeRecord.steps`, step name -> ISO time), so an invocation that dies at
 * any point is resumed at the next step by the next delivery or tick, and no
 * step that is not idempotent runs twice.
 */
import type { GearInfo, NodeRecord } from './model.js';

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
    const drains = [...new Set(incoming.map((move) => move.drainId))].join(', ');
    return {
      verdict: 'receiving',
      incoming: [...incoming],
      reason: `${incoming.length === 1 ? '1 gear is' : `${incoming.length} gears are`} moving onto ${node.nodeId} (${describeGears(incoming.map((move) => move.gear))}; drain ${drains}): it is not empty until they land`,
    };
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
