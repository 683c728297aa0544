/** Builders and helpers of the state store contract (state-store-contract.ts and its second half). */
import type { NewNode, StateStore } from '../../lib/ports/state-store.js';

export const T0 = new Date('2026-11-21T10:00:00.000Z');
export const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
let counter = 0;

export function newNode(overrides: Partial<NewNode> = {}): NewNode {
  counter += 1;
  const nodeId = overrides.nodeId ?? `node-${counter}.example.com`;
  return {
    nodeId,
    pool: 'd1/small',
    district: 'd1',
    profile: 'small',
    state: 'active',
    createdAt: T0.toISOString(),
    origin: 'provisioned',
    protected: false,
    ...overrides,
  };
}

export function stats(reportedAt: Date, activeGears = 10) {
  return { activeGears, maxActiveGears: 100, reportedAt: reportedAt.toISOString() };
}

export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail, it succeeded');
}

/** What the two halves of the contract share: the store of the running tests, and a way to start over. */
export interface ContractBed {
  store: StateStore;
  /** A fresh, empty store, which the tests after this one use too. */
  fresh(): Promise<StateStore>;
}
