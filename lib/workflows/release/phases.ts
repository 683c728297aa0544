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
 */
import { RELEASE_STEPS, nextReleaseStep, type ReleaseOptions, type ReleaseStep } from '../../domain/decommission.js';
import type { NodeRecord } from '../../domain/model.js';
import type { Step } from '../engine.js';

export type ReleasePhase = ReleaseStep | 'finishing';

export interface ReleaseView {
  node: NodeRecord;
  options: ReleaseOptions;
}

/** A step done, recorded on the node with the phase after it; or the final transition. */
export type ReleaseWrite = { kind: 'record'; step: ReleaseStep; patch: Pick<NodeRecord, 'volumeId'> | Record<string, never> } | { kind: 'finish' };

/** The phase a node is in after `node`'s recorded steps, for a node whose stored phase is missing. */
export function derivedReleasePhase(node: NodeRecord, options: ReleaseOptions): ReleasePhase {
  return nextReleaseStep(node, options) ?? 'finishing';
}

function isReleasePhase(value: string | undefined): value is ReleasePhase {
  return value === 'finishing' || (RELEASE_STEPS as readonly string[]).includes(value ?? '');
}

/** The stored phase; derived from the recorded steps when the node predates stored phases (or holds an unknown one). */
export function releasePhaseOf(node: NodeRecord, options: ReleaseOptions): ReleasePhase {
  return isReleasePhase(node.releasePhase) ? node.releasePhase : derivedReleasePhase(node, options);
}

export function nextRelease(view: ReleaseView): Step<ReleaseWrite, ReleaseStep> {
  const { node } = view;
  if (node.state === 'terminated') return { kind: 'end', outcome: 'terminated' };
  if (node.state !== 'terminating') return { kind: 'end', outcome: `node is ${node.state}` };
  const phase = releasePhaseOf(node, view.options);
  if (phase === 'finishing') return { kind: 'write', write: { kind: 'finish' } };
  return { kind: 'effect', effect: phase };
}
