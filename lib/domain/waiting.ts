/**
 * Gears that wait: OpenShift v2's pending pods. No node reports a gear its
 * district refused, so a full pool's demand is a lower bound; the broker is
 * the one place that sees them (origin-server raises NodeUnavailableException
 * "No nodes available...", exit code 140, and writes one RESULT=FAILURE line
 * to its user_action.log). A broker-side reporter counts those refusals per
 * pool and window (`gears-refused`, infra/agent/nodescaler-broker-reporter.sh),
 * and the evaluator treats them as cluster-autoscaler treats pending pods:
 * demand that waits now, so the pool scales up at once (no sustain window),
 * sized for the waiting gears plus the headroom in one decision.
 *
 * Counted once: the waiting demand is the demand the pool had placed when
 * the window ended plus the gears refused in it. A gear placed since (a new
 * node joined) is in today's demand and in that sum once, not twice, and
 * nodes still provisioning count as capacity, so the reports that keep coming
 * while they boot buy nothing more.
 *
 * A refusal also says the pool was full: the broker refuses a gear only when
 * no open node of the district has a free slot. So the placed demand at the
 * window's end is at least every slot of the nodes open then, whatever their
 * latest reports say. The first evaluation after a spike runs on reports sent
 * partly before it (a node that reported a minute ago still shows the slots
 * the spike has since filled): sized on those, the scale-up came one node
 * short and the last gears waited for a second decision a minute later.
 *
 * Unless the district has no UIDs left (lib/domain/district-capacity.ts): the
 * broker refuses a gear that way too, with nodes half empty, and a node bought
 * for it would stay empty, and the next refusals buy the next. With a fresh
 * read of the district, only as many refusals as it has UIDs left count.
 *
 * Nor when the broker requires zones for app creation (its refusals ask for a
 * "gear size/zone combination", `zonesRequired`) and the pool names no
 * region to place its nodes in (`openshiftRegion`, lib/domain/placement.ts):
 * a node it adds joins in no zone and would take none of them.
 * Pure functions of data.
 */
import { splitPoolId, type DemandSample, type NodeRecord, type PoolRecord } from './model.js';
import { districtCapacityText, districtCureText, freshDistrictCapacity, refusalsNodesCanPlace } from './district-capacity.js';
import { formatDuration } from './duration.js';
import { nodesToHold, type WantedConfig } from './wanted.js';

/** A report counts while its window ended at most this long ago, plus its own length (the reporter sends every minute). */
export const REFUSED_GRACE_MS = 2 * 60_000;

/** What the pool record keeps of the latest report (lib/app/refused-gears.ts writes it). */
export type RefusedReport = NonNullable<PoolRecord['refused']>;

export interface WaitingGears {
  /** Gear creations the broker refused in the report's window. */
  refused: number;
  /** Placed gears when the window ended, plus the refused ones: the pool's demand, counted from the broker's side. */
  demand: number;
  /** How many of the refused gears are still not placed (demand above today's placed gears, at most the refused ones). */
  unplaced: number;
  windowMs: number;
  /** e.g. `37 gear creations refused in the last 1m (broker), 12 not placed yet`. */
  text: string;
  /**
   * Set when no node the pool can add would place them: the district has no UIDs left, or the broker requires zones
   * and the pool's nodes join in none. `text` says which, with the cure.
   */
  uncured?: boolean;
}

/** What the pool's configuration says of where its nodes join: in a zone (it names `openshiftRegion`) or not. */
export interface WaitingOptions {
  nodesJoinInZones?: boolean;
}

/**
 * The waiting gears behind the pool's latest refused report, or undefined when
 * there is none, it is stale, or it refused nothing. `history`: the pool's demand
 * samples ([epoch minute, placed gears]); `demand`: the gears placed now;
 * `nodes`: the pool's nodes, whose open slots were all taken when the broker
 * refused (`slotsFullAt`); without them only the history counts.
 */
export function waitingGears(
  pool: Pick<PoolRecord, 'refused' | 'districtCapacity'> & { pool?: string },
  history: readonly DemandSample[] | undefined,
  now: Date,
  demand: number,
  nodes?: readonly NodeRecord[],
  options: WaitingOptions = {},
): WaitingGears | undefined {
  const report = pool.refused;
  if (report === undefined || report.gears <= 0) return undefined;
  const start = Date.parse(report.windowStart);
  const end = Date.parse(report.windowEnd);
  if (!Number.isFinite(start) || !Number.isFinite(end) || end <= start) return undefined;
  const nowMs = now.getTime();
  const windowMs = end - start;
  if (nowMs - end > windowMs + REFUSED_GRACE_MS) return undefined;
  const refusedText = `${report.gears} gear creation${report.gears === 1 ? '' : 's'} refused in the last ${formatDuration(Math.round(windowMs / 1000) * 1000)} (broker)`;
  if (report.zonesRequired && options.nodesJoinInZones === false) {
    const why = `the broker requires zones for new gears (its refusals ask for a "gear size/zone combination") and pool ${pool.pool ?? ''} names no openshiftRegion: a node it adds joins in no zone and would place none; name the region and zones its nodes join (pools[].openshiftRegion)`;
    return { refused: report.gears, demand, unplaced: 0, windowMs, text: `${refusedText}, ${why}`, uncured: true };
  }
  const capacity = freshDistrictCapacity(pool, now);
  const placeable = refusalsNodesCanPlace(report.gears, capacity);
  if (placeable === 0 && capacity !== undefined) {
    const district = districtOf(pool.pool);
    const why = `${districtCapacityText(district, capacity, now)}: no node would place them; ${districtCureText(district)}`;
    return { refused: report.gears, demand, unplaced: 0, windowMs, text: `${refusedText}, ${why}`, uncured: true };
  }
  // Only a refusal for want of a slot says the open nodes were full.
  const placedThen = Math.max(placedAt(history, end) ?? demand, nodes ? slotsFullAt(nodes, end) : 0);
  const total = placedThen + placeable;
  const unplaced = Math.min(placeable, Math.max(0, total - demand));
  const uidsText = placeable < report.gears && capacity !== undefined ? ` (${districtCapacityText(districtOf(pool.pool), capacity, now)})` : '';
  return { refused: report.gears, demand: Math.max(total, demand), unplaced, windowMs, text: `${refusedText}, ${unplaced} not placed yet${uidsText}` };
}

function districtOf(poolId: string | undefined): string {
  return poolId ? splitPoolId(poolId).district : 'of the pool';
}

/**
 * Nodes the waiting gears need beyond the pool's sizing slots (provisioning
 * nodes included, wanted.ts) for them and the headroom, as one decision:
 * cluster-autoscaler's "every node the pending pods need". 0 when what is
 * booting already covers them.
 */
export function nodesForWaiting(waiting: WaitingGears, slots: number, gearsPerNode: number, scaleUp: WantedConfig, rise = 0): number {
  if (waiting.unplaced <= 0) return 0;
  return nodesToHold(waiting.demand + rise, slots, gearsPerNode, scaleUp);
}

/**
 * The nodes the waiting gears need (nodesForWaiting), with the gears still to come while they boot on top when
 * `scaleUp.waitingRise` is on (waitingRise); the evaluator's and explain's one sizing.
 */
export function waitingNeed(
  waiting: WaitingGears,
  seen: PoolRecord['waitingSeen'],
  input: { now: Date; bootMs: number; slots: number; gearsPerNode: number; scaleUp: WantedConfig & { waitingRise: boolean } },
): { nodes: number; rise: number } {
  const rise = waiting.unplaced > 0 && input.scaleUp.waitingRise ? waitingRise(waiting, seen, input.now, input.bootMs) : 0;
  return { nodes: nodesForWaiting(waiting, input.slots, input.gearsPerNode, input.scaleUp, rise), rise };
}

/**
 * The gears still to come while the nodes bought now boot, when gears wait and kept arriving: the waiting demand
 * (placed and refused gears) rose since the last evaluation saw it, and that pace is expected to last as long again
 * as gears have waited, at most one boot delay. Sized only for the gears refused so far, each decision of a crowd that
 * rises for minutes came one boot behind the next minute's; kept for a whole boot from its first minute, the pace of a
 * rise that stopped bought nodes for 10 minutes of it on 10-minute boots. A step, or the pool's first refused minute,
 * has no pace yet: 0; so is a sighting older than one boot delay.
 */
export function waitingRise(waiting: WaitingGears, seen: PoolRecord['waitingSeen'], now: Date, bootMs: number): number {
  if (seen === undefined) return 0;
  const elapsed = now.getTime() - Date.parse(seen.at);
  if (!(elapsed > 0 && elapsed <= bootMs)) return 0;
  const waitedMs = Math.max(elapsed, now.getTime() - Date.parse(seen.since));
  return Math.max(0, Math.round(((waiting.demand - seen.gears) * Math.min(bootMs, waitedMs)) / elapsed));
}

/** What this evaluation saw of the waiting demand, for the next one's pace; `since` carries on while sightings are at most a boot apart. */
export function waitingSighting(waiting: WaitingGears, seen: PoolRecord['waitingSeen'], now: Date, bootMs: number): NonNullable<PoolRecord['waitingSeen']> {
  const elapsed = seen === undefined ? NaN : now.getTime() - Date.parse(seen.at);
  const continues = seen !== undefined && elapsed >= 0 && elapsed <= bootMs && Number.isFinite(Date.parse(seen.since));
  return { at: now.toISOString(), gears: waiting.demand, since: continues ? seen.since : now.toISOString() };
}

/**
 * The gears the pool's open nodes held when the broker refused at `atMs`: every slot of each node active (not
 * closed for attrition, not draining) since before then. A node that joined then or later brought slots the refused gears
 * may have taken since, so it does not count; nor does a node that never reported (its slots are unknown).
 */
export function slotsFullAt(nodes: readonly NodeRecord[], atMs: number): number {
  let slots = 0;
  for (const node of nodes) {
    if (node.state !== 'active' || node.attritionSince !== undefined || !node.stats) continue;
    const since = Date.parse(node.stateChangedAt);
    if (!Number.isFinite(since) || since >= atMs) continue;
    slots += Math.max(0, node.stats.maxActiveGears);
  }
  return slots;
}

/** The placed demand recorded at or before `atMs` (the latest such sample), undefined when the history starts later. */
function placedAt(history: readonly DemandSample[] | undefined, atMs: number): number | undefined {
  if (!history || history.length === 0) return undefined;
  const minute = Math.floor(atMs / 60_000);
  let found: number | undefined;
  for (let i = history.length - 1; i >= 0; i--) {
    const sample = history[i]!;
    if (sample[0] <= minute) {
      found = sample[1];
      break;
    }
  }
  return found;
}
