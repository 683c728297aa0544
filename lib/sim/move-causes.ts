/**
 * Where a replay's gear moves come from: each completed move is charged to
 * the drain that made it (the latest drain of its source node started at or
 * before it), and through the drain to what started it. Scale-down drains are
 * split by the basis of their pays-off check (lib/domain/payoff.ts: yesterday's
 * demand at the same hour, or only recent demand when the pool has no usable
 * day). Then views that overlap the causes: moves of drains started on the
 * first day (no history yet), soon after the pool scaled up (demand was
 * rising: Karpenter's consolidateAfter waits these out), of nodes attrition
 * had closed before the drain, of drains the pool bought back (the node's
 * capacity came back within the pays-off horizon: the move saved nothing),
 * and moves of a gear already moved in the 7 days before (the tenant
 * restarted twice).
 *
 * "Bought back" is read per node, on the pool's node level: +count at each
 * scale-up, -1 at each drain's start (scale-down, manual, interruption; a
 * re-drain finishes a node already counted out), +1 when an aborted drain
 * re-opened its node. A scale-down drain is bought back when, within 4 h of
 * its start, the level comes back to where it stood just before that drain
 * (its own node re-opening aside: that is an abort, not a purchase). Any
 * scale-up within 4 h, the reading before, meant the same at 20 nodes, where
 * one drain is followed by one purchase or none; at 2,000 nodes the pool
 * buys somewhere within 4 h of almost every drain (NASA at 200,000 gears: 45,125
 * of 56,811 moves), though it buys back a few of the hundred nodes it drained.
 * The drains of one decision start at the same instant and count one after the
 * other, in the order given: with k drained and m bought back, the last m are
 * (the number of nodes is exact; which nodes, and so their moves, follows that
 * order).
 */

const DAY_SECONDS = 86_400;
const WEEK_SECONDS = 7 * DAY_SECONDS;
/** "Soon after a scale-up": within an hour of it. */
export const SOON_AFTER_SCALE_UP_SECONDS = 3600;
/** "Bought back": the pool's node level back where it stood before a scale-down drain, within the pays-off check's default horizon (4 h) of its start. */
export const BOUGHT_BACK_SECONDS = 4 * 3600;

export interface MoveCauses {
  total: number;
  /** Scale-down drains whose pays-off check read yesterday's demand. */
  yesterday: number;
  /** Scale-down drains whose pays-off check had only recent demand (no usable day of history). */
  recent: number;
  /** Scale-down drains without a pays-off verdict (the check disabled). */
  unchecked: number;
  /** Drains of nodes the cloud interrupted, and their re-drains. */
  interruption: number;
  /** Drains an operator asked for. */
  manual: number;
  /** Moves no drain explains. */
  unattributed: number;
  /** Of all moves: of drains started in the first day of the run. */
  firstDay: number;
  /** Of all moves: of drains started within SOON_AFTER_SCALE_UP_SECONDS after a scale-up of the pool. */
  afterScaleUp: number;
  /** Of all moves: of nodes that attrition had closed to new gears before their drain started. */
  afterAttrition: number;
  /** Of all moves: of scale-down drains whose node the pool bought back within BOUGHT_BACK_SECONDS of their start (file comment). */
  boughtBack: number;
  /** Of all moves: of a gear already moved within the 7 days before. */
  repeatWithin7d: number;
  /** Drains that moved at least one gear. */
  drainsWithMoves: number;
}

/** A completed move: seconds from the run's start. */
export interface CausedMove {
  gear: number;
  from: string;
  at: number;
}

export interface CauseDrain {
  nodeId: string;
  /** Seconds from the run's start. */
  startedAt: number;
  kind: 'scale-down' | 'manual' | 'interruption' | 'redrain';
  /** The decision's reason, which carries the pays-off verdict's basis (ahead of the further nodes: a long reason is cut). */
  reason: string;
  /** An aborted drain: when it re-opened its node, seconds from the run's start. */
  reopenedAt?: number;
}

/** A scale-up decision of the pool: seconds from the run's start, and the nodes it ordered. */
export interface CauseScaleUp {
  at: number;
  count: number;
}

/** A node closed (`closed: true`) or reopened to new gears, seconds from the run's start. */
export interface NodeToggle {
  nodeId: string;
  at: number;
  closed: boolean;
}

export function emptyMoveCauses(): MoveCauses {
  return { total: 0, yesterday: 0, recent: 0, unchecked: 0, interruption: 0, manual: 0, unattributed: 0, firstDay: 0, afterScaleUp: 0, afterAttrition: 0, boughtBack: 0, repeatWithin7d: 0, drainsWithMoves: 0 };
}

/**
 * The basis a scale-down reason names (evaluate.ts writes the verdict's text into it). Yesterday's demand followed at
 * today's share of it (`followLevelFall`) is still that basis: read as none, its moves were counted as unchecked.
 */
export function payoffBasis(reason: string): 'yesterday' | 'recent' | undefined {
  if (/\(yesterday's demand[) ]/.test(reason)) return 'yesterday';
  if (reason.includes('(recent demand)')) return 'recent';
  return undefined;
}

/** The breakdown of `moves` by the drains that made them, the pool's scale-ups and its attrition toggles. */
export function moveCauses(moves: readonly CausedMove[], drains: readonly CauseDrain[], scaleUps: readonly CauseScaleUp[], toggles: readonly NodeToggle[]): MoveCauses {
  const causes = emptyMoveCauses();
  const drainsByNode = groupSorted(drains, (d) => d.nodeId, (d) => d.startedAt);
  const togglesByNode = groupSorted(toggles, (t) => t.nodeId, (t) => t.at);
  const ups = scaleUps.map((up) => up.at).sort((a, b) => a - b);
  const boughtBack = boughtBackDrains(drains, scaleUps);
  const lastMoveOfGear = new Map<number, number>();
  const drainsSeen = new Set<CauseDrain>();

  for (const move of [...moves].sort((a, b) => a.at - b.at)) {
    causes.total += 1;
    const previous = lastMoveOfGear.get(move.gear);
    if (previous !== undefined && move.at - previous <= WEEK_SECONDS) causes.repeatWithin7d += 1;
    lastMoveOfGear.set(move.gear, move.at);

    const drain = latestAtOrBefore(drainsByNode.get(move.from), move.at, (d) => d.startedAt);
    if (!drain) {
      causes.unattributed += 1;
      continue;
    }
    drainsSeen.add(drain);
    if (drain.kind === 'interruption' || drain.kind === 'redrain') causes.interruption += 1;
    else if (drain.kind === 'manual') causes.manual += 1;
    else causes[payoffBasis(drain.reason) ?? 'unchecked'] += 1;

    if (drain.startedAt < DAY_SECONDS) causes.firstDay += 1;
    const up = latestAtOrBefore(ups, drain.startedAt, (at) => at);
    if (up !== undefined && drain.startedAt - up <= SOON_AFTER_SCALE_UP_SECONDS) causes.afterScaleUp += 1;
    if (boughtBack.has(drain)) causes.boughtBack += 1;
    // Closed by attrition: the node's last toggle before its drain started closed it.
    const toggle = latestAtOrBefore(togglesByNode.get(drain.nodeId), drain.startedAt - 1e-6, (t) => t.at);
    if (toggle?.closed) causes.afterAttrition += 1;
  }
  causes.drainsWithMoves = drainsSeen.size;
  return causes;
}

/** Sums of several pools' breakdowns. */
export function addMoveCauses(parts: readonly MoveCauses[]): MoveCauses {
  const sum = emptyMoveCauses();
  for (const part of parts) for (const key of Object.keys(sum) as Array<keyof MoveCauses>) sum[key] += part[key];
  return sum;
}

/** One line for the suite: the causes, then the overlapping views. */
export function formatMoveCauses(c: MoveCauses): string {
  const causes = [
    `yesterday-basis drains ${c.yesterday}`,
    `recent-basis drains ${c.recent}`,
    ...(c.unchecked > 0 ? [`unchecked drains ${c.unchecked}`] : []),
    `interruptions ${c.interruption}`,
    ...(c.manual > 0 ? [`manual ${c.manual}`] : []),
    ...(c.unattributed > 0 ? [`no drain ${c.unattributed}`] : []),
  ];
  return (
    `moves ${c.total} by cause: ${causes.join(', ')}; of them first day ${c.firstDay}, ` +
    `<1h after a scale-up ${c.afterScaleUp}, bought back <4h ${c.boughtBack}, from attrition-closed nodes ${c.afterAttrition}, ` +
    `gear moved again within 7d ${c.repeatWithin7d}; ${c.drainsWithMoves} drains moved gears`
  );
}

function groupSorted<T>(items: readonly T[], key: (item: T) => string, at: (item: T) => number): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  for (const group of groups.values()) group.sort((a, b) => at(a) - at(b));
  return groups;
}

/** The scale-down drains whose node the pool bought back (file comment): the node level back to where it stood before each. */
function boughtBackDrains(drains: readonly CauseDrain[], scaleUps: readonly CauseScaleUp[]): Set<CauseDrain> {
  // Scale-ups first at one instant (they came before the drain), then the drains in their order; stable sort.
  const steps: Array<{ at: number; delta: number; drains?: CauseDrain; reopens?: CauseDrain }> = [
    ...scaleUps.map((up) => ({ at: up.at, delta: up.count })),
    ...drains.filter((d) => d.reopenedAt !== undefined && d.kind !== 'redrain').map((d) => ({ at: d.reopenedAt!, delta: 1, reopens: d })),
    ...drains.filter((d) => d.kind !== 'redrain').map((d) => ({ at: d.startedAt, delta: -1, drains: d })),
  ].sort((a, b) => a.at - b.at);
  const levels: number[] = [];
  let level = 0;
  for (const step of steps) levels.push((level += step.delta));
  const bought = new Set<CauseDrain>();
  steps.forEach((step, i) => {
    const drain = step.drains;
    if (drain?.kind !== 'scale-down') return;
    const before = levels[i]! + 1;
    let ownReopened = 0;
    for (let j = i + 1; j < steps.length && steps[j]!.at - drain.startedAt <= BOUGHT_BACK_SECONDS; j++) {
      if (steps[j]!.reopens === drain) ownReopened = 1;
      if (levels[j]! - ownReopened >= before) {
        bought.add(drain);
        return;
      }
    }
  });
  return bought;
}

/** The last item of `sorted` (by `at`) at or before `time`. */
function latestAtOrBefore<T>(sorted: readonly T[] | undefined, time: number, at: (item: T) => number): T | undefined {
  if (!sorted) return undefined;
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (at(sorted[mid]!) <= time) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 ? sorted[lo - 1] : undefined;
}
