/**
 * The reliability world on the broker emulator (issue 18, item 1): the gears,
 * districts and node hosts live in test/support/broker-emulator.ts, and the
 * handlers drive them through the real broker adapter
 * (lib/adapters/platform/openshift-broker.ts) over the emulator's SSM. What
 * the world does by itself (a booted host's MCollective agent comes up, an
 * application creates or deletes a gear) goes to the emulator directly;
 * joining a district is left to nodescaler (add-node on a node's first stats).
 */
import { OpenShiftBrokerPlatform } from '../../../lib/adapters/platform/openshift-broker.js';
import { chooseAsBroker, type PlacementCandidate } from '../../../lib/adapters/local/broker-placement.js';
import type { GearInfo } from '../../../lib/domain/model.js';
import type { Clock } from '../../../lib/ports/clock.js';
import type { WorldPlatform } from '../../../lib/sim/world.js';
import { BrokerEmulator, type MoveFault } from '../../support/broker-emulator.js';

/**
 * How the emulator's moves fail, when one does: rsync fails (gear left where it was), the old copy is not removed
 * (moved, exit 1), the tool crashes, or a tenant's operation holds the application's lock (no report, retried
 * without spending an attempt).
 */
const MOVE_FAULTS: readonly MoveFault[] = ['rsync', 'destroy-old', 'crash', 'locked'];

const BROKER = 'i-0b10c0ffee0123456';
const DOCUMENT = 'nodescaler-reliability-broker-admin';

export class EmulatedWorld implements WorldPlatform {
  readonly broker: BrokerEmulator;
  private readonly joinedAtStart = new Set<string>();
  /** The district each host was set up for (its agent's NODESCALER_DISTRICT), whether or not it has joined it yet. */
  private readonly districtOf = new Map<string, string>();
  /** The zone each node was last seen in. */
  private readonly zoneOf = new Map<string, string>();

  constructor(
    private readonly clock: Clock & { advance(ms: number): void },
    districts: ReadonlyArray<{ name: string; profile: string }>,
    moveFailureRate: number,
    random: () => number,
    /** The broker's draw of a new gear's node. */
    private readonly placementRandom: () => number,
    /** The broker requires zones for app creation; the operator's nodes are in the region's first zone. */
    private readonly region?: { name: string; zones: readonly string[] },
  ) {
    this.broker = new BrokerEmulator({
      clock,
      brokerInstanceId: BROKER,
      documentName: DOCUMENT,
      commandLatencyMs: 3_000,
      moveDurationMs: 30_000,
      drawMoveFault: () => (random() < moveFailureRate ? MOVE_FAULTS[Math.floor(random() * MOVE_FAULTS.length)] : undefined),
    });
    for (const district of districts) this.broker.createDistrict(district.name, district.profile);
    if (region) this.broker.createRegion(region.name, region.zones);
  }

  /** The platform the handlers get: the broker adapter, whose waits pass on the world's clock (the Lambda waits, the world goes on). */
  adapter(): OpenShiftBrokerPlatform {
    return new OpenShiftBrokerPlatform(this.broker.client(), {
      brokerInstanceId: BROKER,
      documentName: DOCUMENT,
      commandTimeoutMs: 20 * 60_000,
      syncTimeoutMs: 60_000,
      brokerDir: '/var/www/openshift/broker',
      sleep: async (ms) => this.clock.advance(ms),
      clock: this.clock,
    });
  }

  /** Set-up: a node an operator had added to its district before nodescaler started (joined when its host boots). */
  preJoin(nodeId: string): void {
    this.joinedAtStart.add(nodeId);
  }

  /** A booted host: its agent is up, in no district until nodescaler's add-node (`joined`: an operator's, at set-up). */
  registerNode(district: string, profile: string, nodeId: string, maxGears: number, options: { joined?: boolean } = {}): void {
    if (this.broker.host(nodeId)) return;
    this.broker.addNodeHost(nodeId, profile, maxGears);
    this.districtOf.set(nodeId, district);
    if (options.joined || this.joinedAtStart.has(nodeId)) this.broker.joinDistrict(district, nodeId, this.region && { region: this.region.name, zone: this.region.zones[0]! });
  }

  /**
   * As the broker places a new gear (lib/adapters/local/broker-placement.ts, origin-server's select_best_fit_node): a
   * weighted draw among the active nodes of the district with room that are at most about average-full, away from the
   * nodes holding the application's other gears; in a zone if zones are required.
   */
  placeGear(district: string, _profile: string, gear: GearInfo): string | undefined {
    const load = this.loads();
    const candidates: Array<PlacementCandidate<string>> = [];
    const hosting: number[] = [];
    for (const [order, server] of this.broker.servers(district).entries()) {
      const host = this.broker.host(server.name);
      if (!host) continue;
      const appGears = this.broker.gearsOn(server.name).filter((other) => other.app === gear.app).length;
      if (appGears > 0) hosting.push(appGears);
      if (!server.active || (this.region && server.zone === undefined)) continue;
      const used = (load.get(server.name) ?? 0) + host.incoming;
      if (used >= host.maxGears) continue;
      candidates.push({ node: server.name, id: order, consumedPercent: (100 * used) / host.maxGears, appGears });
    }
    const chosen = chooseAsBroker(candidates, this.placementRandom, hosting.length > 0 ? Math.min(...hosting) : undefined);
    if (chosen === undefined) return undefined;
    this.broker.placeGear(chosen, gear);
    return chosen;
  }

  /** Nodes seen (at their stats) in `zone`, released since or not: the pool's zone, where only nodescaler's add-node puts them. */
  joinedInZone(zone: string): number {
    return [...this.zoneOf.values()].filter((seen) => seen === zone).length;
  }

  removeGear(uuid: string): boolean {
    return this.broker.removeGear(uuid);
  }

  nodeLoad(nodeId: string) {
    const host = this.broker.host(nodeId);
    if (!host) throw new Error(`emulated world: no node host ${nodeId}`);
    const member = this.broker.membership(nodeId);
    if (member?.zone !== undefined) this.zoneOf.set(nodeId, member.zone);
    return {
      district: this.districtOf.get(nodeId) ?? member?.district ?? '',
      profile: host.profile,
      active: member?.active ?? false,
      activeGears: this.loads().get(nodeId) ?? 0,
      maxActiveGears: host.maxGears,
    };
  }

  hasNode(nodeId: string): boolean {
    return this.broker.host(nodeId) !== undefined;
  }

  /** Gears held by a host that does not exist: the emulator keeps one node per gear, so nothing else can go wrong. */
  gearPlacementProblems(): string[] {
    const problems: string[] = [];
    for (const [uuid, node] of this.broker.gearNodes()) if (!this.broker.host(node)) problems.push(`gear ${uuid} is on ${node}, which is no node host`);
    return problems;
  }

  gearUuids(nodeId: string): Iterable<string> {
    return this.broker.gearsOn(nodeId).map((gear) => gear.uuid);
  }

  gearCount(): number {
    return this.broker.gearNodes().size;
  }

  hasGear(uuid: string): boolean {
    return this.broker.gearNodes().has(uuid);
  }

  succeededMoves(): number {
    return this.broker.succeededMoves();
  }

  /** The gear of each move that completed, in order, and whether its command exited 1 all the same. */
  movedGears(): ReadonlyArray<{ uuid: string; exitedFailed: boolean }> {
    return this.broker.movedGears();
  }

  /** Moves that gave up on their application's lock. */
  movesLockedOut(): number {
    return this.broker.movesLockedOut();
  }

  private loads(): Map<string, number> {
    const load = new Map<string, number>();
    for (const node of this.broker.gearNodes().values()) load.set(node, (load.get(node) ?? 0) + 1);
    return load;
  }
}
