import type { SimulatedPlatform } from '../adapters/local/simulated-platform.js';
import type { LocalSqs } from '../adapters/local/local-sqs.js';
import type { Clock } from '../ports/clock.js';
import { MAX_REFUSED_GEARS } from '../messages/index.js';
import { MAX_STORED_GEARS } from '../domain/node-stats.js';
import type { GearInfo } from '../domain/model.js';
import { AppModel, type AppMix } from './disruption.js';

/** How often the broker-side reporter runs (its systemd timer, infra/agent/nodescaler-broker-reporter.timer). */
export const REPORTER_PERIOD_SECONDS = 15;
/** How often it reads the districts' UIDs (NODESCALER_DISTRICT_EVERY's default, 300 s). */
export const DISTRICT_READ_MINUTES = 5;

/** The view of the simulated cloud the world needs: every host it ever created. */
export interface CloudView {
  /** Hosts not terminated. */
  liveHostStates(): Array<{ hostName: string; pool: string; state: 'pending' | 'running'; instanceId?: string }>;
}

/** What the world needs of the platform it places gears on: the simulated one, or the broker emulator's (test/reliability). */
export type WorldPlatform = Pick<SimulatedPlatform, 'registerNode' | 'placeGear' | 'removeGear' | 'nodeLoad' | 'hasNode' | 'gearPlacementProblems' | 'gearCount' | 'hasGear' | 'gearUuids'> &
  Partial<Pick<SimulatedPlatform, 'countGearKinds' | 'gearKinds'>>;

export interface WorldOptions {
  district: string;
  profile: string;
  gearsPerNode: number;
  /** Starts every gear uuid of this world (unique across the pools of one platform). */
  gearPrefix?: string;
  /** Longest time between two reports of an unchanged node. */
  heartbeatSeconds: number;
  /**
   * The role id of the node hosts' instance profile: agents send as `<role id>:<instance id>`, as SQS stamps
   * them (statsAuth). Unset: they send as the trusted local sender (replays).
   */
  nodeRoleId?: string;
  /**
   * The district's UIDs (origin-server's max_capacity): every gear of the district holds one, and the broker places no
   * gear beyond them, refusing it as it refuses one no node has room for. Unset: no limit (the replay's default: at
   * 20,000 gears one district would need the UIDs of four).
   */
  districtUids?: number;
  /** The reporter reads the UIDs (default true); false: a broker reporter older than session 39, which only counts refusals. */
  districtReads?: boolean;
  /** Who the gears belong to (lib/sim/disruption.ts); the default mix when unset. */
  apps?: AppMix;
  /**
   * Slots counted as origin-server counts them (the platform must be given `idleTakesNoSlot` too): an idled
   * application's gears are placed idle and hold no slot, and agents report as the shipped one does (active gears
   * only, the disruptive ones among them, and the gear list marking the idle ones). Unset: every gear holds a slot,
   * and agents report every gear as active with `idleGears` among them.
   */
  idleTakesNoSlot?: boolean;
  random: () => number;
}

export interface WorldSample {
  demand: number;
  placed: number;
  unplaced: number;
  /** Gear slots of active platform nodes. */
  capacity: number;
  /** Hosts that cost money: pending or running. */
  nodes: number;
  /** Free slots of joined nodes the platform has closed to new gears (draining, or closed for attrition). */
  closedFree: number;
}

/**
 * Everything outside nodescaler in a replay: applications that want gears
 * (the trace), the platform placing them, node hosts that boot, join their
 * district and report stats every minute, and the invariant checks.
 */
export class SimWorld {
  private readonly placed: string[] = [];
  private readonly index = new Map<string, number>();
  private waiting = 0;
  /** Which application each gear belongs to, and whether moving it restarts something (lib/sim/disruption.ts). */
  readonly apps: AppModel;
  /** Every node of this pool that ever joined (moves are attributed to pools by their source). */
  readonly everJoined = new Set<string>();
  private readonly joined = new Set<string>();
  private readonly lastReports = new Map<string, { activeGears: number; held: number; at: number }>();
  /** The instance each joined host runs on, for the SenderId of its agent. */
  private readonly instances = new Map<string, string>();
  private readonly gone = new Set<string>();
  /** The broker-side reporter: gears refused in the minute that ended at `at`, sent one run later; and the last count sent. */
  private readonly refusedWindows: Array<{ at: number; gears: number }> = [];
  private refusedSent = 0;
  /** The reporter's district reads sent (`district-capacity`). */
  districtReadsSent = 0;
  readonly violations: string[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly platform: WorldPlatform,
    private readonly cloud: CloudView,
    private readonly sqs: LocalSqs,
    private readonly options: WorldOptions,
  ) {
    this.apps = new AppModel(options.random, options.apps);
    // Idle gears first: an idled application's gear restarts nothing, even its head.
    // A gear is placed before the model creates it (placeWaiting), so the one being placed is read from `peek`.
    platform.countGearKinds?.(options.district, options.profile, (uuid) => {
      const id = this.gearNumber(uuid);
      const placing = id === this.apps.created ? this.apps.peek() : undefined;
      const idle = placing ? placing.idle : this.apps.idle(id);
      const disruptive = placing ? placing.disruptive : this.apps.disruptive(id);
      return idle ? 'idle' : disruptive ? 'disruptive' : undefined;
    });
  }

  /** The number of a gear of this world, from its uuid. */
  gearNumber(uuid: string): number {
    return Number.parseInt(uuid.slice((this.options.gearPrefix ?? 'g').length), 36);
  }

  /** Whether moving this gear (by uuid) is disruptive. */
  disruptive(uuid: string): boolean {
    return this.apps.disruptive(this.gearNumber(uuid));
  }

  /**
   * Gears start or stop so that `demand` are wanted; new ones wait when the district is full.
   * `replaced` gears (app churn) are deleted at random first and as many new ones created.
   */
  applyDemand(demand: number, replaced = 0): void {
    for (let i = 0; i < replaced && this.placed.length > 0; i++) {
      this.removeAt(Math.floor(this.options.random() * this.placed.length));
      this.waiting += 1;
    }
    let excess = this.placed.length + this.waiting - demand;
    const fromWaiting = Math.min(Math.max(excess, 0), this.waiting);
    this.waiting -= fromWaiting;
    excess -= fromWaiting;
    while (excess > 0 && this.placed.length > 0) {
      this.removeAt(Math.floor(this.options.random() * this.placed.length));
      excess -= 1;
    }
    if (excess < 0) this.waiting += -excess;
    this.placeWaiting();
  }

  /** Hosts that cost money (pending or running), as of the last `joinBootedHosts`. */
  private liveHosts = 0;

  /** Hosts that finished booting join the district; hosts that are gone stop reporting. */
  joinBootedHosts(): void {
    let live = 0;
    const present = new Set<string>();
    const pool = `${this.options.district}/${this.options.profile}`;
    for (const host of this.cloud.liveHostStates()) {
      if (host.pool !== pool) continue;
      live += 1;
      present.add(host.hostName);
      if (host.instanceId !== undefined) this.instances.set(host.hostName, host.instanceId);
      if (host.state === 'running' && !this.joined.has(host.hostName) && !this.gone.has(host.hostName)) {
        this.platform.registerNode(this.options.district, this.options.profile, host.hostName, this.options.gearsPerNode);
        this.joined.add(host.hostName);
        this.everJoined.add(host.hostName);
      }
    }
    for (const id of [...this.joined]) {
      if (present.has(id)) continue;
      // Terminated: it must have been emptied and removed from its district first.
      this.joined.delete(id);
      this.instances.delete(id);
      this.gone.add(id);
      const held = this.platform.hasNode(id) ? heldGears(this.platform, id) : 0;
      if (held > 0) this.violations.push(`${this.clock.now().toISOString()}: host ${id} terminated while holding ${held} gears`);
    }
    this.liveHosts = live;
    this.placeWaiting();
  }

  /**
   * Joined nodes report their stats: when a figure changed since their last
   * report, and at least every `heartbeatSeconds` (well inside statsMaxAge),
   * exactly as the shipped agent (infra/agent/nodescaler-agent.sh) does with
   * its default NODESCALER_HEARTBEAT of 240 s. Unchanged minutes are most
   * minutes of a replay, and each report costs a queue message.
   */
  reportStats(): void {
    const now = this.clock.now();
    const reportedAt = now.toISOString();
    for (const nodeId of this.joined) {
      if (!this.platform.hasNode(nodeId)) continue;
      const facts = this.platform.nodeLoad(nodeId);
      const last = this.lastReports.get(nodeId);
      // The shipped agent also reports when only its gear list changed (an idle gear came or went).
      // Counted by kind where the platform keeps the counts (a node with no idle gear has no entry), else gear by gear.
      const kinds = this.options.idleTakesNoSlot ? this.platform.gearKinds?.(nodeId) : undefined;
      const held = !this.options.idleTakesNoSlot ? facts.activeGears : kinds ? facts.activeGears + (kinds.get('idle') ?? 0) : heldGears(this.platform, nodeId);
      if (last && last.activeGears === facts.activeGears && last.held === held && now.getTime() - last.at < this.options.heartbeatSeconds * 1000) continue;
      this.lastReports.set(nodeId, { activeGears: facts.activeGears, held, at: now.getTime() });
      const figures = this.options.idleTakesNoSlot ? this.asShippedAgent(nodeId, facts.profile, held) : this.byKind(nodeId);
      const { district, profile, activeGears, maxActiveGears } = facts;
      const body = { type: 'node-stats', v: 1, nodeId, district, profile, activeGears, maxActiveGears, ...figures, reportedAt };
      this.sqs.sendRaw('stats', JSON.stringify(body), undefined, undefined, this.senderOf(nodeId));
    }
  }

  /** What an agent that reads the gears' applications reports, every gear counted active: idled ones, and the ones whose move restarts a tenant. */
  private byKind(nodeId: string): { idleGears: number; disruptiveGears: number } {
    const kinds = this.platform.gearKinds?.(nodeId);
    let idleGears = kinds?.get('idle') ?? 0;
    let disruptiveGears = kinds?.get('disruptive') ?? 0;
    if (!kinds) {
      for (const uuid of this.platform.gearUuids(nodeId)) {
        const id = this.gearNumber(uuid);
        if (this.apps.idle(id)) idleGears++;
        else if (this.apps.disruptive(id)) disruptiveGears++;
      }
    }
    return { idleGears, disruptiveGears };
  }

  /**
   * The broker-side reporter (infra/agent/nodescaler-broker-reporter.sh), as it
   * runs on the broker host: every REPORTER_PERIOD_SECONDS it sends the gear
   * creations the broker refused since its last run (here, the gears the last
   * step left waiting: each one's creation was refused), and it sends nothing
   * for a quiet window except the first after a refusal. A report waits for
   * the reporter's next run: the period rounded to whole simulated minutes
   * (15 s rounds to none, as node agents' reports, sent every 60 s, reach the
   * evaluator in the minute they are made). With `districtUids`, every
   * DISTRICT_READ_MINUTES it also sends the district's UIDs left, as read
   * then. Call once per simulated minute, after `applyDemand`.
   */
  reportRefused(): void {
    const nowMs = this.clock.now().getTime();
    const uids = this.options.districtUids;
    if (uids !== undefined && this.options.districtReads !== false && Math.floor(nowMs / 60_000) % DISTRICT_READ_MINUTES === 0) {
      this.districtReadsSent += 1;
      const read = { district: this.options.district, profile: this.options.profile, maxCapacity: uids, availableCapacity: Math.max(0, uids - this.placed.length) };
      this.sqs.sendRaw('stats', JSON.stringify({ type: 'district-capacity', v: 1, ...read, readAt: new Date(nowMs).toISOString() }));
    }
    this.refusedWindows.push({ at: nowMs, gears: this.waiting });
    const delay = Math.round(REPORTER_PERIOD_SECONDS / 60);
    while (this.refusedWindows.length > delay) {
      const window = this.refusedWindows.shift()!;
      if (window.gears === 0 && this.refusedSent === 0) continue;
      this.refusedSent = window.gears;
      this.sqs.sendRaw(
        'stats',
        JSON.stringify({
          type: 'gears-refused',
          v: 1,
          district: this.options.district,
          profile: this.options.profile,
          refused: Math.min(window.gears, MAX_REFUSED_GEARS),
          windowStart: new Date(window.at - 60_000).toISOString(),
          windowEnd: new Date(window.at).toISOString(),
        }),
      );
    }
  }

  /**
   * A node's figures as infra/agent/nodescaler-agent.sh sends them (its `activeGears` leaves the idle gears out): the
   * disruptive gears among the active ones, and every gear listed (up to MAX_STORED_GEARS, as the agent) with its flags.
   */
  private asShippedAgent(nodeId: string, profile: string, held: number): { disruptiveGears: number; gears?: GearInfo[] } {
    let disruptiveGears = 0;
    const gears: GearInfo[] = [];
    for (const uuid of this.platform.gearUuids(nodeId)) {
      const id = this.gearNumber(uuid);
      const idle = this.apps.idle(id);
      const disruptive = !idle && this.apps.disruptive(id);
      if (disruptive) disruptiveGears += 1;
      if (held > MAX_STORED_GEARS) continue;
      gears.push({ uuid, app: `app-${this.apps.appOf(id)}`, size: profile, ...(disruptive ? { disruptive: true } : {}), ...(idle ? { idle: true } : {}) });
    }
    return held > MAX_STORED_GEARS ? { disruptiveGears } : { disruptiveGears, gears };
  }

  /** The SenderId SQS stamps on a host's stats: its instance-profile session, when the world has a node role. */
  senderOf(nodeId: string): string | undefined {
    const instanceId = this.instances.get(nodeId);
    return this.options.nodeRoleId === undefined || instanceId === undefined ? undefined : `${this.options.nodeRoleId}:${instanceId}`;
  }

  /** Hosts that joined and still run (the ones whose agents report), by node id. */
  joinedNodes(): string[] {
    return [...this.joined];
  }

  sample(demand: number): WorldSample {
    let capacity = 0;
    let closedFree = 0;
    for (const nodeId of this.joined) {
      if (!this.platform.hasNode(nodeId)) continue;
      const facts = this.platform.nodeLoad(nodeId);
      if (facts.active) capacity += facts.maxActiveGears;
      else closedFree += Math.max(0, facts.maxActiveGears - facts.activeGears);
    }
    return { demand, placed: this.placed.length, unplaced: this.waiting, capacity, nodes: this.liveHosts, closedFree };
  }

  /** Every gear on exactly one node (`'changed'`: every gear placed, removed or moved since the last check), and every gear the world placed still on some node. */
  checkGears(scope: 'all' | 'changed' = 'all'): void {
    const at = this.clock.now().toISOString();
    for (const problem of this.platform.gearPlacementProblems(scope)) this.violations.push(`${at}: ${problem}`);
    // Only the world creates gears (moves keep their uuid): as many on the platform as placed means none was lost, and
    // looking each one up (a fifth of a big replay's time) is needed only to name the lost ones.
    if (this.platform.gearCount() === this.placed.length) return;
    for (const uuid of this.placed) {
      if (!this.platform.hasGear(uuid)) this.violations.push(`${at}: gear ${uuid} lost`);
    }
  }

  private placeWaiting(): void {
    while (this.waiting > 0) {
      if (this.options.districtUids !== undefined && this.placed.length >= this.options.districtUids) return;
      const { id, app } = this.apps.peek();
      const gear: GearInfo = { uuid: `${this.options.gearPrefix ?? 'g'}${id.toString(36)}`, app: `app-${app}`, size: this.options.profile };
      if (this.options.idleTakesNoSlot && this.apps.peek().idle) gear.idle = true;
      if (this.platform.placeGear(this.options.district, this.options.profile, gear) === undefined) return;
      this.apps.next();
      this.index.set(gear.uuid, this.placed.length);
      this.placed.push(gear.uuid);
      this.waiting -= 1;
    }
  }

  private removeAt(position: number): void {
    const uuid = this.placed[position]!;
    const last = this.placed.pop()!;
    if (position < this.placed.length) {
      this.placed[position] = last;
      this.index.set(last, position);
    }
    this.index.delete(uuid);
    this.platform.removeGear(uuid);
  }
}

/** Every gear a node holds, idle ones too: a host must hold none when it goes. */
export function heldGears(platform: Pick<WorldPlatform, 'gearUuids'>, nodeId: string): number {
  let count = 0;
  for (const _uuid of platform.gearUuids(nodeId)) count += 1;
  return count;
}
