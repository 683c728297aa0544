/**
 * The platform's refusals that callers act on, each its own class so a caller
 * decides from the class, never from the broker's wording (which only the
 * adapter reads). Messages are OpenShift Origin's (controller/app/models/district.rb).
 */
import { ConflictError, NodescalerError, NotFoundError } from '../errors.js';

/**
 * The node is not in the named district ("doesn't belong to district"): for
 * `removeNode` the wanted end state already holds, so the release step treats
 * it as removed (it is a `NotFoundError`); never worth retrying.
 */
export class NodeNotInDistrictError extends NotFoundError {
  constructor(
    readonly district: string,
    readonly nodeId: string,
    readonly detail?: string,
  ) {
    super('node in district', `${nodeId}@${district}`);
  }
}

/**
 * `add-node` of a node another district holds ("already belongs to another
 * district"): the node cannot take this district's gears until an operator
 * moves it, so this is never success and never worth retrying.
 */
export class NodeInOtherDistrictError extends NodescalerError {
  override readonly name = 'NodeInOtherDistrictError';
  readonly code = 'conflict' as const;
  readonly retryable = false;

  constructor(
    readonly district: string,
    readonly nodeId: string,
    /** The district that holds the node, when the broker said which. */
    readonly holder?: string,
  ) {
    super(`node ${nodeId} belongs to district ${holder ?? '(another)'}, not ${district}`);
  }
}

/**
 * `remove-node` of a node still active in its district ("must be deactivated
 * before it can be removed"): deactivate it first. Not retryable as it is.
 */
export class NodeStillActiveError extends NodescalerError {
  override readonly name = 'NodeStillActiveError';
  readonly code = 'conflict' as const;
  readonly retryable = false;

  constructor(
    readonly district: string,
    readonly nodeId: string,
  ) {
    super(`node ${nodeId} is active in district ${district}: it must be deactivated before it can be removed`);
  }
}

/**
 * `remove-node` of a node that still holds gears ("some apps in mongo are
 * still using it" / "still has apps on it"): a `ConflictError` (retryable:
 * the gears may be moving away), carrying the broker's words.
 */
export class NodeNotEmptyError extends ConflictError<string> {
  constructor(
    readonly district: string,
    readonly nodeId: string,
    detail: string,
  ) {
    super(`node ${nodeId} still holds gears and cannot be removed from district ${district}: ${detail}`, detail);
  }
}
