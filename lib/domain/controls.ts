/**
 * Operator controls, as data, and the pure rules the functions apply to them:
 * which pause holds an action back, the configuration a pool runs with once
 * the runtime overrides and schedules are applied, and what a decision does
 * in shadow mode. The CLI writes the records (lib/cli/controls.ts), the state
 * table keeps them (StateStore.listControls), the evaluator reads them once
 * per batch and the provisioner and gear mover check the pause before their
 * first effect.
 */
import type { Config, PoolConfig } from '../config/index.js';
import type { PoolDecision } from './decision.js';
import { scheduleActiveAt, type CapacitySchedule } from './schedule.js';
import type { DrainRecord, NodeState, PoolId } from './model.js';

/** A pause of every pool of the stage. */
export const ALL_POOLS = '*';
export const PAUSE_ACTIONS = ['all', 'scale-up', 'scale-down'] as const;
export type PauseActions = (typeof PAUSE_ACTIONS)[number];
export type Action = 'scale-up' | 'scale-down';

export interface PauseRecord {
  /** A pool id, or `*` for every pool. */
  pool: PoolId | typeof ALL_POOLS;
  actions: PauseActions;
  reason: string;
  /** Who paused: an AWS principal ARN, or `local user NAME`. */
  by: string;
  at: string;
  /** ISO time the pause ends by itself; absent: until `resume`. */
  until?: string;
}

/** The keys `nodescaler set POOL KEY VALUE` may change, and where each lives in the configuration file. */
export const OVERRIDE_KEYS = {
  min: { where: 'pool', type: 'int' },
  max: { where: 'pool', type: 'int' },
  mode: { where: 'pool', type: 'mode' },
  protectedNodes: { where: 'pool', type: 'list' },
  'scaleUp.threshold': { where: 'root', type: 'number' },
  'scaleUp.target': { where: 'root', type: 'number' },
  'scaleDown.utilizationThreshold': { where: 'root', type: 'number' },
  'scaleDown.enabled': { where: 'root', type: 'boolean' },
} as const;
export type OverrideKey = keyof typeof OVERRIDE_KEYS;
export type OverrideValue = number | boolean | string | string[];

export const MODES = ['active', 'shadow'] as const;
export type Mode = (typeof MODES)[number];

/** A pool's runtime overrides: one versioned item per pool; every change is also a decision-log entry. */
export interface OverrideRecord {
  pool: PoolId;
  values: Partial<Record<OverrideKey, OverrideValue>>;
  version: number;
  updatedAt: string;
  updatedBy: string;
  reason: string;
}

/**
 * A drain the evaluator must count before the gear mover has begun it: `drain NODE --replace` and a renewal, waiting for
 * their replacement node to join; an operator's plain `drain NODE`, sent at once (`decisionId`, no replacement).
 */
export interface PendingDrain {
  nodeId: string;
  pool: PoolId;
  /** The scale-up decision that asked for the replacement; none for a plain `drain NODE`. */
  replacementDecisionId?: string;
  /** The drain's own decision, when it was sent without a replacement (`drain NODE`): its record tells it has begun. */
  decisionId?: string;
  reason: string;
  by: string;
  at: string;
  /**
   * When the drain's message was sent. The item stays until the gear mover has begun the drain: until then the node
   * still looks active, and a scale-down decided meanwhile drained the replacement bought for it (RELIABILITY, finding 17).
   */
  sentAt?: string;
  /**
   * `cancel-drain` before the drain began: the evaluator does not start it, and the gear mover refuses its message
   * (lib/domain/pending-drains.ts cancelledBeforeBegun); the node no longer counts as leaving.
   */
  cancelledAt?: string;
  cancelledBy?: string;
  cancelReason?: string;
}

/**
 * The decisionId prefix of a renewal's drain (lib/domain/renewal.ts): an operator's kind of drain (`manual:`, no
 * lease), which the gear mover still holds to the disruption budget and to a pause of scale-down, as it does the
 * evaluator's scale-downs: nodescaler, not an operator, decided it.
 */
export const RENEWAL_DRAIN_PREFIX = 'manual:renew:';

export function isRenewalDrain(drain: { decisionId: string }): boolean {
  return drain.decisionId.startsWith(RENEWAL_DRAIN_PREFIX);
}

export interface Controls {
  pauses: PauseRecord[];
  overrides: OverrideRecord[];
  pendingDrains: PendingDrain[];
}

export const NO_CONTROLS: Controls = { pauses: [], overrides: [], pendingDrains: [] };

export type PendingDrainStep =
  | { step: 'wait'; reason: string }
  | { step: 'start'; reason: string }
  | { step: 'give-up'; reason: string };

/**
 * What to do with a drain waiting for its replacement: start it once every
 * node the scale-up claimed has joined (is active), give up when the
 * scale-up claimed none, a node of it failed, or nothing happened within
 * `giveUpAfter` (the drain is then not started: the operator decides again).
 */
export function pendingDrainStep(
  pending: PendingDrain,
  claim: { slots: ReadonlyArray<{ nodeId: string }>; reason?: string } | undefined,
  slotNodes: ReadonlyArray<{ nodeId: string; state: string } | undefined>,
  now: Date,
  giveUpAfter: number,
): PendingDrainStep {
  const late = now.getTime() - Date.parse(pending.at) > giveUpAfter;
  if (!claim) return late ? { step: 'give-up', reason: `replacement ${pending.replacementDecisionId} was never taken up` } : { step: 'wait', reason: 'replacement not claimed yet' };
  if (claim.slots.length === 0) return { step: 'give-up', reason: `replacement ${pending.replacementDecisionId} refused: ${claim.reason ?? 'no node claimed'}` };
  const broken = slotNodes.find((node) => node !== undefined && !['provisioning', 'active'].includes(node.state));
  if (broken) return { step: 'give-up', reason: `replacement node ${broken.nodeId} is ${broken.state}` };
  if (slotNodes.every((node) => node?.state === 'active')) return { step: 'start', reason: `replacement ${claim.slots.map((s) => s.nodeId).join(', ')} joined` };
  return late ? { step: 'give-up', reason: `replacement ${pending.replacementDecisionId} did not join in time` } : { step: 'wait', reason: 'replacement not joined yet' };
}

export type SentDrainStep = { step: 'wait' } | { step: 'begun' } | { step: 'expired'; reason: string };

/**
 * A pending drain whose message was sent: done once the gear mover has created its drain, whatever became of it; given
 * up once the message is older than any consumer acts on (`maxAge`, decisionMaxAge). Until then its node counts as
 * leaving the pool. One an operator cancelled stays while its drain is active, whatever its age: a drain created from a
 * message taken just before the cancel was written is refused at its first step by this item (lib/domain/pending-drains.ts).
 */
export function sentDrainStep(sentAt: string, drain: { state: DrainRecord['state'] } | undefined, cancelled: boolean, now: Date, maxAge: number): SentDrainStep {
  if (cancelled && drain?.state === 'active') return { step: 'wait' };
  if (drain) return { step: 'begun' };
  const age = now.getTime() - Date.parse(sentAt);
  if (age > maxAge) return { step: 'expired', reason: `its message, sent at ${sentAt}, was not taken up within decisionMaxAge (${Math.round(maxAge / 60_000)}m)` };
  return { step: 'wait' };
}

/** True once the drain's message is out: marked sent, or a plain `drain NODE`, which the CLI records as it sends it. */
export function isSent(pending: PendingDrain): boolean {
  return pending.sentAt !== undefined || pending.replacementDecisionId === undefined;
}

/**
 * A pool's nodes as the evaluator decides on them: an active node whose drain was sent but not yet begun counts as
 * draining (its slots on their way out, never a candidate), so no scale-down drains the replacement bought for it.
 */
export function nodesAsDecided<T extends { nodeId: string; state: NodeState }>(nodes: readonly T[], pendingDrains: readonly PendingDrain[], pool: PoolId): T[] {
  const leaving = new Set<string>();
  // A cancelled one stays (the gear mover refuses its message by it), but its node is staying.
  for (const pending of pendingDrains) if (pending.pool === pool && isSent(pending) && pending.cancelledAt === undefined) leaving.add(pending.nodeId);
  if (leaving.size === 0) return [...nodes];
  return nodes.map((node) => (node.state === 'active' && leaving.has(node.nodeId) ? { ...node, state: 'draining' as const } : node));
}

export function isOverrideKey(key: string): key is OverrideKey {
  return Object.prototype.hasOwnProperty.call(OVERRIDE_KEYS, key);
}

/** True when a pause is in force at `now` (not past its `until`). */
export function pauseInForce(pause: PauseRecord, now: Date): boolean {
  return pause.until === undefined || Date.parse(pause.until) > now.getTime();
}

/** The pause that holds `action` back in `pool` at `now`: the pool's own first, then the stage's. */
export function pauseFor(pauses: readonly PauseRecord[], pool: PoolId, action: Action, now: Date): PauseRecord | undefined {
  const applies = (p: PauseRecord) => (p.actions === 'all' || p.actions === action) && pauseInForce(p, now);
  return pauses.find((p) => p.pool === pool && applies(p)) ?? pauses.find((p) => p.pool === ALL_POOLS && applies(p));
}

/** Pauses in force that concern a pool (its own and the stage's), for `status` and `explain`. */
export function pausesOf(pauses: readonly PauseRecord[], pool: PoolId, now: Date): PauseRecord[] {
  return pauses.filter((p) => (p.pool === pool || p.pool === ALL_POOLS) && pauseInForce(p, now));
}

/** `scale-down paused by X since T until T: why`, the sentence status, explain and the decision log show. */
export function describePause(pause: PauseRecord): string {
  const what = pause.actions === 'all' ? 'scale-up and scale-down' : pause.actions;
  const where = pause.pool === ALL_POOLS ? ' (every pool)' : '';
  return `${what} paused${where} by ${pause.by} since ${pause.at}${pause.until ? ` until ${pause.until}` : ' until resumed'}: ${pause.reason}`;
}

/** The id of a pause: one per pool (or `*`) and actions; pausing again replaces it. */
export function pauseKey(pause: Pick<PauseRecord, 'pool' | 'actions'>): string {
  return `${pause.pool}#${pause.actions}`;
}

/** Why a decision of `pool` may not act now, or undefined: the guard of the provisioner and the gear mover. */
export function pausedReason(pauses: readonly PauseRecord[], pool: PoolId, action: Action, now: Date): string | undefined {
  const pause = pauseFor(pauses, pool, action, now);
  return pause ? `refused: ${describePause(pause)}` : undefined;
}

// ---------------------------------------------------------------------------
// The configuration a pool runs with.

export interface EffectiveConfig {
  config: Config;
  poolConfig: PoolConfig;
  mode: Mode;
  /** Overrides applied (key -> value), for explain. */
  overridden: Partial<Record<OverrideKey, OverrideValue>>;
  /** The schedule that raised `min`, if any. */
  schedule?: { min: number; cron: string; until: string };
}

/**
 * The file's configuration of one pool with its overrides and its schedules
 * applied. Overrides were validated against the file's schema when they were
 * set (the CLI); a value of the wrong type (a hand-edited item) is ignored
 * here rather than trusted. A schedule raises `min` (never above `max`).
 */
export function effectiveConfig(config: Config, poolConfig: PoolConfig, controls: Controls, poolId: PoolId, now: Date): EffectiveConfig {
  const values = controls.overrides.find((o) => o.pool === poolId)?.values ?? {};
  const overridden: EffectiveConfig['overridden'] = {};
  let pool: PoolConfig = poolConfig;
  let scaleUp = config.scaleUp;
  let scaleDown = config.scaleDown;
  for (const [key, value] of Object.entries(values) as Array<[OverrideKey, OverrideValue]>) {
    if (!isOverrideKey(key) || !valueFits(key, value)) continue;
    overridden[key] = value;
    switch (key) {
      case 'min':
      case 'max':
        pool = { ...pool, [key]: value as number };
        break;
      case 'mode':
        pool = { ...pool, mode: value as Mode };
        break;
      case 'protectedNodes':
        pool = { ...pool, protectedNodes: value as string[] };
        break;
      case 'scaleUp.threshold':
        scaleUp = { ...scaleUp, threshold: value as number };
        break;
      case 'scaleUp.target':
        scaleUp = { ...scaleUp, target: value as number };
        break;
      case 'scaleDown.utilizationThreshold':
        scaleDown = { ...scaleDown, utilizationThreshold: value as number };
        break;
      case 'scaleDown.enabled':
        scaleDown = { ...scaleDown, enabled: value as boolean };
        break;
    }
  }
  let schedule: EffectiveConfig['schedule'];
  for (const entry of (pool.schedules ?? []) as readonly CapacitySchedule[]) {
    const until = scheduleActiveAt(entry, now);
    if (until === undefined) continue;
    const min = Math.min(entry.min, pool.max);
    if (min > pool.min && (schedule === undefined || min > schedule.min)) schedule = { min, cron: entry.cron, until };
  }
  if (schedule) pool = { ...pool, min: schedule.min };
  const mode: Mode = pool.mode ?? config.mode ?? 'active';
  const result: EffectiveConfig = {
    config: scaleUp === config.scaleUp && scaleDown === config.scaleDown ? config : { ...config, scaleUp, scaleDown },
    poolConfig: pool,
    mode,
    overridden,
  };
  if (schedule) result.schedule = schedule;
  return result;
}

function valueFits(key: OverrideKey, value: unknown): boolean {
  switch (OVERRIDE_KEYS[key].type) {
    case 'int':
      return typeof value === 'number' && Number.isInteger(value) && value >= 0;
    case 'number':
      return typeof value === 'number' && value >= 0 && value <= 1;
    case 'boolean':
      return typeof value === 'boolean';
    case 'mode':
      return (MODES as readonly unknown[]).includes(value);
    case 'list':
      return Array.isArray(value) && value.every((v) => typeof v === 'string');
  }
}

// ---------------------------------------------------------------------------
// What a decision does under the controls.

export type Gate =
  | { act: true }
  /** Held back by a pause: logged as no-action with the pause named. */
  | { act: false; paused: PauseRecord; reason: string }
  /** Shadow mode: logged as what it would have done, nothing sent. */
  | { act: false; shadow: true; reason: string };

/** Whether the evaluator carries a decision out (`gears`: those of the node a scale-down drains): a pause wins over shadow mode (nothing would be done either way). */
export function gateDecision(decision: PoolDecision, poolId: PoolId, mode: Mode, pauses: readonly PauseRecord[], now: Date, gears?: number): Gate {
  if (decision.kind === 'no-action') return { act: true };
  // A renewal adds a node and then drains one: a pause of either holds it.
  const pause = pauseFor(pauses, poolId, decision.kind, now) ?? (decision.kind === 'scale-up' && decision.renews?.length ? pauseFor(pauses, poolId, 'scale-down', now) : undefined);
  if (pause) return { act: false, paused: pause, reason: `${decision.reason}; not carried out: ${describePause(pause)}` };
  if (mode === 'shadow') return { act: false, shadow: true, reason: `shadow mode: ${shadowSentence(decision, gears)}; ${decision.reason}` };
  return { act: true };
}

/** What a shadow decision would have done, as the decision log records it. */
export interface ShadowDetails {
  action: Action;
  /** Nodes it would have added (scale-up). */
  nodes?: number;
  /** The node it would have drained (scale-down), its gears (= gear moves, each a tenant restart). */
  nodeId?: string;
  gears?: number;
  /** `would add 2 nodes`, `would drain X (12 gears, 12 moves, saving 1 node)`. */
  sentence?: string;
}

export function shadowSentence(decision: Exclude<PoolDecision, { kind: 'no-action' }>, gears?: number): string {
  if (decision.kind === 'scale-up' && decision.renews?.length) return `would add ${decision.count} node${decision.count === 1 ? '' : 's'}, then drain ${decision.renews.join(', ')} (renewal)`;
  if (decision.kind === 'scale-up') return `would add ${decision.count} node${decision.count === 1 ? '' : 's'}`;
  const also = decision.alsoNodeIds?.length ? ` and ${decision.alsoNodeIds.length} more node${decision.alsoNodeIds.length === 1 ? '' : 's'} (${decision.alsoNodeIds.join(', ')})` : '';
  return `would drain ${decision.nodeId}${gears === undefined ? '' : ` (${gears} gear${gears === 1 ? '' : 's'}, ${gears} move${gears === 1 ? '' : 's'}, saving 1 node)`}${also}`;
}

/** The key two identical shadow decisions share, so a pool that stays low records "would drain X" once, not every 30 s. */
export function shadowKey(decision: Exclude<PoolDecision, { kind: 'no-action' }>): string {
  return decision.kind === 'scale-up' ? `scale-up:${decision.count}` : `scale-down:${[decision.nodeId, ...(decision.alsoNodeIds ?? [])].join(',')}`;
}

// ---------------------------------------------------------------------------
// The shadow report.

export interface ShadowEntry {
  pool: PoolId;
  at: string;
  details?: Record<string, unknown>;
}

export interface ShadowSummary {
  since: string;
  pools: Array<{ pool: PoolId; scaleUps: number; nodesAdded: number; drains: number; nodesRemoved: number; gearMoves: number; nodeHoursSaved: number }>;
  totals: { scaleUps: number; nodesAdded: number; drains: number; nodesRemoved: number; gearMoves: number; nodeHoursSaved: number };
}

/**
 * Sums shadow decisions since `since`. A node it would have drained counts as
 * saved from that decision until the pool's next would-add (the capacity
 * would have come back) or `now`: an estimate, since in shadow mode the pool
 * never shrinks and the evaluator keeps naming the same node.
 */
export function summarizeShadow(entries: readonly ShadowEntry[], since: Date, now: Date): ShadowSummary {
  const byPool = new Map<PoolId, ShadowEntry[]>();
  for (const entry of entries) {
    const shadow = entry.details?.shadow as ShadowDetails | undefined;
    if (!shadow || Date.parse(entry.at) < since.getTime()) continue;
    byPool.set(entry.pool, [...(byPool.get(entry.pool) ?? []), entry]);
  }
  const pools: ShadowSummary['pools'] = [];
  for (const [pool, list] of [...byPool.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const sorted = [...list].sort((a, b) => a.at.localeCompare(b.at));
    const row = { pool, scaleUps: 0, nodesAdded: 0, drains: 0, nodesRemoved: 0, gearMoves: 0, nodeHoursSaved: 0 };
    sorted.forEach((entry, i) => {
      const shadow = entry.details!.shadow as ShadowDetails;
      if (shadow.action === 'scale-up') {
        row.scaleUps++;
        row.nodesAdded += shadow.nodes ?? 0;
        return;
      }
      row.drains++;
      row.nodesRemoved++;
      row.gearMoves += shadow.gears ?? 0;
      const nextUp = sorted.slice(i + 1).find((e) => (e.details!.shadow as ShadowDetails).action === 'scale-up');
      const end = nextUp ? Date.parse(nextUp.at) : now.getTime();
      row.nodeHoursSaved += Math.max(0, end - Date.parse(entry.at)) / 3_600_000;
    });
    row.nodeHoursSaved = Math.round(row.nodeHoursSaved * 10) / 10;
    pools.push(row);
  }
  const totals = { scaleUps: 0, nodesAdded: 0, drains: 0, nodesRemoved: 0, gearMoves: 0, nodeHoursSaved: 0 };
  for (const row of pools) for (const key of Object.keys(totals) as Array<keyof typeof totals>) totals[key] += row[key];
  totals.nodeHoursSaved = Math.round(totals.nodeHoursSaved * 10) / 10;
  return { since: since.toISOString(), pools, totals };
}

/**
 * The nodes of a pool that no scale-down or operator's drain may take now:
 * the file's pools[].protectedNodes, or the runtime override that replaces
 * it (`nodescaler set POOL protectedNodes ...`), as the evaluator reads them.
 * The gear mover and the CLI refuse with the same list, so a drain the
 * evaluator decides is never refused for a list it did not see.
 */
export function protectedNodesNow(config: Config, poolConfig: PoolConfig | undefined, controls: Controls, poolId: PoolId, now: Date): readonly string[] {
  if (!poolConfig) return [];
  return effectiveConfig(config, poolConfig, controls, poolId, now).poolConfig.protectedNodes ?? [];
}
