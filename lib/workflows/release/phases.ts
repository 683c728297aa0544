/**
 * The release workflow's phases and its pure `next`. A `terminating` node
 * stores the phase it is in (`NodeRecord.releasePhase`): one of the release
 * steps of lib/domain/decommission.ts, in their order, then `finishing` (the
 * transition to `terminated`, with the decision log and metrics).
 *
 *   removedFromDistrict -> dnsDeleted -> volumeResolved -> instanceTerminated
 *                                                       \-> releaseReported (no instance id)
 *     -> volumeDeleted (waits while attached) -> finishing -> terminated
 *
 * Steps that do not apply to a node (no DNS record, no volume) are skipped
 * when the phase after a step is computed.
 *
 * A node the platform refuses to remove from its district (it holds gears
 * after all) goes to `handingBack` instead, with where it goes
 * (lib/domain/decommission.ts `handBackTarget`) recorded on it:
 *
 *   removedFromDistrict (refused) -> handingBack -> [reopen: activateNode] -> draining | active
 *
 * A node `removeNode` found in no district is removed again just before its host goes (it may have joined since):
 * refused there, it goes to `handingBack` too, and its DNS record, deleted by then, is restored first:
 *
 *   instanceTerminated (removed again, refused) -> handingBack -> [restoreDns] -> [reopen] -> draining | active
 */
import { HAND_BACK_STEPS, RELEASE_STEPS, nextReleaseStep, type HandBackTarget, type ReleaseOptions, type ReleaseStep } from '../../domain/decommission.js';
import type { NodeRecord } from '../../domain/model.js';
import type { Step } from '../engine.js';

export type ReleasePhase = ReleaseStep | 'finishing' | 'handingBack';

/** The effects of a release: its steps, and for a node handed back, its DNS record restored and re-opening it as active. */
export type ReleaseEffect = ReleaseStep | 'reopen' | 'restoreDns';

export interface ReleaseView {
  node: NodeRecord;
  options: ReleaseOptions;
}

/** A step done, recorded on the node with the phase after it; or the final transition. */
export type ReleaseWrite =
  | { kind: 'record'; step: ReleaseStep; patch: Pick<NodeRecord, 'volumeId'> | Record<string, never>; foundNoNode?: boolean }
  | { kind: 'finish' }
  /** Gears found before the host went: the node enters `handingBack`, its target and reason recorded. */
  | { kind: 'hand-back-found'; to: HandBackTarget; reason: string; gears: number }
  /** `activateNode` done for a node handed back as active. */
  | { kind: 'reopened' }
  /** The node's DNS record upserted again, for a node handed back after its release had deleted it. */
  | { kind: 'dns-restored' }
  /** terminating -> draining | active. */
  | { kind: 'hand-back'; to: HandBackTarget };

/** The phase a node is in after `node`'s recorded steps, for a node whose stored phase is missing. */
export function derivedReleasePhase(node: NodeRecord, options: ReleaseOptions): ReleasePhase {
  return nextReleaseStep(node, options) ?? 'finishing';
}

function isReleasePhase(value: string | undefined): value is ReleasePhase {
  return value === 'finishing' || value === 'handingBack' || (RELEASE_STEPS as readonly string[]).includes(value ?? '');
}

/** The stored phase; derived from the recorded steps when the node predates stored phases (or holds an unknown one). */
export function releasePhaseOf(node: NodeRecord, options: ReleaseOptions): ReleasePhase {
  return isReleasePhase(node.releasePhase) ? node.releasePhase : derivedReleasePhase(node, options);
}

/** Where a node in `handingBack` goes: as recorded when its gears were found (`draining` when unreadable, the safe way). */
export function handBackTargetOf(node: Pick<NodeRecord, 'steps'>): HandBackTarget {
  return node.steps?.[HAND_BACK_STEPS.to] === 'active' ? 'active' : 'draining';
}

export function nextRelease(view: ReleaseView): Step<ReleaseWrite, ReleaseEffect> {
  const { node } = view;
  if (node.state === 'terminated') return { kind: 'end', outcome: 'terminated' };
  if (node.state !== 'terminating') return { kind: 'end', outcome: `node is ${node.state}` };
  const phase = releasePhaseOf(node, view.options);
  if (phase === 'finishing') return { kind: 'write', write: { kind: 'finish' } };
  if (phase === 'handingBack') {
    const to = handBackTargetOf(node);
    // Found in no district at first, the node joined later and its gears were found only before its host went: the
    // release had deleted its DNS record by then, and a node that serves needs it.
    if (node.steps?.dnsDeleted !== undefined && node.steps?.[HAND_BACK_STEPS.dnsRestored] === undefined) return { kind: 'effect', effect: 'restoreDns' };
    // remove-node deactivated the node before it refused: a node going back to active is opened on the platform first.
    if (to === 'active' && node.steps?.[HAND_BACK_STEPS.reopened] === undefined) return { kind: 'effect', effect: 'reopen' };
    return { kind: 'write', write: { kind: 'hand-back', to } };
  }
  return { kind: 'effect', effect: phase };
}
