/**
 * Whether an operator's drain of one node can finish: the gear mover's own
 * planner (drain-plan.ts) run on the state the CLI reads, with the gear
 * mover's rules for a normal drain (targets filled up to the scale-up
 * threshold, the configured anti-affinity). A drain it cannot plan would
 * close the node and abort in the gear mover; the CLI refuses it up front
 * with the line `explain` shows for a refused candidate.
 */
import type { Config } from '../config/index.js';
import { planDrain } from './drain-plan.js';
import type { DrainRecord, GearInfo, NodeRecord } from './model.js';
import { reservedSlotsByNode } from './utilization.js';

export interface DrainFit {
  fits: boolean;
  gears: number;
  /** Free slots below the threshold on the nodes that may take gears. */
  freeSlots: number;
  unplaced: number;
  /** `gears do not fit below 80% on the other nodes (20 gears, 0 free slots)`, or how they fit. */
  line: string;
}

export function manualDrainFit(input: {
  node: NodeRecord;
  /** Nodes of the node's pool, any state. */
  nodes: readonly NodeRecord[];
  /** Active drains of the pool: their pending moves hold slots. */
  drains: readonly DrainRecord[];
  config: Pick<Config, 'scaleUp' | 'scaleDown' | 'statsMaxAge'>;
  now: Date;
}): DrainFit {
  const { node, config } = input;
  const gears = gearsOf(node);
  const plan = planDrain({
    sourceNodeId: node.nodeId,
    pool: node.pool,
    gears,
    nodes: input.nodes,
    reserved: reservedSlotsByNode(input.drains, input.nodes),
    fillFraction: config.scaleUp.threshold,
    antiAffinity: config.scaleDown.antiAffinity,
    now: input.now,
    statsMaxAge: config.statsMaxAge,
  });
  const below = `${Math.round(config.scaleUp.threshold * 100)}%`;
  const fits = plan.unplaced.length === 0;
  const line = fits
    ? `${gears.length} gears fit below ${below} on ${plan.targets} other node(s) (${plan.freeSlots} free slots)`
    : `gears do not fit below ${below} on the other nodes (${gears.length} gears, ${plan.freeSlots} free slots): ${plan.unplaced.length} could not be placed (${plan.unplaced[0]!.reason})`;
  return { fits, gears: gears.length, freeSlots: plan.freeSlots, unplaced: plan.unplaced.length, line };
}

/**
 * The gears a drain would move, as last reported. The agent lists every gear, idle and stopped ones too (a drain
 * moves them all), while `activeGears` counts the active ones alone, as origin-server does: a list at least that long
 * is the node's whole list. Active gears a report does not list (no list at all, or a shorter one) count as small
 * gears of distinct applications.
 */
export function gearsOf(node: Pick<NodeRecord, 'nodeId' | 'stats'>): GearInfo[] {
  const stats = node.stats;
  if (!stats) return [];
  const listed = stats.gears ?? [];
  const unlisted = Math.max(0, stats.activeGears - listed.length);
  return [...listed, ...Array.from({ length: unlisted }, (_, i) => ({ uuid: `${node.nodeId}#${i}`, app: `${node.nodeId}#${i}`, size: 'small' }))];
}
