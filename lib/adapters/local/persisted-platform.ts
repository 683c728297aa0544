import { createHash, randomUUID } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Config } from '../../config/index.js';
import type { GearInfo, NodeRecord } from '../../domain/model.js';
import { NotFoundError } from '../../errors.js';
import type { Clock } from '../../ports/clock.js';
import type { MoveHandle, MoveOptions, MoveStatus, Platform } from '../../ports/platform.js';
import type { StateStore } from '../../ports/state-store.js';
import { SimulatedPlatform } from './simulated-platform.js';

/** What `<state dir>/platform.json` holds between two local invocations. */
export interface PlatformSnapshot {
  v: 1;
  nodes: Array<{ nodeId: string; district: string; profile: string; maxGears: number; active: boolean; gears: GearInfo[] }>;
  /** Every move ever started, by command id, with how it ended. */
  moves: Record<string, MoveStatus>;
  /** Idempotency key -> command id, so a repeated start returns the first move. */
  keys: Record<string, string>;
}

/** Node states whose host is in its district on the platform. */
interface BootingHost {
  district: string;
  profile: string;
  maxGears: number;
}

const ON_PLATFORM: ReadonlySet<NodeRecord['state']> = new Set(['active', 'draining', 'drained']);

/**
 * The simulated platform of `npm run invoke`, kept in a file between
 * invocations (each one is a new process).
 *
 * Gears and districts come from the snapshot; a node the snapshot does not
 * know yet (first invocation, or a node that reported stats since) joins with
 * the gears of its last stats (their list, or as many placeholder gears as
 * `activeGears` says). Moves complete by the next look at them (duration 0:
 * a move cannot outlive the process that started it); a move still running
 * when the invocation ends (none, with duration 0) is recorded as failed, its
 * gear on its source, as a broker command that never finished.
 */
export class PersistedPlatform implements Platform {
  /** This process's command ids -> the inner simulation's. */
  private readonly started = new Map<string, MoveHandle>();
  private readonly prefix = `local-${randomUUID().slice(0, 8)}-`;

  private constructor(
    private readonly inner: SimulatedPlatform,
    private readonly ledger: Pick<PlatformSnapshot, 'moves' | 'keys'>,
    /** Provisioning nodes of the state table: their hosts join the simulation at their add-node, running and in no district. */
    private readonly booting: ReadonlyMap<string, BootingHost> = new Map(),
  ) {}

  /** The platform as the snapshot file (if any) left it, joined by the nodes of `store` it does not know. */
  static async open(file: string, store: StateStore, config: Config, clock: Clock): Promise<PersistedPlatform> {
    const snapshot = readSnapshot(file);
    const inner = new SimulatedPlatform(clock, { moveDurationMs: 0, moveFailureRate: config.platform.moveFailureRate });
    const booting = new Map<string, BootingHost>();
    for (const node of snapshot.nodes) {
      inner.registerNode(node.district, node.profile, node.nodeId, node.maxGears);
      for (const gear of node.gears) inner.putGear(node.nodeId, gear);
      if (!node.active) await inner.deactivateNode(node.district, node.nodeId);
    }
    for (const pool of await store.listPools()) {
      const nodes = await store.listNodes(pool.pool);
      // A pool's listing counts each agent's gear list: the lists are read with it, in one batch.
      const lists = await store.getGearLists(nodes.filter((node) => node.stats?.listed).map((node) => node.nodeId));
      for (const node of nodes) {
        if (inner.hasNode(node.nodeId)) continue;
        const poolConfig = config.pools.find((p) => p.district === node.district && p.profile === node.profile);
        const maxGears = node.stats?.maxActiveGears ?? poolConfig?.gearsPerNode ?? 100;
        // A provisioning node's host runs once its agent reports, which is when add-node is asked for it: known then.
        if (node.state === 'provisioning') booting.set(node.nodeId, { district: node.district, profile: node.profile, maxGears });
        if (!ON_PLATFORM.has(node.state)) continue;
        inner.registerNode(node.district, node.profile, node.nodeId, Math.max(maxGears, node.stats?.activeGears ?? 0));
        for (const gear of gearsOf(node, lists.get(node.nodeId)?.gears)) inner.putGear(node.nodeId, gear);
        if (node.state !== 'active') await inner.deactivateNode(node.district, node.nodeId);
      }
    }
    return new PersistedPlatform(inner, { moves: { ...snapshot.moves }, keys: { ...snapshot.keys } }, booting);
  }

  /** Writes the platform as it is now for the next invocation. */
  async save(file: string): Promise<void> {
    const moves = { ...this.ledger.moves };
    for (const [commandId, handle] of this.started) {
      const status = await this.inner.moveStatus(handle);
      moves[commandId] = status.state === 'running' ? { state: 'failed', error: 'the local invocation ended before the move finished' } : status;
    }
    const snapshot: PlatformSnapshot = {
      v: 1,
      nodes: this.inner.nodeIds().map((nodeId) => {
        const facts = this.inner.nodeFacts(nodeId);
        return { nodeId, district: facts.district, profile: facts.profile, maxGears: facts.maxActiveGears, active: facts.active, gears: facts.gears };
      }),
      moves,
      keys: this.ledger.keys,
    };
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(snapshot, null, 2)}\n`);
    renameSync(temporary, file);
  }

  /** The simulation itself (node facts, gear locations), for inspection. */
  get simulation(): SimulatedPlatform {
    return this.inner;
  }

  listGears(nodeId: string): Promise<GearInfo[]> {
    return this.inner.listGears(nodeId);
  }

  readNodeFacts(nodeId: string): Promise<{ activeGears: number; maxActiveGears: number } | undefined> {
    return this.inner.readNodeFacts(nodeId);
  }

  deactivateNode(district: string, nodeId: string): Promise<void> {
    return this.inner.deactivateNode(district, nodeId);
  }

  activateNode(district: string, nodeId: string): Promise<void> {
    return this.inner.activateNode(district, nodeId);
  }

  addNode(district: string, nodeId: string): Promise<void> {
    const host = this.booting.get(nodeId);
    if (host && !this.inner.hasNode(nodeId)) this.inner.registerNode(host.district, host.profile, nodeId, host.maxGears, { joined: false });
    return this.inner.addNode(district, nodeId);
  }

  removeNode(district: string, nodeId: string): Promise<void> {
    return this.inner.removeNode(district, nodeId);
  }

  async startMove(gear: GearInfo, fromNode: string, toNode: string, options: MoveOptions = {}): Promise<MoveHandle> {
    const key = options.idempotencyKey;
    if (key !== undefined && this.ledger.keys[key] !== undefined) return { commandId: this.ledger.keys[key] };
    const handle = await this.inner.startMove(gear, fromNode, toNode, options);
    const commandId = `${this.prefix}${handle.commandId}`;
    this.started.set(commandId, handle);
    if (key !== undefined) this.ledger.keys[key] = commandId;
    return { commandId };
  }

  async findMove(_gear: GearInfo, _fromNode: string, _toNode: string, idempotencyKey: string): Promise<MoveHandle | undefined> {
    const known = this.ledger.keys[idempotencyKey];
    return known === undefined ? undefined : { commandId: known };
  }

  async moveStatus(handle: MoveHandle): Promise<MoveStatus> {
    const inner = this.started.get(handle.commandId);
    if (inner !== undefined) return this.inner.moveStatus(inner);
    const recorded = this.ledger.moves[handle.commandId];
    if (recorded === undefined) throw new NotFoundError('move', handle.commandId);
    return { ...recorded };
  }
}

function readSnapshot(file: string): PlatformSnapshot {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as PlatformSnapshot;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { v: 1, nodes: [], moves: {}, keys: {} };
    throw error;
  }
}

/** A node's gears as its last stats tell them: its agent's list, or `activeGears` placeholders. */
function gearsOf(node: NodeRecord, listed: readonly GearInfo[] | undefined): GearInfo[] {
  const stats = node.stats;
  if (!stats) return [];
  if (listed !== undefined && listed.length > 0) return [...listed];
  return Array.from({ length: stats.activeGears }, (_, i) => ({
    uuid: createHash('md5').update(`${node.nodeId}#${i + 1}`).digest('hex'),
    app: `app-${i + 1}`,
    size: node.profile,
  }));
}
