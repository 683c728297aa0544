/**
 * The records the state table holds, as plain data. Everything here is
 * serialisable as it is (ISO strings for times), so the same shapes travel
 * through DynamoDB, the in-memory store and the tests.
 */

/** `district/profile`: the unit that is scaled. */
export type PoolId = string;

export function poolIdOf(district: string, profile: string): PoolId {
  return `${district}/${profile}`;
}

export function splitPoolId(pool: PoolId): { district: string; profile: string } {
  const slash = pool.indexOf('/');
  return slash < 0 ? { district: pool, profile: '' } : { district: pool.slice(0, slash), profile: pool.slice(slash + 1) };
}

export const NODE_STATES = [
  'provisioning',
  'active',
  'draining',
  'drained',
  'terminating',
  'terminated',
  'failed',
  'lost',
] as const;
export type NodeState = (typeof NODE_STATES)[number];

export interface GearInfo {
  uuid: string;
  app: string;
  /** Gear size (profile) name, e.g. `small`. */
  size: string;
  /** The tenant asked not to be moved (as Karpenter's karpenter.sh/do-not-disrupt): scale-down leaves its node alone. */
  doNotMove?: boolean;
  /** Moving it restarts its tenant (an active single-gear application's gear or a head gear), as its node's agent saw it; absent: not known. */
  disruptive?: boolean;
  /**
   * Stopped or idled on its node, as its agent saw it. origin-server's `max_active_gears` counts only active gears
   * (resource_limits.conf: "Stopped and idled gears are not limited"), so the agent's `activeGears` leaves it out and
   * its move takes no slot on the target; absent: counted as active, the careful side.
   */
  idle?: boolean;
}

export interface NodeStats {
  activeGears: number;
  maxActiveGears: number;
  /** The agent's gear list: read with one node (StateStore.getNode), never with a pool's (listNodes gives `listed`). */
  gears?: GearInfo[];
  /**
   * What the gear list held, kept with the figures when there is one (`statsToStore`). A list is some 9 KB a
   * 100-gear node: stored beside every node a pool lists, it made each evaluation read and each report write
   * nine times what the figures cost. `digest` tells a changed list from an unchanged one.
   */
  listed?: GearListSummary;
  /** Gears of idled applications: moving one restarts nothing (optional; agents that know report it). */
  idleGears?: number;
  /** Active gears whose move restarts a tenant: single-gear applications and head gears (optional, as `idleGears`). */
  disruptiveGears?: number;
  cpu?: number;
  memory?: number;
  /** ISO time the node measured these figures; the order of stats is decided by this, never by arrival. */
  reportedAt: string;
  /**
   * The node's report before these, kept by the store (never taken from a message): a pool's reports of one minute
   * reach the evaluator over several batches, so the minute before is read whole from each node's report of it
   * (settled-demand.ts), not from whichever reports had arrived when it evaluated.
   */
  prior?: PriorReport;
}

/** A node's previous report: its gear count and when it measured it. */
export interface PriorReport {
  activeGears: number;
  reportedAt: string;
}

export interface GearListSummary {
  /** Gears listed. */
  gears: number;
  /** Of those, marked idle (they hold no slot). */
  idle: number;
  digest: string;
}

/** What a provisioned node's host was launched from (lib/domain/drift.ts). */
export interface LaunchedFrom {
  /** The AMI id, or the launch template and its version (`lt-0abc@3`, `web@$Latest`); `default` with neither. */
  image: string;
  /** A digest of the other launch settings (instance profile, security groups, key, volume, user data, tags, spot). */
  settings: string;
}

export interface NodeRecord {
  nodeId: string;
  pool: PoolId;
  district: string;
  profile: string;
  state: NodeState;
  /** Incremented by every write; the optimistic-lock token. */
  version: number;
  createdAt: string;
  stateChangedAt: string;
  /** When a provisioned node first reported stats (provisioning -> active): its boot time is joinedAt - createdAt. */
  joinedAt?: string;
  /** `provisioned` by us, or `adopted` when it first reported without us creating it. */
  origin: 'provisioned' | 'adopted';
  /** A protected node is never chosen for scale-down and never terminated. */
  protected: boolean;
  /** Cloud name (`<base>_<N>`), set for nodes we provision. */
  cloudName?: string;
  instanceId?: string;
  instanceType?: string;
  /** The availability zone the host runs in, when the cloud said (a spot node is priced at its zone's price). */
  zone?: string;
  volumeId?: string;
  privateIp?: string;
  /** The template its host was launched from, written with the host (drift.ts); absent on adopted nodes and older records. */
  launchedFrom?: LaunchedFrom;
  /** The scale-up decision that created the node. */
  decisionId?: string;
  stats?: NodeStats;
  /** Why the node is in its current state, for `explain` and logs. */
  reason?: string;
  /** Completed steps of a multi-step action (decommission), so a crash resumes at the next one. */
  steps?: Record<string, string>;
  /**
   * The release workflow's phase while the node is `terminating`: the next release step, or `finishing`
   * (only the final transition left). Absent on records written before phases were stored: derived once
   * from `steps` when read (lib/workflows/release/phases.ts).
   */
  releasePhase?: string;
  /**
   * The launch workflow's phase while the node is `provisioning` (lib/workflows/launch/phases.ts).
   * Absent on records written before phases were stored: derived once from `steps` when read.
   */
  launchPhase?: LaunchPhase;
  /**
   * Since when the node is closed to new gears so that departing gears empty it before its drain (attrition,
   * lib/domain/attrition.ts). Set before the platform closes it, cleared after the platform reopens it.
   */
  attritionSince?: string;
  /** The drain that holds this node while it is `draining` (set in the same write as `active -> draining`). */
  drainId?: string;
}

export interface PoolLease {
  /** Who holds it: the decisionId of the action in flight. */
  holder: string;
  kind: 'scale-up' | 'scale-down';
  acquiredAt: string;
  expiresAt: string;
  /**
   * The decision message, stored with the lease before it is sent: an
   * invocation that crashes between the two leaves it here, and the next
   * evaluation sends the very same message (same decisionId) again.
   */
  message?: Record<string, unknown>;
  /** When the message was accepted by the queue; unset means it may not have been sent. */
  sentAt?: string;
}

/**
 * One sample of a pool's demand, for the forecast: [epoch minute, gears]. Loops over a history read it by index
 * (`const { 0: minute, 1: gears } = sample`): stored samples are frozen tuples, which array destructuring reads through
 * their iterator, two to three times slower, and a decision reads two days of them several times a minute.
 */
export type DemandSample = [minute: number, gears: number];

export interface PoolRecord {
  pool: PoolId;
  district: string;
  profile: string;
  version: number;
  lease?: PoolLease;
  lastScaleUpAt?: string;
  /**
   * When the evaluator last bought nodes because demand needed them (a replacement for an interrupted or handed-back
   * node sets lastScaleUpAt only): the pays-off check's wait after a scale-up counts from it.
   */
  lastDemandScaleUpAt?: string;
  lastScaleDownAt?: string;
  /** The drifted nodes the evaluator asked to renew and that are still active, when, and how often (lib/domain/renewal.ts): none is asked again while its renewal may still run. */
  lastRenewals?: Array<{ nodeId: string; at: string; /** Renewals asked for this node in a row (absent: 1). */ asks?: number }>;
  /**
   * What the evaluator last read the pool's launch template's `$Latest` or `$Default` as (lib/app/launch-templates.ts),
   * for the template written as `template` (`<id or name>@<$Latest|$Default>`): the CLI reads drift with it, holding
   * no EC2 permission of its own.
   */
  launchTemplateRead?: { template: string; version: string; readAt: string };
  /**
   * The pool's template as the evaluator last read it (drift.ts `templateIdentity`, its launch template's version
   * resolved) and since when: a node drifted from it drifted no later, and scaleDown.driftGrace counts from then.
   */
  templateSeen?: { identity: string; since: string };
  /** When a host of the pool last failed to launch or join: scale-up and scale-down wait delayAfterFailure. */
  lastFailureAt?: string;
  /** When a drain of the pool last failed: only scale-down waits delayAfterFailure (lib/domain/failure-backoff.ts). */
  lastDrainFailureAt?: string;
  exhaustedUntil?: string;
  /** Current exhaustion backoff, doubled on each consecutive exhaustion. */
  exhaustedBackoffMs?: number;
  /** Since when utilization has been at or above the scale-up threshold (sustain window). */
  highSince?: string;
  /** Since when utilization has been at or below the scale-down threshold (unneeded time). */
  lowSince?: string;
  lastEvaluatedAt?: string;
  /** Recent demand, oldest first: per minute for the trend window, coarser back to a day ago. */
  demandHistory?: DemandSample[];
  /** Observed time from scale-up decision to a node reporting (moving average). */
  observedBootMs?: number;
  /**
   * Cloud offerings that recently failed for lack of capacity, by key
   * (`<instanceType>@<subnetId>`, `*` for any), each with the ISO time until
   * which the provisioner skips it. Written by the provisioner.
   */
  unavailableOfferings?: Record<string, string>;
  /** When this pool's recent scale-down decisions were taken (the last hour's), for scaleDown.budget.maxDrainsPerHour. */
  scaleDownsAt?: string[];
  /** The last decision recorded in shadow mode, so one that stays the same is logged once per leaseTtl. */
  shadow?: { key: string; at: string };
  /** The last scale-up decided while the pool had no free slot (lib/domain/scale-up.ts): when, its round and its nodes. */
  outran?: { at: string; rounds: number; count: number };
  /** The broker's latest count of this pool's refused gear creations (gears-refused, lib/domain/waiting.ts). */
  refused?: { gears: number; windowStart: string; windowEnd: string; zonesRequired?: boolean };
  /** The district's UIDs as the broker-side reporter last read them (district-capacity, lib/domain/district-capacity.ts). */
  districtCapacity?: { maxCapacity: number; availableCapacity: number; readAt: string };
  /** The waiting demand (placed and refused gears) an evaluation last saw, and since when gears have waited, for scaleUp.waitingRise. */
  waitingSeen?: { at: string; gears: number; since: string };
  /** A spot pool's prices as EC2 last quoted them (lib/domain/market-prices.ts), for the pays-off check. */
  spotPrices?: SpotPriceRecord;
  /** The pool's on-demand prices in the stage's region as the AWS Price List last gave them (lib/domain/market-prices.ts). */
  onDemandPrices?: OnDemandPriceRecord;
}

/**
 * The EC2 spot prices the evaluator last read for a spot pool's instance
 * types (lib/app/market-prices.ts), stored on the pool record so that every
 * evaluator instance and the CLI (`explain`, `status`) price its drains alike.
 */
export interface SpotPriceRecord {
  /** The instance types asked for: EC2 quotes none for a type it does not sell as spot there. */
  types: string[];
  /** $ per hour by instance type: the median over the zones EC2 quoted. */
  byType: Record<string, number>;
  /** How many zones each type's price was read in. */
  zones?: Record<string, number>;
  /** Each type's price in each zone EC2 quoted, for a node whose zone is known. */
  byZone?: Record<string, Record<string, number>>;
  /** When `byType` was read. */
  readAt?: string;
  /** The last read that failed (the prices before it are kept), and why. */
  failedAt?: string;
  failure?: string;
}

/**
 * The on-demand prices the evaluator last read for a pool's instance types in
 * the stage's region (lib/app/market-prices.ts), stored on the pool record as
 * spot prices are.
 */
export interface OnDemandPriceRecord {
  /** The instance types asked for: the Price List has none for a type the region does not sell. */
  types: string[];
  /** $ per hour by instance type (Linux, shared tenancy). */
  byType: Record<string, number>;
  /** The region they are for; set by a read that succeeded. */
  region?: string;
  /** When `byType` was read. */
  readAt?: string;
  /** The last read that failed (the prices before it are kept), and why. */
  failedAt?: string;
  failure?: string;
}

/**
 * The names one scale-up decision claimed, written once before any host is
 * requested: a redelivered or concurrent delivery of the same decision finds
 * these names again instead of allocating new ones.
 */
export interface ScaleUpRecord {
  decisionId: string;
  pool: PoolId;
  /** Nodes the decision asked for. */
  requested: number;
  /** The claimed node names, in slot order: fewer than `requested` when limits left less room, none when refused. */
  slots: Array<{ nodeId: string; cloudName: string }>;
  createdAt: string;
  /** Why fewer than `requested` slots were claimed. */
  reason?: string;
}

export const MOVE_STATES = ['planned', 'moving', 'moved', 'failed'] as const;
export type MoveState = (typeof MOVE_STATES)[number];

export interface GearMove {
  gear: GearInfo;
  target: string;
  state: MoveState;
  attempts: number;
  nextAttemptAt?: string;
  /** Platform handle of an asynchronous move (e.g. an SSM command id). */
  commandId?: string;
  lastError?: string;
  /** When the current (or last) attempt started; a `moving` move without a commandId is re-issued only after a grace time. */
  startedAt?: string;
  /** When the move ended (moved or failed). */
  finishedAt?: string;
  /** The target is no longer usable (full, gone, not active): the move waits to be re-planned. */
  retarget?: boolean;
  /** How often this gear was given a new target. */
  replans?: number;
  /**
   * Set when the move failed because every target it was given filled (or left the pool) before the gear
   * could land: the pool has no room for it, which is demand, not a fault of the move.
   */
  noRoom?: boolean;
  /** The move's own version in the state table (each move is its own item); absent on a move not yet stored. */
  version?: number;
}

export const DRAIN_STATES = ['active', 'completed', 'aborted'] as const;
export type DrainState = (typeof DRAIN_STATES)[number];

/** Why a drain exists: an evaluator decision, an operator, an EC2 interruption, or a node handed back by the decommissioner. */
export const DRAIN_KINDS = ['scale-down', 'manual', 'interruption', 'redrain'] as const;
export type DrainKind = (typeof DRAIN_KINDS)[number];

/** A scale-down decision's price of one node (lib/domain/drain-price.ts). */
export interface DrainPrice {
  /** Gears on the node at the report the decision priced. */
  gears: number;
  /** The most gears the node may hold at the drain's start for the decision to stand. */
  limit: number;
  /** The node next in the candidate order, which the limit keeps it ahead of. */
  next: string;
  /** Gears on the next node at the report the decision read. */
  nextGears: number;
}

export interface DrainRecord {
  drainId: string;
  decisionId: string;
  nodeId: string;
  pool: PoolId;
  state: DrainState;
  version: number;
  startedAt: string;
  updatedAt: string;
  reason: string;
  moves: GearMove[];
  abortReason?: string;
  /** Absent on drains written before kinds existed: `scale-down`. */
  kind?: DrainKind;
  /** Set when an EC2 interruption made the drain urgent: it goes first, ignores maxConcurrentDrains and fills targets to capacity. */
  urgentSince?: string;
  /** What made it urgent (e.g. `spot interruption warning (terminate)`). */
  urgentCause?: string;
  /**
   * What the scale-down decision priced the node at (lib/domain/drain-price.ts): past its limit when the drain starts,
   * the drain is called off. Absent on other drains, and on drains decided before prices existed.
   */
  price?: DrainPrice;
  /** When the node was closed to new gears on the platform (deactivate-node). */
  closedAt?: string;
  /** When every gear first had a target. */
  plannedAt?: string;
  /** Set when the drain must stop: no move starts any more, and it ends `aborted` once the moves in flight settle. */
  abortRequestedAt?: string;
  /**
   * Set with `abortRequestedAt` when the pool's scale-up called the drain off (lib/domain/call-off.ts): it ends
   * `aborted` the same way, but as no failure (no delayAfterFailure, no DrainsAborted).
   */
  calledOffAt?: string;
  /**
   * Set with `abortRequestedAt` when the rest of the pool has no room left for the node's gears (demand rose
   * while the drain ran): it ends `aborted`, counted as `DrainsOutgrown`, not as a failure that pages or backs
   * off the pool's scale-up.
   */
  outgrownAt?: string;
  /**
   * Set with `abortRequestedAt` when the node, closed, listed more gears than the decision's price allows before the
   * first plan (lib/domain/drain-price.ts): it ends `aborted` as no failure, and the evaluator decides again.
   */
  repricedAt?: string;
  /**
   * Set with `abortRequestedAt` when an operator cancelled the drain (`cancel-drain`, audited as an `operator`
   * entry): it ends `aborted` as no failure, since an operator is not paged for their own action.
   */
  cancelledAt?: string;
  /** When the platform reported the node empty. */
  completedAt?: string;
  /** Gears that could not be placed at the last plan (urgent drains wait for capacity instead of aborting). */
  unplaced?: number;
  /** The replacement scale-up requested for an interrupted node, if any. */
  replacementDecisionId?: string;
  /**
   * The drain workflow's phase (lib/workflows/drain/phases.ts), written with every change of the drain.
   * Absent on drains written before phases were stored: derived once when read, so a drain in flight
   * across an upgrade resumes where it was.
   */
  phase?: DrainPhase;
  /**
   * Set on a drain written before each move had its own item: its moves were read from inside the drain's
   * item. The gear mover splits them out (`StateStore.splitDrainMoves`) before it writes one.
   */
  movesInline?: boolean;
}

/** requesting (no attempt in flight) -> attempting (an attempt recorded, its host not yet) -> requested (waiting to join). */
export type LaunchPhase = 'requesting' | 'attempting' | 'requested';

/** starting (node opened for draining) -> moving -> handing-over -> completed; aborting -> aborted from any. */
export type DrainPhase = 'starting' | 'moving' | 'handing-over' | 'aborting' | 'completed' | 'aborted';

/** `shadow`: what a pool in shadow mode would have done (nothing was); `operator`: an operator's action (audit). */
export type DecisionKind = 'scale-up' | 'scale-down' | 'no-action' | 'refused' | 'failure' | 'shadow' | 'operator';

export interface DecisionLogEntry {
  pool: PoolId;
  at: string;
  kind: DecisionKind;
  reason: string;
  decisionId?: string;
  details?: Record<string, unknown>;
  /** Who acted, on `operator` entries: an AWS principal ARN, or `local user NAME`. */
  by?: string;
}
