import { ResultRecorder, type PolicyResult } from './results.js';
import { seededRandom } from './random.js';
import { demandAt, type Trace } from './trace.js';

export interface BaselineOptions {
  gearsPerNode: number;
  bootDelaySeconds: number;
  tickSeconds: number;
  moveSeconds: number;
  maxConcurrentMoves: number;
  seed: number;
  sampleEverySeconds: number;
}

interface BaselineNode {
  gears: number;
  readyAt: number;
  /** When set, the node takes no gears and is released at this time. */
  releaseAt?: number;
}

/**
 * The comparison policies, on a light model of the same world: nodes of
 * `gearsPerNode` slots that boot in `bootDelaySeconds`, gears placed on the
 * least-loaded ready node, departures taken at random, and a drain that moves
 * a node's gears `maxConcurrentMoves` at a time, `moveSeconds` each.
 *
 * - static-peak (the status quo of the seed): enough nodes for the peak, always on.
 * - reactive (cluster-autoscaler / Escalator style): every tick, add one node
 *   while (demand / slots of ready and booting nodes) >= 0.70; drain one node
 *   once utilization stayed < 0.50 for 10 minutes and 10 minutes passed since
 *   the last add, if the others can take its gears below 0.70.
 */
export function runBaseline(policy: 'reactive' | 'static-peak', trace: Trace, options: BaselineOptions): PolicyResult {
  const random = seededRandom(options.seed);
  const recorder = new ResultRecorder(policy, options.gearsPerNode, options.sampleEverySeconds);
  const peak = trace.steps.reduce((max, s) => Math.max(max, s.demand), 0);
  const nodes: BaselineNode[] = [];
  const initial = policy === 'static-peak' ? Math.ceil(peak / options.gearsPerNode) : Math.max(1, Math.ceil(trace.steps[0]!.demand / (options.gearsPerNode * 0.6)));
  for (let i = 0; i < initial; i++) nodes.push({ gears: 0, readyAt: 0 });

  let placed = 0;
  let unplaced = 0;
  let lowSince: number | undefined;
  let lastAddAt = -Infinity;
  let hint = 0;
  const ready = (node: BaselineNode, t: number) => node.readyAt <= t && node.releaseAt === undefined;

  for (let t = 0; t < trace.durationSeconds; t += options.tickSeconds) {
    const step = demandAt(trace, t, hint);
    hint = step.index;
    const demand = step.demand;

    // Departures: random gears stop, waiting ones first.
    let excess = placed + unplaced - demand;
    const fromQueue = Math.min(excess > 0 ? excess : 0, unplaced);
    unplaced -= fromQueue;
    excess -= fromQueue;
    while (excess > 0 && placed > 0) {
      let pick = Math.floor(random() * placed);
      for (const node of nodes) {
        if (pick < node.gears) {
          node.gears -= 1;
          break;
        }
        pick -= node.gears;
      }
      placed -= 1;
      excess -= 1;
    }
    if (excess < 0) unplaced += -excess;

    // Releases due now: the drain moved every gear elsewhere.
    for (let i = nodes.length - 1; i >= 0; i--) {
      const node = nodes[i]!;
      if (node.releaseAt !== undefined && node.releaseAt <= t) {
        // Its gears go to the others (placed again just below, like moves).
        placed -= node.gears;
        unplaced += node.gears;
        recorder.gearMoves += node.gears;
        nodes.splice(i, 1);
        recorder.event(t, 'down');
      }
    }

    // Placement on the least-loaded ready node.
    while (unplaced > 0) {
      let best: BaselineNode | undefined;
      for (const node of nodes) if (ready(node, t) && node.gears < options.gearsPerNode && (!best || node.gears < best.gears)) best = node;
      if (!best) break;
      const take = Math.min(unplaced, options.gearsPerNode - best.gears, Math.max(1, Math.ceil(unplaced / nodes.length)));
      best.gears += take;
      placed += take;
      unplaced -= take;
    }

    if (policy === 'reactive') {
      const slots = nodes.filter((n) => n.releaseAt === undefined).length * options.gearsPerNode;
      const utilization = slots > 0 ? demand / slots : Infinity;
      if (utilization >= 0.7) {
        nodes.push({ gears: 0, readyAt: t + options.bootDelaySeconds });
        lastAddAt = t;
        recorder.event(t, 'up');
      }
      if (utilization < 0.5) lowSince ??= t;
      else lowSince = undefined;
      const draining = nodes.some((n) => n.releaseAt !== undefined);
      if (!draining && lowSince !== undefined && t - lowSince >= 600 && t - lastAddAt >= 600) {
        const candidates = nodes.filter((n) => ready(n, t)).sort((a, b) => a.gears - b.gears);
        const victim = candidates[0];
        if (victim && candidates.length > 1 && demand / ((candidates.length - 1) * options.gearsPerNode) < 0.7) {
          victim.releaseAt = t + Math.ceil(victim.gears / options.maxConcurrentMoves) * options.moveSeconds;
          lowSince = undefined;
        }
      }
    }

    const capacity = nodes.filter((n) => ready(n, t)).length * options.gearsPerNode;
    recorder.step({ at: t, demand, capacity, nodes: nodes.length, unplaced }, options.tickSeconds);
  }
  return recorder.result();
}
