/**
 * Builders for the decision tests: nodes, pools, drains and a validated
 * configuration (through `parseConfig`, so defaults are the real ones), and a
 * replay result row.
 */
import { parseConfig, type Config, type ConfigInput, type PoolConfig } from '../../lib/config/index.js';
import type { PoolEvaluationInput } from '../../lib/domain/decision.js';
import { epochMinute } from '../../lib/domain/forecast.js';
import { nodeHourPrice } from '../../lib/domain/node-price.js';
import type { PayoffConfig } from '../../lib/domain/payoff.js';
import type { DemandSample, DrainRecord, GearMove, MoveState, NodeRecord, NodeState, OnDemandPriceRecord, PoolRecord, SpotPriceRecord } from '../../lib/domain/model.js';
import type { ReactiveRun } from '../../lib/sim/floor.js';
import type { PolicyName, PolicyResult } from '../../lib/sim/results.js';

/** The fixed "now" of the tests. */
export const NOW = new Date('2025-03-10T10:00:00.000Z');
export const POOL = 'd1/small';

export function minutesAgo(minutes: number, now: Date = NOW): string {
  return new Date(now.getTime() - minutes * 60_000).toISOString();
}

export function minutesLater(minutes: number, now: Date = NOW): Date {
  return new Date(now.getTime() + minutes * 60_000);
}

export interface NodeOptions {
  state?: NodeState;
  /** Active gears; with `max`, the node's stats. `null` leaves the node without stats. */
  gears?: number | null;
  max?: number;
  /** How long ago the stats were reported, in minutes (default: fresh, 0). */
  reportedMinutesAgo?: number;
  /** The report before them, as the store keeps it: its gears and how many minutes ago it was measured. */
  prior?: { gears: number; minutesAgo: number };
  createdMinutesAgo?: number;
  protected?: boolean;
  pool?: string;
  instanceType?: string;
  /** The availability zone its host runs in. */
  zone?: string;
  /** What its host was launched from (drift.ts). */
  launchedFrom?: NodeRecord['launchedFrom'];
  /** Launched by nodescaler (default) or adopted. */
  origin?: NodeRecord['origin'];
}

export function node(nodeId: string, options: NodeOptions = {}): NodeRecord {
  const pool = options.pool ?? POOL;
  const [district = 'd1', profile = 'small'] = pool.split('/');
  const record: NodeRecord = {
    nodeId,
    pool,
    district,
    profile,
    state: options.state ?? 'active',
    version: 1,
    createdAt: minutesAgo(options.createdMinutesAgo ?? 60),
    stateChangedAt: minutesAgo(options.createdMinutesAgo ?? 60),
    origin: options.origin ?? 'provisioned',
    protected: options.protected ?? false,
  };
  if (options.instanceType !== undefined) record.instanceType = options.instanceType;
  if (options.zone !== undefined) record.zone = options.zone;
  if (options.launchedFrom !== undefined) record.launchedFrom = options.launchedFrom;
  if (options.gears !== null && (options.gears !== undefined || options.state === undefined || options.state === 'active' || options.state === 'draining')) {
    record.stats = {
      activeGears: options.gears ?? 0,
      maxActiveGears: options.max ?? 100,
      reportedAt: minutesAgo(options.reportedMinutesAgo ?? 0),
    };
    if (options.prior) record.stats.prior = { activeGears: options.prior.gears, reportedAt: minutesAgo(options.prior.minutesAgo) };
  }
  return record;
}

/** `count` active nodes named `<prefix>-1..N`, each with `gears` of `max`. */
export function nodes(count: number, gears: number, max = 100, prefix = 'node', extra: NodeOptions = {}): NodeRecord[] {
  return Array.from({ length: count }, (_, i) => node(`${prefix}-${i + 1}`, { gears, max, ...extra }));
}

export function pool(fields: Partial<PoolRecord> = {}): PoolRecord {
  return { pool: POOL, district: 'd1', profile: 'small', version: 1, ...fields };
}

/** A spot pool's price record as the evaluator stores it: `byType` read at `readAt` (for the types it names). */
export function spotPriceRecord(byType: Record<string, number>, readAt: Date | null = NOW, fields: Partial<SpotPriceRecord> = {}): SpotPriceRecord {
  return { types: Object.keys(byType), byType, ...(readAt ? { readAt: readAt.toISOString() } : {}), ...fields };
}

/** The on-demand prices read for a pool in `region` (default eu-west-1, not the built-in list's us-east-1) at `readAt`. */
export function onDemandPriceRecord(byType: Record<string, number>, region = 'eu-west-1', readAt: Date | null = NOW, fields: Partial<OnDemandPriceRecord> = {}): OnDemandPriceRecord {
  return { types: Object.keys(byType), byType, ...(readAt ? { region, readAt: readAt.toISOString() } : {}), ...fields };
}

/** A pool's demand history: `gears` placed at every minute of the last `minutes`. */
export function flatDemand(gears: number, minutes = 10): DemandSample[] {
  return Array.from({ length: minutes }, (_, i) => [epochMinute(NOW) - (minutes - i), gears]);
}

/** A pool's demand history back `hours`: a sample every 5 minutes, per minute for the last half hour. */
export function demandHistory(now: Date, demandAt: (minutesFromNow: number) => number, hours: number): DemandSample[] {
  const nowMinute = epochMinute(now);
  const samples: DemandSample[] = [];
  for (let m = -hours * 60; m <= 0; m += m < -30 ? 5 : 1) samples.push([nowMinute + m, demandAt(m)]);
  return samples;
}

/** The broker's report of `gears` creations refused in the minute that ended `endedMinutesAgo` ago. */
export function refusedReport(gears: number, endedMinutesAgo = 1): PoolRecord['refused'] {
  return { gears, windowStart: minutesAgo(endedMinutesAgo + 1), windowEnd: minutesAgo(endedMinutesAgo) };
}

export function move(target: string, state: MoveState = 'planned', uuid = `g-${target}-${Math.random().toString(36).slice(2, 8)}`): GearMove {
  return { gear: { uuid, app: 'app', size: 'small' }, target, state, attempts: 0 };
}

export function drain(nodeId: string, moves: GearMove[], fields: Partial<DrainRecord> = {}): DrainRecord {
  return {
    drainId: `drain-${nodeId}`,
    decisionId: `down:${nodeId}`,
    nodeId,
    pool: POOL,
    state: 'active',
    version: 1,
    startedAt: minutesAgo(5),
    updatedAt: minutesAgo(1),
    reason: 'test',
    moves,
    ...fields,
  };
}

type PoolInput = ConfigInput['pools'][number];

/** A validated configuration with one pool `d1/small` (min 0, max 50) unless `pools` is given; `overrides` are merged at the top level. */
/**
 * The thresholds these rule tests were written with (the seed's classic 0.80 / 0.70 / 0.50 and
 * no headroom), pinned so that a change of product defaults does not silently change what a rule test checks.
 */
const RULE_TEST_THRESHOLDS = { scaleUp: { threshold: 0.8, target: 0.7, headroomGears: 0 }, scaleDown: { utilizationThreshold: 0.5 } };

export function config(overrides: Omit<Partial<ConfigInput>, 'pools'> & { pools?: PoolInput[] } = {}, poolFields: Partial<PoolInput> = {}): Config {
  const pools = overrides.pools ?? [{ district: 'd1', profile: 'small', max: 50, ...poolFields }];
  return parseConfig({
    ...overrides,
    scaleUp: { ...RULE_TEST_THRESHOLDS.scaleUp, ...overrides.scaleUp },
    scaleDown: { ...RULE_TEST_THRESHOLDS.scaleDown, ...overrides.scaleDown },
    pools,
  } as ConfigInput);
}

/** The pays-off settings of `config(overrides)` as the evaluator hands them to the check: one node-hour priced (node-price.ts). */
export function payoffSettings(overrides: Parameters<typeof config>[0] = {}): PayoffConfig {
  const cfg = config(overrides);
  return { ...cfg.scaleDown.payoff, nodeHourPrice: nodeHourPrice(cfg.scaleDown.payoff, cfg.pools[0]) };
}

export function poolConfigOf(cfg: Config, id = POOL): PoolConfig {
  const found = cfg.pools.find((p) => `${p.district}/${p.profile}` === id);
  if (!found) throw new Error(`no pool ${id} in the test configuration`);
  return found;
}

/** A complete `decidePool` input; `nodes` are this pool's, `otherNodes` are added to `allNodes`. */
export function evaluation(
  fields: Partial<Omit<PoolEvaluationInput, 'config'>> & { config?: Config; otherNodes?: NodeRecord[] } = {},
): PoolEvaluationInput {
  const cfg = fields.config ?? config();
  const poolNodes = fields.nodes ?? [];
  return {
    now: fields.now ?? NOW,
    config: cfg,
    poolConfig: fields.poolConfig ?? poolConfigOf(cfg),
    pool: fields.pool ?? pool(),
    nodes: poolNodes,
    allNodes: fields.allNodes ?? [...poolNodes, ...(fields.otherNodes ?? [])],
    drains: fields.drains ?? [],
    ...(fields.moveHistory ? { moveHistory: fields.moveHistory } : {}),
  };
}

/** A replay's result row with every figure zero unless given (the goal line reads a few of them). */
export function policyResult(policy: PolicyName, fields: Partial<PolicyResult> = {}): PolicyResult {
  const figures = {
    nodeHours: 0, oracleNodeHours: 0, ratioToOracle: 0, demandGearMinutes: 0, unplacedGearMinutes: 0, unplacedShare: 0, meanGears: 0,
    scaleUps: 0, scaleDowns: 0, maxNodes: 0, nodeCostPerMonth: 0, gearMoves: 0, movesPerGearDay: 0, movesPerGearP95: 0, movesPerGearMax: 0,
    gearsMovedTwiceIn7d: 0, disruptiveMoves: 0, drainsStarted: 0, drainsAborted: 0,
  };
  return { policy, ...figures, deadLetters: 0, invariantViolations: 0, pools: [], series: [], events: [], ...fields };
}

/** One reactive rule's run (lib/sim/floor.ts): no headroom, no hold, nothing waiting of a million gear-minutes, unless given. */
export function reactiveRun(fields: Partial<ReactiveRun> = {}): ReactiveRun {
  return { headroomGears: 0, holdSeconds: 0, waitingGearMinutes: 0, demandGearMinutes: 1_000_000, nodeHours: 0, ...fields };
}
