/**
 * The CLI's changes to one node, each through the path the functions use:
 *
 * - `drain NODE`: a `scale-down` message with a `manual:` decisionId on the
 *   drain queue; the gear mover makes it a drain of kind `manual` (no lease).
 * - `cancel-drain NODE`: the drain workflow's operator entry point (lib/workflows/drain/operator.ts):
 *   no move starts any more, the moves in flight settle, then the gear mover
 *   re-opens the node on its next run.
 * - `protect NODE` / `unprotect NODE`: the node's `protected` flag, a
 *   conditional write on its version (a lost race is read again and retried).
 */
import { randomBytes } from 'node:crypto';
import { findPoolConfig, type Config } from '../config/index.js';
import { drainingLimit, poolSize } from '../domain/budget.js';
import { isSent, nodesAsDecided, protectedNodesNow, type Controls, type PendingDrain } from '../domain/controls.js';
import { pendingDrainDecisionId } from '../domain/pending-drains.js';
import type { StateStore } from '../ports/state-store.js';
import { decisionMaxAgeMs } from '../domain/decision-message.js';
import { drainIdFor, progressOf, type Progress } from '../domain/drain.js';
import type { DrainRecord, NodeRecord, NodeState } from '../domain/model.js';
import { isProtected } from '../domain/node-stats.js';
import { ConflictError } from '../errors.js';
import type { ScaleDownMessage } from '../messages/index.js';
import type { Clock } from '../ports/clock.js';
import { MANUAL_DECISION_PREFIX } from '../workflows/drain/context.js';
import { cancelDrain as cancelNodeDrain } from '../workflows/drain/operator.js';
import { CliError, EXIT, refused } from './exit.js';
import { findNode } from './snapshot.js';
import type { OpenTarget } from './target.js';
import { MemoryLog } from '../adapters/memory/log.js';

const WRITE_ATTEMPTS = 5;

export interface DrainRequestView {
  action: 'drain';
  nodeId: string;
  pool: string;
  decisionId: string;
  /** The drain the gear mover creates for this decision. */
  drainId: string;
  reason: string;
  queue: string;
}

/** `controls`: the operator controls as the caller read them (lib/cli/safe-drain.ts), read once per command. */
export async function requestDrain(target: OpenTarget, config: Config, clock: Clock, nodeId: string, why: string | undefined, by: string, controls: Controls): Promise<DrainRequestView> {
  const { store } = target;
  const node = await findNode(store, config, nodeId);
  const poolConfig = findPoolConfig(config, node.pool);
  if (node.state !== 'active') {
    throw refused(`node ${node.nodeId} is ${node.state}${node.drainId ? ` (drain ${node.drainId})` : ''}: only an active node can be drained`);
  }
  const waiting = controls.pendingDrains.find((pending) => pending.nodeId === node.nodeId);
  if (waiting) throw alreadyPending(waiting, config);
  if (isProtected(node, protectedNodesNow(config, poolConfig, controls, node.pool, clock.now()))) {
    throw refused(
      `node ${node.nodeId} is protected: the gear mover refuses to drain it`,
      node.protected ? `nodescaler unprotect ${node.nodeId} first` : `it is in the pool's protectedNodes (the configuration, or its override: nodescaler overrides)`,
    );
  }
  // A drain sent but not yet begun counts, as the evaluator counts it: the gear mover would refuse the second.
  const poolNodes = nodesAsDecided(await store.listNodes(node.pool), controls.pendingDrains, node.pool);
  const draining = poolNodes.filter((n) => n.state === 'draining');
  const { limit, setting } = drainingLimit(config, poolConfig, poolSize(poolNodes));
  if (draining.length >= limit) {
    throw refused(
      `pool ${node.pool} already drains ${draining.map((n) => n.nodeId).join(', ')} (${setting}): the gear mover would refuse this drain`,
      'wait for it to finish, or stop it with nodescaler cancel-drain',
    );
  }
  const now = clock.now();
  const decisionId = `${MANUAL_DECISION_PREFIX}${now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}:${randomBytes(4).toString('hex')}`;
  const reason = `manual drain (nodescaler CLI)${why ? `: ${why}` : ''}`.slice(0, 1024);
  const message: ScaleDownMessage = { type: 'scale-down', v: 1, decisionId, pool: node.pool, nodeId: node.nodeId, reason, decidedAt: now.toISOString() };
  // Recorded before it is sent: until the gear mover begins it, the evaluator counts the node as draining, so no
  // scale-down decided meanwhile drains a second node that one of the two drains then has no room for (finding 18).
  // A record whose message never went out is given up by the evaluator after decisionMaxAge.
  const pending: PendingDrain = { nodeId: node.nodeId, pool: node.pool, decisionId, reason: why ?? '', by, at: now.toISOString(), sentAt: now.toISOString() };
  try {
    await store.createPendingDrain(pending);
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    throw alreadyPending((error.current as PendingDrain | undefined) ?? pending, config);
  }
  const result = await target.queue.send('drain', [{ body: message, groupId: node.pool, deduplicationId: decisionId }]);
  if (result.failed.length > 0) {
    await store.deletePendingDrain(node.nodeId);
    throw new CliError(EXIT.error, `the drain queue did not take the request: ${result.failed[0]!.error}`, 'nothing changed; run the command again');
  }
  return { action: 'drain', nodeId: node.nodeId, pool: node.pool, decisionId, drainId: drainIdFor(decisionId), reason, queue: target.queueLocation('drain') };
}

/**
 * The refusal of a second drain of a node whose drain is waiting, for its replacement or for the gear mover; or whose
 * waiting drain was cancelled, its item kept until the old message can no longer begin a drain.
 */
export function alreadyPending(pending: PendingDrain, config: Config): CliError {
  if (pending.cancelledAt !== undefined) {
    const until = isSent(pending)
      ? `its message, sent at ${pending.sentAt ?? pending.at}, is refused until ${new Date(Date.parse(pending.sentAt ?? pending.at) + decisionMaxAgeMs(config)).toISOString()} (decisionMaxAge)`
      : `it is dropped at the evaluator's next run`;
    return refused(`node ${pending.nodeId}'s drain was cancelled by ${pending.cancelledBy ?? 'an operator'} at ${pending.cancelledAt} before it began; ${until}: nothing sent`, 'request the drain again after that');
  }
  const what = isSent(pending) ? `a drain sent at ${pending.sentAt ?? pending.at}, for the gear mover to begin` : `a drain waiting for replacement ${pending.replacementDecisionId}`;
  return refused(`node ${pending.nodeId} already has ${what} (requested by ${pending.by} at ${pending.at}): nothing sent`, 'nodescaler status shows it');
}

export interface CancelView {
  action: 'cancel-drain';
  nodeId: string;
  drainId: string;
  /** False when the drain was already stopping (nothing written). */
  changed: boolean;
  stoppingSince: string;
  reason: string;
  progress: Progress;
  /** Set when the drain had not begun: it waited for its replacement to join, or for the gear mover to take its message. */
  waiting?: 'replacement' | 'gear mover';
  replacementDecisionId?: string;
}

const STOPPABLE: ReadonlySet<NodeState> = new Set<NodeState>(['active', 'draining']);

export async function cancelDrain(target: OpenTarget, config: Config, clock: Clock, nodeId: string, why: string | undefined, by: string): Promise<CancelView> {
  const { store } = target;
  const node = await findNode(store, config, nodeId);
  if (!STOPPABLE.has(node.state)) {
    const hint = node.state === 'drained' ? `protect it (nodescaler protect ${node.nodeId}) to keep the host from being terminated` : undefined;
    throw refused(`node ${node.nodeId} is ${node.state}: there is no drain to stop`, hint);
  }
  const current = node.drainId ? await store.getDrain(node.drainId) : undefined;
  if (current?.state === 'active' && current.abortRequestedAt) {
    return view(node, current.drainId, false, current.abortRequestedAt, current.abortReason ?? '', progressOf(current.moves));
  }
  const ports = { store, clock, log: new MemoryLog() };
  const reason = `operator (nodescaler CLI)${why ? `: ${why}` : ''}`;
  for (let attempt = 1; ; attempt++) {
    try {
      const drain = await cancelNodeDrain(ports, node.nodeId, reason);
      if (!drain) {
        const pending = (await store.listControls()).pendingDrains.find((candidate) => candidate.nodeId === node.nodeId);
        if (pending) return await cancelWaiting(ports, node, pending, reason, by);
        throw refused(
          `node ${node.nodeId} has no drain in progress (it is ${node.state})`,
          node.state === 'active' ? 'a drain requested moments ago starts when the gear mover takes its message: run cancel-drain again then' : undefined,
        );
      }
      return view(node, drain.drainId, true, drain.abortRequestedAt!, drain.abortReason ?? reason, progressOf(drain.moves));
    } catch (error) {
      // The gear mover wrote the drain at the same moment: read it again.
      if (!(error instanceof ConflictError) || attempt >= WRITE_ATTEMPTS) throw error;
    }
  }
}

/** A node whose drain waits (pending): the cancel, unless its drain already ran, or began as the cancel was written. */
async function cancelWaiting(ports: { store: StateStore; clock: Clock; log: MemoryLog }, node: NodeRecord, pending: PendingDrain, reason: string, by: string): Promise<CancelView> {
  const { store, clock } = ports;
  // The drain may have run and ended before the evaluator ended its pending item: it is not "cancelled before it began".
  const ranBefore = await ranAndEnded(store, pending);
  if (ranBefore) throw alreadyRan(node, ranBefore);
  const cancelled = await cancelPending(store, clock, node, pending, reason, by);
  // The gear mover may have created the drain from a message it took before the cancel was written: looked for again
  // after the write, it is stopped as any drain (and one created later is refused at its start by the cancel).
  const begun = await cancelNodeDrain(ports, node.nodeId, reason);
  if (begun) return view(node, begun.drainId, true, begun.abortRequestedAt!, begun.abortReason ?? reason, progressOf(begun.moves));
  const ran = await ranAndEnded(store, pending);
  if (ran) throw alreadyRan(node, ran);
  if (cancelled === 'gone') {
    throw refused(`the drain of ${node.nodeId} stopped waiting as it was being cancelled, and is not in progress: it ended or was given up`, 'nodescaler status shows which');
  }
  return cancelled;
}

function alreadyRan(node: NodeRecord, drain: DrainRecord): CliError {
  return refused(`the drain of ${node.nodeId} (${drain.drainId}) already ran and ended ${drain.state}${drain.abortReason ? ` (${drain.abortReason})` : ''}: nothing to cancel`, 'nodescaler status shows the node');
}

/** The pending item's drain, if it closed its node or moved a gear and has ended. */
async function ranAndEnded(store: StateStore, pending: PendingDrain): Promise<DrainRecord | undefined> {
  const drain = await store.getDrain(drainIdFor(pendingDrainDecisionId(pending)));
  if (!drain || drain.state === 'active') return undefined;
  return drain.closedAt !== undefined || drain.moves.length > 0 ? drain : undefined;
}

/**
 * A drain that has not begun: the evaluator does not start one still waiting for its replacement, and the gear mover
 * refuses the message of one already sent (lib/domain/pending-drains.ts cancelledBeforeBegun).
 */
async function cancelPending(store: StateStore, clock: Clock, node: NodeRecord, pending: PendingDrain, reason: string, by: string): Promise<CancelView | 'gone'> {
  const at = clock.now().toISOString();
  const outcome = await store.cancelPendingDrain(node.nodeId, { at, by, reason });
  // The drain began (the caller looks for it again) or was given up.
  if (outcome === 'gone') return 'gone';
  const current = outcome === 'already' ? (await store.listControls()).pendingDrains.find((candidate) => candidate.nodeId === node.nodeId) ?? pending : pending;
  const cancelled = outcome === 'cancelled';
  return {
    ...view(node, drainIdFor(pendingDrainDecisionId(pending)), cancelled, cancelled ? at : current.cancelledAt ?? at, cancelled ? reason : current.cancelReason ?? '', progressOf([])),
    waiting: isSent(pending) ? 'gear mover' : 'replacement',
    ...(pending.replacementDecisionId ? { replacementDecisionId: pending.replacementDecisionId } : {}),
  };
}

function view(node: NodeRecord, drainId: string, changed: boolean, since: string, reason: string, progress: Progress): CancelView {
  return { action: 'cancel-drain', nodeId: node.nodeId, drainId, changed, stoppingSince: since, reason, progress };
}

export interface ProtectView {
  action: 'protect' | 'unprotect';
  nodeId: string;
  pool: string;
  state: NodeState;
  protected: boolean;
  /** False when the flag already had the asked value (nothing written). */
  changed: boolean;
  version: number;
  /** Still protected by pools[].protectedNodes whatever the flag says. */
  protectedByConfig: boolean;
}

export async function setProtected(target: OpenTarget, config: Config, nodeId: string, value: boolean): Promise<ProtectView> {
  const { store } = target;
  let node = await findNode(store, config, nodeId);
  if (node.state === 'terminated') throw refused(`node ${node.nodeId} is terminated: there is no host left to ${value ? 'protect' : 'unprotect'}`);
  const byConfig = (findPoolConfig(config, node.pool)?.protectedNodes ?? []).includes(node.nodeId);
  const result = (changed: boolean, record: NodeRecord): ProtectView => ({
    action: value ? 'protect' : 'unprotect',
    nodeId: record.nodeId,
    pool: record.pool,
    state: record.state,
    protected: record.protected,
    changed,
    version: record.version,
    protectedByConfig: byConfig,
  });
  for (let attempt = 1; ; attempt++) {
    if (node.protected === value) return result(false, node);
    try {
      return result(true, await store.updateNode(node.nodeId, node.version, { protected: value }));
    } catch (error) {
      if (!(error instanceof ConflictError) || attempt >= WRITE_ATTEMPTS) throw error;
      // Another writer changed the node (stats, a transition): read it again and re-apply.
      node = (error.current as NodeRecord | undefined) ?? (await findNode(store, config, nodeId));
    }
  }
}

export interface ForgetView {
  action: 'forget';
  nodeId: string;
  pool: string;
  /** The state the node was in. */
  was: NodeState;
  reason: string;
}

const FORGETTABLE: ReadonlySet<NodeState> = new Set<NodeState>(['active', 'lost']);

/**
 * `forget NODE`: drops an adopted node of a pool the configuration lacks
 * from the state (active -> lost -> terminated, so it leaves the pool's
 * list), as `kubectl delete node` drops a node object: its host and its
 * gears are not touched. Refused for a node of a configured pool (drain it,
 * or add the pool) and for a node nodescaler provisioned (its release
 * terminates its host).
 */
export async function forgetNode(target: OpenTarget, config: Config, clock: Clock, nodeId: string, why: string): Promise<ForgetView> {
  const { store } = target;
  let node = await findNode(store, config, nodeId);
  if (findPoolConfig(config, node.pool)) {
    throw refused(`node ${node.nodeId} is in pool ${node.pool}, which the configuration has: nodescaler manages it`, `to remove it, drain it (nodescaler drain ${node.nodeId} --reason ...)`);
  }
  if (node.origin !== 'adopted') throw refused(`node ${node.nodeId} was provisioned by nodescaler: its release terminates its host, forget would leave the host running unseen`);
  if (!FORGETTABLE.has(node.state)) throw refused(`node ${node.nodeId} is ${node.state}: only an active or lost node is forgotten`);
  const was = node.state;
  const reason = `forgotten by an operator (nodescaler forget): ${why}; its host and gears were not touched`.slice(0, 1024);
  for (let attempt = 1; ; attempt++) {
    try {
      if (node.state === 'active') node = await store.transitionNode(node.nodeId, { from: 'active', to: 'lost', expectedVersion: node.version, patch: { reason } }, clock.now());
      await store.transitionNode(node.nodeId, { from: 'lost', to: 'terminated', expectedVersion: node.version, patch: { reason } }, clock.now());
      return { action: 'forget', nodeId: node.nodeId, pool: node.pool, was, reason };
    } catch (error) {
      // Its stats were stored at the same moment: read it again.
      if (!(error instanceof ConflictError) || attempt >= WRITE_ATTEMPTS) throw error;
      node = await findNode(store, config, nodeId);
      if (!FORGETTABLE.has(node.state)) throw refused(`node ${node.nodeId} is ${node.state}: only an active or lost node is forgotten`);
    }
  }
}
