/** Seconds between chart samples: about 2,000 points whatever the length of the run, at least one a minute. */
export function sampleInterval(durationSeconds: number): number {
  return Math.max(60, Math.floor(durationSeconds / 2000 / 60) * 60);
}

/** What one policy did over a replay, in the units the summary table prints. */
export interface PolicyResult {
  policy: 'nodescaler' | 'reactive' | 'static-peak';
  nodeHours: number;
  oracleNodeHours: number;
  ratioToOracle: number;
  demandGearMinutes: number;
  unplacedGearMinutes: number;
  unplacedShare: number;
  scaleUps: number;
  scaleDowns: number;
  gearMoves: number;
  maxNodes: number;
  deadLetters: number;
  invariantViolations: number;
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
  /** Gear moves completed since the start (the moves-per-hour panel). */
  moved?: number;
}

/** Accumulates a policy's figures step by step; the same bookkeeping for nodescaler and the baselines. */
export class ResultRecorder {
  private nodeSeconds = 0;
  private oracleSeconds = 0;
  private demandGearSeconds = 0;
  private unplacedGearSeconds = 0;
  private maxNodes = 0;
  private lastSampleAt = -Infinity;
  readonly series: SeriesPoint[] = [];
  readonly events: PolicyResult['events'] = [];
  scaleUps = 0;
  scaleDowns = 0;
  gearMoves = 0;
  deadLetters = 0;
  invariantViolations = 0;

  constructor(
    readonly policy: PolicyResult['policy'],
    private readonly gearsPerNode: number,
    private readonly sampleEverySeconds: number,
  ) {}

  /** One step of `seconds` in the state `point` describes. */
  step(point: SeriesPoint, seconds: number): void {
    this.nodeSeconds += point.nodes * seconds;
    this.oracleSeconds += Math.ceil(point.demand / this.gearsPerNode) * seconds;
    this.demandGearSeconds += point.demand * seconds;
    this.unplacedGearSeconds += point.unplaced * seconds;
    this.maxNodes = Math.max(this.maxNodes, point.nodes);
    if (point.at - this.lastSampleAt >= this.sampleEverySeconds) {
      this.series.push(point.moved === undefined ? { ...point, moved: this.gearMoves } : point);
      this.lastSampleAt = point.at;
    }
  }

  event(at: number, kind: 'up' | 'down', details: Omit<ScaleEvent, 'at' | 'kind'> = {}): void {
    this.events.push({ at, kind, ...details });
    if (kind === 'up') this.scaleUps += 1;
    else this.scaleDowns += 1;
  }

  result(): PolicyResult {
    const nodeHours = this.nodeSeconds / 3600;
    const oracleNodeHours = this.oracleSeconds / 3600;
    const demandGearMinutes = this.demandGearSeconds / 60;
    const unplacedGearMinutes = this.unplacedGearSeconds / 60;
    return {
      policy: this.policy,
      nodeHours,
      oracleNodeHours,
      ratioToOracle: oracleNodeHours > 0 ? nodeHours / oracleNodeHours : 0,
      demandGearMinutes,
      unplacedGearMinutes,
      unplacedShare: demandGearMinutes > 0 ? unplacedGearMinutes / demandGearMinutes : 0,
      scaleUps: this.scaleUps,
      scaleDowns: this.scaleDowns,
      gearMoves: this.gearMoves,
      maxNodes: this.maxNodes,
      deadLetters: this.deadLetters,
      invariantViolations: this.invariantViolations,
      series: this.series,
      events: this.events,
    };
  }
}
