import type { AbortTally } from './aborts.js';
import type { BillLine } from './bill.js';
import type { DisruptionFigures, MoveLedger } from './disruption.js';
import type { MoveCauses } from './move-causes.js';

/** Seconds between chart samples: about 2,000 points whatever the length of the run, at least one a minute. */
export function sampleInterval(durationSeconds: number): number {
  return Math.max(60, Math.floor(durationSeconds / 2000 / 60) * 60);
}

export const POLICIES = ['nodescaler', 'static-peak', 'cluster-autoscaler', 'karpenter', 'clairvoyant-1h', 'clairvoyant-4h'] as const;
export type PolicyName = (typeof POLICIES)[number];

/** A month as AWS bills it: 730 hours. */
export const HOURS_PER_MONTH = 730;

/** The figures of one pool (or of the whole run, summed over pools). */
export interface PoolFigures extends DisruptionFigures {
  nodeHours: number;
  oracleNodeHours: number;
  ratioToOracle: number;
  demandGearMinutes: number;
  unplacedGearMinutes: number;
  unplacedShare: number;
  /** Time-weighted mean of the gears wanted. */
  meanGears: number;
  scaleUps: number;
  scaleDowns: number;
  maxNodes: number;
  /** Node-hours at the instance type's price, as $ per 730-hour month. */
  nodeCostPerMonth: number;
  /**
   * Of unplacedGearMinutes, those the free slots of closed nodes (draining, or closed for attrition) could have held:
   * the minute a re-opening takes. Only replays of nodescaler measure it.
   */
  waitingBesideClosedGearMinutes?: number;
}

export interface PoolResult extends PoolFigures {
  pool: string;
  instanceType: string;
  gearsPerNode: number;
  min: number;
  max: number;
}

/** What one policy did over a replay, in the units the summary table prints. */
export interface PolicyResult extends PoolFigures {
  policy: PolicyName;
  deadLetters: number;
  invariantViolations: number;
  /** nodeCostPerMonth of static-peak minus this one's (set by the caller that ran both). */
  savingsPerMonth?: number;
  /** nodescaler's own AWS bill, from what the replay called; per 730-hour month. */
  autoscalerCostPerMonth?: number;
  autoscalerCostPerNodeMonth?: number;
  autoscalerBill?: BillLine[];
  /** nodescaler's aborted drains by the reason the drain workflow stored (lib/sim/aborts.ts). */
  aborts?: AbortTally;
  /** The pages nodescaler's alarms would have sent, by metric (lib/sim/alarms.ts); replays only. */
  pages?: Record<string, number>;
  /** nodescaler's moves by what caused them (lib/sim/move-causes.ts); replays only. */
  moveCauses?: MoveCauses;
  /** The broker calls that closed nodes to new gears and reopened them (drains and attrition); replays only. */
  nodeToggles?: { closes: number; reopens: number };
  /** One entry per pool replayed (a single-pool run has one). */
  pools: PoolResult[];
  /** Sampled time series for the chart. */
  series: SeriesPoint[];
  /** Scale events for the chart. */
  events: ScaleEvent[];
}

/** A scale action as the chart shows it on hover. */
export interface ScaleEvent {
  at: number;
  kind: 'up' | 'down';
  decisionId?: string;
  /** The node a scale-down drains. */
  node?: string;
  /** Nodes a scale-up requests. */
  count?: number;
  reason?: string;
  /** Gears on the node when it was chosen: the moves its drain makes. */
  gearsMoved?: number;
}

export interface SeriesPoint {
  /** Seconds from the start. */
  at: number;
  demand: number;
  /** Gear slots of nodes that take gears. */
  capacity: number;
  /** Hosts that cost money: booting, active, draining. */
  nodes: number;
  unplaced: number;
  /** Gear moves completed since the previous point. */
  moves?: number;
  /** Gear-minutes spent waiting since the previous point (the samples between points can hide a short wait). */
  waited?: number;
}

/**
 * Keeps about one point per `everySeconds` for the chart, summing the moves and the waiting in between; tracks the
 * peak of nodes. Each added point's state lasts until the next one is added.
 */
export class SeriesSampler {
  readonly points: SeriesPoint[] = [];
  maxNodes = 0;
  private lastAt = -Infinity;
  private moves = 0;
  private waitedGearSeconds = 0;
  private previous?: SeriesPoint;

  constructor(private readonly everySeconds: number) {}

  add(point: SeriesPoint): void {
    this.moves += point.moves ?? 0;
    if (this.previous) this.waitedGearSeconds += this.previous.unplaced * (point.at - this.previous.at);
    this.previous = point;
    if (point.nodes > this.maxNodes) this.maxNodes = point.nodes;
    if (point.at - this.lastAt >= this.everySeconds) {
      this.points.push({ ...point, moves: this.moves, waited: Math.round(this.waitedGearSeconds / 60) });
      this.moves = 0;
      this.waitedGearSeconds = 0;
      this.lastAt = point.at;
    }
  }
}

/** Accumulates one pool's figures step by step; the same bookkeeping for nodescaler and the baselines. */
export class ResultRecorder {
  private nodeSeconds = 0;
  private oracleSeconds = 0;
  private demandGearSeconds = 0;
  private unplacedGearSeconds = 0;
  private besideClosedGearSeconds?: number;
  private seconds = 0;
  private readonly sampler: SeriesSampler;
  readonly events: PolicyResult['events'] = [];
  scaleUps = 0;
  scaleDowns = 0;
  deadLetters = 0;
  invariantViolations = 0;
  /** The point of the last step. */
  lastPoint?: SeriesPoint;

  constructor(
    readonly policy: PolicyName,
    private readonly gearsPerNode: number,
    sampleEverySeconds: number,
    readonly ledger: MoveLedger,
    /** $ per node-hour. */
    private readonly pricePerHour = 0,
  ) {
    this.sampler = new SeriesSampler(sampleEverySeconds);
  }

  get series(): SeriesPoint[] {
    return this.sampler.points;
  }

  /** One step of `seconds` in the state `point` describes; `point.moves`: moves completed during the step. */
  step(point: SeriesPoint, seconds: number): void {
    this.seconds += seconds;
    this.nodeSeconds += point.nodes * seconds;
    this.oracleSeconds += Math.ceil(point.demand / this.gearsPerNode) * seconds;
    this.demandGearSeconds += point.demand * seconds;
    this.unplacedGearSeconds += point.unplaced * seconds;
    this.sampler.add(point);
    this.lastPoint = point;
  }

  /** One step's waiting gears that `closedFree` free slots of closed nodes could have held. */
  closedSlots(unplaced: number, closedFree: number, seconds: number): void {
    this.besideClosedGearSeconds = (this.besideClosedGearSeconds ?? 0) + Math.min(Math.max(0, unplaced), Math.max(0, closedFree)) * seconds;
  }

  event(at: number, kind: 'up' | 'down', details: Omit<ScaleEvent, 'at' | 'kind'> = {}): void {
    this.events.push({ at, kind, ...details });
    if (kind === 'up') this.scaleUps += 1;
    else this.scaleDowns += 1;
  }

  /** The pool's figures; `gearsSeen`: every gear that existed in the run. */
  figures(gearsSeen: number): PoolFigures {
    const nodeHours = this.nodeSeconds / 3600;
    const oracleNodeHours = this.oracleSeconds / 3600;
    const demandGearMinutes = this.demandGearSeconds / 60;
    const unplacedGearMinutes = this.unplacedGearSeconds / 60;
    const meanGears = this.seconds > 0 ? this.demandGearSeconds / this.seconds : 0;
    return {
      nodeHours,
      oracleNodeHours,
      ratioToOracle: shareOf(nodeHours, oracleNodeHours),
      demandGearMinutes,
      unplacedGearMinutes,
      unplacedShare: shareOf(unplacedGearMinutes, demandGearMinutes),
      meanGears,
      scaleUps: this.scaleUps,
      scaleDowns: this.scaleDowns,
      maxNodes: this.sampler.maxNodes,
      nodeCostPerMonth: this.seconds > 0 ? (nodeHours * this.pricePerHour * HOURS_PER_MONTH * 3600) / this.seconds : 0,
      ...(this.besideClosedGearSeconds !== undefined ? { waitingBesideClosedGearMinutes: this.besideClosedGearSeconds / 60 } : {}),
      ...this.ledger.figures(gearsSeen, meanGears, this.seconds / 86400),
    };
  }

  /** A single-pool result. */
  result(gearsSeen: number, pool: Omit<PoolResult, keyof PoolFigures>): PolicyResult {
    const figures = this.figures(gearsSeen);
    return {
      policy: this.policy,
      ...figures,
      deadLetters: this.deadLetters,
      invariantViolations: this.invariantViolations,
      pools: [{ ...pool, ...figures }],
      series: this.series,
      events: this.events,
    };
  }
}

/** Several pools' figures as one row: sums, and the rates and shares recomputed from the sums. */
export function combinePools(
  policy: PolicyName,
  pools: PoolResult[],
  run: { days: number; maxNodes: number; series: SeriesPoint[]; events: PolicyResult['events'] },
): PolicyResult {
  const sum = (pick: (p: PoolResult) => number) => pools.reduce((total, p) => total + pick(p), 0);
  const nodeHours = sum((p) => p.nodeHours);
  const oracleNodeHours = sum((p) => p.oracleNodeHours);
  const demandGearMinutes = sum((p) => p.demandGearMinutes);
  const unplacedGearMinutes = sum((p) => p.unplacedGearMinutes);
  const meanGears = sum((p) => p.meanGears);
  const gearMoves = sum((p) => p.gearMoves);
  const besideClosed = pools.some((p) => p.waitingBesideClosedGearMinutes !== undefined) ? { waitingBesideClosedGearMinutes: sum((p) => p.waitingBesideClosedGearMinutes ?? 0) } : {};
  return {
    policy,
    nodeHours,
    oracleNodeHours,
    ratioToOracle: shareOf(nodeHours, oracleNodeHours),
    demandGearMinutes,
    unplacedGearMinutes,
    unplacedShare: shareOf(unplacedGearMinutes, demandGearMinutes),
    meanGears,
    scaleUps: sum((p) => p.scaleUps),
    scaleDowns: sum((p) => p.scaleDowns),
    // Peaks of pools need not coincide: the run measures the combined peak step by step.
    maxNodes: run.maxNodes,
    nodeCostPerMonth: sum((p) => p.nodeCostPerMonth),
    ...besideClosed,
    gearMoves,
    movesPerGearDay: meanGears > 0 && run.days > 0 ? gearMoves / meanGears / run.days : 0,
    // The worst pool's: a tenant feels its own pool's figure.
    movesPerGearP95: pools.reduce((max, p) => Math.max(max, p.movesPerGearP95), 0),
    movesPerGearMax: pools.reduce((max, p) => Math.max(max, p.movesPerGearMax), 0),
    gearsMovedTwiceIn7d: sum((p) => p.gearsMovedTwiceIn7d),
    disruptiveMoves: sum((p) => p.disruptiveMoves),
    drainsStarted: sum((p) => p.drainsStarted),
    drainsAborted: sum((p) => p.drainsAborted),
    deadLetters: 0,
    invariantViolations: 0,
    pools,
    series: run.series,
    events: run.events,
  };
}

/** `part / whole`, 0 for an empty whole (a run with no demand or no oracle nodes). */
function shareOf(part: number, whole: number): number {
  return whole > 0 ? part / whole : 0;
}
