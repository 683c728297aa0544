/**
 * "Why is this pool not scaling down (or up) right now?", as data: the
 * evaluator's own decision on the current state (`decidePool`, which stops
 * at the first rule that holds it back), plus every condition of a
 * scale-down and of a scale-up checked one by one, so an operator sees all
 * that stands in the way at once (which delay until when, which limit, which
 * candidate was refused and why, which disruption budget holds it and until
 * when), not only the first. Pure: the CLI's
 * `explain` and `evaluate --dry-run` feed it the state they read and write
 * nothing.
 *
 * The checks mirror decidePool's rules (lib/domain/evaluate.ts) and use the
 * same pieces (computeUtilization, chooseScaleDownCandidate); the decision
 * itself is always decidePool's.
 */
import { scaleDownBudget, scaleDownBudgetChecks } from './budget.js';
import { chooseScaleDownCandidate, type CandidateChoice } from './candidates.js';
import type { PoolEvaluation, PoolEvaluationInput } from './decision.js';
import { formatDuration } from './duration.js';
import { failureBackoff } from './failure-backoff.js';
import { decidePool, withPoolHeadrooms } from './evaluate.js';
import type { NodeState } from './model.js';
import { districtCapacityText, districtCureText, freshDistrictCapacity } from './district-capacity.js';
import { expectedGearsPerNode } from './utilization.js';
import { waitingNeed, waitingGears } from './waiting.js';
import { poolBootMs } from './node-stats.js';
import { renewalOf, renewalReason } from './renewal.js';

export interface Check {
  /** The setting or condition, e.g. `scaleDown.delayAfterAdd`, `pool.min`, `lease`. */
  name: string;
  /** True when this condition does not stand in the way. */
  ok: boolean;
  /** What was found, in words. */
  detail: string;
  /** When the condition stops standing in the way, if that is a time (ISO). */
  until?: string;
}

export interface PoolExplanation {
  evaluation: PoolEvaluation;
  /** Every scale-down condition in decidePool's order; all ok and a candidate chosen = a scale-down. */
  scaleDown: Check[];
  /** The candidate choice as if every other condition held (who would be drained, who is refused and why). */
  candidates: CandidateChoice;
  /** What holds a scale-up back: trigger, exhaustion, failure backoff, lease, the node limits. */
  scaleUp: Check[];
}

/** Node states that hold a cloud instance, as the global limits count them. */
const NON_TERMINAL: ReadonlySet<NodeState> = new Set<NodeState>(['provisioning', 'active', 'draining', 'drained', 'terminating']);

export function explainPool(given: PoolEvaluationInput): PoolExplanation {
  const evaluation = decidePool(given);
  // The headrooms the decision used: observed from the pool's history, or headroomGears; the scale-up's own below.
  const { sized: input, forScaleUp: upHeadroom } = withPoolHeadrooms(given);
  const { now, config, poolConfig, pool, nodes, drains, allNodes } = input;
  const { scaleUp, scaleDown } = config;
  const u = evaluation.utilization;
  const nowMs = now.getTime();
  const at = (ms: number) => new Date(ms).toISOString();
  const held = (ms: number) => formatDuration(Math.max(0, Math.round(ms / 1000) * 1000));

  const provisioning = u.nodesByState.provisioning ?? 0;
  const size = provisioning + (u.nodesByState.active ?? 0);
  const lease = pool.lease && Date.parse(pool.lease.expiresAt) > nowMs ? pool.lease : undefined;
  const leaseCheck: Check = lease
    ? { name: 'lease', ok: false, detail: `one action in flight per pool: ${lease.kind} ${lease.holder}`, until: lease.expiresAt }
    : { name: 'lease', ok: true, detail: 'no action in flight' };

  // Scale-down, in decidePool's order.
  const down: Check[] = [];
  down.push({ name: 'scaleDown.enabled', ok: scaleDown.enabled, detail: scaleDown.enabled ? 'enabled' : 'scale-down is disabled in the configuration' });
  const low = u.utilization <= scaleDown.utilizationThreshold;
  down.push({
    name: 'scaleDown.utilizationThreshold',
    ok: low,
    detail: `utilization ${ratio(u.utilization)} ${low ? '<=' : '>'} ${ratio(scaleDown.utilizationThreshold)}`,
  });
  if (low) {
    const lowSince = evaluation.poolPatch.lowSince ?? now.toISOString();
    const lowFor = nowMs - Date.parse(lowSince);
    const ok = lowFor >= scaleDown.unneededTime;
    down.push({
      name: 'scaleDown.unneededTime',
      ok,
      detail: `low for ${held(lowFor)} of ${held(scaleDown.unneededTime)}`,
      ...(ok ? {} : { until: at(Date.parse(lowSince) + scaleDown.unneededTime) }),
    });
  } else {
    down.push({ name: 'scaleDown.unneededTime', ok: false, detail: `not low: the ${held(scaleDown.unneededTime)} start once utilization is <= ${ratio(scaleDown.utilizationThreshold)}` });
  }
  down.push({ name: 'pool.min', ok: size > poolConfig.min, detail: `${size} node(s) ${size > poolConfig.min ? '>' : '<='} min ${poolConfig.min}` });
  const delay = (name: string, since: string | undefined, ms: number, what: string): Check => {
    if (since === undefined) return { name, ok: true, detail: `no ${what} recorded` };
    const until = Date.parse(since) + ms;
    return until > nowMs
      ? { name, ok: false, detail: `${held(ms)} after the last ${what}, ${held(nowMs - Date.parse(since))} ago`, until: at(until) }
      : { name, ok: true, detail: `last ${what} more than ${held(ms)} ago` };
  };
  down.push(delay('scaleDown.delayAfterAdd', pool.lastScaleUpAt, scaleDown.delayAfterAdd, 'scale-up'));
  down.push(delay('scaleDown.delayAfterDelete', pool.lastScaleDownAt, scaleDown.delayAfterDelete, 'scale-down'));
  down.push(delay('scaleDown.delayAfterFailure', failureBackoff(pool, scaleDown.delayAfterFailure, 'scale-down')?.since, scaleDown.delayAfterFailure, 'failure'));
  down.push(leaseCheck);
  down.push({ name: 'provisioning', ok: provisioning === 0, detail: provisioning === 0 ? 'no node provisioning' : `${provisioning} node(s) provisioning` });
  const budget = scaleDownBudget(input);
  for (const check of scaleDownBudgetChecks({ config, poolConfig, now, nodes, drains, pool })) down.push(check);
  const candidates = chooseScaleDownCandidate({ nodes, drains, poolConfig, config, now, utilization: u, refuse: budget.refuse });
  down.push(
    candidates.nodeId !== undefined
      ? { name: 'candidate', ok: true, detail: `${candidates.nodeId} (${candidates.activeGears ?? 0} gears, ${candidates.strategy}${candidates.due ? `, ${candidates.due}` : ''})` }
      : {
          name: 'candidate',
          ok: false,
          detail: candidates.rejected.length === 0 ? 'no active node to drain' : `every active node refused (${candidates.rejected.length})`,
        },
  );

  // Renewing drifted or expired nodes (renewal.ts): shown only when it is on and a node is due.
  const renewal = renewalOf(input, evaluation);
  if (renewal) {
    down.push('renew' in renewal ? { name: 'renewal', ok: true, detail: renewalReason(renewal.renew) } : { name: 'renewal', ok: false, detail: renewal.held });
  }

  // Scale-up.
  const up: Check[] = [];
  const high = u.utilization >= scaleUp.threshold;
  const minDeficit = Math.max(0, poolConfig.min - size);
  const highFor = high ? Math.max(0, nowMs - Date.parse(evaluation.poolPatch.highSince ?? now.toISOString())) : 0;
  const sustained = high && highFor >= scaleUp.sustain;
  // What the decision's scale-up asked for (upHeadroom): above a job's top or after a fall, less than what the pool keeps.
  const headroomShort = u.freeSlots < upHeadroom;
  const total = u.capacity + u.provisioningCapacity;
  const forecast = evaluation.forecast;
  const forecastUtilization = forecast ? (total > 0 ? forecast.demand / total : forecast.demand > 0 ? Infinity : 0) : 0;
  const forecastTrigger = forecast !== undefined && forecast.demand > u.demand && forecastUtilization >= scaleUp.threshold;
  const triggers: Array<{ holds: boolean; text: string }> = [
    { holds: minDeficit > 0, text: `${size} node(s) ${minDeficit > 0 ? '<' : '>='} min ${poolConfig.min}` },
    {
      holds: sustained,
      text: high
        ? `utilization ${ratio(u.utilization)} >= ${ratio(scaleUp.threshold)} for ${held(highFor)} of ${held(scaleUp.sustain)} sustain`
        : `utilization ${ratio(u.utilization)} < ${ratio(scaleUp.threshold)}`,
    },
    { holds: headroomShort, text: `${u.freeSlots} free slots ${headroomShort ? '<' : '>='} headroomGears ${upHeadroom}` },
  ];
  if (forecast) {
    triggers.push({ holds: forecastTrigger, text: `forecast ${ratio(forecastUtilization)} in ${held(forecast.lookaheadMs)} (${forecast.basis})` });
  }
  const waiting = waitingGears(pool, evaluation.poolPatch.demandHistory, now, u.demand, nodes, { nodesJoinInZones: poolConfig.openshiftRegion !== undefined });
  if (waiting) {
    const bootMs = poolBootMs(pool, scaleUp.forecast.bootDelay);
    const need = waitingNeed(waiting, pool.waitingSeen, { now, bootMs, slots: total, gearsPerNode: expectedGearsPerNode(poolConfig, nodes), scaleUp: { ...scaleUp, headroomGears: upHeadroom } });
    const riseText = need.rise > 0 ? ` (with ${need.rise} more gears to come while they boot, the pace they kept arriving at)` : '';
    const notNeeded = waiting.uncured ? waiting.text : `${waiting.text}: covered by the nodes running and booting`;
    triggers.push({ holds: need.nodes > 0, text: need.nodes > 0 ? `${waiting.text}: +${need.nodes} node(s)${riseText}` : notNeeded });
  }
  const holding = triggers.filter((t) => t.holds);
  up.push({
    name: 'trigger',
    ok: holding.length > 0,
    detail: holding.length > 0 ? `${holding.map((t) => t.text).join('; ')}` : `none: ${triggers.map((t) => t.text).join('; ')}`,
  });
  const exhaustedUntil = pool.exhaustedUntil === undefined ? NaN : Date.parse(pool.exhaustedUntil);
  up.push(
    exhaustedUntil > nowMs
      ? { name: 'capacity', ok: false, detail: 'the cloud had no capacity for any offering of the pool', until: pool.exhaustedUntil! }
      : { name: 'capacity', ok: true, detail: 'not exhausted' },
  );
  const uids = freshDistrictCapacity(pool, now);
  if (uids) {
    const district = poolConfig.district;
    const detail = districtCapacityText(district, uids, now);
    up.push({ name: 'district UIDs', ok: uids.availableCapacity > 0, detail: uids.availableCapacity > 0 ? detail : `${detail}: refused gears buy no node; ${districtCureText(district)}` });
  }
  const backoff = failureBackoff(pool, scaleDown.delayAfterFailure, 'scale-up');
  up.push(
    backoff && backoff.untilMs > nowMs
      ? { name: 'failure backoff', ok: false, detail: `a host failed ${held(nowMs - Date.parse(backoff.since))} ago (scaleDown.delayAfterFailure ${held(scaleDown.delayAfterFailure)})`, until: at(backoff.untilMs) }
      : { name: 'failure backoff', ok: true, detail: 'no recent host failure (a failed drain holds only scale-down)' },
  );
  up.push(leaseCheck);
  const poolNodes = size + (u.nodesByState.draining ?? 0);
  up.push({ name: 'pool.max', ok: poolNodes < poolConfig.max, detail: `${poolNodes} of ${poolConfig.max} node(s)` });
  let totalNodes = 0;
  for (const node of allNodes) if (NON_TERMINAL.has(node.state)) totalNodes++;
  up.push({ name: 'limits.maxNodesTotal', ok: totalNodes < config.limits.maxNodesTotal, detail: `${totalNodes} of ${config.limits.maxNodesTotal} node(s) in all pools` });

  return { evaluation, scaleDown: down, candidates, scaleUp: up };
}

function ratio(value: number): string {
  return Number.isFinite(value) ? value.toFixed(2) : 'inf';
}
