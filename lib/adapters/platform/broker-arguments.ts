/**
 * What the broker adapter checks before it sends anything: each argument of
 * the SSM document against the pattern the document itself enforces, so a
 * bad value fails here, named, instead of as SSM's InvalidParameters; and the
 * configuration error of a node the broker already holds in another region.
 */
import type { NodePlacement } from '../../domain/placement.js';
import { ValidationError } from '../../errors.js';

/** The document's parameters, as its allowedPattern says (infra/broker-document.yml; a test holds them equal). */
export const SAFE_NODE = /^[a-z0-9._-]{1,253}$/;
export const SAFE_DISTRICT = /^[A-Za-z0-9._-]{1,64}$/;
/** A region's or zone's name (origin-server's REGION_NAME_REGEX, within the document's pattern). */
export const SAFE_REGION = /^[A-Za-z0-9._-]{1,64}$/;
export const SAFE_UUID = /^[A-Za-z0-9_-]{1,64}$/;
export const SAFE_BROKER_DIR = /^\/[A-Za-z0-9._/-]{1,200}$/;

export function checkNode(nodeId: string): void {
  if (!SAFE_NODE.test(nodeId)) throw new ValidationError({ path: 'nodeId', message: 'must be a host name: a-z, 0-9, ".", "_" and "-"', value: nodeId });
}

export function checkDistrict(district: string): void {
  if (!SAFE_DISTRICT.test(district)) throw new ValidationError({ path: 'district', message: 'must be letters, digits, ".", "_" or "-"', value: district });
}

export function checkPlacement(placement: NodePlacement): void {
  for (const key of ['region', 'zone'] as const) {
    // A letter or digit too, as origin-server's names have: the document's '-' means none.
    if (!SAFE_REGION.test(placement[key]) || !/[A-Za-z0-9]/.test(placement[key])) {
      throw new ValidationError({ path: `openshiftRegion.${key}`, message: 'must be letters, digits, ".", "_" or "-", with a letter or digit', value: placement[key] });
    }
  }
}

export function regionConflict(nodeId: string, held: string, placement: NodePlacement): ValidationError {
  return new ValidationError({
    path: 'openshiftRegion.name',
    message: `node ${nodeId} is already in region ${held} (oo-admin-ctl-district -c unset-region to move it, or name that region for the pool)`,
    value: placement.region,
  });
}

export function checkGear(uuid: string): void {
  if (!SAFE_UUID.test(uuid)) throw new ValidationError({ path: 'gear.uuid', message: 'must be letters, digits, "_" or "-"', value: uuid });
}

/** The Comment of a move command (at most 100 characters): the gear and a hash of the idempotency key. */
