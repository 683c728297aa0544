/**
 * The threshold evaluator's decision for one pool: scale up (how many nodes),
 * scale down (which node), or nothing, always with the sentence an operator
 * reads. A pure function of the data in `PoolEvaluationInput`.
 *
 * Order of the rules:
 *   1. utilization, demand sample, sustain tracking (always, in `poolPatch`);
 *   2. an unexpired lease (one action in flight per pool) -> nothing;
 *   3. scale up: below min, or utilization held at/above the threshold for the
 *      sustain window, or free slots below the headroom, or the forecast
 *      crossing the threshold within the lookahead; blocked by exhaustion and
 *      failure backoff; sized to the target and clamped by every limit;
 *   4. scale down: utilization held at/below the scale-down threshold for the
 *      unneeded time, past every delay, above min, nothing provisioning,
 *      within the disruption budget (lib/domain/budget.ts), and a candidate
 *      that passes the fit check at the confident demand, the budget's gear
 *      rules, and whose drain pays (payoff.ts);
 *   then attrition (attrition.ts): the next nodes to drain closed early, or
 *   closed nodes reopened;
 *   then, in place of nothing, the renewal of drifted or expired nodes
 *   (renewal.ts, `scaleDown.renewDrifted`, `scaleDown.expireAfter`): a
 *   scale-up of a node for each, which replaces it;
 *   5. otherwise nothing, saying which condition is not met.
 */
import type { Config } from '../config/index.js';
import { drainsPerDecision, poolBudget, scaleDownBudget, withScaleDown } from './budget.js';
import { chooseScaleDownCandidates } from './candidates.js';
import { callOffText, drainsToCallOff, nodesToBuy } from './call-off.js';
import type { PoolDecision, PoolEvaluation, PoolEvaluationInput, PoolUtilization, RejectedCandidate } from './decision.js';
import { formatDuration } from './duration.js';
import { failureBackoff } from './failure-backoff.js';
import { forecastDemand, type Forecast } from './forecast.js';
import { recordMinutes } from './settled-demand.js';
import { withAttrition } from './attrition.js';
import { withRenewal } from './renewal.js';
import { payoffGate } from './payoff-gate.js';
import { usableMarketPrices } from './market-prices.js';
import { outranPatch, outranRamp, outranText } from './scale-up.js';
import { poolHeadroom, type ObservedHeadroom } from './headroom.js';
import { poolHeadroomAtLevel } from './level-headroom.js';
import { waitingGears, waitingNeed, waitingSighting } from './waiting.js';
import { districtNodeRoom, freshDistrictCapacity } from './district-capacity.js';
import { poolBootMs } from './node-stats.js';
import { nodesToHold, sizingSlots } from './wanted.js';
import { clampScaleUp } from './scale-up-limits.js';
import { poolIdOf, type NodeRecord } from './model.js';
import { computeUtilization, expectedGearsPerNode } from './utilization.js';

/** Refused candidates named in a no-action reason; the full list is in `rejected`. */
const REASON_REJECTED_SHOWN = 3;
const REASON_STALE_SHOWN = 3;

export function decidePool(input: PoolEvaluationInput): PoolEvaluation {
  // One headroom for every rule that keeps nodes (the fit check, attrition, the pays-off check); the scale-up may buy
  // less on top of a standing that rose by little before (lib/domain/headroom.ts), never more than a drain leaves, and
  // the scale-down keeps less above a job the kept days expect (lib/domain/level-headroom.ts), never more than it.
  const { u, gearsPerNode } = poolUtilization(input);
  const { sized, headroom } = sizedByHeadroom(input, u.demand);
  return withRenewal(sized, withAttrition(sized, decide(sized, u, gearsPerNode, headroom), headroom.measured));
}

/** The input with scaleUp.headroomGears replaced by the pool's headroom (observed from its history, lib/domain/headroom.ts). */
export function withPoolHeadroom(input: PoolEvaluationInput): PoolEvaluationInput {
  return withPoolHeadrooms(input).sized;
}

/**
 * `withPoolHeadroom`, and the headroom the scale-up buys on top of demand now (`forScaleUp`, lib/domain/headroom.ts):
 * less than what the pool keeps above a job's top or after a fall.
 */
export function withPoolHeadrooms(input: PoolEvaluationInput): { sized: PoolEvaluationInput; forScaleUp: number } {
  const { sized, headroom } = sizedByHeadroom(input, poolUtilization(input).u.demand);
  return { sized, forScaleUp: headroom.forScaleUp };
}

/** `gearsPerNode` goes with the utilization: the decision sizes nodes by it, and it costs a pass over the pool. */
function poolUtilization(input: PoolEvaluationInput): { u: PoolUtilization; gearsPerNode: number } {
  const { config, pool, poolConfig, nodes, drains, now } = input;
  const poolId = pool.pool || poolIdOf(poolConfig.district, poolConfig.profile);
  const gearsPerNode = expectedGearsPerNode(poolConfig, nodes);
  return { u: computeUtilization({ pool: poolId, nodes, drains, now, statsMaxAge: config.statsMaxAge, expectedGearsPerNode: gearsPerNode }), gearsPerNode };
}

/** `demandNow` is the pool's standing: read from the history alone, a job's first minute still stands at the level before it. */
function sizedByHeadroom(input: PoolEvaluationInput, demandNow: number): { sized: PoolEvaluationInput; headroom: ObservedHeadroom } {
  const { config, pool } = input;
  const headroom = poolHeadroom(config, pool.demandHistory, poolBootMs(pool, config.scaleUp.forecast.bootDelay), demandNow, input.now);
  if (headroom.gears === config.scaleUp.headroomGears) return { sized: input, headroom };
  return { sized: { ...input, config: { ...config, scaleUp: { ...config.scaleUp, headroomGears: headroom.gears } } }, headroom };
}

function decide(input: PoolEvaluationInput, u: PoolUtilization, gearsPerNode: number, headroom: ObservedHeadroom): PoolEvaluation {
  const { now, config, poolConfig, pool, nodes, drains } = input;
  const nowMs = now.getTime();
  const nowIso = now.toISOString();
  const poolId = pool.pool || poolIdOf(poolConfig.district, poolConfig.profile);
  const { scaleDown } = config;
  // The scale-up's own view; what the scale-down keeps reads config.scaleUp.headroomGears.
  const scaleUp = headroom.forScaleUp === config.scaleUp.headroomGears ? config.scaleUp : { ...config.scaleUp, headroomGears: headroom.forScaleUp };
  const forecastConfig = scaleUp.forecast;

  // 1. Utilization, demand history, sustain tracking.
  // A node registered active that has not reported yet holds gears nobody counted: a sample now would be low, and the
  // next ones (as it reports) a rise that never happened, which the trend, the headroom and the drains would all believe.
  const unreported = unreportedNodes(nodes, nowMs, config.statsMaxAge);
  const demandHistory = unreported > 0 ? [...(pool.demandHistory ?? [])] : recordMinutes(pool.demandHistory, nodes, now, u.demand, { window: forecastConfig.window, keepDaily: forecastConfig.dailySeasonality });
  const high = u.utilization >= scaleUp.threshold;
  const low = u.utilization <= scaleDown.utilizationThreshold;
  const highSince = high ? sinceOrNow(pool.highSince, nowMs, nowIso) : undefined;
  const lowSince = low ? sinceOrNow(pool.lowSince, nowMs, nowIso) : undefined;
  const highFor = highSince === undefined ? 0 : Math.max(0, nowMs - Date.parse(highSince));
  const lowFor = lowSince === undefined ? 0 : Math.max(0, nowMs - Date.parse(lowSince));
  const poolPatch: PoolEvaluation['poolPatch'] = { highSince, lowSince, demandHistory, lastEvaluatedAt: nowIso };

  const at = `pool ${poolId} at ${ratio(u.utilization)}`;
  const staleNote = staleText(u.staleNodes);
  // Gear creations the broker refused (lib/domain/waiting.ts): demand that waits now, whatever the nodes report.
  const waiting = waitingGears(pool, demandHistory, now, u.demand, nodes, { nodesJoinInZones: poolConfig.openshiftRegion !== undefined });
  // Refused for a cause no node cures (no UIDs left, zones the pool's nodes join in none): every decision says so, whatever else it decides.
  const uncuredNote = waiting?.uncured ? waiting.text : undefined;
  /** What every decision of the pool ends with: stale stats (unless `withStale` is false) and refusals no node cures. */
  const notesAfter = (withStale = true) => [withStale ? staleNote : '', uncuredNote ?? ''].filter((part) => part).join('; ');
  const result = (decision: PoolDecision, forecast?: PoolEvaluation['forecast']): PoolEvaluation => {
    const evaluation: PoolEvaluation = { utilization: u, decision, poolPatch };
    if (forecast) evaluation.forecast = forecast;
    return evaluation;
  };
  const noAction = (reason: string, rejected?: RejectedCandidate[], withStale = true): PoolDecision => {
    const notes = notesAfter(withStale);
    const text = notes ? `${reason}; ${notes}` : reason;
    return rejected ? { kind: 'no-action', reason: text, rejected } : { kind: 'no-action', reason: text };
  };
  const waitsOut = (decision: PoolDecision, scaleDownWaits: string): PoolDecision => (decision.kind === 'no-action' ? { ...decision, scaleDownWaits } : decision);

  // 2. One action in flight per pool.
  const lease = pool.lease;
  if (lease && Date.parse(lease.expiresAt) > nowMs) {
    return result(noAction(`${at}; action in flight: ${lease.kind} ${lease.holder} until ${clock(Date.parse(lease.expiresAt), nowMs)}`));
  }

  // 3. Scale up.
  const provisioning = u.nodesByState.provisioning ?? 0;
  const active = u.nodesByState.active ?? 0;
  const draining = u.nodesByState.draining ?? 0;
  const size = provisioning + active;
  const minDeficit = Math.max(0, poolConfig.min - size);
  const total = sizingSlots(u);

  const sustained = high && highFor >= scaleUp.sustain;
  const headroomShort = u.freeSlots < scaleUp.headroomGears;
  let forecast: Forecast | undefined;
  let lookaheadMs = 0;
  let forecastUtilization = u.utilization;
  if (forecastConfig.enabled) {
    lookaheadMs = forecastConfig.lookahead ?? pool.observedBootMs ?? forecastConfig.bootDelay;
    forecast = forecastDemand(demandHistory, now, lookaheadMs, {
      window: forecastConfig.window,
      trendConfidence: forecastConfig.trendConfidence,
      dailySeasonality: forecastConfig.dailySeasonality,
      current: u.demand,
    });
    forecastUtilization = utilizationOf(forecast.demand, total);
  }
  const forecastInfo = forecast ? { demand: forecast.demand, basis: forecast.basis, lookaheadMs } : undefined;
  // The forecast triggers only when it expects growth; otherwise it would bypass the sustain window.
  const forecastTrigger = forecast !== undefined && forecast.demand > u.demand && forecastUtilization >= scaleUp.threshold;

  const bootMs = poolBootMs(pool, forecastConfig.bootDelay);
  const { nodes: waitingNodes, rise } = waiting ? waitingNeed(waiting, pool.waitingSeen, { now, bootMs, slots: total, gearsPerNode, scaleUp }) : { nodes: 0, rise: 0 };
  // The next evaluation's pace is measured from what this one saw.
  if (waiting && waiting.unplaced > 0 && scaleUp.waitingRise) poolPatch.waitingSeen = waitingSighting(waiting, pool.waitingSeen, now, bootMs);

  // With no fresh stats at all, utilization says nothing: only `min` and refused gears may add nodes.
  const allStale = active > 0 && u.staleNodes.length === active;
  const usageTrigger = ((sustained || headroomShort || forecastTrigger) && !allStale) || waitingNodes > 0;

  if (minDeficit > 0 || usageTrigger) {
    const sizedDemand = Math.max(u.demand, forecast?.demand ?? u.demand);
    const nodesFor = (demand: number) => nodesToHold(demand, total, gearsPerNode, scaleUp);
    const baseTriggered = (sustained || headroomShort) && !allStale;
    const withoutForecast = Math.max(minDeficit, baseTriggered ? Math.max(1, nodesFor(u.demand)) : 0, waitingNodes);
    const sized = Math.max(minDeficit, usageTrigger ? Math.max(1, nodesFor(sizedDemand)) : 0, waitingNodes);
    const forecastNodes = Math.max(0, sized - withoutForecast);
    // A full pool's demand is a lower bound (waiting gears report nowhere): full again after a full-pool scale-up, it doubles.
    // Gears wait beyond what runs and boots: the pool is full whatever the reports say (a spike outran the boot delay).
    const freeSlots = waitingNodes > 0 && waiting ? Math.min(u.freeSlots, total - waiting.demand, 0) : u.freeSlots;
    const ramp = usageTrigger ? outranRamp(pool, { now, freeSlots, poolNodes: size, bootMs, doubleWhenFull: scaleUp.doubleWhenFull }) : { round: 0, minNodes: 0 };
    const wanted = Math.max(sized, ramp.minNodes);

    const triggers: string[] = [];
    if (sustained) triggers.push(` >= ${ratio(scaleUp.threshold)} for ${formatHeld(highFor)}`);
    if (minDeficit > 0) triggers.push(`, below min (${size} of ${poolConfig.min} nodes)`);
    if (headroomShort && !allStale) triggers.push(`, ${u.freeSlots} free slots < headroomGears ${scaleUp.headroomGears}`);
    if (forecastTrigger && !sustained) {
      triggers.push(`, forecast ${ratio(forecastUtilization)} >= ${ratio(scaleUp.threshold)} in ${formatHeld(lookaheadMs)}`);
    }
    const riseText = rise > 0 ? ` + ${rise} more over the next ${formatHeld(bootMs)}, the pace they kept arriving at` : '';
    if (waiting && waitingNodes > 0) triggers.push(`, ${waiting.text}: sized for them${riseText} + headroomGears ${scaleUp.headroomGears} at once`);
    const why = `${at}${triggers.join('')}`;
    const forecastText = forecastNodes > 0 && forecast ? ` (forecast: ${forecast.basis}, +${plural(forecastNodes, 'node')})` : '';

    // Scale-down drains under way give their nodes back first (call-off.ts): only the rest is bought, and all that waiting gears need.
    const calling = drainsToCallOff(drains, nodes, wanted, at);
    const toBuy = nodesToBuy(wanted, calling.nodesBack, waitingNodes);
    const callText = calling.callOff.length > 0 ? `; ${callOffText(calling, wanted - toBuy)}` : '';
    const withCallOff = (evaluation: PoolEvaluation): PoolEvaluation => {
      if (calling.callOff.length === 0) return evaluation;
      // The pool scaled up for demand, if with its own nodes: no drain right after (delayAfterAdd, the bought-back wait).
      poolPatch.lastScaleUpAt = nowIso;
      poolPatch.lastDemandScaleUpAt = nowIso;
      return { ...evaluation, callOff: calling.callOff };
    };
    if (toBuy === 0) return withCallOff(result(noAction(`${why}; wants +${plural(wanted, 'node')}${callText}`), forecastInfo));

    // Blocked: capacity exhausted, or backing off after a failure.
    const exhaustedUntil = pool.exhaustedUntil === undefined ? NaN : Date.parse(pool.exhaustedUntil);
    if (exhaustedUntil > nowMs) {
      return withCallOff(result(noAction(`${why}; wants +${plural(toBuy, 'node')}, blocked: capacity exhausted until ${clock(exhaustedUntil, nowMs)}${callText}`), forecastInfo));
    }
    const backoffUntil = failureBackoff(pool, scaleDown.delayAfterFailure, 'scale-up')?.untilMs ?? NaN;
    if (backoffUntil > nowMs) {
      return withCallOff(result(noAction(`${why}; wants +${plural(toBuy, 'node')}, blocked: failure backoff until ${clock(backoffUntil, nowMs)}${callText}`), forecastInfo));
    }

    const uids = freshDistrictCapacity(pool, now);
    const district = uids ? { room: districtNodeRoom(uids, gearsPerNode, size + calling.nodesBack, minDeficit), maxCapacity: uids.maxCapacity } : undefined;
    const clamp = clampScaleUp(toBuy, input, draining + size, { doubling: ramp.minNodes > 0, waitingNodes: Math.min(toBuy, waitingNodes), ...(district ? { district } : {}) });
    if (clamp.count === 0) {
      return withCallOff(result(noAction(`${why}; wants +${plural(toBuy, 'node')}, cannot add any: at limit ${clamp.zeroBy}${callText}`), forecastInfo));
    }
    // The utilization the added (and re-opened) nodes lead to, for the demand they were sized for.
    const after = utilizationOf(
      Math.max(forecastNodes > 0 ? sizedDemand : u.demand, waitingNodes > 0 && waiting ? waiting.demand : 0),
      total + (clamp.count + calling.nodesBack) * gearsPerNode,
    );
    const clampText =
      clamp.clampedBy.length > 0 ? `; clamped by ${clamp.clampedBy.map((c) => `${c.limit}=${c.value}`).join(', ')} (wanted ${toBuy})` : '';
    const outran = outranText(ramp, freeSlots, bootMs, pool.outran);
    const notes = notesAfter();
    const reason = `${why}; +${plural(clamp.count, 'node')} to ${ratio(after)}${forecastText}${clampText}${callText}${outran}${notes ? `; ${notes}` : ''}`;
    poolPatch.lastScaleUpAt = nowIso;
    poolPatch.lastDemandScaleUpAt = nowIso;
    poolPatch.outran = outranPatch(ramp, now, clamp.count);
    const decision: PoolDecision = { kind: 'scale-up', count: clamp.count, reason, wanted: toBuy, clampedBy: clamp.clampedBy, forecastNodes };
    if (ramp.round > 0) decision.outranRound = ramp.round;
    return withCallOff(result(decision, forecastInfo));
  }

  if (high) {
    if (allStale && (sustained || headroomShort || forecastTrigger)) {
      return result(noAction(`${at} >= ${ratio(scaleUp.threshold)}; not scaling up: ${staleText(u.staleNodes, 'all ')}`, undefined, false), forecastInfo);
    }
    return result(noAction(`${at} >= ${ratio(scaleUp.threshold)} for ${formatHeld(highFor)} of ${formatHeld(scaleUp.sustain)} sustain`), forecastInfo);
  }
  if (!low) {
    return result(
      noAction(`pool ${poolId} utilization ${ratio(u.utilization)} within band ${ratio(scaleDown.utilizationThreshold)}..${ratio(scaleUp.threshold)}`),
      forecastInfo,
    );
  }

  // 4. Scale down.
  const lowText = `${at} <= ${ratio(scaleDown.utilizationThreshold)} for ${formatHeld(lowFor)}`;
  if (!scaleDown.enabled) return result(noAction(`${lowText}; scale-down disabled`), forecastInfo);
  const unneeded = lowFor < scaleDown.unneededTime;
  const unneededText = `the ${formatHeld(scaleDown.unneededTime)} unneeded time`;
  if (unneeded && !closesWhileDelayed(scaleDown)) {
    const waiting = noAction(`${lowText} of ${formatHeld(scaleDown.unneededTime)} unneeded time`);
    // A pool at min drains nothing once the time is over: nothing to wait for.
    return result(size > poolConfig.min ? waitsOut(waiting, unneededText) : waiting, forecastInfo);
  }
  if (size <= poolConfig.min) return result(noAction(`${lowText}; at min (${plural(poolConfig.min, 'node')})`), forecastInfo);

  const delays: string[] = [];
  const delayUntil = (since: string | undefined, delay: number, name: string) => {
    if (since === undefined) return;
    const until = Date.parse(since) + delay;
    if (until > nowMs) delays.push(`${name} until ${clock(until, nowMs)}`);
  };
  delayUntil(pool.lastScaleUpAt, scaleDown.delayAfterAdd, 'delayAfterAdd');
  delayUntil(pool.lastScaleDownAt, scaleDown.delayAfterDelete, 'delayAfterDelete');
  delayUntil(failureBackoff(pool, scaleDown.delayAfterFailure, 'scale-down')?.since, scaleDown.delayAfterFailure, 'delayAfterFailure');
  // What scale-down waits out before it may drain: the nodes it would drain meanwhile are attrition's to close.
  const waitingOut = unneeded ? unneededText : delays.length > 0 ? delays.join(', ') : undefined;
  const blockedText = unneeded ? `${lowText} of ${formatHeld(scaleDown.unneededTime)} unneeded time` : `${lowText}; scale-down blocked: ${delays.join(', ')}`;
  const budget = scaleDownBudget(input);
  if (waitingOut !== undefined && !(closesWhileDelayed(scaleDown) && provisioning === 0 && unreported === 0 && !budget.blocked)) {
    return result(waitsOut(noAction(blockedText), waitingOut), forecastInfo);
  }

  if (provisioning > 0) {
    return result(noAction(`${lowText}; scale-down blocked: ${plural(provisioning, 'node')} provisioning`), forecastInfo);
  }
  if (unreported > 0) {
    return result(noAction(`${lowText}; scale-down blocked: ${plural(unreported, 'node')} not reported yet (their gears are unknown)`), forecastInfo);
  }
  if (budget.blocked) {
    const { name, detail, until } = budget.blocked;
    const reason = `${lowText}; scale-down blocked by ${name}: ${detail}${until ? ` (until ${clock(Date.parse(until), nowMs)})` : ''}`;
    return result({ kind: 'no-action', reason, budget: { name, ...(until ? { until } : {}) } }, forecastInfo);
  }

  const bought = pool.lastDemandScaleUpAt ? { lastDemandScaleUpAt: pool.lastDemandScaleUpAt } : {};
  const headroomAt = poolHeadroomAtLevel(config, headroom.measured);
  const paying = payoffGate({ config, poolConfig, marketPrices: usableMarketPrices(pool, now), history: demandHistory, now, utilization: u, ...(forecast ? { forecastDemand: forecast.demand } : {}), ...bought, ...(headroomAt ? { headroomAt } : {}) });
  const count = drainsPerDecision({ config, poolConfig, now, nodes, drains, pool });
  const fitConfig = paying.keepFree === undefined ? config : { ...config, scaleUp: { ...config.scaleUp, headroomGears: paying.keepFree } };
  const choice = chooseScaleDownCandidates({ nodes, drains, poolConfig, config: fitConfig, now, utilization: paying.utilization, refuse: budget.refuse }, paying.check, count);
  if (waitingOut !== undefined) {
    // The nodes it would drain now are the likeliest next candidates: closed meanwhile, the new gears the broker puts
    // on the emptiest node (a blip's node that joined after the blip) are not moved off it once the wait is over.
    const due = choice.nodeId === undefined ? [] : [choice.nodeId, ...choice.more.map((m) => m.nodeId)];
    const next = due.map((nodeId) => ({ nodeId, reason: `drained once ${waitingOut} is over`, pending: true }));
    const decision = noAction(blockedText, [...next, ...choice.rejected]);
    return result(due.length > 0 ? waitsOut(decision, waitingOut) : decision, forecastInfo);
  }
  if (choice.nodeId === undefined) {
    const shown = choice.rejected.slice(0, REASON_REJECTED_SHOWN).map((r) => `${r.nodeId}: ${r.reason}`);
    const more = choice.rejected.length - shown.length;
    const list = shown.length === 0 ? 'no active node' : `${shown.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
    return result(noAction(`${lowText}; no node can be drained (${list})`, choice.rejected), forecastInfo);
  }
  const reason = scaleDownReason(lowText, { ...choice, nodeId: choice.nodeId }, notesAfter());
  // Each drain counts against maxDrainsPerHour; without it one time a decision keeps the pool record small.
  const counted = poolBudget(config, poolConfig).maxDrainsPerHour !== undefined ? 1 + choice.more.length : 1;
  poolPatch.scaleDownsAt = withScaleDown(pool.scaleDownsAt, now, counted);
  const also = choice.more.length > 0 ? { alsoNodeIds: choice.more.map((m) => m.nodeId) } : {};
  const prices = [{ nodeId: choice.nodeId, price: choice.price }, ...choice.more].flatMap(({ nodeId, price }) => (price ? [{ nodeId, ...price }] : []));
  return result({ kind: 'scale-down', nodeId: choice.nodeId, ...also, ...(prices.length > 0 ? { prices } : {}), reason, rejected: choice.rejected }, forecastInfo);
}

/** Whether attrition closes the next nodes to drain while scale-down waits out its unneeded time or a delay. */
function closesWhileDelayed(scaleDown: Config['scaleDown']): boolean {
  return scaleDown.payoff.enabled && scaleDown.payoff.attrition && scaleDown.payoff.attritionWhileDelayed;
}

/**
 * A scale-down's reason: the first node and its pays-off verdict, then the decision's further nodes. The verdict
 * comes before the list: a 2,000-node pool names up to 100 further nodes (some 3,000 characters), and the message
 * cuts its reason at 1,024 (decision-message.ts), which cut the verdict off every big decision: its drains then
 * showed no pays-off basis to an operator (nor to the replay's moves by cause, lib/sim/move-causes.ts).
 */
export function scaleDownReason(
  lowText: string,
  choice: { nodeId: string; activeGears?: number; strategy: string; accepted?: string; due?: string; more: ReadonlyArray<{ nodeId: string; activeGears: number }> },
  /** What ends every decision of the pool (stale stats, refusals no node cures). */
  notes = '',
): string {
  const paysText = choice.accepted ? `; ${choice.accepted}` : '';
  const alsoText = choice.more.length > 0 ? `; and ${choice.more.map((m) => `${m.nodeId} (${plural(m.activeGears, 'gear')})`).join(', ')}` : '';
  const dueText = choice.due ? `, ${choice.due}` : '';
  return `${lowText}; drain ${choice.nodeId} (${plural(choice.activeGears ?? 0, 'gear')}, ${choice.strategy}${dueText})${paysText}${alsoText}${notes ? `; ${notes}` : ''}`;
}

// ---------------------------------------------------------------------------
// Small helpers.

/**
 * Active nodes that have never reported stats, registered within `statsMaxAge` (a node imported into the table, or the
 * pool when nodescaler is switched on): their gears are unknown until their first report. A provisioned node becomes
 * active only on its first report, and one silent for longer than `statsMaxAge` is stale, not about to report.
 */
export function unreportedNodes(nodes: readonly NodeRecord[], nowMs: number, statsMaxAge: number): number {
  let count = 0;
  for (const node of nodes) {
    if (node.state !== 'active' || node.stats) continue;
    const since = Date.parse(node.stateChangedAt);
    if (!Number.isFinite(since) || nowMs - since <= statsMaxAge) count++;
  }
  return count;
}

function sinceOrNow(since: string | undefined, nowMs: number, nowIso: string): string {
  if (since === undefined) return nowIso;
  const at = Date.parse(since);
  return Number.isFinite(at) && at <= nowMs ? since : nowIso;
}

function utilizationOf(demand: number, slots: number): number {
  return slots > 0 ? demand / slots : demand > 0 ? Infinity : 0;
}

function ratio(value: number): string {
  return Number.isFinite(value) ? value.toFixed(2) : 'inf';
}


function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** A held time for a reason, to the second: `2m`, `1m30s`, `0s`. */
function formatHeld(ms: number): string {
  return formatDuration(Math.round(ms / 1000) * 1000);
}

/** `10:20:00Z` on the same UTC day as now, the full time (without milliseconds) otherwise. */
function clock(ms: number, nowMs: number): string {
  const iso = new Date(ms).toISOString();
  const text = `${iso.slice(0, 19)}Z`;
  return iso.slice(0, 10) === new Date(nowMs).toISOString().slice(0, 10) ? text.slice(11) : text;
}

function staleText(stale: readonly string[], all = ''): string {
  if (stale.length === 0) return '';
  const names = stale.slice(0, REASON_STALE_SHOWN).join(', ');
  const more = stale.length > REASON_STALE_SHOWN ? `, and ${stale.length - REASON_STALE_SHOWN} more` : '';
  return `stale stats from ${all}${plural(stale.length, 'node')} (${names}${more})`;
}
