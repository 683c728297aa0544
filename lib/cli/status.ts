/**
 * `nodescaler status [POOL]`: every pool with its nodes by state,
 * utilization, limits, the action in flight (the pool lease), what holds it
 * back until when (capacity exhaustion, failure backoff, scale-down delays),
 * and the drains in progress with each gear's move.
 */
import { controlsView, renderControls, type ControlsView } from './controls-view.js';
import type { Config, PoolConfig } from '../config/index.js';
import { progressOf, drainKind, type Progress } from '../domain/drain.js';
import type { DrainKind, DrainRecord, MoveState, NodeRecord, NodeState, PoolId, PoolRecord } from '../domain/model.js';
import { districtRunningOut } from '../domain/district-capacity.js';
import { driftTest } from '../domain/drift.js';
import { expireAfterOf, expiryTest } from '../domain/expiry.js';
import { failureBackoff } from '../domain/failure-backoff.js';
import { isProtected } from '../domain/node-stats.js';
import { usableMarketPrices } from '../domain/market-prices.js';
import { nodeHourPriceOf } from '../domain/node-price.js';
import { poolMoveCost } from '../domain/payoff-gate.js';
import { computeUtilization, expectedGearsPerNode, freshStatsTest } from '../domain/utilization.js';
import { clockTime, plural, ratio, renderTable, when, wrap, type Cell, type Style } from './render.js';
import type { PoolState, Snapshot } from './snapshot.js';

/** Node states that hold a cloud instance, as the global limits count them. */
const NON_TERMINAL: ReadonlySet<NodeState> = new Set<NodeState>(['provisioning', 'active', 'draining', 'drained', 'terminating']);
/** Gears listed per drain in text (every gear is in --json, and with --all). */
const GEARS_SHOWN = 12;

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
  const nodeList = pool.nodes.map((node) => nodeView(node, pool.config, fresh, { drifted, expired }));
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
    renewsDrifted: config.scaleDown.enabled && config.scaleDown.renewDrifted,
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

function nodeView(node: NodeRecord, poolConfig: PoolConfig | undefined, fresh: (node: NodeRecord) => boolean, due: { drifted: NodeReason; expired: NodeReason }): NodeView {
  const stats = node.stats;
  return {
    nodeId: node.nodeId,
    state: node.state,
    activeGears: stats?.activeGears ?? null,
    maxActiveGears: stats?.maxActiveGears ?? null,
    utilization: stats && stats.maxActiveGears > 0 ? round(stats.activeGears / stats.maxActiveGears) : null,
    reportedAt: stats?.reportedAt ?? null,
    stale: (node.state === 'active' || node.state === 'draining') && !fresh(node),
    protected: isProtected(node, poolConfig?.protectedNodes ?? []),
    origin: node.origin,
    instanceId: node.instanceId ?? null,
    zone: node.zone ?? null,
    // A terminated node's host is gone: nothing left to renew.
    drift: (NON_TERMINAL.has(node.state) && due.drifted(node)) || null,
    expired: (NON_TERMINAL.has(node.state) && due.expired(node)) || null,
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

export interface TextOptions {
  style: Style;
  width?: number;
  /** Every gear of every drain, not only the first ones not yet moved. */
  allGears?: boolean;
  /** Pools the configuration lacks (adopted nodes) in full, not in one line. */
  allPools?: boolean;
}

export function renderStatus(view: StatusView, options: TextOptions): string[] {
  const { style: s, width } = options;
  const now = new Date(view.at);
  const lines: string[] = [];
  const limits = view.limits;
  lines.push(...wrap(`${s.bold('nodescaler status')} · ${view.target} · ${clockTime(view.at, now)} · ${limits.nodes} of ${limits.maxNodesTotal} nodes (limits.maxNodesTotal)`, width));
  if (view.pools.length === 0) lines.push('no pool configured or recorded');
  // Pools the configuration lacks hold adopted nodes nodescaler never evaluates: one line, or in full with --all.
  const hidden = options.allPools ? [] : view.pools.filter((pool) => !pool.configured && pool.nodes > 0);
  for (const pool of view.pools) {
    if (hidden.includes(pool) || (!pool.configured && pool.nodes === 0 && !options.allPools)) continue;
    lines.push('');
    lines.push(...renderPool(pool, now, options));
  }
  if (hidden.length > 0) {
    const nodes = hidden.reduce((sum, pool) => sum + pool.nodes, 0);
    lines.push('');
    lines.push(
      ...wrap(
        s.yellow(`${plural(nodes, 'adopted node')} in ${plural(hidden.length, 'pool')} the configuration lacks (${hidden.map((pool) => `${pool.pool}: ${pool.nodes}`).join(', ')}), never evaluated: `) +
          'nodescaler status --all lists them; nodescaler forget NODE --reason TEXT drops one',
        width,
      ),
    );
  }
  return lines;
}

function renderPool(pool: PoolView, now: Date, options: TextOptions): string[] {
  const { style: s, width } = options;
  const lines: string[] = [];
  const byState = Object.entries(pool.nodesByState)
    .filter(([, count]) => (count ?? 0) > 0)
    .map(([state, count]) => `${count} ${s.state(state)}`)
    .join(', ');
  const bounds = pool.configured ? `min ${pool.min} · max ${pool.max}` : s.yellow('not in the configuration: not evaluated');
  lines.push(...wrap(`${s.bold(`pool ${pool.pool}`)} · ${bounds} · ${plural(pool.nodes, 'node')}${byState ? `: ${byState}` : ''}`, width));

  const util = pool.utilization === null ? 'inf' : ratio(pool.utilization);
  const utilText = pool.utilization !== null && pool.utilization >= pool.thresholds.scaleUp ? s.yellow(util) : util;
  const band = `scale up >= ${ratio(pool.thresholds.scaleUp)}, down <= ${ratio(pool.thresholds.scaleDown)}`;
  const slots = `${pool.demand} gears in ${pool.capacity}${pool.provisioningCapacity ? ` (+${pool.provisioningCapacity} provisioning)` : ''} slots, ${pool.freeSlots} free`;
  const since = pool.highSince ? `, high since ${when(pool.highSince, now)}` : pool.lowSince ? `, low since ${when(pool.lowSince, now)}` : '';
  lines.push(...wrap(`utilization ${utilText} (${slots}; ${band})${since}`, width, '  '));
  if (pool.staleNodes.length > 0) lines.push(...wrap(s.yellow(`stale stats: ${pool.staleNodes.join(', ')}`), width, '  '));
  if (pool.driftedNodes.length > 0) {
    const drifted = `drifted from the pool's template: ${pool.driftedNodes.join(', ')}`;
    const how = pool.renewsDrifted ? 'renewed a few at a time, replacements first (scaleDown.renewDrifted)' : 'drained first among equal candidates; nodescaler drain NODE --replace renews one now';
    lines.push(...wrap(`${drifted} (${how})`, width, '  '));
  }
  if (pool.expiredNodes.length > 0) {
    lines.push(...wrap(`expired (expireAfter): ${pool.expiredNodes.join(', ')} (renewed a few at a time, replacements first)`, width, '  '));
  }
  if (pool.nodeHourPrice) lines.push(...wrap(`drains priced at $${pool.nodeHourPrice.dollars} a node-hour (${pool.nodeHourPrice.source})`, width, '  '));
  if (pool.moveCost) {
    const { idle, sibling, disruptive, source } = pool.moveCost;
    lines.push(...wrap(`moves priced at $${disruptive} a restart, $${sibling} a sibling gear's, $${idle} an idle gear's (${source})`, width, '  '));
  }
  for (const failed of pool.priceReadFailures) lines.push(...wrap(s.yellow(`${failed.market} prices not read ${when(failed.at, now)}: ${failed.failure}`), width, '  '));
  const uids = pool.districtUids;
  if (uids) {
    const text = `district UIDs: ${uids.availableCapacity} of ${uids.maxCapacity} left (read ${when(uids.readAt, now)})`;
    lines.push(...wrap(uids.low ? s.yellow(`${text}: new gears are refused once none is left, whatever nodes the pool has`) : text, width, '  '));
  }

  if (pool.lease && !pool.lease.expired) {
    const sent = pool.lease.sentAt ? `sent ${clockTime(pool.lease.sentAt, now)}` : s.yellow('not confirmed sent (the evaluator sends it again)');
    lines.push(...wrap(`in flight: ${s.cyan(pool.lease.kind)} ${pool.lease.holder} since ${clockTime(pool.lease.acquiredAt, now)}, lease until ${when(pool.lease.expiresAt, now)}, ${sent}`, width, '  '));
  } else {
    lines.push(`  in flight: none${pool.lease?.expired ? ` (lease of ${pool.lease.holder} expired ${when(pool.lease.expiresAt, now)})` : ''}`);
  }
  lines.push(...renderControls(pool.controls, options));
  for (const hold of pool.holds) {
    const paint = hold.kind.startsWith('capacity') || hold.kind.startsWith('failure') ? s.red.bind(s) : s.yellow.bind(s);
    lines.push(...wrap(`${paint('blocked')}: ${hold.kind} until ${when(hold.until, now)} (holds ${hold.blocks})`, width, '  '));
  }

  if (pool.nodeList.length > 0) {
    // Zones only where the cloud names them (EC2); the local handlers' nodes have none.
    const zoned = pool.nodeList.some((node) => node.zone !== null);
    const rows: Cell[][] = pool.nodeList.map((node) => {
      const flags = [node.protected ? 'protected' : '', node.stale ? 'stale' : '', node.origin === 'adopted' ? 'adopted' : '', node.drift ? 'drifted' : '', node.expired ? 'expired' : ''].filter(Boolean).join(',');
      return [
        node.nodeId,
        { text: node.state, paint: (t) => s.paintState(node.state, t) },
        ...(zoned ? [node.zone ?? '-'] : []),
        node.activeGears === null ? '-' : `${node.activeGears}/${node.maxActiveGears}`,
        node.utilization === null ? '-' : ratio(node.utilization),
        node.reportedAt === null ? '-' : clockTime(node.reportedAt, now),
        { text: flags || '-', paint: (t) => (node.protected ? s.cyan(t) : node.stale ? s.yellow(t) : t) },
        node.reason ?? '',
      ];
    });
    const table = renderTable(
      [
        { header: 'NODE', keep: true },
        { header: 'STATE' },
        ...(zoned ? [{ header: 'ZONE' }] : []),
        { header: 'GEARS', align: 'right' },
        { header: 'UTIL', align: 'right' },
        { header: 'STATS' },
        { header: 'FLAGS' },
        { header: 'NOTE', flex: true },
      ],
      rows,
      width === undefined ? undefined : width - 2,
    );
    lines.push(...table.map((line, i) => `  ${i === 0 ? s.dim(line) : line}`));
  }

  for (const drain of pool.drains) lines.push(...renderDrain(drain, now, options));
  return lines;
}

function renderDrain(drain: DrainView, now: Date, options: TextOptions): string[] {
  const { style: s, width } = options;
  const p = drain.progress;
  const lines: string[] = [];
  const moved = `${p.moved} of ${p.total} gears moved${drain.tenantRestarts ? ` (${drain.tenantRestarts} restarted a tenant)` : ''}`;
  const counts = [moved, p.moving ? `${p.moving} moving` : '', p.planned ? `${p.planned} planned` : '', p.failed ? s.red(`${p.failed} failed`) : '']
    .filter(Boolean)
    .join(', ');
  const phase = drain.stopping
    ? s.yellow(`stopping since ${clockTime(drain.stopping.since, now)}: ${drain.stopping.reason}`)
    : drain.completedAt
      ? 'node empty, handing over to the decommissioner'
      : !drain.closedAt
        ? 'starting (node not closed yet)'
        : !drain.plannedAt
          ? 'planning'
          : counts;
  const urgent = drain.urgent ? s.red(' URGENT') : '';
  lines.push(...wrap(`${s.bold('drain')} ${drain.drainId} of ${drain.nodeId} (${drain.kind}${urgent}) since ${when(drain.startedAt, now)}: ${phase}`, width, '  '));
  if (drain.stopping || !drain.plannedAt) {
    if (p.total > 0) lines.push(`    ${counts}`);
  }
  if (drain.unplaced) lines.push(...wrap(s.yellow(`${drain.unplaced} gear(s) have no room yet`), width, '    '));
  const shown = options.allGears ? drain.moves : drain.moves.filter((m) => m.state !== 'moved').slice(0, GEARS_SHOWN);
  if (shown.length > 0) {
    const rows: Cell[][] = shown.map((move) => [
      move.uuid,
      move.app,
      move.target,
      { text: move.state, paint: (t) => (move.state === 'failed' ? s.red(t) : move.state === 'moving' ? s.yellow(t) : move.state === 'moved' ? s.green(t) : t) },
      String(move.attempts),
      move.lastError ? move.lastError : move.nextAttemptAt ? `next attempt ${clockTime(move.nextAttemptAt, now)}` : '',
    ]);
    const table = renderTable(
      [{ header: 'GEAR', flex: true }, { header: 'APP' }, { header: 'TARGET' }, { header: 'MOVE' }, { header: 'TRIES', align: 'right' }, { header: 'NOTE', flex: true }],
      rows,
      width === undefined ? undefined : width - 4,
    );
    lines.push(...table.map((line, i) => `    ${i === 0 ? s.dim(line) : line}`));
    const hidden = (options.allGears ? 0 : drain.moves.filter((m) => m.state !== 'moved').length - shown.length) + (options.allGears ? 0 : p.moved);
    if (hidden > 0) lines.push(s.dim(`    … ${hidden} more (${p.moved} moved); --all lists every gear, --json has them too`));
  }
  return lines;
}

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
