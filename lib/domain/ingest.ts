/**
 * Ingesting node stats, the pure part: the newer-reportedAt rule (invariant 5:
 * older stats never overwrite newer ones, whatever order they arrive in).
 */
import type { NodeRecord, NodeStats } from './model.js';

/** True when `stats` were measured strictly after `current` (any stats are newer than none). */
export function isNewerStats(current: NodeStats | undefined, stats: NodeStats): boolean {
  if (current === undefined) return true;
  const next = Date.parse(stats.reportedAt);
  const previous = Date.parse(current.reportedAt);
  if (!Number.isFinite(next)) return false;
  return !Number.isFinite(previous) || next > previous;
}

/**
 * The node with `stats` as its latest stats, or the very same node object when
 * they are not newer than what it holds (a duplicate or an out-of-order report),
 * so `applyStats(node, stats) === node` means "nothing to write".
 */
export function applyStats(node: NodeRecord, stats: NodeStats): NodeRecord {
  return isNewerStats(node.stats, stats) ? { ...node, stats } : node;
}

/**
 * The issue of stats dated more than `maxAgeMs` before `now`: they would
 * count as stale the moment they were stored (lib/domain/utilization.ts), so
 * they are dropped rather than stored, and a node host cannot hold a pool's
 * figures with an old report. Future dates are refused at parsing
 * (lib/messages/parse.ts, MAX_CLOCK_AHEAD_MS).
 */
export function staleStatsIssue(reportedAt: string, now: Date, maxAgeMs: number): { path: 'reportedAt'; message: string } | undefined {
  const ageMs = now.getTime() - Date.parse(reportedAt);
  if (!(ageMs > maxAgeMs)) return undefined;
  return { path: 'reportedAt', message: `is ${Math.round(ageMs / 1000)}s old (now is ${now.toISOString()}); stats older than statsMaxAge (${Math.round(maxAgeMs / 1000)}s) count for nothing` };
}
