import type { PolicyResult } from './results.js';
import type { Trace } from './trace.js';

/**
 * The reactive floor: what a scaler that learns of demand only when it
 * arrives can reach on a trace, computed from the replayed demand. It is the
 * figure that shows a goal check impossible rather than a prose argument
 * (README, "The goal line").
 *
 * The model is the most favourable reactive scaler there is: it provisions
 * the instant a gear would wait, exactly the nodes missing, booted in the
 * replay's boot delay, with no bound on nodes; it releases a node the moment
 * it is not wanted (no drain, no move pace), so its node-hours are as low as
 * that rule allows. It wants ceil((level + headroom) / gearsPerNode) nodes,
 * where level is the highest demand of the last `holdSeconds` (0: the demand
 * now). A gear that arrives above the ready slots waits until the nodes
 * ordered for it boot. App churn is left out: a replaced gear takes the slot
 * its predecessor freed.
 */

/** One reactive rule: spare gears held over the level, and how long a level is held after demand falls. */
export interface ReactiveRule {
  headroomGears: number;
  holdSeconds: number;
}

export interface ReactiveMechanics {
  gearsPerNode: number;
  bootDelaySeconds: number;
  /** The replays' tick (60 s): demand is applied and nodes ordered once a tick. */
  tickSeconds?: number;
}

export interface ReactiveRun extends ReactiveRule {
  waitingGearMinutes: number;
  demandGearMinutes: number;
  /** Nodes booting or ready, integrated over the run. */
  nodeHours: number;
}

type Demand = Pick<Trace, 'steps' | 'durationSeconds'>;

/** The model above under one rule, tick by tick over the trace. */
export function replayReactive(trace: Demand, mechanics: ReactiveMechanics, rule: ReactiveRule): ReactiveRun {
  const tick = mechanics.tickSeconds ?? 60;
  const { gearsPerNode, bootDelaySeconds } = mechanics;
  const holdTicks = Math.floor(rule.holdSeconds / tick);
  const nodesFor = (gears: number) => Math.ceil((gears + rule.headroomGears) / gearsPerNode);
  // Trailing maximum of demand over the hold window: a deque of (tick, demand), demands decreasing.
  const window: Array<{ at: number; demand: number }> = [];
  let windowHead = 0;
  const booting: Array<{ readyAt: number; nodes: number }> = [];
  let bootingHead = 0;
  let bootingNodes = 0;
  let ready = nodesFor(trace.steps[0]?.demand ?? 0);
  let index = 0;
  let waitingSeconds = 0;
  let demandSeconds = 0;
  let nodeSeconds = 0;
  for (let n = 0, t = 0; t < trace.durationSeconds; n++, t = n * tick) {
    while (index + 1 < trace.steps.length && trace.steps[index + 1]!.at <= t) index++;
    const demand = trace.steps[index]?.demand ?? 0;
    while (bootingHead < booting.length && booting[bootingHead]!.readyAt <= t) {
      ready += booting[bootingHead]!.nodes;
      bootingNodes -= booting[bootingHead++]!.nodes;
    }
    while (window.length > windowHead && window[window.length - 1]!.demand <= demand) window.pop();
    window.push({ at: n, demand });
    while (window[windowHead]!.at < n - holdTicks) windowHead++;
    const wanted = nodesFor(window[windowHead]!.demand);
    if (ready > wanted) ready = wanted;
    if (ready + bootingNodes < wanted) {
      booting.push({ readyAt: t + bootDelaySeconds, nodes: wanted - ready - bootingNodes });
      bootingNodes = wanted - ready;
    }
    const step = Math.min(tick, trace.durationSeconds - t);
    waitingSeconds += Math.max(0, demand - ready * gearsPerNode) * step;
    demandSeconds += demand * step;
    nodeSeconds += (ready + bootingNodes) * step;
  }
  return { ...rule, waitingGearMinutes: waitingSeconds / 60, demandGearMinutes: demandSeconds / 60, nodeHours: nodeSeconds / 3600 };
}

/** Hold windows the floor tries: none, cluster-autoscaler's 10 unneeded minutes, an hour, four hours. */
export const HOLD_WINDOWS_SECONDS: readonly number[] = [0, 600, 3600, 4 * 3600];

/**
 * The reactive rule with the fewest node-hours whose waiting stays within
 * `maxWaitingGearMinutes`: for each hold window, the least headroom that does
 * it (waiting never grows with headroom, so a bisection finds it; headroom of
 * the peak always does), then the cheapest of them.
 */
export function cheapestReactive(trace: Demand, mechanics: ReactiveMechanics, maxWaitingGearMinutes: number): ReactiveRun {
  const peak = peakOf(trace);
  let best: ReactiveRun | undefined;
  for (const holdSeconds of HOLD_WINDOWS_SECONDS) {
    const run = (headroomGears: number) => replayReactive(trace, mechanics, { headroomGears, holdSeconds });
    let fits = run(0);
    if (fits.waitingGearMinutes > maxWaitingGearMinutes) {
      let low = 0;
      let high = peak;
      fits = run(high);
      while (high - low > 1) {
        const middle = Math.floor((low + high) / 2);
        const tried = run(middle);
        if (tried.waitingGearMinutes <= maxWaitingGearMinutes) {
          high = middle;
          fits = tried;
        } else {
          low = middle;
        }
      }
    }
    if (!best || fits.nodeHours < best.nodeHours) best = fits;
  }
  return best!;
}

/**
 * The reactive rule that leaves the fewest gears waiting without spending more
 * than `maxNodeHours`: for each hold window, the most headroom that stays
 * within them (node-hours never fall with headroom), then the one that waits
 * least, and of the rules that wait no more, the cheapest (so a floor of
 * nothing waiting names the headroom that takes, not the most the budget
 * buys). When even no headroom costs more, the cheapest rule.
 */
export function fewestWaiting(trace: Demand, mechanics: ReactiveMechanics, maxNodeHours: number): ReactiveRun {
  const peak = peakOf(trace);
  let best: ReactiveRun | undefined;
  let cheapest: ReactiveRun | undefined;
  for (const holdSeconds of HOLD_WINDOWS_SECONDS) {
    const run = (headroomGears: number) => replayReactive(trace, mechanics, { headroomGears, holdSeconds });
    const bare = run(0);
    if (!cheapest || bare.nodeHours < cheapest.nodeHours) cheapest = bare;
    if (bare.nodeHours > maxNodeHours) continue;
    let fits = bare;
    let low = 0;
    let high = peak + 1;
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      const tried = run(middle);
      if (tried.nodeHours <= maxNodeHours) {
        low = middle;
        fits = tried;
      } else {
        high = middle;
      }
    }
    if (!best || fits.waitingGearMinutes < best.waitingGearMinutes) best = fits;
  }
  return best ? cheapestReactive(trace, mechanics, best.waitingGearMinutes) : cheapest!;
}

function peakOf(trace: Demand): number {
  let peak = 0;
  for (const step of trace.steps) if (step.demand > peak) peak = step.demand;
  return peak;
}

/** The goal line's bounds: unplaced as a share of gear-minutes, node-hours as a multiple of clairvoyant-4h's. */
export const UNPLACED_GOAL_SHARE = 0.001;
export const NODE_HOURS_GOAL_RATIO = 1.05;

export interface ReactiveFloor {
  bootDelaySeconds: number;
  /** The node-hours the goal line allows (1.05 x clairvoyant-4h's). */
  nodeHoursLine: number;
  /** The fewest waiting gear-minutes a reactive rule reaches within the node-hours line: the reactive floor. */
  floor: ReactiveRun;
  /** The cheapest rule that keeps waiting within the goal's 0.1 % of gear-minutes. */
  forUnplacedGoal: ReactiveRun;
  /**
   * The cheapest rule that waits no more than cluster-autoscaler did (when it
   * ran) nor more than 0.1 %: the waiting the whole goal line allows.
   */
  forClusterAutoscaler?: ReactiveRun;
  /**
   * The cheapest rule that leaves no gear waiting: what the scale-up's zero
   * tolerance for waiting gears (issue 19, item 6) costs a reactive scaler.
   * Where it holds more than cluster-autoscaler, that policy's fewer node-hours
   * are bought with gears that wait for a boot.
   */
  waitingNothing: ReactiveRun;
}

/**
 * The floor of one replayed trace. `clairvoyantNodeHours`: clairvoyant-4h's in
 * the same run (the node-hours line is 1.05 x them); `clusterAutoscalerWaiting`:
 * its waiting gear-minutes, when it ran.
 */
export function reactiveFloor(trace: Demand, mechanics: ReactiveMechanics, reference: { clairvoyantNodeHours: number; clusterAutoscalerWaiting?: number }): ReactiveFloor {
  const nodeHoursLine = NODE_HOURS_GOAL_RATIO * reference.clairvoyantNodeHours;
  const floor = fewestWaiting(trace, mechanics, nodeHoursLine);
  const out: ReactiveFloor = {
    bootDelaySeconds: mechanics.bootDelaySeconds,
    nodeHoursLine,
    floor,
    forUnplacedGoal: cheapestReactive(trace, mechanics, UNPLACED_GOAL_SHARE * floor.demandGearMinutes),
    waitingNothing: cheapestReactive(trace, mechanics, 0),
  };
  const allowed = reference.clusterAutoscalerWaiting;
  if (allowed !== undefined) {
    out.forClusterAutoscaler = allowed >= UNPLACED_GOAL_SHARE * floor.demandGearMinutes ? out.forUnplacedGoal : cheapestReactive(trace, mechanics, allowed);
  }
  return out;
}

/** Share of gear-minutes a run left waiting. */
export function waitingShare(run: Pick<ReactiveRun, 'waitingGearMinutes' | 'demandGearMinutes'>): number {
  return run.demandGearMinutes > 0 ? run.waitingGearMinutes / run.demandGearMinutes : 0;
}

/** "1,450 gears of headroom" or "the last 1 h's highest demand + 300 gears": a rule in words. */
export function describeRule(rule: ReactiveRule): string {
  const gears = `${rule.headroomGears.toLocaleString('en')} gears`;
  if (rule.holdSeconds === 0) return `${gears} of headroom`;
  const hold = rule.holdSeconds >= 3600 ? `${rule.holdSeconds / 3600} h` : `${rule.holdSeconds / 60} min`;
  return `the last ${hold}'s highest demand + ${gears}`;
}

/** The floor for a run's results: needs clairvoyant-4h's node-hours; uses cluster-autoscaler's waiting when it ran. */
export function floorForResults(trace: Demand, mechanics: ReactiveMechanics, results: readonly PolicyResult[]): ReactiveFloor | undefined {
  const clairvoyant = results.find((r) => r.policy === 'clairvoyant-4h');
  if (!clairvoyant) return undefined;
  const ca = results.find((r) => r.policy === 'cluster-autoscaler');
  return reactiveFloor(trace, mechanics, { clairvoyantNodeHours: clairvoyant.nodeHours, ...(ca ? { clusterAutoscalerWaiting: ca.unplacedGearMinutes } : {}) });
}

/** The floor's figures in one line, printed under the goal line. */
export function floorLine(floor: ReactiveFloor, clairvoyantNodeHours: number, clusterAutoscalerNodeHours?: number): string {
  const times = (run: ReactiveRun) => `${(run.nodeHours / clairvoyantNodeHours).toFixed(2)} x c-4h`;
  const parts = [
    `at best ${percent(waitingShare(floor.floor))} % unplaced (${count(floor.floor.waitingGearMinutes)} gear-min) within the node-hours line, holding ${describeRule(floor.floor)} (${times(floor.floor)})`,
    `unplaced <= 0.1 % takes ${describeRule(floor.forUnplacedGoal)} (${times(floor.forUnplacedGoal)})`,
  ];
  const ca = floor.forClusterAutoscaler;
  if (ca) {
    const versus = clusterAutoscalerNodeHours === undefined ? '' : ` vs its ${count(clusterAutoscalerNodeHours)}`;
    parts.push(`waiting <= cluster-autoscaler's and 0.1 % takes ${describeRule(ca)} (${count(ca.nodeHours)} node-h${versus})`);
  }
  parts.push(`no gear waiting takes ${describeRule(floor.waitingNothing)} (${count(floor.waitingNothing.nodeHours)} node-h)`);
  return `reactive floor (learns of demand as it arrives, boots in ${floor.bootDelaySeconds / 60} min): ${parts.join('; ')}`;
}

export function percent(share: number): string {
  return (share * 100).toFixed(3);
}

export function count(value: number): string {
  return Math.round(value).toLocaleString('en');
}
