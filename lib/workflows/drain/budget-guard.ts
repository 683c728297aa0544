/**
 * The gear mover's side of the disruption budget (lib/domain/budget.ts):
 * before a scale-down drain closes its node (ending.ts, begin), the gears the
 * platform lists on it are checked against the budget (do-not-move flag and
 * applications, moves in the last 7 days), since the evaluator saw only the
 * gears the node's stats listed; again before the first plan (moving.ts),
 * for gears that reached the node between that check and its close (a new
 * gear of a do-not-move application, a gear another drain's move brought to
 * its limit); and every completed move is recorded in the gear's move
 * history. A renewal's drain (lib/domain/renewal.ts) is checked as a
 * scale-down's, except that a node past its `scaleDown.expireGrace` or
 * `scaleDown.driftGrace` (renewal-grace.ts) has its gears' move limit lifted
 * (do-not-move still holds). An operator's, an urgent or a handed-back drain moves
 * what it must, and is not checked.
 */
import { GEAR_MOVE_WINDOW_MS, gearsRefused, poolBudget, withoutGearCap } from '../../domain/budget.js';
import { isRenewalDrain } from '../../domain/controls.js';
import { templateAtRead } from '../../domain/drift.js';
import { describeGears, isBudgeted } from '../../domain/drain.js';
import type { DrainRecord, GearInfo, GearMove, NodeRecord } from '../../domain/model.js';
import { withAgentFlags } from '../../domain/node-stats.js';
import { poolCapLiftTest } from '../../domain/renewal-grace.js';
import type { GearMoveRecord } from '../../ports/state-store.js';
import { poolConfigOf, type DrainContext } from './context.js';

/** Why this drain must not move these gears (checked before the close and before the first plan), or undefined. */
export async function budgetRefusal(ctx: DrainContext, drain: DrainRecord, node: NodeRecord, listed: readonly GearInfo[]): Promise<string | undefined> {
  if (drain.plannedAt || !isBudgeted(drain) || listed.length === 0) return undefined;
  // The platform may not know a gear's do-not-move flag; the node's agent reported it with its stats.
  const onNode = withAgentFlags(listed, node);
  const poolConfig = poolConfigOf(ctx, drain.pool);
  const now = ctx.ports.clock.now();
  const pastGrace = isRenewalDrain(drain) && (await pastRenewalGrace(ctx, drain.pool, node, now));
  const budget = pastGrace ? withoutGearCap(poolBudget(ctx.config, poolConfig)) : poolBudget(ctx.config, poolConfig);
  const history = await ctx.ports.store.getGearMoves(onNode.map((gear) => gear.uuid));
  const refused = gearsRefused(budget, onNode, history, now);
  if (refused.length === 0) return undefined;
  return `disruption budget: ${refused[0]!.reason}${refused.length > 1 ? ` (and ${refused.length - 1} more gear(s): ${describeGears(refused.slice(1).map((r) => r.gear), 3)})` : ''}`;
}

/**
 * Whether the renewal's node is past its grace now. Read from the node's own record, the pool record (when its
 * template was first seen, at the version the evaluator last read) and the configuration, never from the message:
 * nothing a sender writes lifts the cap.
 */
async function pastRenewalGrace(ctx: DrainContext, poolId: string, node: NodeRecord, now: Date): Promise<boolean> {
  const poolConfig = poolConfigOf(ctx, poolId);
  const { scaleDown } = ctx.config;
  const driftGrace = scaleDown.renewDrifted ? scaleDown.driftGrace : undefined;
  const pool = driftGrace === undefined || !poolConfig ? undefined : await ctx.ports.store.getPool(poolId);
  const template = pool && poolConfig ? templateAtRead(poolConfig.template, pool.launchTemplateRead) : undefined;
  const lift = poolCapLiftTest(scaleDown, poolConfig, template, pool ?? {})(node);
  return lift !== undefined && lift.atMs <= now.getTime();
}

/** Records the moves that just completed in their gears' history (idempotent per drain and attempt). */
export async function recordMoves(ctx: DrainContext, drain: DrainRecord, moved: readonly GearMove[]): Promise<void> {
  if (moved.length === 0) return;
  // The attempt's start, not now: a retried step records the very same entry.
  const now = ctx.ports.clock.now().toISOString();
  const records: GearMoveRecord[] = moved.map((move) => ({ uuid: move.gear.uuid, at: move.startedAt ?? now, key: `${drain.drainId}#${move.attempts}` }));
  await ctx.ports.store.recordGearMoves(records, GEAR_MOVE_WINDOW_MS);
}
