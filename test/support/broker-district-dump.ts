/**
 * A district as origin-server keeps it (controller/app/models/district.rb)
 * and as `oo-admin-ctl-district` prints it: `append_district` writes
 * `district.attributes.pretty_inspect` with the available UIDs replaced by
 * their count. The broker emulator (broker-emulator.ts) appends it to every
 * district command's output and prints one per district for `-c list`.
 */

export interface Server {
  name: string;
  active: boolean;
  unresponsive: boolean;
  /** Its region and zone (oo-admin-ctl-district add-node -r -z, or set-region), if placed. */
  region?: string;
  zone?: string;
}
export interface District {
  name: string;
  uuid: string;
  gearSize: string;
  /** UIDs (max_capacity): every gear of the district holds one, stopped or idle too; a move within it keeps its own. */
  maxCapacity: number;
  servers: Server[];
}
/** origin-server's default district size (DISTRICTS_MAX_CAPACITY in broker.conf); UIDs start at 1000. */
export const DEFAULT_DISTRICT_UIDS = 6000;
const FIRST_UID = 1000;

/** The district's dump, `available` of its UIDs held by no gear. */
export function districtDump(district: District, available: number): string {
  const servers = district.servers.map(
    (s, i) =>
      `${i === 0 ? '  [' : '   '}{"_id"=>BSON::ObjectId('5f${i.toString(16).padStart(22, '0')}'), "name"=>"${s.name}", "active"=>${s.active}, "unresponsive"=>${s.unresponsive}` +
      (s.region !== undefined ? `, "region_name"=>"${s.region}", "region_id"=>BSON::ObjectId('6a${i.toString(16).padStart(22, '0')}'), "zone_name"=>"${s.zone}", "zone_id"=>BSON::ObjectId('6b${i.toString(16).padStart(22, '0')}')` : '') +
      '}',
  );
  return [
    `{"_id"=>BSON::ObjectId('${district.uuid.padEnd(24, '0')}'),`,
    ` "name"=>"${district.name}",`,
    ` "uuid"=>"${district.uuid}",`,
    ` "gear_size"=>"${district.gearSize}",`,
    ` "available_uids"=>"<${available} uids hidden>",`,
    ` "available_capacity"=>${available},`,
    ` "max_uid"=>${FIRST_UID + district.maxCapacity - 1},`,
    ` "max_capacity"=>${district.maxCapacity},`,
    ` "servers"=>`,
    servers.length ? `${servers.join(',\n')}],` : '  [],',
    ` "active_servers_size"=>${district.servers.filter((s) => s.active).length}}`,
  ].join('\n');
}
