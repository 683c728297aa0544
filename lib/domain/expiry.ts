/**
 * Expiry (Karpenter's `expireAfter`): a node nodescaler launched longer ago
 * than `scaleDown.expireAfter` is due for renewal, as a drifted node is
 * (drift.ts). Hosts that live for months gather kernel updates never applied,
 * leaked memory and configuration edited by hand; operators roll them on a
 * schedule. Off by default: each renewal restarts the node's tenants.
 * Adopted nodes are never expired: when they were launched is not known
 * (their record says when nodescaler found them), as Karpenter expires only
 * the nodes it launched.
 *
 * A node due for renewal, for either reason, comes first among scale-down
 * candidates that restart as many tenants (candidates.ts); renewal.ts renews
 * due nodes of a pool that does not shrink. Pure functions of data.
 */
import { driftTest } from './drift.js';
import { formatDuration } from './duration.js';
import type { NodeRecord } from './model.js';

type Dated = Pick<NodeRecord, 'origin' | 'createdAt'>;
type ExpirySetting = { expireAfter?: number | 'never' | undefined };

/** A pool's expireAfter in milliseconds (its own, else scaleDown's); undefined when its nodes never expire. */
export function expireAfterOf(scaleDown: ExpirySetting, pool: ExpirySetting | undefined): number | undefined {
  const value = pool?.expireAfter ?? scaleDown.expireAfter;
  return value === 'never' ? undefined : value;
}

/** Why the node is expired (launched by nodescaler at least `expireAfterMs` before `nowMs`), or undefined; never with no `expireAfterMs`. */
export function expiryTest(expireAfterMs: number | undefined, nowMs: number): (node: Dated) => string | undefined {
  if (expireAfterMs === undefined) return () => undefined;
  return (node) => {
    if (node.origin !== 'provisioned') return undefined;
    const launched = Date.parse(node.createdAt);
    if (!Number.isFinite(launched) || nowMs - launched < expireAfterMs) return undefined;
    return `expired: launched ${formatDuration(floorToMinute(nowMs - launched))} ago (expireAfter ${formatDuration(expireAfterMs)})`;
  };
}

/**
 * When an expired node's renewal stops honouring the gear cap (maxMovesPerGear): `expireGrace` past its expiry, or
 * undefined (no expiry, no grace, or a node never expired: adopted, its launch unknown). A gear the cap holds stays
 * put at most a week, and a node holds ~100 gears, so without a grace an expired node nearly always holds one at its
 * limit (Azure's cpu column, 30 days at expireAfter 10d: up to 61 h past it, 11,873 minutes of renewals held).
 */
export function expireGraceEnds(node: Dated, expireAfterMs: number | undefined, graceMs: number | undefined): number | undefined {
  if (expireAfterMs === undefined || graceMs === undefined || node.origin !== 'provisioned') return undefined;
  const launched = Date.parse(node.createdAt);
  return Number.isFinite(launched) ? launched + expireAfterMs + graceMs : undefined;
}

/** Ages in reasons read to the minute: `30d2h5m`, not `30d2h5m17s412ms`. */
function floorToMinute(ms: number): number {
  return Math.floor(ms / 60_000) * 60_000;
}

export interface RenewalDueRules {
  /** The pool's template; without it no node is called drifted. */
  template?: Parameters<typeof driftTest>[0];
  expireAfter: number | undefined;
  nowMs: number;
  /** Whether drift makes a node due (scale-down's order: always; renewal: only with `scaleDown.renewDrifted`). */
  drift: boolean;
}

/** Why a node is due for renewal (drifted first, then expired), or undefined when it is not. */
export function renewalDueTest(rules: RenewalDueRules): (node: Pick<NodeRecord, 'launchedFrom' | 'instanceType'> & Dated) => string | undefined {
  const drifted = rules.drift && rules.template ? driftTest(rules.template) : undefined;
  const expired = expiryTest(rules.expireAfter, rules.nowMs);
  return (node) => drifted?.(node) ?? expired(node);
}
