/**
 * The gear mover's side of a scale-down's price (lib/domain/drain-price.ts):
 * before the close and before the first plan, the gears the platform lists on
 * the node are held against the price; past its limit the next node's gears
 * are listed too, as the broker fills the emptiest nodes together. An
 * operator's, an urgent or a handed-back drain carries no price.
 */
import { repricedReason } from '../../domain/drain-price.js';
import { drainKind, isUrgent } from '../../domain/drain.js';
import type { DrainRecord } from '../../domain/model.js';
import { NotFoundError } from '../../errors.js';
import type { DrainContext } from './context.js';

/**
 * Why this scale-down drain no longer stands, its node listing `listed`
 * gears, or undefined. Throws what the platform throws for the next node,
 * except NotFoundError (a next node gone leaves the price as decided).
 */
export async function repriceRefusal(ctx: DrainContext, drain: DrainRecord, listed: number): Promise<string | undefined> {
  const price = drain.price;
  if (!price || drain.plannedAt || drainKind(drain) !== 'scale-down' || isUrgent(drain)) return undefined;
  if (listed <= price.limit) return undefined;
  let nextListed: number | undefined;
  try {
    nextListed = (await ctx.ports.platform.listGears(price.next)).length;
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
  }
  return repricedReason(price, drain.nodeId, listed, nextListed);
}
