/**
 * The evaluator's decision contract: what the pure decision function takes and
 * returns. Everything is data; the use case in lib/app/ loads it, calls
 * `decidePool` (lib/domain/evaluate.ts) and carries the result out.
 */
import type { Config, PoolConfig } from '../config/index.js';
import type { AttritionPlan } from './attrition.js';
import type { CallOff } from './call-off.js';
import type { NodePrice } from './drain-price.js';
import type { DemandSample, DrainRecord, NodeRecord, NodeState, PoolId, PoolRecord } from './model.js';

export interface PoolUtilization {
  pool: PoolId;
  /** Gears that need a place: active gears on active and draining nodes. */
  demand: number;
  /** Gear slots of schedulable (active, fresh-stats) nodes. A stale node counts only what it last held, never free slots. */
  capacity: number;
  /** Expected slots of nodes still provisioning (so one shortage never provisions twice). */
  provisioningCapacity: number;
  /** demand / (capacity + provisioningCapacity); 0 for an empty pool with no demand, Infinity for demand with no capacity. */
  utilization: number;
  /** capacity + provisioningCapacity - demand (drain reservations are the draining nodes' gears, already in demand). */
  freeSlots: number;
  /** Node counts by state (terminated nodes are not counted). */
  nodesByState: Partial<Record<NodeState, number>>;
  /** Active nodes whose stats are older than statsMaxAge (or that never reported). */
  staleNodes: string[];
}

export type ClampReason =
  | { limit: 'pool.max'; value: number }
  | { limit: 'maxNodesTotal'; value: number }
  | { limit: 'maxCores'; value: number }
  | { limit: 'maxMemoryGiB'; value: number }
  | { limit: 'maxNodesPerDecision'; value: number }
  /** The district's UIDs (lib/domain/district-capacity.ts): nodes beyond the gears they allow would never fill. */
  | { limit: 'district.maxCapacity'; value: number };

export interface RejectedCandidate {
  nodeId: string;
  /** e.g. `protected`, `stale stats`, `gears do not fit below 80% on the other nodes`. */
  reason: string;
  /** It fits, and the pays-off check found its saving not due yet: the next likely candidate (closed early for attrition). */
  pending?: boolean;
}

export type PoolDecision =
  | {
      kind: 'scale-up';
      count: number;
      /** The sentence operators read, e.g. `pool d1/small at 0.83 >= 0.80 for 2m; +2 nodes to 0.70; clamped by maxNodesTotal=24`. */
      reason: string;
      /** Nodes wanted before any limit; count <= wanted. */
      wanted: number;
      clampedBy: ClampReason[];
      /** Extra nodes the forecast asked for (already included in wanted), 0 when the forecast changed nothing. */
      forecastNodes: number;
      /** Set when the pool had no free slot left (demand outran the boot delay): the round, 2 and more when it doubles. */
      outranRound?: number;
      /** The drifted nodes these nodes replace, one each (renewal.ts): their drains wait for the replacements to join. */
      renews?: string[];
    }
  | {
      kind: 'scale-down';
      nodeId: string;
      /** More nodes the same decision drains at once (budget.ts `drainsPerDecision`), each fitting with the ones before it gone. */
      alsoNodeIds?: string[];
      /** Each drained node's price (drain-price.ts): the gear mover calls a drain off when its node has outgrown it. */
      prices?: NodePrice[];
      reason: string;
      rejected: RejectedCandidate[];
    }
  | {
      kind: 'no-action';
      reason: string;
      rejected?: RejectedCandidate[];
      /** The disruption budget that holds scale-down back, and when it frees up (ISO), if that is a time. */
      budget?: { name: string; until?: string };
      /**
       * What a low pool's scale-down waits out before its next drain (its unneeded time, a delay), when it has one to
       * make: within minutes it drains due nodes first, so a renewal waits for it (renewal.ts). Absent when the
       * scale-down found no node to drain (a saving not due yet, gears that fit nowhere): nothing is coming.
       */
      scaleDownWaits?: string;
    };

export interface PoolEvaluationInput {
  now: Date;
  config: Config;
  poolConfig: PoolConfig;
  pool: PoolRecord;
  /** Nodes of this pool, any state. */
  nodes: readonly NodeRecord[];
  /** Nodes of every pool (including this one), for the global limits. */
  allNodes: readonly NodeRecord[];
  /** Active drains of this pool (their pending moves reserve slots on target nodes). */
  drains: readonly DrainRecord[];
  /** Scale-down moves of gears in the last 7 days (ISO times) by gear uuid, as read so far (lib/app/move-history.ts). */
  moveHistory?: ReadonlyMap<string, readonly string[]>;
  /** True on the last read round: a candidate some of whose gears' history is still unread is refused. */
  moveHistoryFinal?: boolean;
  /** Nodes whose gears were listed in an earlier evaluation and one refused them, by that refusal (lib/app/blocked-gears.ts). */
  knownRefusals?: ReadonlyMap<string, string>;
  /** Drains of this pool waiting for their replacement to join (`drain --replace`, renewals): renewal.ts starts none meanwhile. */
  renewing?: number;
}

export interface PoolEvaluation {
  utilization: PoolUtilization;
  decision: PoolDecision;
  /**
   * Changes to the pool record this evaluation implies, whatever the decision:
   * highSince / lowSince (set when the condition starts, removed (undefined)
   * when it ends), demandHistory with this sample, lastEvaluatedAt, and
   * lastScaleUpAt and lastDemandScaleUpAt when the decision is a scale-up.
   */
  poolPatch: Pick<PoolRecord, 'highSince' | 'lowSince' | 'demandHistory' | 'lastEvaluatedAt' | 'lastScaleUpAt' | 'lastDemandScaleUpAt' | 'scaleDownsAt' | 'outran' | 'waitingSeen' | 'lastRenewals'>;
  /** The demand forecast this evaluation used (absent when forecasting is disabled or a lease was in flight), for metrics and `explain`. */
  forecast?: { demand: number; basis: string; lookaheadMs: number };
  /** Nodes to close to new gears early, or to reopen (lib/domain/attrition.ts); absent when there is nothing to do. */
  attrition?: AttritionPlan;
  /** Scale-down drains the pool's scale-up calls off (lib/domain/call-off.ts); absent when none. */
  callOff?: CallOff[];
}

export type { DemandSample };
