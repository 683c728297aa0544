/**
 * The disruption budget in the reliability suite: the budget a scenario
 * runs with, and the invariants it must keep under every fault: never more
 * scale-down drains holding nodes than maxDraining, never a gear moved by
 * scale-down more often than maxMovesPerGear, never a gear of a do-not-move
 * application moved by scale-down. A drain made urgent (an EC2 interruption
 * or rebalance) and an operator's drain may move what they must.
 */
import fc from 'fast-check';
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

export function budgetViolations(at: string, budget: ScenarioBudget = DEFAULT_SCENARIO_BUDGET, poolMax: number, drains: readonly DrainRecord[], nodes: readonly NodeRecord[]): string[] {
  const violations: string[] = [];
  const byId = new Map(drains.map((drain) => [drain.drainId, drain]));
  const scaleDown = (drain: DrainRecord | undefined) => drain !== undefined && (drain.kind ?? 'scale-down') === 'scale-down';
  const holding = nodes.filter((node) => node.state === 'draining' && scaleDown(byId.get(node.drainId ?? ''))).length;
  const bound = drainingBound(budget, poolMax);
  if (holding > bound) violations.push(`${at}: ${holding} nodes draining for scale-down at once > maxDraining ${budget.maxDraining}`);

  const doNotMove = new Set(apps(budget.doNotMoveApps));
  const moves = new Map<string, number>();
  for (const drain of drains) {
    if (!scaleDown(drain) || drain.urgentSince !== undefined) continue;
    for (const move of drain.moves) {
      if (move.state !== 'moved') continue;
      if (doNotMove.has(move.gear.app)) violations.push(`${at}: drain ${drain.drainId} moved gear ${move.gear.uuid} of do-not-move application ${move.gear.app}`);
      moves.set(move.gear.uuid, (moves.get(move.gear.uuid) ?? 0) + 1);
    }
  }
  for (const [uuid, count] of moves) {
    if (count > budget.maxMovesPerGear) violations.push(`${at}: gear ${uuid} moved ${count} times by scale-down > maxMovesPerGear ${budget.maxMovesPerGear}`);
  }
  return violations;
}
