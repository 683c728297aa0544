/**
 * The disruption budget: how much tenant disruption scale-down may cause.
 * Each gear move restarts a gear, so, as Karpenter's disruption budgets and
 * do-not-disrupt annotation do for consolidation, scale-down is held back by:
 *   - maxDraining: nodes of the pool draining at once (count or % of the pool,
 *     rounded up, at least 1; default 10 %);
 *   - maxDrainsPerHour: drains started in any rolling hour;
 *   - windows: the times scale-down may start (cron + duration, UTC), and
 *     renewalWindows: the times within them a renewal may start (renewal.ts);
 *   - maxMovesPerGear: moves of one gear in a rolling 7 days (default 2): a
 *     node holding a gear at its limit is not a candidate;
 *   - doNotMoveApps and a gear's own doNotMove flag: a node holding such a
 *     gear is not a candidate.
 * Only scale-down is bounded: an operator's drain and an urgent one (the host
 * is going away) still move what they must. Pure functions of data; the
 * evaluator (lib/domain/evaluate.ts) and the gear mover (lib/workflows/drain)
 * call them, `explain` lists every check.
 */
import type { MaxDraining } from '../config/budget-schema.js';
import type { Config, PoolConfig } from '../config/index.js';
import type { PoolEvaluationInput } from './decision.js';
import { lastProgressAt } from './drain.js';
import type { DrainRecord, GearInfo, NodeRecord, NodeState, PoolRecord } from './model.js';
import { nextCronMatch, scheduleActiveAt } from './schedule.js';

/** The rolling window of maxMovesPerGear, and how long a gear's move history is kept. */
export const GEAR_MOVE_WINDOW_MS = 7 * 86_400_000;
const HOUR_MS = 3_600_000;
const DEFAULT_MAX_DRAINING: MaxDraining = { percent: 10 };
/** Nodes that make up the pool for a percentage of it. */
const IN_POOL: ReadonlySet<NodeState> = new Set<NodeState>(['provisioning', 'active', 'draining']);

export interface ScaleDownWindow {
  cron: string;
  /** ms */
  for: number;
}

export interface DisruptionBudget {
  maxDraining: MaxDraining;
  maxDrainsPerHour?: number;
  maxMovesPerGear: number;
  windows: readonly ScaleDownWindow[];
  renewalWindows: readonly ScaleDownWindow[];
  doNotMoveApps: readonly string[];
}

type BudgetConfig = { scaleDown: Pick<Config['scaleDown'], 'budget' | 'maxConcurrentDrains' | 'drainTimeout'> };

/** The pool's budget: its own keys over scaleDown.budget's; the old maxConcurrentDrains stands for maxDraining. */
export function poolBudget(config: BudgetConfig, poolConfig: Pick<PoolConfig, 'budget'> | undefined): DisruptionBudget {
  const global = config.scaleDown.budget;
  const own = poolConfig?.budget ?? {};
  const legacy = config.scaleDown.maxConcurrentDrains;
  return {
    maxDraining: own.maxDraining ?? global.maxDraining ?? (legacy !== undefined ? { nodes: legacy } : DEFAULT_MAX_DRAINING),
    ...((own.maxDrainsPerHour ?? global.maxDrainsPerHour) !== undefined ? { maxDrainsPerHour: own.maxDrainsPerHour ?? global.maxDrainsPerHour } : {}),
    maxMovesPerGear: own.maxMovesPerGear ?? global.maxMovesPerGear,
    windows: own.windows ?? global.windows,
    renewalWindows: own.renewalWindows ?? global.renewalWindows,
    doNotMoveApps: own.doNotMoveApps ?? global.doNotMoveApps,
  };
}

/** Nodes allowed to drain at once in a pool of `poolNodes` nodes: a percentage is rounded up, and is at least 1. */
export function maxDrainingNodes(budget: Pick<DisruptionBudget, 'maxDraining'>, poolNodes: number): number {
  return nodesOf(budget.maxDraining, poolNodes);
}

/** A count, or a percentage of `poolNodes` rounded up and at least 1. */
export function nodesOf(limit: MaxDraining, poolNodes: number): number {
  if ('nodes' in limit) return limit.nodes;
  return Math.max(1, Math.ceil((limit.percent * poolNodes) / 100 - 1e-9));
}

/**
 * Most nodes one scale-up decision adds to a pool of `poolNodes` nodes:
 * scaleUp.maxNodesPerDecision, a count or a share of the pool; by default 10,
 * or the pool's size when it doubles because demand outran the boot delay again.
 * (A default of 10 % of the pool was tried: at 200,000 gears the forecast's
 * start-of-run trend then added 200 nodes a decision, up to 2,738 nodes for a
 * 2,000-node peak, 1.32 x clairvoyant-4h's node-hours against 1.06.)
 */
export function maxNodesPerDecision(limit: MaxDraining | undefined, poolNodes: number, doubling = false): number {
  // A pool that stayed full after a full-pool scale-up doubles (lib/domain/scale-up.ts): unset, the cap lets it.
  if (limit === undefined) return doubling ? Math.max(10, poolNodes) : 10;
  return nodesOf(limit, poolNodes);
}

export function maxDrainingText(budget: Pick<DisruptionBudget, 'maxDraining'>, poolNodes: number): string {
  const limit = budget.maxDraining;
  return 'nodes' in limit ? `maxDraining=${limit.nodes}` : `maxDraining=${limit.percent}% of ${poolNodes} nodes = ${maxDrainingNodes(budget, poolNodes)}`;
}

/**
 * The drains a pool may have at once and the setting that says so, for a
 * refusal: `scaleDown.maxConcurrentDrains=1` where the old key is in use,
 * else `scaleDown.budget.maxDraining=10% of 20 nodes = 2`.
 */
export function drainingLimit(config: BudgetConfig, poolConfig: Pick<PoolConfig, 'budget'> | undefined, poolNodes: number): { limit: number; setting: string } {
  const budget = poolBudget(config, poolConfig);
  const legacy = config.scaleDown.maxConcurrentDrains;
  const fromLegacy = legacy !== undefined && poolConfig?.budget?.maxDraining === undefined && config.scaleDown.budget.maxDraining === undefined;
  const setting = fromLegacy ? `scaleDown.maxConcurrentDrains=${legacy}` : `scaleDown.budget.${maxDrainingText(budget, poolNodes)}`;
  return { limit: maxDrainingNodes(budget, poolNodes), setting };
}

/** The pool's nodes that count for a percentage: provisioning, active, draining. */
export function poolSize(nodes: readonly Pick<NodeRecord, 'state'>[]): number {
  let size = 0;
  for (const node of nodes) if (IN_POOL.has(node.state)) size++;
  return size;
}

/** Drains in progress: active drain records, or draining nodes, whichever is more. */
export function drainsInProgress(nodes: readonly Pick<NodeRecord, 'state'>[], drains: readonly Pick<DrainRecord, 'state'>[]): number {
  let active = 0;
  for (const drain of drains) if (drain.state === 'active') active++;
  let draining = 0;
  for (const node of nodes) if (node.state === 'draining') draining++;
  return Math.max(active, draining);
}

/** One budget condition of a scale-down, for the evaluator's reason and `explain`. */
export interface BudgetCheck {
  /** The setting, e.g. `scaleDown.budget.maxDraining`. */
  name: string;
  ok: boolean;
  detail: string;
  /** When it stops standing in the way (ISO), when that is a time. */
  until?: string;
}

export interface BudgetInput {
  config: BudgetConfig;
  poolConfig: Pick<PoolConfig, 'budget'> | undefined;
  now: Date;
  nodes: readonly NodeRecord[];
  drains: readonly DrainRecord[];
  pool: Pick<PoolRecord, 'scaleDownsAt'>;
}

/**
 * Nodes one scale-down decision may drain: half the drains maxDraining allows the pool at once (rounded up), within
 * what maxDraining and maxDrainsPerHour have left. The evaluator decides once an evaluation, so one node a decision
 * is a fixed pace while a pool's excess grows with its size: a 20-node pool sheds a burst's 14 nodes in 14
 * evaluations, a 200-node pool its 140 in 140 (held-out s2-3 at 20,000 gears: 1.109 x clairvoyant-4h's node-hours,
 * 1.048 at 2,000). Half the concurrent budget keeps the pace of a pool of 20 (maxDraining 2, one a decision) at any
 * size: the budget fills in two decisions whatever its size.
 */
export function drainsPerDecision(input: BudgetInput): number {
  return Math.min(MAX_DRAINS_PER_DECISION, drainsAllowed(input));
}

/** Most nodes one decision drains (its message names them all, lib/messages/schemas.ts): far above any budget's half (maxDraining of a 2,000-node pool at 10 % is 200). */
export const MAX_DRAINS_PER_DECISION = 100;

/**
 * The pool's pace: nodes one evaluation may start draining, and attrition may close (attrition.ts), before what is
 * in progress: half of maxDraining, rounded up (one up to 20 nodes at the default 10 %).
 */
export function nodesPerEvaluation(config: BudgetConfig, poolConfig: Pick<PoolConfig, 'budget'> | undefined, poolNodes: number): number {
  return Math.max(1, Math.ceil(drainingLimit(config, poolConfig, poolNodes).limit / 2));
}

function drainsAllowed(input: BudgetInput): number {
  const { config, nodes, drains } = input;
  const budget = poolBudget(config, input.poolConfig);
  const { limit } = drainingLimit(config, input.poolConfig, poolSize(nodes));
  let count = Math.min(nodesPerEvaluation(config, input.poolConfig, poolSize(nodes)), limit - drainsInProgress(nodes, drains));
  if (budget.maxDrainsPerHour !== undefined) {
    count = Math.min(count, budget.maxDrainsPerHour - recentScaleDowns(input.pool.scaleDownsAt, input.now.getTime()).length);
  }
  return Math.max(1, count);
}

/** Every pool-wide budget check of a scale-down, in order: maxDraining, maxDrainsPerHour, windows. */
export function scaleDownBudgetChecks(input: BudgetInput): BudgetCheck[] {
  const { config, now, nodes, drains } = input;
  const budget = poolBudget(config, input.poolConfig);
  const nowMs = now.getTime();
  const checks: BudgetCheck[] = [];

  const { limit, setting } = drainingLimit(config, input.poolConfig, poolSize(nodes));
  const inProgress = drainsInProgress(nodes, drains);
  const draining: BudgetCheck = { name: 'scaleDown.budget.maxDraining', ok: inProgress < limit, detail: `${inProgress} of ${limit} drains in progress (${setting})` };
  if (!draining.ok) {
    // The earliest a drain in progress must end if it moves no more gears: drainTimeout after its last progress.
    const timeout = config.scaleDown.drainTimeout;
    const ends = drains.filter((d) => d.state === 'active').map((d) => lastProgressAt(d) + timeout).filter(Number.isFinite);
    if (ends.length > 0) {
      draining.until = iso(Math.max(nowMs, Math.min(...ends)));
      draining.detail += '; frees up when a drain ends (or stalls for drainTimeout)';
    } else {
      draining.detail += '; frees up when a drain ends';
    }
  }
  checks.push(draining);

  if (budget.maxDrainsPerHour !== undefined) {
    const recent = recentScaleDowns(input.pool.scaleDownsAt, nowMs);
    const ok = recent.length < budget.maxDrainsPerHour;
    const check: BudgetCheck = {
      name: 'scaleDown.budget.maxDrainsPerHour',
      ok,
      detail: `${recent.length} of ${budget.maxDrainsPerHour} drains started in the last hour`,
    };
    if (!ok) check.until = iso(Date.parse(recent[recent.length - budget.maxDrainsPerHour]!) + HOUR_MS);
    checks.push(check);
  }

  if (budget.windows.length > 0) checks.push(windowCheck(budget.windows, now));
  return checks;
}

/** Whether scale-down (or, with `renewalWindows`, a renewal) may start now under its windows, and when the next window opens if not. */
export function windowCheck(windows: readonly ScaleDownWindow[], now: Date, which: 'windows' | 'renewalWindows' = 'windows'): BudgetCheck {
  const name = `scaleDown.budget.${which}`;
  for (const window of windows) {
    const end = scheduleActiveAt({ ...window, min: 0 }, now);
    if (end !== undefined) return { name, ok: true, detail: `inside window "${window.cron}" until ${end}` };
  }
  const starts = windows.map((window) => nextCronMatch(window.cron, now.getTime())).filter((t): t is number => t !== undefined);
  const next = starts.length > 0 ? Math.min(...starts) : undefined;
  return {
    name,
    ok: false,
    detail: `outside every ${which === 'windows' ? 'scale-down' : 'renewal'} window (${windows.map((w) => `"${w.cron}"`).join(', ')})`,
    ...(next !== undefined ? { until: iso(next) } : {}),
  };
}

/** The last hour's scale-down times, oldest first. */
export function recentScaleDowns(times: readonly string[] | undefined, nowMs: number): string[] {
  return (times ?? []).filter((at) => {
    const t = Date.parse(at);
    return t > nowMs - HOUR_MS && t <= nowMs;
  }).sort();
}

/** The pool's scale-down times after one more now: the last hour's, so the record stays small. */
export function withScaleDown(times: readonly string[] | undefined, now: Date, count = 1): string[] {
  return [...recentScaleDowns(times, now.getTime()), ...Array.from({ length: Math.max(1, count) }, () => now.toISOString())];
}

/** A gear's scale-down moves within the rolling 7 days before `nowMs`, oldest first. */
export function recentMoves(times: readonly string[] | undefined, nowMs: number): string[] {
  return (times ?? []).filter((at) => {
    const t = Date.parse(at);
    return t > nowMs - GEAR_MOVE_WINDOW_MS && t <= nowMs;
  }).sort();
}

/** Why scale-down must not move this gear, or undefined: its flag, its application, its moves this week. */
export function gearRefusal(budget: DisruptionBudget, gear: GearInfo, history: readonly string[] | undefined, nowMs: number): string | undefined {
  if (gear.doNotMove) return `gear ${gear.uuid} (${gear.app}) is marked do-not-move`;
  if (budget.doNotMoveApps.includes(gear.app)) return `gear ${gear.uuid} belongs to ${gear.app} (scaleDown.budget.doNotMoveApps)`;
  const moves = recentMoves(history, nowMs);
  if (moves.length >= budget.maxMovesPerGear) {
    const frees = Date.parse(moves[moves.length - budget.maxMovesPerGear]!) + GEAR_MOVE_WINDOW_MS;
    return `gear ${gear.uuid} (${gear.app}) moved ${moves.length} times in 7 d (maxMovesPerGear=${budget.maxMovesPerGear}) until ${iso(frees)}`;
  }
  return undefined;
}

/**
 * Why this node must not be drained for scale-down, or undefined, from the
 * gears its stats list: the first gear scale-down must not move; with
 * `final`, also a gear whose move history was not read, and a node holding
 * gears that were never listed (the gear mover would check them, and refuse
 * the drain after closing the node).
 */
export function candidateRefusal(
  budget: DisruptionBudget,
  node: Pick<NodeRecord, 'stats'>,
  moveHistory: ReadonlyMap<string, readonly string[]> | undefined,
  now: Date,
  final = false,
): string | undefined {
  const gears = node.stats?.gears;
  if (!gears) {
    const held = node.stats?.activeGears ?? 0;
    return final && moveHistory !== undefined && held > 0 ? `its ${held} gears not listed in this evaluation (maxMovesPerGear, do-not-move)` : undefined;
  }
  const nowMs = now.getTime();
  let unread = 0;
  for (const gear of gears) {
    const history = moveHistory?.get(gear.uuid);
    if (history === undefined && moveHistory !== undefined) unread++;
    const refusal = gearRefusal(budget, gear, history, nowMs);
    if (refusal) return refusal;
  }
  if (final && unread > 0 && Number.isFinite(budget.maxMovesPerGear)) return `move history of ${unread} of its gears not read in this evaluation (maxMovesPerGear)`;
  return undefined;
}

/** The gears of a drain's plan scale-down must not move, each with why (the gear mover's check before its first move). */
export function gearsRefused(budget: DisruptionBudget, gears: readonly GearInfo[], history: ReadonlyMap<string, readonly string[]>, now: Date): Array<{ gear: GearInfo; reason: string }> {
  const refused: Array<{ gear: GearInfo; reason: string }> = [];
  for (const gear of gears) {
    const reason = gearRefusal(budget, gear, history.get(gear.uuid), now.getTime());
    if (reason) refused.push({ gear, reason });
  }
  return refused;
}

/** The budget without its gear cap: a due node's renewal past its grace (renewal-grace.ts) moves gears at their limit. */
export function withoutGearCap(budget: DisruptionBudget): DisruptionBudget {
  return { ...budget, maxMovesPerGear: Number.POSITIVE_INFINITY };
}

export interface ScaleDownBudget {
  /** The budget that holds every scale-down of the pool back now, if any. */
  blocked?: BudgetCheck;
  /** Why a node may not be the candidate (do-not-move gears, gears at their move limit), or undefined. */
  refuse: (node: NodeRecord) => string | undefined;
  /** As `refuse`, the gear cap left out (do-not-move gears only): for a renewal past its grace (renewal-grace.ts). */
  refuseUncapped: (node: NodeRecord) => string | undefined;
}

/** The evaluator's one call: is scale-down within the budget now, and which nodes it may not drain. */
export function scaleDownBudget(input: PoolEvaluationInput): ScaleDownBudget {
  const { config, poolConfig, now } = input;
  const budget = poolBudget(config, poolConfig);
  const checks = scaleDownBudgetChecks({ config, poolConfig, now, nodes: input.nodes, drains: input.drains, pool: input.pool });
  const blocked = checks.find((check) => !check.ok);
  const refuse = (node: NodeRecord) => input.knownRefusals?.get(node.nodeId) ?? candidateRefusal(budget, node, input.moveHistory, now, input.moveHistoryFinal);
  // Known refusals may be a gear at its limit: the node's listed gears are checked again, do-not-move only.
  const refuseUncapped = (node: NodeRecord) => candidateRefusal(withoutGearCap(budget), node, input.moveHistory, now, input.moveHistoryFinal);
  return blocked ? { blocked, refuse, refuseUncapped } : { refuse, refuseUncapped };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
