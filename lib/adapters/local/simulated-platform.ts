import type { GearInfo } from '../../domain/model.js';
import { ConflictError, NotFoundError, TransientError, ValidationError } from '../../errors.js';
import type { Clock } from '../../ports/clock.js';
import type { MoveHandle, MoveOptions, MoveStatus, Platform } from '../../ports/platform.js';
import { NodeInOtherDistrictError, NodeNotEmptyError, NodeNotInDistrictError } from '../../ports/platform-errors.js';
import { GearKinds } from './gear-kinds.js';
import { slotsHeld } from './least-loaded.js';
import { placementKey, SimPlacement } from './sim-placement.js';
import { placementProblems } from './simulated-platform-types.js';
import type { MoveRecord, NodeFacts, SimMove, SimNode, SimulatedPlatformOptions } from './simulated-platform-types.js';

export type { MoveRecord, NodeFacts, SimulatedPlatformOptions } from './simulated-platform-types.js';

/**
 * `Platform` in memory: districts with nodes (capacity = max active gears,
 * active or deactivated) holding gears, and moves that take time and can fail.
 *
 * A move is atomic at its completion time (`startedAt + moveDurationMs` on
 * the injected clock): until then the gear is on its source, after that on
 * its target; a failed move leaves it on the source. So no gear is ever on
 * zero or two nodes. A move in flight holds a slot on its target, as the real
 * broker creates the gear there first (an idle gear's holds none when
 * `idleTakesNoSlot`: origin-server counts only active gears). Moves settle lazily, whenever any
 * method looks at the state, so there is no timer to drive.
 *
 * Errors as the port says: `NotFoundError` for an unknown node or a gear not
 * on the named source, `ConflictError` for a full target or a gear already
 * moving, `ValidationError` for a move across districts or profiles.
 */
export class SimulatedPlatform implements Platform {
  private readonly nodes = new Map<string, SimNode>();
  /** gear uuid -> node id. */
  private readonly locations = new Map<string, string>();
  private readonly moves = new Map<string, SimMove>();
  private readonly byKey = new Map<string, string>();
  private readonly scripted = new Map<string, number | 'always'>();
  private readonly history: MoveRecord[] = [];
  private readonly historyById = new Map<string, MoveRecord>();
  /** Moves still running: settling looks at these only, however long the run. */
  private readonly running = new Set<SimMove>();
  /** Per district/profile, where `placeGear` puts the next gear. */
  private readonly placement: SimPlacement;
  private readonly kinds = new GearKinds();
  /**
   * Gears placed, removed or moved since the last `gearPlacementProblems`: the only ones whose bookkeeping can have
   * changed. Kept only once a check has run, so a platform nobody checks does not keep every gear it ever saw.
   */
  private changed: Set<string> | undefined;
  private readonly random: () => number;
  private sequence = 0;
  private succeeded = 0;

  constructor(
    private readonly clock: Clock,
    private readonly options: SimulatedPlatformOptions,
  ) {
    if (!(options.moveDurationMs >= 0)) throw new RangeError('moveDurationMs must be >= 0');
    if (!(options.moveFailureRate >= 0 && options.moveFailureRate <= 1)) throw new RangeError('moveFailureRate must be within 0..1');
    this.random = options.random ?? Math.random;
    this.placement = new SimPlacement(
      options.placement ?? 'least-loaded',
      options.placementRandom ?? Math.random,
      (candidate) => this.nodes.get(candidate.nodeId) === candidate && candidate.inDistrict,
      (uuid) => this.nodes.get(this.locations.get(uuid) ?? ''),
    );
  }

  // -------------------------------------------------------------------------
  // Simulation controls.

  /**
   * A node host of `district/profile` with room for `maxGears`, in its district
   * and active (`joined: false`: running but not added yet, as a new host is
   * until `addNode`); registering it again only updates its capacity.
   */
  registerNode(district: string, profile: string, nodeId: string, maxGears: number, options: { joined?: boolean } = {}): void {
    const existing = this.nodes.get(nodeId);
    if (existing) {
      if (existing.district !== district || existing.profile !== profile) {
        throw new ValidationError({ path: 'nodeId', message: `node ${nodeId} is already in ${existing.district}/${existing.profile}`, value: nodeId });
      }
      existing.maxGears = maxGears;
      this.touch(existing);
      return;
    }
    const joined = options.joined ?? true;
    const node: SimNode = { nodeId, district, profile, maxGears, active: joined, inDistrict: joined, gears: new Map(), incoming: 0, idle: 0 };
    this.nodes.set(nodeId, node);
    this.touch(node);
  }

  /**
   * Creates a gear on an active node of `district/profile` with room, by the
   * placement rule (the least-loaded, ties by node id, unless `placement` is
   * `broker`); the node, or undefined when every one is full.
   */
  placeGear(district: string, profile: string, gear: GearInfo): string | undefined {
    this.settle();
    if (this.locations.has(gear.uuid)) throw new ConflictError(`gear ${gear.uuid} exists`, this.locations.get(gear.uuid));
    const best = this.placement.choose(district, profile, gear);
    if (!best) return undefined;
    this.put(best, gear);
    return best.nodeId;
  }

  /** Puts a gear on a given node (test set-up), ignoring activity but not capacity. */
  putGear(nodeId: string, gear: GearInfo): void {
    this.settle();
    const node = this.node(nodeId);
    if (this.locations.has(gear.uuid)) throw new ConflictError(`gear ${gear.uuid} exists`, this.locations.get(gear.uuid));
    if (this.holdsSlot(gear) && slotsHeld(node) >= node.maxGears) throw new ConflictError(`node ${nodeId} is full`, nodeId);
    this.put(node, gear);
  }

  /** Deletes a gear wherever it is (an application scaled down or deleted); true if it existed. */
  removeGear(uuid: string): boolean {
    this.settle();
    const nodeId = this.locations.get(uuid);
    if (nodeId === undefined) return false;
    const node = this.nodes.get(nodeId);
    if (node) {
      const gear = node.gears.get(uuid);
      if (gear) this.placement.gearDeleted(node, gear);
      if (gear && !this.holdsSlot(gear)) node.idle -= 1;
      node.gears.delete(uuid);
      this.kinds.change(placementKey(node.district, node.profile), nodeId, uuid, -1);
      this.touch(node);
    }
    this.locations.delete(uuid);
    this.changed?.add(uuid);
    return true;
  }

  /** Figures of one node, for stats reports. */
  nodeFacts(nodeId: string): NodeFacts {
    this.settle();
    const node = this.node(nodeId);
    return {
      district: node.district,
      profile: node.profile,
      active: node.active,
      activeGears: node.gears.size - node.idle,
      maxActiveGears: node.maxGears,
      gears: [...node.gears.values()].map((gear) => ({ ...gear })),
    };
  }

  /** Every gear with the node(s) holding it, for invariant checks: each list must have exactly one entry. */
  gearLocations(): Map<string, string[]> {
    this.settle();
    const where = new Map<string, string[]>();
    for (const node of this.nodes.values()) {
      for (const uuid of node.gears.keys()) {
        const list = where.get(uuid);
        if (list) list.push(node.nodeId);
        else where.set(uuid, [node.nodeId]);
      }
    }
    return where;
  }

  /**
   * Where the gear bookkeeping disagrees with itself (`placementProblems`); `scope: 'changed'` looks only at the gears
   * placed, removed or moved since the last check, and the first check at every gear.
   */
  gearPlacementProblems(scope: 'all' | 'changed' = 'all'): string[] {
    this.settle();
    const problems = placementProblems(this.nodes, this.locations, scope === 'changed' ? this.changed : undefined);
    this.changed = new Set();
    return problems;
  }

  /** Counts the gears of `district/profile` by `kindOf` from now on (GearKinds): what a world's node agents report. */
  countGearKinds(district: string, profile: string, kindOf: (uuid: string) => string | undefined): void {
    this.settle();
    const nodes = [...this.nodes.values()].filter((node) => node.district === district && node.profile === profile);
    this.kinds.classify(placementKey(district, profile), kindOf, nodes);
  }

  /** One node's gears by kind, as `countGearKinds` counts them; undefined when its pool is not counted. */
  gearKinds(nodeId: string): ReadonlyMap<string, number> | undefined {
    this.settle();
    const node = this.node(nodeId);
    return this.kinds.of(placementKey(node.district, node.profile), nodeId);
  }

  /** How many gears exist (each on one node, as `gearPlacementProblems` checks). */
  gearCount(): number {
    this.settle();
    return this.locations.size;
  }

  /** Whether a gear exists on some node. */
  hasGear(uuid: string): boolean {
    return this.locations.has(uuid);
  }

  nodeIds(): string[] {
    return [...this.nodes.keys()].sort();
  }

  hasNode(nodeId: string): boolean {
    return this.nodes.has(nodeId);
  }

  /** The next `count` moves of this gear fail (`'always'`: every one), whatever the failure rate. */
  scriptMoveFailures(uuid: string, count: number | 'always'): void {
    this.scripted.set(uuid, count);
  }

  /** Every move started so far, in order. */
  moveHistory(): MoveRecord[] {
    this.settle();
    return this.history.map((record) => ({ ...record }));
  }

  /** Moves still in flight. */
  movesInFlight(): number {
    this.settle();
    return this.running.size;
  }

  /** Gear count and capacity of one node, without copying its gear list (stats in long replays). */
  nodeLoad(nodeId: string): Omit<NodeFacts, 'gears'> {
    this.settle();
    const node = this.node(nodeId);
    return { district: node.district, profile: node.profile, active: node.active, activeGears: node.gears.size - node.idle, maxActiveGears: node.maxGears };
  }

  /** The uuids of the gears on one node, without copying them (stats in long replays). */
  gearUuids(nodeId: string): Iterable<string> {
    this.settle();
    return this.node(nodeId).gears.keys();
  }

  /** Moves that succeeded so far. */
  succeededMoves(): number {
    this.settle();
    return this.succeeded;
  }

  // -------------------------------------------------------------------------
  // Platform.

  /** As the broker lists them: its records hold no run state, so an idle gear is listed without `idle` (its node's agent says so). */
  async listGears(nodeId: string): Promise<GearInfo[]> {
    this.settle();
    return [...this.node(nodeId).gears.values()].map(({ idle: _idle, ...gear }) => gear);
  }

  // The broker's refusals (lib/ports/platform-errors.ts), as the broker adapter reports them.

  async deactivateNode(district: string, nodeId: string): Promise<void> {
    const node = this.nodeIn(district, nodeId);
    node.active = false;
    this.touch(node);
  }

  async activateNode(district: string, nodeId: string): Promise<void> {
    const node = this.nodeIn(district, nodeId);
    node.active = true;
    this.touch(node);
  }

  async addNode(district: string, nodeId: string): Promise<void> {
    const node = this.nodes.get(nodeId);
    if (!node) throw new TransientError(`add-node ${nodeId}: cannot connect to node`);
    if (node.inDistrict && node.district !== district) throw new NodeInOtherDistrictError(district, nodeId, node.district);
    if (node.district !== district) throw new NodeInOtherDistrictError(district, nodeId);
    if (node.inDistrict) return;
    node.inDistrict = true;
    node.active = true;
    this.touch(node);
  }

  /** The broker refuses an active node; like the broker adapter, this deactivates it first. */
  async removeNode(district: string, nodeId: string): Promise<void> {
    this.settle();
    const node = this.nodeIn(district, nodeId);
    if (node.gears.size > 0 || node.incoming > 0) {
      throw new NodeNotEmptyError(district, nodeId, `node ${nodeId} still holds ${node.gears.size} gear(s)`);
    }
    node.active = false;
    this.nodes.delete(nodeId);
    this.kinds.forget(nodeId);
    this.placement.forget(node);
  }

  async startMove(gear: GearInfo, fromNode: string, toNode: string, options: MoveOptions = {}): Promise<MoveHandle> {
    this.settle();
    const key = options.idempotencyKey;
    if (key !== undefined) {
      const known = this.byKey.get(key);
      if (known !== undefined) return { commandId: known };
    }
    const source = this.node(fromNode);
    const target = this.node(toNode);
    if (this.locations.get(gear.uuid) !== fromNode) throw new NotFoundError('gear on node', `${gear.uuid}@${fromNode}`);
    if (source.district !== target.district || source.profile !== target.profile) {
      throw new ValidationError({ path: 'toNode', message: `gears move only within one district and profile (${source.district}/${source.profile})`, value: toNode });
    }
    if (fromNode === toNode) throw new ValidationError({ path: 'toNode', message: 'the target is the source', value: toNode });
    for (const move of this.running) {
      if (move.gear.uuid === gear.uuid) throw new ConflictError(`gear ${gear.uuid} is already moving`, move.commandId);
    }
    const moving = source.gears.get(gear.uuid)!;
    // A named target takes an idle gear whatever its active count: the broker checks no room for an admin's move.
    const holdsSlot = this.holdsSlot(moving);
    if (holdsSlot && slotsHeld(target) >= target.maxGears) throw new ConflictError(`node ${toNode} has no room for gear ${gear.uuid}`, toNode);

    const now = this.clock.now().getTime();
    const commandId = `sim-move-${++this.sequence}`;
    const move: SimMove = {
      commandId,
      gear: { ...moving },
      from: fromNode,
      to: toNode,
      startedAt: now,
      completesAt: now + this.options.moveDurationMs,
      willFail: this.drawFailure(gear.uuid),
      status: { state: 'running' },
      holdsSlot,
    };
    if (holdsSlot) target.incoming++;
    this.touch(target);
    this.moves.set(commandId, move);
    this.running.add(move);
    if (key !== undefined) this.byKey.set(key, commandId);
    const record: MoveRecord = { commandId, uuid: gear.uuid, from: fromNode, to: toNode, startedAt: new Date(now).toISOString() };
    if (key !== undefined) record.idempotencyKey = key;
    this.history.push(record);
    this.historyById.set(commandId, record);
    this.settle();
    return { commandId };
  }

  async findMove(_gear: GearInfo, _fromNode: string, _toNode: string, idempotencyKey: string): Promise<MoveHandle | undefined> {
    this.settle();
    const known = this.byKey.get(idempotencyKey);
    return known === undefined ? undefined : { commandId: known };
  }

  async moveStatus(handle: MoveHandle): Promise<MoveStatus> {
    this.settle();
    const move = this.moves.get(handle.commandId);
    if (!move) throw new NotFoundError('move', handle.commandId);
    return { ...move.status };
  }

  async readNodeFacts(nodeId: string): Promise<{ activeGears: number; maxActiveGears: number } | undefined> {
    if (!this.membership(nodeId)) return undefined;
    const { activeGears, maxActiveGears } = this.nodeLoad(nodeId);
    return { activeGears, maxActiveGears };
  }

  // -------------------------------------------------------------------------

  private drawFailure(uuid: string): boolean {
    const scripted = this.scripted.get(uuid);
    if (scripted === 'always') return true;
    if (scripted !== undefined && scripted > 0) {
      this.scripted.set(uuid, scripted - 1);
      return true;
    }
    return this.options.moveFailureRate > 0 && this.random() < this.options.moveFailureRate;
  }

  /** Completes every move whose time has come, in completion order. */
  private settle(): void {
    if (this.running.size === 0) return;
    const now = this.clock.now().getTime();
    const due: SimMove[] = [];
    for (const move of this.running) if (move.completesAt <= now) due.push(move);
    if (due.length === 0) return;
    due.sort((a, b) => a.completesAt - b.completesAt || a.commandId.localeCompare(b.commandId));
    for (const move of due) {
      this.running.delete(move);
      const target = this.nodes.get(move.to);
      const source = this.nodes.get(move.from);
      if (target && move.holdsSlot) {
        target.incoming--;
        this.touch(target);
      }
      const record = this.historyById.get(move.commandId);
      let failure: string | undefined;
      if (move.willFail) failure = `simulated failure moving gear ${move.gear.uuid} to ${move.to}`;
      else if (!source || this.locations.get(move.gear.uuid) !== move.from) failure = `gear ${move.gear.uuid} is no longer on ${move.from}`;
      else if (!target) failure = `node ${move.to} is gone`;
      if (failure !== undefined) {
        move.status = { state: 'failed', error: failure, ...(this.locations.has(move.gear.uuid) ? {} : { gone: true }) };
        if (record) record.outcome = 'failed';
        continue;
      }
      source!.gears.delete(move.gear.uuid);
      target!.gears.set(move.gear.uuid, move.gear);
      if (!move.holdsSlot) {
        source!.idle -= 1;
        target!.idle += 1;
      }
      this.kinds.change(placementKey(source!.district, source!.profile), source!.nodeId, move.gear.uuid, -1);
      this.kinds.change(placementKey(target!.district, target!.profile), target!.nodeId, move.gear.uuid, 1);
      this.changed?.add(move.gear.uuid);
      this.touch(source!);
      this.touch(target!);
      this.locations.set(move.gear.uuid, move.to);
      move.status = { state: 'succeeded' };
      this.succeeded += 1;
      if (record) record.outcome = 'succeeded';
    }
  }

  private put(node: SimNode, gear: GearInfo): void {
    node.gears.set(gear.uuid, { ...gear });
    if (!this.holdsSlot(gear)) node.idle += 1;
    this.locations.set(gear.uuid, node.nodeId);
    this.kinds.change(placementKey(node.district, node.profile), node.nodeId, gear.uuid, 1);
    this.placement.gearCreated(node, gear);
    this.changed?.add(gear.uuid);
    this.touch(node);
  }

  /** Whether the gear holds a slot where it is: every gear, but an idle one only when slots count all gears. */
  private holdsSlot(gear: GearInfo): boolean {
    return gear.idle !== true || this.options.idleTakesNoSlot !== true;
  }

  /** Every change of a node's gears, incoming moves, capacity or activity goes through here, so placement sees it. */
  private touch(node: SimNode): void {
    this.placement.touch(node);
  }

  private node(nodeId: string): SimNode {
    const node = this.nodes.get(nodeId);
    if (!node) throw new NotFoundError('node', nodeId);
    return node;
  }

  /** The node as a member of `district`: `NodeNotInDistrictError` ("doesn't belong to district") otherwise. */
  private nodeIn(district: string, nodeId: string): SimNode {
    const node = this.nodes.get(nodeId);
    if (!node || !node.inDistrict || node.district !== district) throw new NodeNotInDistrictError(district, nodeId);
    return node;
  }

  /** Whether the node is in its district and active (false for an unknown node). */
  membership(nodeId: string): { district: string; active: boolean } | undefined {
    const node = this.nodes.get(nodeId);
    return node?.inDistrict ? { district: node.district, active: node.active } : undefined;
  }
}
