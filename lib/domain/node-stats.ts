import { createHash } from 'node:crypto';
import type { GearInfo, GearListSummary, NodeRecord, NodeStats, PoolRecord } from './model.js';

/**
 * A gear list is kept with the node only while it is small: the platform is
 * the authority on gears (read before any drain), and a DynamoDB item holds
 * at most 400 KB, which a few thousand gears would exceed.
 */
export const MAX_STORED_GEARS = 500;

interface StatsReport {
  activeGears: number;
  maxActiveGears: number;
  gears?: NodeStats['gears'];
  cpu?: number;
  memory?: number;
  idleGears?: number;
  disruptiveGears?: number;
  reportedAt: string;
}

export function statsToStore(report: StatsReport): NodeStats {
  const stats: NodeStats = { activeGears: report.activeGears, maxActiveGears: report.maxActiveGears, reportedAt: report.reportedAt };
  if (report.gears && report.gears.length <= MAX_STORED_GEARS) {
    stats.gears = report.gears;
    stats.listed = gearListSummary(report.gears);
  }
  if (report.cpu !== undefined) stats.cpu = report.cpu;
  if (report.memory !== undefined) stats.memory = report.memory;
  if (report.idleGears !== undefined) stats.idleGears = report.idleGears;
  if (report.disruptiveGears !== undefined) stats.disruptiveGears = report.disruptiveGears;
  return stats;
}

/** `stats` as the store keeps them: with `held` (the report they replace) as their prior, never a prior they came with. */
export function withPrior(stats: NodeStats, held: NodeStats | undefined): NodeStats {
  const { prior: _prior, ...reported } = stats;
  return held ? { ...reported, prior: { activeGears: held.activeGears, reportedAt: held.reportedAt } } : reported;
}

/** The counts and digest of a gear list, kept where the list itself is not (`NodeStats.listed`). */
export function gearListSummary(gears: readonly GearInfo[]): GearListSummary {
  const digest = createHash('sha256').update(JSON.stringify(gears)).digest('base64url').slice(0, 22);
  return { gears: gears.length, idle: gears.length - slotHolders(gears), digest };
}

/** Stats as a pool's listing carries them: the counts of the gear list, not the list. */
export function withoutGearList(stats: NodeStats): NodeStats {
  if (stats.gears === undefined) return stats;
  const { gears: _gears, ...rest } = stats;
  return rest;
}

/** Gears the agent listed on the node, from the list or its counts (a pool's listing has only the counts). */
export function listedGearCount(stats: Pick<NodeStats, 'gears' | 'listed'>): number {
  return stats.gears?.length ?? stats.listed?.gears ?? 0;
}

/**
 * Median time from creation to first stats of the pool's provisioned nodes,
 * or undefined before any has joined. The forecast looks this far ahead.
 */
export function observedBootMs(nodes: readonly NodeRecord[]): number | undefined {
  const boots = nodes
    .filter((node) => node.origin === 'provisioned' && node.joinedAt)
    .map((node) => Date.parse(node.joinedAt!) - Date.parse(node.createdAt))
    .filter((ms) => Number.isFinite(ms) && ms >= 0)
    .sort((a, b) => a - b);
  if (boots.length === 0) return undefined;
  const middle = Math.floor(boots.length / 2);
  return boots.length % 2 === 1 ? boots[middle] : (boots[middle - 1]! + boots[middle]!) / 2;
}

/** The pool's boot delay: the one observed (observedBootMs) once a node joined, the configured one before. */
export function poolBootMs(pool: Pick<PoolRecord, 'observedBootMs'>, configuredMs: number): number {
  return pool.observedBootMs ?? configuredMs;
}

/** Whether a node is protected from scale-down and termination, by its flag or by the pool's list. */
export function isProtected(node: Pick<NodeRecord, 'nodeId' | 'protected'>, protectedNodes: readonly string[]): boolean {
  return node.protected || protectedNodes.includes(node.nodeId);
}

/**
 * The gears a platform lists on a node, with what the node's agent said of
 * each in its last stats (do-not-move, a tenant's restart, stopped or idled):
 * the broker knows none of them. A flag the agent did not send stays as the
 * platform listed it.
 */
export function withAgentFlags(listed: readonly GearInfo[], node: Pick<NodeRecord, 'stats'>): GearInfo[] {
  const reported = new Map((node.stats?.gears ?? []).map((gear) => [gear.uuid, gear]));
  return listed.map((gear) => {
    const own = reported.get(gear.uuid);
    if (!own || (!own.doNotMove && !own.disruptive && !own.idle)) return gear;
    return {
      ...gear,
      ...(own.doNotMove ? { doNotMove: true } : {}),
      ...(own.disruptive ? { disruptive: true } : {}),
      ...(own.idle ? { idle: true } : {}),
    };
  });
}

/**
 * The listed gears that hold a slot: every one its agent did not mark idle (`withAgentFlags`). A price or a fit counted
 * in the agent's `activeGears` is held against this, not against every listed gear: a node holding idle gears would
 * otherwise look fuller than it was priced at every check.
 */
export function slotHolders(gears: readonly GearInfo[]): number {
  let count = 0;
  for (const gear of gears) if (gear.idle !== true) count += 1;
  return count;
}
