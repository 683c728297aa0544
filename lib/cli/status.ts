/**
 * `nodescaler status [POOL]`: every pool with its nodes by state,
 * utilization, limits, the action in flight (the pool lease), what holds it
 * back until when (capacity exhaustion, failure backoff, scale-down delays),
 * and the drains in progress with each gear's move.
 */
import { controlsView, type ControlsView } from './controls-view.js';
import type { Config, PoolConfig } from '../config/index.js';
import { progressOf, drainKind, type Progress } from '../domain/drain.js';
import type { DrainKind, DrainRecord, MoveState, NodeRecord, NodeState, PoolId, PoolRecord } from '../domain/model.js';
import { districtRunningOut } from '../domain/district-capacity.js';
import { driftTest, templateSeenSince } from '../domain/drift.js';
import { expireAfterOf, expiryTest } from '../domain/expiry.js';
import { failureBackoff } from '../domain/failure-backoff.js';
import { isProtected, slotHolders } from '../domain/node-stats.js';
import { usableMarketPrices } from '../domain/market-prices.js';
import { nodeHourPriceOf } from '../domain/node-price.js';
import { poolMoveCost } from '../domain/payoff-gate.js';
import { poolCapLiftTest } from '../domain/renewal-grace.js';
import { computeUtilization, expectedGearsPerNode, freshStatsTest } from '../domain/utilization.js';
import type { PoolState, Snapshot } from './snapshot.js';

/** Node states that hold a cloud instance, as the global limits count them. */
const NON_TERMINAL: ReadonlySet<NodeState> = new Set<NodeState>(['provisioning', 'active', 'draining', 'drained', 'terminating']);
/** Gears listed per drain in text (every gear is in --json, and with --all). */

export interface HoldView {
  /** What holds: `capacity exhausted`, `failure backoff`, `scaleDown.delayAfterAdd`, ... */
  kind: string;
  /** What it blocks. */
  blocks: 'scale-up' | 'scale-down' | 'scale-up and scale-down';
  until: string;
}

export interface NodeView {
  nodeId: string;
  state: NodeState;
  activeGears: number | null;
  /** Stopped or idled gears its agent listed (they hold no slot, but a drain moves them and the node is released only without them); null without a list. */
  idleGears: number | null;
  maxActiveGears: number | null;
  utilization: number | null;
  reportedAt: string | null;
  stale: boolean;
  protected: boolean;
  origin: NodeRecord['origin'];
  instanceId: string | null;
  /** The availability zone its host runs in, when the cloud said. */
  zone: string | null;
  /** Why it is drifted from the pool's template (lib/domain/drift.ts); null when it is not, what it runs is not known, or its host is gone. */
  drift: string | null;
  /** Why it is expired (launched longer ago than the pool's expireAfter, lib/domain/expiry.ts); null when it is not, expiry is off, or its host is gone. */
  expired: string | null;
  /** When its renewal stops honouring the gear cap (scaleDown.expireGrace or driftGrace, lib/domain/renewal-grace.ts); null when it is not due or no grace applies. */
  gearCapLiftsAt: string | null;
  drainId: string | null;
  stateChangedAt: string;
  reason: string | null;
}

export interface MoveView {
  uuid: string;
  app: string;
  target: string;
  state: MoveState;
  attempts: number;
  lastError: string | null;
  nextAttemptAt: string | null;
}

export interface DrainView {
  drainId: string;
  nodeId: string;
  kind: DrainKind;
  decisionId: string;
  reason: string;
  startedAt: string;
  updatedAt: string;
  urgent: boolean;
  /** Set while a drain stops (cancel-drain, a failed gear, a timeout): moves in flight settle, then the node re-opens. */
  stopping: { since: string; reason: string } | null;
  closedAt: string | null;
  plannedAt: string | null;
  completedAt: string | null;
  unplaced: number | null;
  progress: Progress;
  /** Moved gears the node's agent marked disruptive: each move restarted its tenant (TenantRestarts). */
  tenantRestarts: number;
  moves: MoveView[];
}

export interface PoolView {
  pool: PoolId;
  configured: boolean;
  min: number | null;
  max: number | null;
  nodes: number;
  nodesByState: Partial<Record<NodeState, number>>;
  utilization: number | null;
  demand: number;
  capacity: number;
  provisioningCapacity: number;
  freeSlots: number;
  staleNodes: string[];
  /** Nodes holding a host (not terminated) launched from a template the pool no longer names. */
  driftedNodes: string[];
  /** scaleDown.renewDrifted: the evaluator renews them itself (lib/domain/renewal.ts). */
  renewsDrifted: boolean;
  /** When the evaluator first saw the pool's template as it is now (the pool record's templateSeen): its drifted nodes drifted then at the latest. Null before it has. */
  templateSeenSince: string | null;
  /** Nodes holding a host launched longer ago than the pool's expireAfter: the evaluator renews them (lib/domain/expiry.ts). */
  expiredNodes: string[];
  thresholds: { scaleUp: number; scaleDown: number };
  /** What a drain of one of its nodes is credited per node-hour (lib/domain/node-price.ts), and why; null when the pays-off check is off. */
  nodeHourPrice: { dollars: number; source: string } | null;
  /** What each kind of move costs its drain's pays-off check, in dollars, and which setting says so; null when the check is off. */
  moveCost: { idle: number; sibling: number; disruptive: number; source: string } | null;
  /** Each market whose last price read failed, when that is newer than its last good one (lib/app/market-prices.ts). */
  priceReadFailures: Array<{ market: 'spot' | 'on-demand'; at: string; failure: string }>;
  /** The district's UIDs as the broker reporter last read them (district-capacity), `low` under a tenth left; null when never read. */
  districtUids: { maxCapacity: number; availableCapacity: number; readAt: string; low: boolean } | null;
  highSince: string | null;
  lowSince: string | null;
  lease: { holder: string; kind: string; acquiredAt: string; expiresAt: string; sentAt: string | null; expired: boolean } | null;
  holds: HoldView[];
  lastScaleUpAt: string | null;
  lastScaleDownAt: string | null;
  lastFailureAt: string | null;
  lastDrainFailureAt: string | null;
  lastEvaluatedAt: string | null;
  exhaustedUntil: string | null;
  nodeList: NodeView[];
  drains: DrainView[];
  /** Pauses, shadow mode, overrides, schedule (lib/cli/controls-view.ts). */
  controls?: ControlsView;
}

export interface StatusView {
  target: string;
  at: string;
  limits: { nodes: number; maxNodesTotal: number; maxCores: number | null; maxMemoryGiB: number | null };
  pools: PoolView[];
}

export function statusView(snapshot: Snapshot, target: string): StatusView {
  const { config, now } = snapshot;
  let nodes = 0;
  for (const node of snapshot.allNodes) if (NON_TERMINAL.has(node.state)) nodes++;
  return {
    target,
    at: now.toISOString(),
    limits: { nodes, maxNodesTotal: config.limits.maxNodesTotal, maxCores: config.limits.maxCores ?? null, maxMemoryGiB: config.limits.maxMemoryGiB ?? null },
    pools: snapshot.pools.map((pool) => ({ ...poolView(pool, config, now), controls: controlsView(snapshot, pool) })),
  };
}

function poolView(pool: PoolState, config: Config, now: Date): PoolView {
  const nowMs = now.getTime();
  const gearsPerNode = expectedGearsPerNode(pool.config ?? {}, pool.nodes);
  const u = computeUtilization({ pool: pool.pool, nodes: pool.nodes, drains: pool.drains, now, statsMaxAge: config.statsMaxAge, expectedGearsPerNode: gearsPerNode });
  const fresh = freshStatsTest(nowMs, config.statsMaxAge);
  const record = pool.record;
  const holds: HoldView[] = [];
  const hold = (kind: string, blocks: HoldView['blocks'], untilMs: number) => {
    if (Number.isFinite(untilMs) && untilMs > nowMs) holds.push({ kind, blocks, until: new Date(untilMs).toISOString() });
  };
  if (record) {
    hold('capacity exhausted', 'scale-up', record.exhaustedUntil ? Date.parse(record.exhaustedUntil) : NaN);
    const delay = config.scaleDown.delayAfterFailure;
    const hostFailure = failureBackoff(record, delay, 'scale-up')?.untilMs ?? NaN;
    hold('failure backoff (scaleDown.delayAfterFailure)', 'scale-up and scale-down', hostFailure);
    // A failed drain holds only scale-down, and a host failure's hold above already says so when it lasts as long.
    const drainFailure = failureBackoff(record, delay, 'scale-down')?.untilMs ?? NaN;
    if (!(hostFailure >= drainFailure)) hold('drain failure backoff (scaleDown.delayAfterFailure)', 'scale-down', drainFailure);
    hold('scaleDown.delayAfterAdd', 'scale-down', record.lastScaleUpAt ? Date.parse(record.lastScaleUpAt) + config.scaleDown.delayAfterAdd : NaN);
    hold('scaleDown.delayAfterDelete', 'scale-down', record.lastScaleDownAt ? Date.parse(record.lastScaleDownAt) + config.scaleDown.delayAfterDelete : NaN);
  }
  const lease = record?.lease;
  const drifted = pool.config ? driftTest(pool.config.template) : () => undefined;
  const expired = config.scaleDown.enabled && pool.config ? expiryTest(expireAfterOf(config.scaleDown, pool.config), nowMs) : () => undefined;
  const { scaleDown } = config;
  const renewsDrifted = scaleDown.enabled && scaleDown.renewDrifted;
  const seenMs = pool.config && record ? templateSeenSince(pool.config.template, record) : undefined;
  const capLift = pool.config ? poolCapLiftTest(scaleDown, pool.config, pool.config.template, record ?? {}) : () => undefined;
  const nodeList = pool.nodes.map((node) => nodeView(node, pool.config, fresh, { drifted, expired, capLift }));
  const priced = pool.config !== undefined && config.scaleDown.enabled && config.scaleDown.payoff.enabled;
  return {
    pool: pool.pool,
    configured: pool.config !== undefined,
    min: pool.config?.min ?? null,
    max: pool.config?.max ?? null,
    nodes: pool.nodes.filter((n) => n.state !== 'terminated').length,
    nodesByState: u.nodesByState,
    utilization: Number.isFinite(u.utilization) ? round(u.utilization) : null,
    demand: u.demand,
    capacity: u.capacity,
    provisioningCapacity: u.provisioningCapacity,
    freeSlots: u.freeSlots,
    staleNodes: u.staleNodes,
    driftedNodes: nodeList.filter((node) => node.drift !== null).map((node) => node.nodeId),
    renewsDrifted,
    templateSeenSince: seenMs === undefined ? null : new Date(seenMs).toISOString(),
    expiredNodes: nodeList.filter((node) => node.expired !== null).map((node) => node.nodeId),
    thresholds: { scaleUp: config.scaleUp.threshold, scaleDown: config.scaleDown.utilizationThreshold },
    nodeHourPrice: priced ? nodeHourPriceOf(config.scaleDown.payoff, pool.config, {}, usableMarketPrices(record ?? {}, now)) : null,
    moveCost: priced ? { ...poolMoveCost(config.scaleDown.payoff.moveCost, pool.config), source: pool.config?.moveCost ? "the pool's moveCost" : 'scaleDown.payoff.moveCost' } : null,
    priceReadFailures: priced ? priceReadFailures(record) : [],
    districtUids: record?.districtCapacity ? { ...record.districtCapacity, low: districtRunningOut(record.districtCapacity) } : null,
    highSince: record?.highSince ?? null,
    lowSince: record?.lowSince ?? null,
    lease: lease
      ? { holder: lease.holder, kind: lease.kind, acquiredAt: lease.acquiredAt, expiresAt: lease.expiresAt, sentAt: lease.sentAt ?? null, expired: Date.parse(lease.expiresAt) <= nowMs }
      : null,
    holds,
    lastScaleUpAt: record?.lastScaleUpAt ?? null,
    lastScaleDownAt: record?.lastScaleDownAt ?? null,
    lastFailureAt: record?.lastFailureAt ?? null,
    lastDrainFailureAt: record?.lastDrainFailureAt ?? null,
    lastEvaluatedAt: record?.lastEvaluatedAt ?? null,
    exhaustedUntil: record?.exhaustedUntil ?? null,
    nodeList,
    drains: pool.drains.map(drainView),
  };
}

type NodeReason = (node: NodeRecord) => string | undefined;

interface DueTests {
  drifted: NodeReason;
  expired: NodeReason;
  capLift: (node: NodeRecord) => { atMs: number } | undefined;
}

function nodeView(node: NodeRecord, poolConfig: PoolConfig | undefined, fresh: (node: NodeRecord) => boolean, due: DueTests): NodeView {
  const stats = node.stats;
  // A terminated node's host is gone: nothing left to renew.
  const drift = (NON_TERMINAL.has(node.state) && due.drifted(node)) || null;
  const expired = (NON_TERMINAL.has(node.state) && due.expired(node)) || null;
  const lift = drift !== null || expired !== null ? due.capLift(node) : undefined;
  return {
    nodeId: node.nodeId,
    state: node.state,
    activeGears: stats?.activeGears ?? null,
    idleGears: stats?.gears ? stats.gears.length - slotHolders(stats.gears) : (stats?.listed?.idle ?? null),
    maxActiveGears: stats?.maxActiveGears ?? null,
    utilization: stats && stats.maxActiveGears > 0 ? round(stats.activeGears / stats.maxActiveGears) : null,
    reportedAt: stats?.reportedAt ?? null,
    stale: (node.state === 'active' || node.state === 'draining') && !fresh(node),
    protected: isProtected(node, poolConfig?.protectedNodes ?? []),
    origin: node.origin,
    instanceId: node.instanceId ?? null,
    zone: node.zone ?? null,
    drift,
    expired,
    gearCapLiftsAt: lift ? new Date(lift.atMs).toISOString() : null,
    drainId: node.drainId ?? null,
    stateChangedAt: node.stateChangedAt,
    reason: node.reason ?? null,
  };
}

function drainView(drain: DrainRecord): DrainView {
  return {
    drainId: drain.drainId,
    nodeId: drain.nodeId,
    kind: drainKind(drain),
    decisionId: drain.decisionId,
    reason: drain.reason,
    startedAt: drain.startedAt,
    updatedAt: drain.updatedAt,
    urgent: drain.urgentSince !== undefined,
    stopping: drain.abortRequestedAt ? { since: drain.abortRequestedAt, reason: drain.abortReason ?? 'aborting' } : null,
    closedAt: drain.closedAt ?? null,
    plannedAt: drain.plannedAt ?? null,
    completedAt: drain.completedAt ?? null,
    unplaced: drain.unplaced ?? null,
    progress: progressOf(drain.moves),
    tenantRestarts: drain.moves.filter((move) => move.state === 'moved' && move.gear.disruptive).length,
    moves: drain.moves.map((move) => ({
      uuid: move.gear.uuid,
      app: move.gear.app,
      target: move.target,
      state: move.state,
      attempts: move.attempts,
      lastError: move.lastError ?? null,
      nextAttemptAt: move.nextAttemptAt ?? null,
    })),
  };
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

// ---------------------------------------------------------------------------
// Text.

/** A market's last read that failed after its last good one: its prices are getting old. */
function priceReadFailures(record: Pick<PoolRecord, 'spotPrices' | 'onDemandPrices'> | undefined): PoolView['priceReadFailures'] {
  const markets = [
    ['spot', record?.spotPrices],
    ['on-demand', record?.onDemandPrices],
  ] as const;
  return markets.flatMap(([market, read]) =>
    read?.failedAt && !(read.readAt && read.readAt >= read.failedAt) ? [{ market, at: read.failedAt, failure: read.failure ?? 'unknown' }] : [],
  );
}

export { renderStatus, type TextOptions } from './status-text.js';
