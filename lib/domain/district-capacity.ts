/**
 * A district's UIDs (`district-capacity`, read by the broker-side reporter
 * from `oo-admin-ctl-district`). Every gear of a district holds one of its
 * UIDs, stopped and idle gears too, and origin-server places no new gear in a
 * district with none left: it refuses it with the same "No nodes available"
 * as when every node is full. A node added then takes no new gear, so those
 * refusals are no demand for nodes: cluster-autoscaler's "pod didn't trigger
 * scale-up (it wouldn't fit if a new node is added)". What cures them is an
 * operator's: `oo-admin-ctl-district -c add-capacity`, or another district.
 * Pure functions of data.
 */
import { formatDuration } from './duration.js';
import type { PoolRecord } from './model.js';

/** The reporter reads every 5 minutes: a read older than three of those says too little about the UIDs left now. */
export const DISTRICT_CAPACITY_FRESH_MS = 15 * 60_000;
/** Below this share of its UIDs left, a district is reported as running out (log, `nodescaler status`). */
export const DISTRICT_UIDS_LOW_SHARE = 0.1;

export type DistrictCapacity = NonNullable<PoolRecord['districtCapacity']>;

/** The pool's district capacity when read recently enough to decide on, else undefined (decided as before: every refusal counts). */
export function freshDistrictCapacity(pool: Pick<PoolRecord, 'districtCapacity'>, now: Date): DistrictCapacity | undefined {
  const capacity = pool.districtCapacity;
  if (capacity === undefined) return undefined;
  const age = now.getTime() - Date.parse(capacity.readAt);
  return age >= 0 && age <= DISTRICT_CAPACITY_FRESH_MS ? capacity : undefined;
}

/**
 * How many of `refused` gear creations a new node could have taken: all of them without a fresh read, at most the
 * UIDs left with one (the broker refused the rest for want of a UID, not of a slot).
 */
export function refusalsNodesCanPlace(refused: number, capacity: DistrictCapacity | undefined): number {
  return capacity === undefined ? refused : Math.max(0, Math.min(refused, capacity.availableCapacity));
}

/** True when the district has less than DISTRICT_UIDS_LOW_SHARE of its UIDs left. */
export function districtRunningOut(capacity: DistrictCapacity): boolean {
  return capacity.availableCapacity < capacity.maxCapacity * DISTRICT_UIDS_LOW_SHARE;
}

/** e.g. `district d1 has 0 of 6000 UIDs left (read 2m ago)`. */
export function districtCapacityText(district: string, capacity: DistrictCapacity, now: Date): string {
  const age = Math.max(0, now.getTime() - Date.parse(capacity.readAt));
  return `district ${district} has ${capacity.availableCapacity} of ${capacity.maxCapacity} UIDs left (read ${formatDuration(Math.round(age / 1000) * 1000)} ago)`;
}

/** The operator's cure, named in the log and the decision: more UIDs for the district, or another district. */
export function districtCureText(district: string): string {
  return `add UIDs (oo-admin-ctl-district -c add-capacity -n ${district} -s N) or a district for the profile`;
}

/**
 * Nodes the pool may still add before its slots exceed the gears the district can ever hold: every gear, active or
 * not, holds one of `maxCapacity` UIDs, so no more than that many are ever active. Never below what `min` asks for.
 * `nodes`: the pool's nodes active or provisioning, and those called back from drains.
 */
export function districtNodeRoom(capacity: DistrictCapacity, gearsPerNode: number, nodes: number, minDeficit: number): number {
  return Math.max(minDeficit, Math.ceil(capacity.maxCapacity / Math.max(1, gearsPerNode)) - nodes);
}
