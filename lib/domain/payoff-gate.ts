/**
 * The evaluator's scale-down hook over the pays-off check (payoff.ts): the
 * utilization the candidates' fit check judges, and each candidate's verdict,
 * with what the history says of a drain's levels read once per capacity left.
 */
import type { Config, PoolConfig } from '../config/index.js';
import type { CandidateCheck } from './candidates.js';
import type { PoolUtilization } from './decision.js';
import type { HeadroomAtLevel } from './level-headroom.js';
import type { DemandSample } from './model.js';
import type { MarketPrices } from './market-prices.js';
import { nodeHourPrice } from './node-price.js';
import { drainPayoff, keptDaysFor, levelOutlook, poolConfidentDemand } from './payoff.js';
import { type RecentReturns, returnsOf, spellsBelow } from './recent-returns.js';
import { heldLevelOf, rebuyLevel, sizingSlots } from './wanted.js';

export interface PayoffGateInput {
  config: Pick<Config, 'scaleUp' | 'scaleDown'>;
  /** The pool's own node-hour price, move prices and instance types (node-price.ts); the global ones when not given. */
  poolConfig?: Pick<PoolConfig, 'nodeHourPrice' | 'template' | 'moveCost'>;
  /** What the markets last quoted the pool's types at, while recent (market-prices.ts usableMarketPrices). */
  marketPrices?: MarketPrices;
  /** The pool's demand history, this evaluation's sample included. */
  history: readonly DemandSample[] | undefined;
  now: Date;
  utilization: PoolUtilization;
  /** The scale-up's forecast at the boot delay (trend, kept days): a drain must not leave what it would buy back. */
  forecastDemand?: number;
  /** When the pool last scaled up for demand (drainPayoff). */
  lastDemandScaleUpAt?: string;
  /** What the pool keeps free above a level (level-headroom.ts); the full headroom above every level when not given. */
  headroomAt?: HeadroomAtLevel;
}

/** The move prices a pool's drains are weighed with: its own `moveCost` keys over scaleDown.payoff.moveCost's. */
export function poolMoveCost(global: Config['scaleDown']['payoff']['moveCost'], pool: Pick<PoolConfig, 'moveCost'> | undefined): Config['scaleDown']['payoff']['moveCost'] {
  const own = pool?.moveCost;
  if (!own) return global;
  return {
    idle: own.idle ?? global.idle,
    sibling: own.sibling ?? global.sibling,
    disruptive: own.disruptive ?? global.disruptive,
  };
}

/**
 * The evaluator's scale-down hook: the utilization the candidates' fit check
 * should judge (demand at its confident level) and the pays-off check of each
 * candidate that fits. Disabled: the utilization as it is, no check.
 */
export function payoffGate(input: PayoffGateInput): { utilization: PoolUtilization; check?: CandidateCheck; confident?: number; keepFree?: number } {
  const { config, utilization: u, now, history } = input;
  const settings = config.scaleDown.payoff;
  if (!settings.enabled) return { utilization: u };
  const { marketPrices = {} } = input;
  const poolPrice = nodeHourPrice(settings, input.poolConfig, {}, marketPrices);
  const payoff = { ...settings, moveCost: poolMoveCost(settings.moveCost, input.poolConfig), nodeHourPrice: poolPrice };
  const pricesByType = new Map<string, number>();
  const priceOf = (type: string | undefined, zone: string | undefined) => {
    if (type === undefined) return poolPrice;
    // A spot node's zone has its own price; any other node's zone does not change it.
    const key = zone === undefined || marketPrices.spot?.byZone === undefined ? type : `${type}@${zone}`;
    let price = pricesByType.get(key);
    if (price === undefined) pricesByType.set(key, (price = nodeHourPrice(settings, input.poolConfig, { instanceType: type, zone }, marketPrices)));
    return price;
  };
  const recent = poolConfidentDemand(config, history, now, u.demand);
  const confident = Math.max(recent, input.forecastDemand ?? 0);
  const slots = sizingSlots(u);
  const utilization: PoolUtilization = {
    ...u,
    demand: confident,
    utilization: slots > 0 ? confident / slots : confident > 0 ? Infinity : 0,
    freeSlots: u.freeSlots - (confident - u.demand),
  };
  // Nodes of one size leave one level: the history is scanned once per level, not once per candidate.
  const returnsByLevel = new Map<number, RecentReturns | undefined>();
  const returnsAt = (level: number) => {
    if (!returnsByLevel.has(level)) returnsByLevel.set(level, returnsOf(spellsBelow(history ?? [], level), now, payoff.horizon, payoff.lookahead));
    return returnsByLevel.get(level);
  };
  const keptDays = keptDaysFor(history, now, confident, payoff);
  const { headroomAt } = input;
  // Where a rise buys the node back: above an elevated standing the scale-up buys less than the full headroom, so the
  // level is read where it settles (the headroom kept above it, at most three steps from the full headroom's level).
  const rebuyAt = (capacityAfter: number, limit: number) => {
    let rebuy = Math.max(limit, rebuyLevel(capacityAfter, config.scaleUp));
    for (let step = 0; headroomAt && step < 3; step++) {
      const next = Math.max(limit, rebuyLevel(capacityAfter, { threshold: config.scaleUp.threshold, headroomGears: headroomAt.at(rebuy) }));
      if (next === rebuy) break;
      rebuy = next;
    }
    return rebuy;
  };
  // Nodes of one size leave one capacity: its levels and what the history says of them are read once, not per candidate.
  const levelsByCapacity = new Map<number, ReturnType<typeof levelsAt>>();
  const levelsAt = (capacityAfter: number) => {
    // What a scale-up would leave the pool holding, not what triggers one: a drain stops where a scale-up stops.
    const { level: limit, setBy } = heldLevelOf(capacityAfter, config.scaleUp);
    const rebuy = rebuyAt(capacityAfter, limit);
    // heldLevelOf with the headroom each expected level keeps: the share's level, or the slots less that headroom.
    const byShare = headroomAt && heldLevelOf(capacityAfter, { ...config.scaleUp, headroomGears: 0 });
    const limitAt = headroomAt && ((expected: number) => Math.min(byShare!.level, capacityAfter - headroomAt.at(expected)));
    const limitAtWhy = headroomAt && ((expected: number) => (byShare!.level < capacityAfter - headroomAt.at(expected) ? byShare!.setBy : headroomAt.why?.(expected)));
    const levels = {
      ...(limitAt ? { limitAt, limitAtWhy } : {}),
      history,
      now,
      confident,
      limit,
      limitSetBy: setBy,
      rebuy,
      capacityAfter,
      ...(input.lastDemandScaleUpAt ? { lastDemandScaleUpAt: input.lastDemandScaleUpAt } : {}),
      config: payoff,
      returnsAt,
      keptDays,
    };
    return { ...levels, outlook: levelOutlook(levels) };
  };
  const check: CandidateCheck = (node, capacityAfter) => {
    const levels = levelsByCapacity.get(capacityAfter) ?? levelsAt(capacityAfter);
    levelsByCapacity.set(capacityAfter, levels);
    // The scale-up buys a node for the forecast: a drain that leaves the pool short of it would be bought back at once.
    if (input.forecastDemand !== undefined && input.forecastDemand > levels.limit && recent < levels.limit) {
      return { refused: `needed soon: the forecast expects ${Math.round(input.forecastDemand)} gears > the ${Math.round(levels.limit)} the pool holds without it` };
    }
    // A node launched as another of the pool's instance types, or in another zone, saves what it costs (read once a type and zone).
    const price = priceOf(node.instanceType, node.zone);
    const priced = price === poolPrice ? levels : { ...levels, config: { ...levels.config, nodeHourPrice: price } };
    const verdict = drainPayoff({ ...priced, stats: node.stats ?? { activeGears: 0 } });
    if (verdict.pays) return { accepted: verdict.text };
    // Not needed, only not paying yet: the node attrition closes early.
    return verdict.pending ? { refused: verdict.reason, pending: true } : { refused: verdict.reason };
  };
  // The fit check keeps free, above demand at its confident level, what that level keeps, and the full headroom above
  // the usual standing: after a job the confident level is the job's, and the next job rises from the standing.
  const keepFree = headroomAt && Math.max(headroomAt.at(confident), config.scaleUp.headroomGears - Math.max(0, confident - headroomAt.usual));
  return keepFree === undefined ? { utilization, check, confident } : { utilization, check, confident, keepFree };
}
