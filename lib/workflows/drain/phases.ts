/**
 * The drain workflow's phases and its pure `next`. A drain stores its phase
 * (`DrainRecord.phase`) with every change of the record:
 *
 *   starting ── node active -> draining (checks), then deactivate-node ──> moving
 *   moving ──── poll moves / plan / start moves, until the platform lists
 *               the node empty: completedAt, node -> drained ──> handing-over
 *   handing-over ── drain-complete to the decommission queue ──> completed
 *   any ─────── abort requested ──> aborting ── moves in flight settle,
 *               node re-opened ──> aborted
 *
 * The node's own state is read with the drain (the node's transitions are
 * the node's writes, not the drain's), so `next` checks both: a node that
 * another drain holds, or that left `draining` outside this drain, ends it.
 */
import type { DrainPhase, DrainRecord, NodeRecord } from '../../domain/model.js';
import type { Step } from '../engine.js';

export type { DrainPhase };

export interface DrainView {
  drain: DrainRecord | undefined;
  node: NodeRecord | undefined;
  /** The active drain another drain id on the node names, when the node is draining for it. */
  owner?: DrainRecord;
  /** Set when the last effect ended the drain: nothing is read again. */
  finished?: boolean;
  /** Why the drain is out of time (drainTimeout), read with the view: checked before any step, the close included. */
  timedOut?: string;
}

/** The phase a drain's fields say it is in: for records without a stored phase, and for every write. */
export function derivedDrainPhase(drain: Pick<DrainRecord, 'state' | 'abortRequestedAt' | 'completedAt' | 'closedAt'>): DrainPhase {
  if (drain.state === 'completed') return 'completed';
  if (drain.state === 'aborted') return 'aborted';
  if (drain.abortRequestedAt) return 'aborting';
  if (drain.completedAt) return 'handing-over';
  if (drain.closedAt) return 'moving';
  return 'starting';
}

export function drainPhaseOf(drain: DrainRecord): DrainPhase {
  return drain.phase ?? derivedDrainPhase(drain);
}

export type DrainEffect =
  /** Checks a start needs, then node active -> draining. */
  | { kind: 'begin' }
  /** deactivate-node on the platform; closedAt recorded after. */
  | { kind: 'close' }
  /** One round of the moving phase: poll moves in flight, plan, start moves (each move's attempt written before it starts). */
  | { kind: 'move' }
  /** drain-complete to the decommissioner, then completed. */
  | { kind: 'hand-over' }
  /** The decommissioner took the node: completed. */
  | { kind: 'complete'; note: string }
  /** Aborting: lets moves in flight settle, then re-opens the node. */
  | { kind: 'settle' }
  /** Ends the drain aborted (re-opening the node if this drain holds it). */
  | { kind: 'abort'; reason: string; failure: boolean };

export type DrainWrite =
  | { kind: 'save'; patch: { closedAt: string } }
  /** Points the draining node at this drain. */
  | { kind: 'claim' }
  | { kind: 'request-abort'; reason: string }
  /** The effect wrote what it did: read the view again. */
  | { kind: 'reread' }
  | { kind: 'finished' };

export function nextDrain(view: DrainView): Step<DrainWrite, DrainEffect> {
  const { drain, node, owner } = view;
  if (view.finished || !drain || drain.state !== 'active') return { kind: 'end', outcome: drain?.state ?? 'gone' };
  if (!node) return { kind: 'effect', effect: { kind: 'abort', reason: `node ${drain.nodeId} has no record`, failure: false } };
  const phase = drainPhaseOf(drain);
  if (phase === 'aborting') return { kind: 'effect', effect: { kind: 'settle' } };
  // Before the phase's own step: a close or a round of moves that keeps failing must not hold the drain past its timeout.
  if (view.timedOut && (phase === 'starting' || phase === 'moving') && node.state === 'draining' && (node.drainId === undefined || node.drainId === drain.drainId)) {
    return { kind: 'write', write: { kind: 'request-abort', reason: view.timedOut } };
  }
  switch (node.state) {
    case 'active':
      if (phase !== 'starting') return { kind: 'write', write: { kind: 'request-abort', reason: `node ${node.nodeId} was re-opened outside the drain` } };
      return { kind: 'effect', effect: { kind: 'begin' } };
    case 'draining':
      if (node.drainId !== undefined && node.drainId !== drain.drainId) {
        if (owner?.state === 'active') return abort(`node ${node.nodeId} is held by drain ${node.drainId}`, false);
        return { kind: 'write', write: { kind: 'claim' } };
      }
      if (node.drainId === undefined) return { kind: 'write', write: { kind: 'claim' } };
      return { kind: 'effect', effect: { kind: phase === 'starting' ? 'close' : 'move' } };
    case 'drained':
      if (node.drainId !== undefined && node.drainId !== drain.drainId) return abort(`node ${node.nodeId} was drained by ${node.drainId}`, false);
      return { kind: 'effect', effect: { kind: 'hand-over' } };
    case 'terminating':
    case 'terminated':
      if (drain.completedAt) return { kind: 'effect', effect: { kind: 'complete', note: 'the decommissioner took the node' } };
      return abort(`node ${node.nodeId} is ${node.state}`, false);
    default:
      return abort(`node ${node.nodeId} is ${node.state}`, node.state === 'lost');
  }
}

function abort(reason: string, failure: boolean): Step<DrainWrite, DrainEffect> {
  return { kind: 'effect', effect: { kind: 'abort', reason, failure } };
}
