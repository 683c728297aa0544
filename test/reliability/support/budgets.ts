/**
 * The disruption budget in the reliability suite: the budget a scenario
 * runs with, and the invariants it must keep under every fault: never more
 * scale-down drains holding nodes than maxDraining, never a gear moved by
 * scale-down or a renewal more often than maxMovesPerGear (a renewal past its
 * expireGrace or driftGrace aside), never a gear of a do-not-move application moved by
 * either. A drain made urgent (an EC2 interruption
 * or rebalance) and an operator's drain may move what they must.
 */
import fc from 'fast-check';
import { isRenewalDrain } from '../../../lib/domain/controls.js';
import type { DrainRecord, NodeRecord } from '../../../lib/domain/model.js';

/** A scenario without one keeps the suite's historical budget, DEFAULT_SCENARIO_BUDGET. */
export interface ScenarioBudget {
  /** A count, or a percentage of the pool as text. */
  maxDraining: number | string;
  maxMovesPerGear: number;
  /** How many of the world's first applications (app-1, app-2, ...) scale-down must not move. */
  doNotMoveApps: number;
}

/** Without a budget of its own, a scenario keeps the suite's historical one drain at a time. */
export const DEFAULT_SCENARIO_BUDGET: ScenarioBudget = { maxDraining: 1, maxMovesPerGear: 2, doNotMoveApps: 0 };

export const budgetArbitrary: fc.Arbitrary<ScenarioBudget> = fc.record({
  maxDraining: fc.constantFrom<number | string>(1, 2, 3, '50%'),
  maxMovesPerGear: fc.integer({ min: 1, max: 3 }),
  doNotMoveApps: fc.integer({ min: 0, max: 3 }),
});

const apps = (count: number) => Array.from({ length: count }, (_, i) => `app-${i + 1}`);

/** The scaleDown.budget section of the scenario's configuration. */
export function budgetConfig(budget: ScenarioBudget = DEFAULT_SCENARIO_BUDGET) {
  return { maxDraining: budget.maxDraining, maxMovesPerGear: budget.maxMovesPerGear, doNotMoveApps: apps(budget.doNotMoveApps) };
}

/** Most scale-down drains that may hold nodes at once, in a pool of at most `poolMax` nodes. */
function drainingBound(budget: ScenarioBudget, poolMax: number): number {
  if (typeof budget.maxDraining === 'number') return budget.maxDraining;
  return Math.max(1, Math.ceil((parseFloat(budget.maxDraining) * poolMax) / 100));
}

/** What a gear's moves are counted against beside the drains': the moves recorded before the scenario, and whether renewals are past their grace. */
export interface GearHistory {
  /** Moves of gears within 7 days before the scenario (scenario-config.ts priorGearMoves). */
  prior: ReadonlyMap<string, number>;
  /** The scenario's due nodes get past their grace (`scaleDown.expireGrace` or `driftGrace`): their renewals' drains may move gears at their limit (lib/domain/renewal-grace.ts); do-not-move still holds them. */
  renewalsUncapped: boolean;
}

const NO_HISTORY: GearHistory = { prior: new Map(), renewalsUncapped: false };

export function budgetViolations(
  at: string,
  budget: ScenarioBudget = DEFAULT_SCENARIO_BUDGET,
  poolMax: number,
  drains: readonly DrainRecord[],
  nodes: readonly NodeRecord[],
  history: GearHistory = NO_HISTORY,
): string[] {
  const { renewalsUncapped } = history;
  const violations: string[] = [];
  const byId = new Map(drains.map((drain) => [drain.drainId, drain]));
  const scaleDown = (drain: DrainRecord | undefined) => drain !== undefined && (drain.kind ?? 'scale-down') === 'scale-down';
  // A renewal's drain is nodescaler's own, held to the gear rules as a scale-down's (lib/domain/drain.ts isBudgeted).
  const budgeted = (drain: DrainRecord) => scaleDown(drain) || isRenewalDrain(drain);
  const capped = (drain: DrainRecord) => scaleDown(drain) || (isRenewalDrain(drain) && !renewalsUncapped);
  const holding = nodes.filter((node) => node.state === 'draining' && scaleDown(byId.get(node.drainId ?? ''))).length;
  const bound = drainingBound(budget, poolMax);
  if (holding > bound) violations.push(`${at}: ${holding} nodes draining for scale-down at once > maxDraining ${budget.maxDraining}`);

  const doNotMove = new Set(apps(budget.doNotMoveApps));
  for (const drain of drains) {
    if (!budgeted(drain) || drain.urgentSince !== undefined) continue;
    for (const move of drain.moves) {
      if (move.state === 'moved' && doNotMove.has(move.gear.app)) violations.push(`${at}: drain ${drain.drainId} moved gear ${move.gear.uuid} of do-not-move application ${move.gear.app}`);
    }
  }
  for (const [uuid, count] of budgetedMoves(drains, capped, history.prior)) {
    if (count > budget.maxMovesPerGear) violations.push(`${at}: gear ${uuid} moved ${count} times by scale-down and renewals > maxMovesPerGear ${budget.maxMovesPerGear}`);
  }
  return violations;
}

/**
 * Gears moved more often than maxMovesPerGear by scale-downs and renewals together: none, unless renewals past their
 * grace moved gears at their limit (what `renewalsUncapped` scenarios are there to reach).
 */
export function gearsMovedPastCap(budget: ScenarioBudget = DEFAULT_SCENARIO_BUDGET, drains: readonly DrainRecord[], prior: ReadonlyMap<string, number> = new Map()): number {
  const budgeted = (drain: DrainRecord) => (drain.kind ?? 'scale-down') === 'scale-down' || isRenewalDrain(drain);
  const moved = budgetedMoves(drains, budgeted, new Map());
  const total = budgetedMoves(drains, budgeted, prior);
  return [...moved.keys()].filter((uuid) => total.get(uuid)! > budget.maxMovesPerGear).length;
}

/** Each gear's moves before the scenario and its completed moves by the drains `counted` takes, urgent ones aside. */
function budgetedMoves(drains: readonly DrainRecord[], counted: (drain: DrainRecord) => boolean, prior: ReadonlyMap<string, number>): Map<string, number> {
  const moves = new Map<string, number>(prior);
  for (const drain of drains) {
    if (!counted(drain) || drain.urgentSince !== undefined) continue;
    for (const move of drain.moves) if (move.state === 'moved') moves.set(move.gear.uuid, (moves.get(move.gear.uuid) ?? 0) + 1);
  }
  return moves;
}
