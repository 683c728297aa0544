/**
 * How long the gear cap (budget.maxMovesPerGear) may hold a node due for renewal. A node of ~100 gears nearly always
 * holds one at its limit, and a gear stays at it up to a week, so without a bound a due node waits up to a week more.
 * As Karpenter's terminationGracePeriod bounds what holds a node it disrupts, a grace past the moment a node became
 * due lifts the cap for its renewal: `scaleDown.expireGrace` past its expiry, `scaleDown.driftGrace` past the time it
 * was first seen drifted (drift.ts `driftedSinceTest`). Do-not-move gears still hold it. Read from the node's own
 * record, the pool record and the configuration only. Pure functions of data.
 */
import type { Config, PoolConfig } from '../config/index.js';
import { driftedSinceTest } from './drift.js';
import { expireAfterOf, expireGraceEnds } from './expiry.js';
import type { NodeRecord, PoolRecord } from './model.js';

export interface CapLift {
  /** When the cap stops holding the node (epoch ms). */
  atMs: number;
  /** The setting that lifts it, and its value in ms. */
  setting: 'scaleDown.expireGrace' | 'scaleDown.driftGrace';
  graceMs: number;
}

export interface CapLiftRules {
  expireAfter: number | undefined;
  expireGrace: number | undefined;
  driftGrace: number | undefined;
  /** The pool's template as read now; without it (or without driftGrace) drift lifts nothing. */
  template?: Parameters<typeof driftedSinceTest>[0];
  pool: Pick<PoolRecord, 'templateSeen'>;
}

type GracedNode = Pick<NodeRecord, 'origin' | 'createdAt' | 'launchedFrom' | 'instanceType'>;

/**
 * `capLiftTest` with the pool's settings: its expireAfter and scaleDown's graces, driftGrace only where drifted
 * nodes are renewed (`renewDrifted`). `template` is the pool's template as read now (its launch template's version
 * resolved), as `templateSeen` was written from it.
 */
export function poolCapLiftTest(
  scaleDown: Pick<Config['scaleDown'], 'expireAfter' | 'expireGrace' | 'driftGrace' | 'renewDrifted'>,
  poolConfig: Pick<PoolConfig, 'expireAfter'> | undefined,
  template: CapLiftRules['template'],
  pool: Pick<PoolRecord, 'templateSeen'>,
): (node: GracedNode) => CapLift | undefined {
  return capLiftTest({
    expireAfter: expireAfterOf(scaleDown, poolConfig),
    expireGrace: scaleDown.expireGrace,
    driftGrace: scaleDown.renewDrifted ? scaleDown.driftGrace : undefined,
    ...(template ? { template } : {}),
    pool,
  });
}

/** When the gear cap stops holding each node's renewal (the earlier grace's end, if both apply), or undefined: it holds for as long as it lasts. */
export function capLiftTest(rules: CapLiftRules): (node: GracedNode) => CapLift | undefined {
  const { expireAfter, expireGrace, driftGrace, template, pool } = rules;
  const driftedSince = driftGrace !== undefined && template ? driftedSinceTest(template, pool) : undefined;
  return (node) => {
    const expiredEnds = expireGraceEnds(node, expireAfter, expireGrace);
    const since = driftedSince?.(node);
    const driftEnds = since === undefined ? undefined : since + driftGrace!;
    if (driftEnds !== undefined && (expiredEnds === undefined || driftEnds < expiredEnds)) return { atMs: driftEnds, setting: 'scaleDown.driftGrace', graceMs: driftGrace! };
    return expiredEnds === undefined ? undefined : { atMs: expiredEnds, setting: 'scaleDown.expireGrace', graceMs: expireGrace! };
  };
}
