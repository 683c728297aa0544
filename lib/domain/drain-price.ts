/**
 * A scale-down is priced on the chosen node's last stats report, and the
 * broker places new gears mostly on the emptiest nodes (origin-server draws
 * among the nodes at most about average-full, weighted toward the emptiest):
 * the very nodes a least-disruption drain picks. A node that joined empty was
 * chosen for its 0 gears and closed a minute later holding 80 new ones (noisy
 * flat, hosts that boot in 10 minutes): 80 tenant restarts under a decision
 * that said "no moves". So the decision carries its price: the gears it saw, and the
 * most the node may hold when its drain starts for it still to come first
 * in the candidate order (before the next node in that order). The gear
 * mover lists the node's gears before it closes the node, and again before
 * the first plan; past the limit it lists the next node's too, as the
 * broker fills the emptiest nodes together (at 20,000 gears a 5-minute
 * step raised every chosen node of a decision and the next ones alike, by
 * 10 to 20 gears: priced against the next node's report, those drains were
 * called off and the same nodes chosen again). Past the limit raised by what
 * the next node gained, the drain is called off, with nothing moved, and the
 * evaluator decides again on fresh stats. Karpenter re-validates a
 * consolidation the same way before it disrupts.
 *
 * Gears that reached the node since its report are of unknown kind, so they
 * count as disruptive moves (as candidates.ts counts gears of unknown kind).
 *
 * Pure functions of data.
 */
import type { CandidateStrategy } from '../config/index.js';
import type { DrainPrice } from './model.js';

export type { DrainPrice };

/** A decision's price of one of the nodes it drains. */
export interface NodePrice extends DrainPrice {
  nodeId: string;
}

/** What the candidate order compares of a node. */
export interface PricedNode {
  nodeId: string;
  gears: number;
  /** Moves that restart a tenant. */
  disruptive: number;
  /** Gear slots (maxActiveGears). */
  max: number;
  /** Due for renewal (drifted or expired, expiry.ts): comes first among nodes level on disruptive moves. */
  due?: boolean;
}

/**
 * The price of draining `chosen` rather than `next` (the node after it in
 * `strategy`'s order): undefined when there is no next node, or when gear
 * counts do not order the strategy (`oldest`, `newest`).
 */
export function drainPrice(strategy: CandidateStrategy, chosen: PricedNode, next: PricedNode | undefined): DrainPrice | undefined {
  if (!next) return undefined;
  const extra = extraGearsAllowed(strategy, chosen, next);
  if (extra === undefined) return undefined;
  return { gears: chosen.gears, limit: chosen.gears + Math.max(0, extra), next: next.nodeId, nextGears: next.gears };
}

/** The new gears (each a disruptive move) `chosen` may take and still not come after `next`; ties stand. */
function extraGearsAllowed(strategy: CandidateStrategy, chosen: PricedNode, next: PricedNode): number | undefined {
  switch (strategy) {
    case 'least-disruption': {
      const margin = next.disruptive - chosen.disruptive;
      if (margin < 0) return 0;
      // Level on disruptive moves, being due for renewal decides, then the gear count.
      const chosenDue = chosen.due === true;
      if (chosenDue !== (next.due === true)) return chosenDue ? margin : margin - 1;
      return chosen.gears + margin <= next.gears ? margin : margin - 1;
    }
    case 'least-gears':
      return next.gears - chosen.gears;
    case 'least-utilized':
      if (chosen.max <= 0 || next.max <= 0) return undefined;
      return Math.floor((next.gears / next.max) * chosen.max + 1e-9) - chosen.gears;
    default:
      return undefined;
  }
}

/** The price a decision set on `nodeId`, if any. */
export function priceOf(prices: readonly NodePrice[] | undefined, nodeId: string): DrainPrice | undefined {
  const found = prices?.find((price) => price.nodeId === nodeId);
  return found ? { gears: found.gears, limit: found.limit, next: found.next, nextGears: found.nextGears } : undefined;
}

/**
 * Why a scale-down drain no longer stands now that the platform lists
 * `listed` gears on its node and `nextListed` on the next node (undefined:
 * not listed, as the decision saw it), or undefined while it does. Each gear
 * the next node gained raises the limit by one (a disruptive move on it too).
 */
export function repricedReason(price: DrainPrice | undefined, nodeId: string, listed: number, nextListed?: number): string | undefined {
  if (!price || listed <= price.limit) return undefined;
  const gained = Math.max(0, (nextListed ?? price.nextGears) - price.nextGears);
  const limit = price.limit + gained;
  if (listed <= limit) return undefined;
  const nextNow = nextListed === undefined ? `${price.next} held ${price.nextGears}` : `${price.next} holds ${nextListed}`;
  return `repriced: ${nodeId} holds ${listed} gears, the decision priced ${price.gears} and ${nextNow}; past ${limit} it no longer comes before ${price.next}: the evaluator decides again`;
}
