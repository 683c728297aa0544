/**
 * Where in the broker's regions and zones a node nodescaler adds to its
 * district goes. origin-server places a gear only on a node in a zone when
 * the broker requires zones for app creation (REGIONS_REQUIRE_ZONE_FOR_APP_CREATE),
 * and moves a gear only between nodes of one region: a node added without a
 * region and zone would take no gear there, and the evaluator, seeing gears
 * refused, would buy the next one. So a pool that names its region places
 * every node it adds in it, at `add-node` (`oo-admin-ctl-district -c add-node
 * -r REGION -z ZONE`), in the zone of its availability zone.
 *
 * Pure functions of data.
 */

/** The pool's region in the broker (`pools[].openshiftRegion`). */
export interface OpenshiftRegion {
  /** The region (oo-admin-ctl-region) every node the pool adds is placed in. */
  name: string;
  /** The zone of a node whose availability zone `zones` does not name; unset: the availability zone's own name. */
  zone?: string;
  /** Availability zone -> zone of the region. */
  zones?: Readonly<Record<string, string>>;
}

/** A node's region and zone in the broker. */
export interface NodePlacement {
  region: string;
  zone: string;
}

export type PlacementAnswer = { ok: true; placement?: NodePlacement } | { ok: false; reason: string };

/**
 * The region and zone of a node of the pool running in `availabilityZone`
 * (undefined when not known: a host someone else made). No region: no
 * placement (the node joins as before). A region and no zone to give (no
 * availability zone known, none mapped, no default): not ok, with the reason,
 * so the node is not added where no gear could reach it.
 */
export function nodePlacement(region: OpenshiftRegion | undefined, availabilityZone: string | undefined): PlacementAnswer {
  if (region === undefined) return { ok: true };
  const zone = (availabilityZone !== undefined ? region.zones?.[availabilityZone] : undefined) ?? region.zone ?? availabilityZone;
  if (zone === undefined) {
    return { ok: false, reason: `no zone of region ${region.name} for a node whose availability zone is not known: set openshiftRegion.zone for the pool` };
  }
  return { ok: true, placement: { region: region.name, zone } };
}
