/**
 * Renewing nodes due for renewal: drifted from their pool's template
 * (`scaleDown.renewDrifted`, off by default; drift.ts) or launched longer ago
 * than `scaleDown.expireAfter` (unset by default; expiry.ts). Scale-down
 * already drains due nodes first among equal candidates; a pool that never
 * shrinks would keep them for ever. With renewal on, a pool whose decision is
 * to do nothing renews due nodes: replacements first, through the pool's
 * lease as one scale-up, and the due nodes' drains once the replacements have
 * joined (the path of `nodescaler drain NODE --replace`), so the pool never
 * runs short while it renews. Karpenter replaces drifted and expired nodes
 * the same way, within its disruption budgets.
 *
 * Each renewal restarts the tenants of the node's gears, so it is paced: one
 * batch at a time a pool (nothing provisioning, draining or waiting for a
 * replacement), of as many nodes as a scale-down decision may drain (half of
 * maxDraining: one up to 20 nodes, budget.ts `nodesPerEvaluation`), after
 * `delayAfterAdd` and any failure backoff, within the disruption budget
 * (windows and renewalWindows, maxDrainsPerHour; the nodes' gears pass its gear rules), never
 * while a low pool's scale-down waits out a delay before its next drain (it
 * drains due nodes first, with no replacement; a low pool whose scale-down
 * found no drain that pays yet renews), and only with room for the replacements under
 * every limit. The due nodes that restart the fewest tenants go first. A
 * node whose renewal was asked for and that is still active (its drain
 * refused, or not started) is not asked again until that renewal could have
 * ended, and twice as late after each further ask (at most a day): each ask
 * buys a node.
 *
 * Pure functions of data.
 */
import { nodesPerEvaluation, poolBudget, poolSize, scaleDownBudget, windowCheck, withScaleDown } from './budget.js';
import { disruptiveMoves } from './candidates.js';
import type { PoolEvaluation, PoolEvaluationInput } from './decision.js';
import { expireAfterOf, renewalDueTest } from './expiry.js';
import { failureBackoff } from './failure-backoff.js';
import { formatDuration } from './duration.js';
import { isClosedForAttrition } from './attrition.js';
import type { NodeRecord } from './model.js';
import { isProtected } from './node-stats.js';
import { poolCapLiftTest } from './renewal-grace.js';
import { clampScaleUp } from './scale-up-limits.js';
import { freshStatsTest } from './utilization.js';

export interface Renewal {
  nodeId: string;
  gears: number;
  /** Its gears whose move restarts a tenant (unknown kinds count). */
  disruptive: number;
  /** Why it is due: drifted (drift.ts) or expired (expiry.ts). */
  due: string;
}

/** The renewals to start now (one batch), or why the pool's due nodes wait; undefined when renewal is off or no node is due. */
export type RenewalVerdict = { renew: Renewal[] } | { held: string };

/** Asks remembered on the pool record (`lastRenewals`): enough for a batch of any pool, and an item well within DynamoDB's size. */
const ASKS_KEPT = 200;

export function renewalOf(input: PoolEvaluationInput, evaluation: Pick<PoolEvaluation, 'decision'>): RenewalVerdict | undefined {
  const { config, poolConfig, pool, nodes, drains, now } = input;
  const due = dueNodes(input);
  if (!due || due.size === 0) return undefined;
  const candidates = [...due.keys()];
  const nowMs = now.getTime();
  const kind = dueKind([...due.values()]);
  const waits = (why: string) => ({ held: `renewal of ${candidates.length} ${kind} node(s) waits: ${why}` });
  const at = (ms: number) => new Date(ms).toISOString();

  if (pool.lease && Date.parse(pool.lease.expiresAt) > nowMs) return waits(`${pool.lease.kind} ${pool.lease.holder} in flight`);
  const provisioning = nodes.filter((node) => node.state === 'provisioning').length;
  const draining = nodes.filter((node) => node.state === 'draining' || node.state === 'drained').length;
  const active = drains.filter((drain) => drain.state === 'active').length;
  if (provisioning + draining + active + (input.renewing ?? 0) > 0) return waits('one batch at a time: a node provisioning, draining or waiting for its replacement');
  // A low pool whose scale-down is about to drain drains due nodes first, with no replacement. One whose scale-down
  // found nothing to drain (a saving not due yet) may stay low all night: waiting for it kept expired nodes days past
  // expireAfter (a week of Azure's cpu column at expireAfter 2d, the gear cap lifted: a median 6.1 h late, up to 29.7).
  const scaleDownWaits = evaluation.decision.kind === 'no-action' ? evaluation.decision.scaleDownWaits : undefined;
  if (scaleDownWaits !== undefined) return waits(`the pool is low and its scale-down drains ${kind} nodes first, once ${scaleDownWaits} is over`);
  if (pool.exhaustedUntil && Date.parse(pool.exhaustedUntil) > nowMs) return waits(`capacity exhausted until ${pool.exhaustedUntil}`);
  const backoff = failureBackoff(pool, config.scaleDown.delayAfterFailure, 'scale-down');
  if (backoff && backoff.untilMs > nowMs) return waits(`scaleDown.delayAfterFailure until ${at(backoff.untilMs)}`);
  if (pool.lastScaleUpAt) {
    const until = Date.parse(pool.lastScaleUpAt) + config.scaleDown.delayAfterAdd;
    if (until > nowMs) return waits(`scaleDown.delayAfterAdd until ${at(until)}`);
  }
  const budget = scaleDownBudget(input);
  const { renewalWindows } = poolBudget(config, poolConfig);
  const renewalWindow = renewalWindows.length > 0 ? windowCheck(renewalWindows, now, 'renewalWindows') : undefined;
  const blocked = budget.blocked ?? (renewalWindow?.ok === false ? renewalWindow : undefined);
  if (blocked) return waits(`${blocked.name}: ${blocked.detail}${blocked.until ? ` (until ${blocked.until})` : ''}`);
  const batch = nodesPerEvaluation(config, poolConfig, poolSize(nodes));
  const room = clampScaleUp(batch, input, poolSize(nodes));
  if (room.count < 1) return waits(`no room for a replacement (${room.zeroBy ?? 'a limit'})`);

  const fresh = freshStatsTest(nowMs, config.statsMaxAge);
  // A node whose renewal was asked for and is still due and active had its drain refused or not started yet: a
  // second replacement for it would be a node more each time. It is asked again once the first could have ended, and
  // after each further ask twice as late (a drain the gear mover keeps refusing buys a node a day at most).
  const asked = new Map((pool.lastRenewals ?? []).map((ask) => [ask.nodeId, ask]));
  const capLift = poolCapLiftTest(config.scaleDown, poolConfig, poolConfig.template, pool);
  const refuse = (node: NodeRecord) => {
    const last = asked.get(node.nodeId);
    const again = last ? Date.parse(last.at) + renewalRetryMs(config, last.asks ?? 1) : NaN;
    if (!(again > nowMs)) {
      const lift = capLift(node);
      if (lift && lift.atMs <= nowMs) return budget.refuseUncapped(node);
      const refusal = budget.refuse(node);
      const heldByCap = refusal !== undefined && lift !== undefined && budget.refuseUncapped(node) === undefined;
      return heldByCap ? `${refusal}; past ${lift.setting} from ${at(lift.atMs)}, its gears' move limit no longer holds it` : refusal;
    }
    return `its renewal was asked for at ${last!.at}${(last!.asks ?? 1) > 1 ? ` (${last!.asks} times)` : ''}; asked again from ${at(again)}`;
  };
  const chosen: Renewal[] = [];
  let firstRefusal: string | undefined;
  for (const node of candidates) {
    const refusal = renewalRefusal(node, { fresh, refuse, protectedNodes: poolConfig.protectedNodes });
    if (refusal) {
      firstRefusal ??= `${node.nodeId}: ${refusal}`;
      continue;
    }
    const stats = node.stats!;
    const lift = capLift(node);
    const pastGrace = lift && lift.atMs <= nowMs ? `, past ${lift.setting} ${formatDuration(lift.graceMs)}: gears at their move limit move too` : '';
    chosen.push({ nodeId: node.nodeId, gears: stats.activeGears, disruptive: disruptiveMoves(stats), due: `${due.get(node)!}${pastGrace}` });
  }
  if (chosen.length === 0) return waits(`no ${kind} node may be drained now (${firstRefusal})`);
  return { renew: chosen.sort(byFewestRestarts).slice(0, room.count) };
}

/**
 * How many of the pool's active nodes are due for renewal now (drifted with `renewDrifted`, or expired), or undefined
 * when the pool renews nothing: the rollout an operator watches (metric `NodesDueForRenewal`) reaching 0.
 */
export function nodesDueForRenewal(input: Pick<PoolEvaluationInput, 'config' | 'poolConfig' | 'nodes' | 'now'>): number | undefined {
  return dueNodes(input)?.size;
}

/** The pool's active nodes it renews (drifted with `renewDrifted`, or expired), each with why; undefined when it renews nothing. */
function dueNodes(input: Pick<PoolEvaluationInput, 'config' | 'poolConfig' | 'nodes' | 'now'>): Map<NodeRecord, string> | undefined {
  const { config, poolConfig, nodes, now } = input;
  const { renewDrifted } = config.scaleDown;
  const expireAfter = expireAfterOf(config.scaleDown, poolConfig);
  if (!config.scaleDown.enabled || (!renewDrifted && expireAfter === undefined)) return undefined;
  const dueOf = renewalDueTest({ template: poolConfig.template, expireAfter, nowMs: now.getTime(), drift: renewDrifted });
  const due = new Map<NodeRecord, string>();
  for (const node of nodes) {
    const why = node.state === 'active' ? dueOf(node) : undefined;
    if (why !== undefined) due.set(node, why);
  }
  return due;
}

/** Longest wait before a node whose renewals did not take is asked for again. */
const RENEWAL_RETRY_MAX_MS = 86_400_000;

/** How long after its `asks`-th renewal a node still due and active is asked for again: the time that renewal could take, doubled each further ask. */
export function renewalRetryMs(config: Pick<PoolEvaluationInput['config'], 'scaleUp' | 'scaleDown' | 'leaseTtl'>, asks: number): number {
  const once = config.scaleUp.maxNodeProvisionTime + config.leaseTtl + config.scaleDown.drainTimeout;
  return Math.min(RENEWAL_RETRY_MAX_MS, once * 2 ** Math.min(10, Math.max(0, asks - 1)));
}

/** The reason the scale-up of a batch of renewals gives. */
export function renewalReason(renewals: readonly Renewal[]): string {
  const each = renewals.map((r) => `${r.nodeId} (${r.gears} gears, ${r.disruptive} restart a tenant; ${r.due})`).join(', ');
  const settings = [
    ...(renewals.some((r) => isDrift(r.due)) ? ['scaleDown.renewDrifted'] : []),
    ...(renewals.some((r) => !isDrift(r.due)) ? ['expireAfter'] : []),
  ].join(', ');
  return renewals.length === 1
    ? `renew ${each}: a replacement first, its drain once the replacement joined (${settings})`
    : `renew ${renewals.length} ${dueKind(renewals.map((r) => r.due))} nodes, ${each}: replacements first, their drains once the replacements joined (${settings})`;
}

function isDrift(due: string): boolean {
  return due.startsWith('drifted');
}

/** `drifted`, `expired`, or both, for the reasons' wording. */
function dueKind(reasons: readonly string[]): string {
  const drifted = reasons.some(isDrift);
  const expired = reasons.some((reason) => !isDrift(reason));
  return drifted && expired ? 'drifted or expired' : drifted ? 'drifted' : 'expired';
}

function renewalRefusal(
  node: NodeRecord,
  rules: { fresh: (node: NodeRecord) => boolean; refuse: (node: NodeRecord) => string | undefined; protectedNodes: readonly string[] },
): string | undefined {
  // No drain is active when a batch is chosen (renewalOf waits for them), so no node is receiving a drain's gears.
  if (isProtected(node, rules.protectedNodes)) return 'protected';
  if (!rules.fresh(node) || !node.stats) return 'no fresh stats';
  if (isClosedForAttrition(node)) return 'closed for attrition (its scale-down drains it)';
  return rules.refuse(node);
}

function byFewestRestarts(a: Renewal, b: Renewal): number {
  return a.disruptive - b.disruptive || a.gears - b.gears || (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0);
}

/**
 * The evaluation with a renewal in place of doing nothing, or with why the due nodes wait added to its reason.
 * Only a pool that neither scales nor moves nodes in or out of attrition this evaluation renews.
 */
export function withRenewal(input: PoolEvaluationInput, evaluation: PoolEvaluation): PoolEvaluation {
  const { decision } = evaluation;
  if (decision.kind !== 'no-action' || (evaluation.callOff?.length ?? 0) > 0) return evaluation;
  if (evaluation.attrition && evaluation.attrition.close.length + evaluation.attrition.reopen.length > 0) return evaluation;
  const verdict = renewalOf(input, evaluation);
  if (!verdict) return evaluation;
  if ('held' in verdict) return { ...evaluation, decision: { ...decision, reason: `${decision.reason}; ${verdict.held}` } };
  const renewals = verdict.renew;
  const { now, pool, nodes } = input;
  const at = now.toISOString();
  const renewed = new Set(renewals.map((r) => r.nodeId));
  const earlier = new Map((pool.lastRenewals ?? []).map((ask) => [ask.nodeId, ask]));
  // The asks of nodes still there and not renewed now are kept (a node asked for again counts its asks); nodes gone are forgotten.
  const present = new Set(nodes.filter((node) => node.state === 'active').map((node) => node.nodeId));
  const kept = (pool.lastRenewals ?? []).filter((ask) => present.has(ask.nodeId) && !renewed.has(ask.nodeId));
  const asks = renewals.map((r) => {
    const prior = earlier.get(r.nodeId);
    return { nodeId: r.nodeId, at, asks: prior ? (prior.asks ?? 1) + 1 : 1 };
  });
  const lastRenewals = [...kept, ...asks].slice(-ASKS_KEPT);
  // Their drains count against maxDrainsPerHour as a scale-down's do; without that limit the record keeps no times.
  const counted = poolBudget(input.config, input.poolConfig).maxDrainsPerHour !== undefined ? { scaleDownsAt: withScaleDown(pool.scaleDownsAt, now, renewals.length) } : {};
  const count = renewals.length;
  return {
    ...evaluation,
    decision: { kind: 'scale-up', count, wanted: count, clampedBy: [], forecastNodes: 0, renews: [...renewed], reason: renewalReason(renewals) },
    // As for the evaluator's scale-ups: delayAfterAdd keeps the new, empty nodes from being the next scale-down.
    poolPatch: { ...evaluation.poolPatch, ...counted, lastScaleUpAt: at, lastRenewals },
  };
}
