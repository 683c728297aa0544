/**
 * The limits a scale-up is clamped by (maxNodesPerDecision, pool.max,
 * maxNodesTotal, maxCores, maxMemoryGiB), shared by the evaluator, the
 * interruption drain's replacement and the provisioner's claim-time check so
 * that every way of adding nodes agrees on the room left. Pure functions.
 */
import type { Config, InstanceTypeConfig, PoolConfig } from '../config/index.js';
import { maxNodesPerDecision } from './budget.js';
import type { ClampReason, PoolEvaluationInput } from './decision.js';
import { poolIdOf, type NodeRecord, type NodeState } from './model.js';

const EPSILON = 1e-9;
/** Node states that still hold (or will hold) a cloud instance, for the global limits. */
const NON_TERMINAL: ReadonlySet<NodeState> = new Set<NodeState>(['provisioning', 'active', 'draining', 'drained', 'terminating']);

export interface Clamp {
  count: number;
  clampedBy: ClampReason[];
  /** The limit that left no room at all, as text. */
  zeroBy?: string;
}

/**
 * Clamps `wanted` new nodes by maxNodesPerDecision, pool.max, maxNodesTotal,
 * maxCores and maxMemoryGiB, in that order (and, from the evaluator, the
 * district's UIDs). `poolNodes`: the pool's nodes that
 * count against pool.max (provisioning, active, draining); `allNodes`: every
 * pool's nodes (the non-terminal ones count against the global limits). Every
 * way of adding nodes goes through this one clamp, so no path exceeds a limit.
 */
export interface ClampOptions {
  /** Demand outran a full-pool scale-up again (lib/domain/scale-up.ts): an unset maxNodesPerDecision lets the pool double. */
  doubling?: boolean;
  /** Nodes counted gears wait for (refused creations): as pending pods in cluster-autoscaler, an unset per-decision cap lets them all in. */
  waitingNodes?: number;
  /** Room under the district's UIDs (district-capacity.ts `districtNodeRoom`), from the evaluator's fresh read. */
  district?: { room: number; maxCapacity: number };
}

export function clampScaleUp(
  wanted: number,
  input: Pick<PoolEvaluationInput, 'config' | 'poolConfig' | 'allNodes'>,
  poolNodes: number,
  { doubling = false, waitingNodes = 0, district }: ClampOptions = {},
): Clamp {
  const { config, poolConfig, allNodes } = input;
  const limits = config.limits;
  const clamp: Clamp = { count: wanted, clampedBy: [] };
  const apply = (room: number, reason: ClampReason, detail: string) => {
    if (clamp.count <= room) return;
    clamp.count = Math.max(0, Math.floor(room));
    clamp.clampedBy.push(reason);
    if (clamp.count === 0) clamp.zeroBy ??= `${reason.limit}=${reason.value} (${detail})`;
  };

  const capped = maxNodesPerDecision(config.scaleUp.maxNodesPerDecision, poolNodes, doubling);
  const perDecision = config.scaleUp.maxNodesPerDecision === undefined ? Math.max(capped, waitingNodes) : capped;
  apply(perDecision, { limit: 'maxNodesPerDecision', value: perDecision }, 'per decision');
  apply(poolConfig.max - poolNodes, { limit: 'pool.max', value: poolConfig.max }, `${plural(poolNodes, 'node')} in the pool`);

  let totalNodes = 0;
  for (const node of allNodes) if (NON_TERMINAL.has(node.state)) totalNodes++;
  apply(limits.maxNodesTotal - totalNodes, { limit: 'maxNodesTotal', value: limits.maxNodesTotal }, `${plural(totalNodes, 'node')} in all pools`);

  for (const room of resourceRooms(config, poolConfig, allNodes)) apply(room.nodes, room.reason, room.detail);
  if (district) apply(district.room, { limit: 'district.maxCapacity', value: district.maxCapacity }, 'UIDs, one per gear: no more nodes would fill');
  return clamp;
}

/** Room under one resource limit, in nodes of the pool's first instance type (fractional: the caller floors). */
export interface ResourceRoom {
  nodes: number;
  reason: ClampReason;
  /** e.g. `8 in use, 4 per m5.xlarge`. */
  detail: string;
}

/**
 * What maxCores and maxMemoryGiB leave for new nodes of `poolConfig` (its
 * first instance type), one entry per limit set. The evaluator's clamp and
 * the provisioner's claim-time check both use it, so the two agree.
 */
export function resourceRooms(config: Config, poolConfig: PoolConfig, allNodes: readonly NodeRecord[]): ResourceRoom[] {
  const limits = config.limits;
  const newType = poolConfig.template.instanceTypes[0];
  if (!newType || (limits.maxCores === undefined && limits.maxMemoryGiB === undefined)) return [];
  const used = resourcesInUse(config, allNodes, newType);
  const rooms: ResourceRoom[] = [];
  if (limits.maxCores !== undefined) {
    rooms.push({
      nodes: (limits.maxCores - used.cores) / newType.vcpus + EPSILON,
      reason: { limit: 'maxCores', value: limits.maxCores },
      detail: `${used.cores} in use, ${newType.vcpus} per ${newType.name}`,
    });
  }
  if (limits.maxMemoryGiB !== undefined) {
    rooms.push({
      nodes: (limits.maxMemoryGiB - used.memoryGiB) / newType.memoryGiB + EPSILON,
      reason: { limit: 'maxMemoryGiB', value: limits.maxMemoryGiB },
      detail: `${round1(used.memoryGiB)} GiB in use, ${newType.memoryGiB} GiB per ${newType.name}`,
    });
  }
  return rooms;
}

/**
 * Cores and memory of every non-terminal node: its instance type looked up in
 * any pool's template, else its own pool's first type, else `fallback`.
 */
function resourcesInUse(config: Config, allNodes: readonly NodeRecord[], fallback: InstanceTypeConfig): { cores: number; memoryGiB: number } {
  const byName = new Map<string, InstanceTypeConfig>();
  const firstOfPool = new Map<string, InstanceTypeConfig>();
  for (const pool of config.pools as readonly PoolConfig[]) {
    const types = pool.template.instanceTypes;
    const first = types[0];
    if (first) firstOfPool.set(poolIdOf(pool.district, pool.profile), first);
    for (const type of types) if (!byName.has(type.name)) byName.set(type.name, type);
  }
  let cores = 0;
  let memoryGiB = 0;
  for (const node of allNodes) {
    if (!NON_TERMINAL.has(node.state)) continue;
    const type = (node.instanceType !== undefined ? byName.get(node.instanceType) : undefined) ?? firstOfPool.get(node.pool) ?? fallback;
    cores += type.vcpus;
    memoryGiB += type.memoryGiB;
  }
  return { cores, memoryGiB };
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
