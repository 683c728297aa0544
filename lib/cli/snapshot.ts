/**
 * One read of the state the CLI shows: every pool (configured, or only in
 * the table), its record, nodes and active drains, and every node for the
 * global limits: the same inputs the threshold evaluator assembles, so a dry
 * run decides exactly what the evaluator would.
 */
import type { Config, PoolConfig } from '../config/index.js';
import { effectiveConfig, nodesAsDecided, type Controls, type EffectiveConfig } from '../domain/controls.js';
import type { PoolEvaluationInput } from '../domain/decision.js';
import { templateAtRead } from '../domain/drift.js';
import { poolIdOf, splitPoolId, type DrainRecord, type NodeRecord, type PoolId, type PoolRecord } from '../domain/model.js';
import { observedBootMs } from '../domain/node-stats.js';
import { withGearLists } from '../app/gear-lists.js';
import type { StateStore } from '../ports/state-store.js';
import { notFound } from './exit.js';

export interface PoolState {
  pool: PoolId;
  /** Undefined for a pool the table knows that the configuration no longer has (not evaluated). With its overrides and schedules applied. */
  config?: PoolConfig;
  /** What the evaluator runs the pool with now: the file, the runtime overrides, the schedules, the mode. */
  effective?: EffectiveConfig;
  record?: PoolRecord;
  /** Nodes of the pool, any state but terminated (they leave the pool index). */
  nodes: NodeRecord[];
  /** Active drains, oldest first. */
  drains: DrainRecord[];
}

export interface Snapshot {
  now: Date;
  config: Config;
  pools: PoolState[];
  allNodes: NodeRecord[];
  /** The operator's pauses, overrides and pending drains. */
  controls: Controls;
}

/** Configured pools in configuration order, then pools only the table knows, by name. */
export async function readSnapshot(store: StateStore, config: Config, now: Date): Promise<Snapshot> {
  const configured = new Map(config.pools.map((pool) => [poolIdOf(pool.district, pool.profile), pool]));
  const [records, controls] = await Promise.all([store.listPools(), store.listControls()]);
  const extra = records.map((record) => record.pool).filter((id) => !configured.has(id));
  const ids = [...configured.keys(), ...[...new Set(extra)].sort()];
  const pools = await Promise.all(
    ids.map(async (id): Promise<PoolState> => {
      const [record, listed, drains] = await Promise.all([store.getPool(id), store.listNodes(id), store.listDrains(id, 'active')]);
      // The agents' gear lists (a pool's listing counts them), in one batch: explain and evaluate --dry-run decide by them.
      const nodes = await withGearLists(listed, store);
      const fileConfig = configured.get(id);
      const written = fileConfig ? effectiveConfig(config, fileConfig, controls, id, now) : undefined;
      // `$Latest` as the evaluator last read it: the CLI holds no EC2 permission of its own.
      const effective = written && { ...written, poolConfig: { ...written.poolConfig, template: templateAtRead(written.poolConfig.template, record?.launchTemplateRead) } };
      return { pool: id, ...(effective ? { config: effective.poolConfig, effective } : {}), ...(record ? { record } : {}), nodes, drains };
    }),
  );
  return { now, config, pools, allNodes: pools.flatMap((pool) => pool.nodes), controls };
}

/** The pool named on the command line; `not found` (exit 3) listing the pools there are. */
export function findPool(snapshot: Snapshot, id: string): PoolState {
  const pool = snapshot.pools.find((p) => p.pool === id);
  if (pool) return pool;
  // d1-small for d1/small (as in node names and decision ids), when exactly one pool reads so.
  const spelled = snapshot.pools.filter((p) => p.pool.replace('/', '-') === id || p.pool.replace('/', '_') === id);
  if (spelled.length === 1) return spelled[0]!;
  const known = snapshot.pools.map((p) => p.pool);
  throw notFound(`unknown pool ${JSON.stringify(id)}`, known.length > 0 ? `pools: ${known.join(', ')} (a pool is district/profile)` : 'no pool is configured or recorded');
}

/** decidePool's input for a configured pool, as ThresholdEvaluator builds it; undefined for a pool the configuration lacks. */
export function evaluationInput(snapshot: Snapshot, pool: PoolState): PoolEvaluationInput | undefined {
  if (!pool.config) return undefined;
  const record: PoolRecord = pool.record ?? { pool: pool.pool, ...splitPoolId(pool.pool), version: 0 };
  const booted = observedBootMs(pool.nodes);
  return {
    now: snapshot.now,
    config: pool.effective?.config ?? snapshot.config,
    poolConfig: pool.config,
    pool: booted === undefined ? record : { ...record, observedBootMs: booted },
    nodes: nodesAsDecided(pool.nodes, snapshot.controls.pendingDrains, pool.pool),
    allNodes: snapshot.allNodes,
    drains: pool.drains,
    renewing: snapshot.controls.pendingDrains.filter((pending) => pending.pool === pool.pool).length,
  };
}

/**
 * The node named on the command line; `not found` (exit 3) with the closest
 * known names (a short host name matches its full one) when there is none.
 */
export async function findNode(store: StateStore, config: Config, nodeId: string): Promise<NodeRecord> {
  const node = await store.getNode(nodeId);
  if (node) return node;
  const snapshot = await readSnapshot(store, config, new Date());
  const ids = snapshot.allNodes.map((n) => n.nodeId);
  const lower = nodeId.toLowerCase();
  const close = ids.filter((id) => id.toLowerCase().startsWith(`${lower}.`) || id.toLowerCase().includes(lower)).slice(0, 3);
  const hint =
    close.length > 0
      ? `did you mean ${close.join(' or ')}?`
      : ids.length > 0
        ? `nodes are named like ${ids.slice(0, 3).join(', ')} (nodescaler status lists them)`
        : 'the state holds no node yet';
  throw notFound(`unknown node ${JSON.stringify(nodeId)}`, hint);
}
