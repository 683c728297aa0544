/**
 * The gear mover's side of a scale-down's price (lib/domain/drain-price.ts):
 * before the close and before the first plan, the gears the platform lists on
 * the node are held against the price; past its limit the next node's gears
 * are listed too, as the broker fills the emptiest nodes together. An
 * operator's, an urgent or a handed-back drain carries no price.
 */
import { repricedReason } from '../../domain/drain-price.js';
import { drainKind, isUrgent } from '../../domain/drain.js';
import type { DrainRecord, GearInfo } from '../../domain/model.js';
import { slotHolders, withAgentFlags } from '../../domain/node-stats.js';
import { NotFoundError } from '../../errors.js';
import type { DrainContext } from './context.js';

/**
 * Why this scale-down drain no longer stands, its node listing `listed`
 * gears (with its agent's flags, `withAgentFlags`), or undefined. The price
 * counts the agent's `activeGears`, so only the listed gears that hold a slot
 * are held against it: idle ones are neither priced nor counted. Throws what
 * the platform or the store throws for the next node, except NotFoundError
 * (a next node gone leaves the price as decided).
 */
export async function repriceRefusal(ctx: DrainContext, drain: DrainRecord, listed: readonly GearInfo[]): Promise<string | undefined> {
  const price = drain.price;
  if (!price || drain.plannedAt || drainKind(drain) !== 'scale-down' || isUrgent(drain)) return undefined;
  const holding = slotHolders(listed);
  if (holding <= price.limit) return undefined;
  let nextListed: number | undefined;
  try {
    const nextGears = await ctx.ports.platform.listGears(price.next);
    const nextNode = await ctx.ports.store.getNode(price.next);
    nextListed = slotHolders(withAgentFlags(nextGears, nextNode ?? {}));
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
  }
  return repricedReason(price, drain.nodeId, holding, nextListed);
}
