/** The reliability scenarios: what one is, the cluster's configuration and fixed sizes, what a run reports (scenario.ts runs it). */
import type { ConfigInput } from '../../../lib/config/index.js';
import type { Log } from '../../../lib/ports/log.js';
import type { Metrics } from '../../../lib/ports/metrics.js';
import type { DeadLetter, QueueLedger } from '../../../lib/adapters/local/local-sqs.js';
import type { SimulatedCloud } from '../../../lib/adapters/local/simulated-cloud.js';
import type { SimulatedPlatform } from '../../../lib/adapters/local/simulated-platform.js';
import type { StateStore } from '../../../lib/ports/state-store.js';
import { budgetConfig, DEFAULT_SCENARIO_BUDGET, type ScenarioBudget } from './budgets.js';
import type { FaultCounts, FaultRates } from './faults.js';
import type { OperatorAction, OperatorTally } from './operator.js';

export interface Scenario {
  seed: number;
  /** Gears the applications want: each segment holds for its minutes. */
  demand: Array<{ minutes: number; gears: number }>;
  faults: FaultRates;
  queue: { duplicateRate: number; reorderWindow: number; delayRate: number; /** Share of entries a batch send reports failed (not sent). */ partialSendFailure?: number };
  /** Share of deliveries and ticks that a second instance of the function runs at the same time, on overlapping messages. */
  concurrency: number;
  /** Share of minutes after which the clock jumps 2 to 15 minutes ahead with nothing run (pollers and schedules stalled). */
  clockJumps: number;
  moveFailureRate: number;
  /** Chance per minute that EC2 recommends rebalancing one running host (nodescaler drains it at once and replaces it). */
  rebalanceRate?: number;
  /**
   * The pays-off check and attrition (the next node to drain closed to new gears early), on minute-scale windows: an
   * hour has no day of history. Without it the scenario drains by utilization alone (the suite's own fixed scenarios).
   */
  attrition?: boolean;
  /** Most hosts the cloud will run (capacity runs out), if any. */
  capacityCap?: number;
  /** The district's UIDs, one per gear, if limited: the broker refuses gears beyond them, the reporter reads them every 5 minutes (lib/sim/world.ts). */
  districtUids?: number;
  maxNodesTotal: number;
  /** Global core limit (each host has 4 vCPUs), if any. */
  maxCores?: number;
  store: 'memory' | 'dynalite';
  budget?: ScenarioBudget;
  /** The platform the handlers drive: the simulated one, or the broker adapter over the broker emulator. Default simulated. */
  platform?: 'simulated' | 'broker';
  /**
   * On the broker: it requires zones for app creation (a node in no zone takes no new gear), the nodes there before
   * nodescaler are in region east, and the pool names it (`openshiftRegion`), so each node it adds must join in a zone.
   */
  zones?: boolean;
  /** Chance per minute (under faults) that a compromised node host sends one valid-but-hostile node-stats message (hostile.ts). */
  hostileRate?: number;
  /** The scale-up's options that are off by default: buying for the waiting demand's pace, doubling a full pool. */
  scaleUpOptions?: { waitingRise: boolean; doubleWhenFull: boolean };
  /**
   * Drains priced by markets the evaluator reads (spot and on-demand, failing as every port does under faults) at
   * `dollars` a node-hour, with the pays-off check weighing moves (factor 2): from a price that refuses every drain to
   * one that pays any. Only with `attrition` (the pays-off check on).
   */
  market?: { spot: boolean; dollars: number };
  /**
   * The nodes there before nodescaler are due for renewal, and renewal is on: renewals (a replacement, then the drain)
   * run under the same faults. `drifted`: launched from an image the pool's template no longer names
   * (lib/domain/drift.ts), with `scaleDown.renewDrifted`; `expired`: launched 40 days before, with
   * `scaleDown.expireAfter` 30d (lib/domain/expiry.ts). In half of either (`renewalsUncapped`) `expireGrace` 1d or
   * `driftGrace` 5m lifts the gear cap for their renewals (lib/domain/renewal-grace.ts).
   */
  renewal?: 'drifted' | 'expired';
  /** Commands an operator runs at the CLI while the faults last (operator.ts): drains, drains with a replacement, cancels. */
  operator?: OperatorAction[];
}

/**
 * Deliberately broken parts, for the suite's own tests: each wraps the real
 * port the handlers get, so a check that never fires is caught.
 */
export interface Mutants {
  store?: (store: StateStore) => StateStore;
  cloud?: (cloud: SimulatedCloud) => SimulatedCloud;
  platform?: (platform: SimulatedPlatform) => SimulatedPlatform;
  config?: (config: ConfigInput) => ConfigInput;
}

export interface ScenarioOutcome {
  violations: string[];
  deadLetters: DeadLetter[];
  ledger: QueueLedger;
  faults: FaultCounts;
  minutes: number;
  invocations: number;
  scaleUps: number;
  drains: number;
  /** Drains a scale-up called off (lib/domain/call-off.ts). */
  calledOff: number;
  gearMoves: number;
  /** The fewest nodes active or provisioning seen after any minute. */
  fewestServing: number;
  hostileMessages: number;
  /** The pool stored a sighting of waiting gears for `waitingRise` (only with it on): the option took part. */
  waitingSighted: boolean;
  /** Requests the evaluator made of the markets (`market`). */
  marketReads: number;
  /** District reads the broker reporter sent (`districtUids`). */
  districtReads: number;
  /** Nodes nodescaler added that joined in the pool's zone (`zones` scenarios on the broker). */
  joinedInZone: number;
  /** Moves that gave up on their application's lock, on the broker emulator. */
  movesLockedOut: number;
  /** Scale-ups that renew a due node, and the drains started once their replacement joined (`renewal`). */
  renewals: number;
  /** Of `renewals`, those of nodes older than expireAfter (`expired`). */
  expiryRenewals: number;
  renewalDrains: number;
  /** Gears moved more often than maxMovesPerGear by scale-downs and renewals: only renewals past their grace may (budgets.ts). */
  gearsMovedPastCap: number;
  /** Idle gears moved where the platform counts only active gears in its slots (seed mod 4 of 2 or 3, simulated platform). */
  idleGearMoves: number;
  operator: OperatorTally;
}


export const DISTRICT = 'sim';
export const PROFILE = 'small';
export const POOL = `${DISTRICT}/${PROFILE}`;
export const GEARS_PER_NODE = 10;
export const POOL_MIN = 1;
export const POOL_MAX = 6;
export const SETTLE_MINUTES = 45;
/**
 * Minutes more, at most, for a drain that began during settling: a renewal or a scale-down may rightly start one late
 * (a renewal waits while a low pool's scale-down waits out a delay), and its moves still fail now and then. One that
 * began under the faults gets no more time, and one still active after these minutes is a violation as before.
 */
export const LATE_DRAIN_GRACE_MINUTES = 30;
export const VCPUS = 4;
/** Two visibility timeouts: a message received under faults may still fail its last receives after they stop. */
export const POISON_AFTER_MS = 2 * 360_000;
/** The role id of the simulated node hosts' instance profile: their agents send as `<it>:<instance id>`. */
export const SIM_NODE_ROLE = 'AROASIMNODEROLE00001';

/** The image the nodes there before nodescaler were launched from in `drifted` scenarios; the pool's template names ami-sim. */
export const OLD_IMAGE = 'ami-sim-old';
/** How long before the scenario the nodes there before nodescaler were launched in `expired` scenarios, past EXPIRE_AFTER. */
export const EXPIRED_AGE_MS = 40 * 86_400_000;
const EXPIRE_AFTER = '30d';
/** Well short of the 10 days the nodes there before nodescaler are past EXPIRE_AFTER: their renewals lift the gear cap. */
const EXPIRE_GRACE = '1d';
/** Counted from the pool's first evaluation, which first sees its template: renewals of the hour's first minutes wait, later ones lift the gear cap. */
const DRIFT_GRACE = '5m';

/**
 * Whether the scenario's renewals move gears at their move limit (past `scaleDown.expireGrace` for expired nodes,
 * `scaleDown.driftGrace` for drifted ones): half the renewal scenarios, by seed, so the fields drawn stay as they were.
 */
export function renewalsUncapped(scenario: Pick<Scenario, 'renewal' | 'seed'>): boolean {
  return scenario.renewal !== undefined && scenario.seed % 2 === 0;
}

/**
 * In renewal scenarios, gears among the world's first (placed on the nodes there before nodescaler) moved as often
 * as maxMovesPerGear allows the day before the scenario: their due nodes' renewals wait for them, unless past their
 * grace (`renewalsUncapped`), and then move them past the cap. Each gear's uuid, with its moves.
 */
export function priorGearMoves(scenario: Pick<Scenario, 'renewal' | 'budget'>): Map<string, number> {
  if (scenario.renewal === undefined) return new Map();
  const moves = (scenario.budget ?? DEFAULT_SCENARIO_BUDGET).maxMovesPerGear;
  return new Map([0, 3, 6, 9, 12].map((id) => [`g${id.toString(36)}`, moves]));
}

/** The broker region of `zones` scenarios: the nodes there before nodescaler are in its first zone, the pool's new ones in its second. */
export const REGION = { name: 'east', zones: ['east-a', 'east-b'] } as const;

/** Small and quick: short delays so that a one-hour scenario sees scale-ups, drains and releases. */
export function scenarioConfig(scenario: Scenario): ConfigInput {
  return {
    handler: 'ec2',
    limits: { maxNodesTotal: scenario.maxNodesTotal, ...(scenario.maxCores === undefined ? {} : { maxCores: scenario.maxCores }) },
    scaleUp: { threshold: 0.95, target: 0.92, headroomGears: 5, sustain: '1m', maxNodeProvisionTime: '10m', forecast: { bootDelay: '2m' }, ...scenario.scaleUpOptions },
    scaleDown: {
      utilizationThreshold: 0.88,
      unneededTime: '2m',
      delayAfterAdd: '3m',
      delayAfterDelete: '1m',
      delayAfterFailure: '30s',
      budget: budgetConfig(scenario.budget),
      moveRetryDelay: '30s',
      drainTimeout: '20m',
      payoff: scenario.attrition ? { horizon: '5m', confidenceWindow: '5m', factor: scenario.market ? 2 : 0 } : { enabled: false },
      renewDrifted: scenario.renewal === 'drifted',
      ...(scenario.renewal === 'drifted' && renewalsUncapped(scenario) ? { driftGrace: DRIFT_GRACE } : {}),
      ...(scenario.renewal === 'expired' ? { expireAfter: EXPIRE_AFTER, ...(renewalsUncapped(scenario) ? { expireGrace: EXPIRE_GRACE } : {}) } : {}),
    },
    cloudRetry: { attempts: 3, baseDelay: '100ms', maxDelay: '1s' },
    // Node agents send as their instance (SIM_NODE_ROLE:<instance id>); hostile hosts cannot pose as another.
    statsAuth: { nodeRoleIds: [SIM_NODE_ROLE] },
    naming: { base: 'node', domain: 'sim.local' },
    pools: [
      {
        district: DISTRICT,
        profile: PROFILE,
        min: POOL_MIN,
        max: POOL_MAX,
        gearsPerNode: GEARS_PER_NODE,
        template: { imageId: 'ami-sim', instanceTypes: [{ name: 'm5.xlarge', vcpus: VCPUS, memoryGiB: 16 }], subnets: ['subnet-sim'], spot: scenario.market?.spot ?? false },
        ...(scenario.zones ? { openshiftRegion: { name: REGION.name, zone: REGION.zones[1] } } : {}),
      },
    ],
  } as ConfigInput;
}

/** The use-case frames of the current stack, for a violation to say which code path did it. */
export function callerInApp(): string {
  const frames = (new Error().stack ?? '').split('\n').filter((line) => /lib[\\/](app|workflows)[\\/]/.test(line));
  return frames.map((line) => line.trim().replace(/^at /, '').replace(/\(.*[\\/]lib[\\/]/, '(lib/')).join(' <- ') || 'outside the use cases';
}

export const quietLog: Log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
export const noMetrics: Metrics = { record: () => undefined };
