import type { NodeState } from './model.js';

/**
 * The node lifecycle of docs/ARCHITECTURE.md. `lost` is a node that vanished under us
 * (terminated by someone else); `failed` did not join in time.
 */
const NEXT: Readonly<Record<NodeState, readonly NodeState[]>> = {
  provisioning: ['active', 'failed'],
  active: ['draining', 'lost'],
  draining: ['active', 'drained', 'lost'],
  // drained -> draining: the decommissioner found gears after all and hands the node back.
  drained: ['terminating', 'draining', 'lost'],
  // terminating/failed -> active: a failed node's host joined after all and holds gears; its release is
  // called off before it removed the node from its district (the provisioner's tick). terminating -> draining
  // or active: the release found gears on the node before its host went (remove-node refused) and hands it back.
  terminating: ['terminated', 'active', 'draining'],
  terminated: [],
  failed: ['terminating', 'terminated', 'active'],
  lost: ['terminated'],
};

export function canTransition(from: NodeState, to: NodeState): boolean {
  return NEXT[from].includes(to);
}

export function legalTransitions(): Array<[NodeState, NodeState]> {
  return (Object.keys(NEXT) as NodeState[]).flatMap((from) => NEXT[from].map((to): [NodeState, NodeState] => [from, to]));
}

/** States in which a node can take new gears. */
export function isSchedulable(state: NodeState): boolean {
  return state === 'active';
}

/**
 * Rejects a transition request that the lifecycle forbids from any of its
 * source states: that is a programming or input error, never a race.
 */
export function illegalSources(from: readonly NodeState[], to: NodeState): NodeState[] {
  return from.filter((state) => !canTransition(state, to));
}
