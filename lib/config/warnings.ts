/**
 * What a valid configuration may still get wrong: printed loudly by packaging
 * (infra/esbuild-plugins.cjs) and by `nodescaler validate-config`, never fatal.
 */
import { formatDuration } from '../domain/duration.js';
import { expireAfterOf } from '../domain/expiry.js';
import { nodeHourPriceOf } from '../domain/node-price.js';
import { poolMoveCost } from '../domain/payoff-gate.js';
import type { Config } from './schema.js';
import { statsAuthWarnings } from './stats-auth.js';

export function configWarnings(config: Config): string[] {
  return [...statsAuthWarnings(config), ...spotPriceWarnings(config), ...expiryWarnings(config), ...freeRestartWarnings(config)];
}

/** Below a week, expiry restarts every tenant more often than scale-down's own drains do (Karpenter's default is 30 days). */
const SHORT_EXPIRY_MS = 7 * 86_400_000;

/** An expireAfter so short that renewals, not savings, become most of a pool's tenant restarts. */
export function expiryWarnings(config: Pick<Config, 'scaleDown' | 'pools'>): string[] {
  if (!config.scaleDown.enabled) return [];
  const { expireGrace } = config.scaleDown;
  const expiring = config.pools.some((pool) => expireAfterOf(config.scaleDown, pool) !== undefined);
  const idleGrace =
    expireGrace !== undefined && !expiring
      ? [`scaleDown.expireGrace is ${formatDuration(expireGrace)} but no pool's nodes expire (scaleDown.expireAfter and pools[].expireAfter unset or never): it lifts nothing.`]
      : [];
  const { driftGrace, renewDrifted } = config.scaleDown;
  const idleDriftGrace =
    driftGrace !== undefined && !renewDrifted ? [`scaleDown.driftGrace is ${formatDuration(driftGrace)} but scaleDown.renewDrifted is off: no drifted node is renewed, so it lifts nothing.`] : [];
  return [...idleGrace, ...idleDriftGrace, ...shortExpiryWarnings(config)];
}

function shortExpiryWarnings(config: Pick<Config, 'scaleDown' | 'pools'>): string[] {
  return config.pools.flatMap((pool, index) => {
    const expireAfter = expireAfterOf(config.scaleDown, pool);
    if (expireAfter === undefined || expireAfter >= SHORT_EXPIRY_MS) return [];
    const key = pool.expireAfter !== undefined ? `pools[${index}].expireAfter` : 'scaleDown.expireAfter';
    return [
      `pools[${index}] (${pool.district}/${pool.profile}): ${key} is ${formatDuration(expireAfter)}: every node nodescaler launched is renewed at least that often, ` +
        `each renewal restarting the tenants of its gears. Rolling hosts for patches usually takes weeks (Karpenter's default is 30d).`,
    ];
  });
}

/**
 * A spot pool priced by the on-demand list: the pays-off check credits each
 * drain with what spot does not cost, so it restarts tenants two or three
 * times as readily as the move costs say it should. With handler ec2 the
 * evaluator reads the spot market (lib/app/market-prices.ts); launched by
 * anything else, only the operator knows what the nodes cost.
 */
export function spotPriceWarnings(config: Pick<Config, 'scaleDown' | 'pools' | 'handler'>): string[] {
  if (!config.scaleDown.enabled || !config.scaleDown.payoff.enabled || config.scaleDown.payoff.nodeHourPrice !== undefined) return [];
  if (config.handler === 'ec2') return [];
  return config.pools.flatMap((pool, index) => {
    if (!pool.template.spot || pool.nodeHourPrice !== undefined) return [];
    const { dollars, source } = nodeHourPriceOf(config.scaleDown.payoff, pool);
    return [
      `pools[${index}] (${pool.district}/${pool.profile}) launches spot instances and names no nodeHourPrice: its drains are credited ` +
        `$${dollars}/h (${source}), more than spot nodes cost, so scale-down restarts its tenants for savings it does not make. ` +
        `Set pools[${index}].nodeHourPrice to what its nodes cost.`,
    ];
  });
}

/**
 * A restart priced at nothing: the pays-off check then passes every drain that saves anything, and scale-down moves
 * tenants' only gears for minutes of a node's rent, as Karpenter's consolidation does (17 times nodescaler's moves on
 * the Azure trace, README "Latest results").
 */
export function freeRestartWarnings(config: Pick<Config, 'scaleDown' | 'pools'>): string[] {
  if (!config.scaleDown.enabled || !config.scaleDown.payoff.enabled) return [];
  return config.pools.flatMap((pool, index) => {
    if (poolMoveCost(config.scaleDown.payoff.moveCost, pool).disruptive > 0) return [];
    const key = pool.moveCost?.disruptive !== undefined ? `pools[${index}].moveCost.disruptive` : 'scaleDown.payoff.moveCost.disruptive';
    return [
      `pools[${index}] (${pool.district}/${pool.profile}): ${key} is 0: a restart of a tenant's only or head gear costs its drains nothing, ` +
        `so scale-down drains whenever a node saves anything and moves those gears as readily as idle ones. Price a restart (default 0.0225).`,
    ];
  });
}
