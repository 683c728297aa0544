/**
 * A small world for gear-mover tests: a state store (dynalite in the
 * integration tests), the simulated platform on a virtual clock, a recording
 * queue, and helpers that keep the nodes' stats in step with the platform (as
 * the node agents and the evaluator would) and check that every gear is on
 * exactly one node after every platform call.
 */
import { SimulatedPlatform } from '../../lib/adapters/local/simulated-platform.js';
import { RecordingQueue } from './recording-queue.js';
import { GearMover, type Budget } from '../../lib/app/drain.js';
import type { Config, ConfigInput } from '../../lib/config/index.js';
import type { GearInfo, NodeRecord } from '../../lib/domain/model.js';
import type { ScaleDownMessage } from '../../lib/messages/index.js';
import type { Platform } from '../../lib/ports/platform.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { config as buildConfig } from './builders.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';

export const START = '2026-03-01T12:00:00.000Z';
export const POOL = 'd1/small';

/** A clock that moves only when told to. */
export class TestClock {
  private ms: number;
  constructor(start: string = START) {
    this.ms = Date.parse(start);
  }
  now(): Date {
    return new Date(this.ms);
  }
  advance(ms: number): Date {
    this.ms += ms;
    return this.now();
  }
}

export class InvariantViolation extends Error {}

export interface WorldOptions {
  config?: Omit<Partial<ConfigInput>, 'pools'>;
  moveDurationMs?: number;
  /** False: the nodes do not report while the mover waits (their stats lag the platform until `report()`). Default true. */
  reportWhileWaiting?: boolean;
  /** What the node agents say of a gear beyond what the platform lists (its move restarts a tenant, do-not-move). */
  agentFlags?: (gear: GearInfo) => Pick<GearInfo, 'disruptive' | 'doNotMove' | 'idle'>;
  /** The platform counts only active gears against a node's slots, as origin-server does (SimulatedPlatformOptions). */
  idleTakesNoSlot?: boolean;
}

export class World {
  readonly clock = new TestClock();
  readonly sim: SimulatedPlatform;
  readonly queue = new RecordingQueue({ fifo: ['scale', 'drain'] });
  readonly metrics = new InMemoryMetrics();
  readonly log = new MemoryLog();
  readonly config: Config;
  /** Total gears ever placed minus removed: every check expects exactly this many, each on one node. */
  gears = 0;
  checks = 0;
  private readonly reportWhileWaiting: boolean;
  private readonly agentFlags: WorldOptions['agentFlags'];

  constructor(
    readonly store: StateStore,
    options: WorldOptions = {},
  ) {
    this.sim = new SimulatedPlatform(this.clock, {
      moveDurationMs: options.moveDurationMs ?? 30_000,
      moveFailureRate: 0,
      ...(options.idleTakesNoSlot ? { idleTakesNoSlot: true } : {}),
    });
    this.reportWhileWaiting = options.reportWhileWaiting ?? true;
    this.agentFlags = options.agentFlags;
    this.config = buildConfig(
      { ...options.config, scaleDown: { delayAfterAdd: '0s', ...(options.config?.scaleDown ?? {}) } },
      { max: 50 },
    );
  }

  /** The platform as the gear mover sees it: every call is followed by the one-node-per-gear check. */
  checkedPlatform(platform: Platform = this.sim): Platform {
    const check = () => this.checkGears();
    return new Proxy(platform, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          check();
          try {
            return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          } finally {
            check();
          }
        };
      },
    });
  }

  /** Every gear is on exactly one node, and none is lost. */
  checkGears(): void {
    this.checks++;
    const where = this.sim.gearLocations();
    for (const [uuid, nodes] of where) {
      if (nodes.length !== 1) throw new InvariantViolation(`gear ${uuid} is on ${nodes.length} nodes: ${nodes.join(', ')}`);
    }
    if (where.size !== this.gears) throw new InvariantViolation(`${this.gears} gears expected, ${where.size} found`);
  }

  mover(platform: Platform = this.checkedPlatform(), store: StateStore = this.store): GearMover {
    return new GearMover(
      {
        store,
        platform,
        queue: this.queue,
        clock: this.clock,
        metrics: this.metrics,
        log: this.log,
        wait: async (ms) => {
          this.clock.advance(ms);
          if (this.reportWhileWaiting) await this.report();
        },
      },
      this.config,
    );
  }

  /** A budget of `ms` of virtual time from now. */
  budget(ms = 15 * 60_000): Budget {
    const deadline = this.clock.now().getTime() + ms;
    return { timeLeft: () => deadline - this.clock.now().getTime() };
  }

  /** Registers a node on the platform and in the state table, with `gears` gears of the given apps. */
  async node(nodeId: string, options: { max?: number; gears?: GearInfo[]; state?: NodeRecord['state']; instanceId?: string; launchedMsAgo?: number; launchedFrom?: NodeRecord['launchedFrom'] } = {}): Promise<void> {
    const max = options.max ?? 100;
    this.sim.registerNode('d1', 'small', nodeId, max);
    for (const gear of options.gears ?? []) {
      this.sim.putGear(nodeId, gear);
      this.gears++;
    }
    await this.store.createNode(
      {
        nodeId,
        pool: POOL,
        district: 'd1',
        profile: 'small',
        state: options.state ?? 'active',
        createdAt: new Date(this.clock.now().getTime() - (options.launchedMsAgo ?? 0)).toISOString(),
        origin: 'provisioned',
        protected: false,
        ...(options.instanceId ? { instanceId: options.instanceId } : {}),
        ...(options.launchedFrom ? { launchedFrom: options.launchedFrom } : {}),
        stats: this.statsOf(nodeId),
      },
      this.clock.now(),
    );
  }

  /** New stats for every node, from the platform (what the node agents would report). */
  async report(): Promise<void> {
    for (const nodeId of this.sim.nodeIds()) {
      const write = await this.store.putNodeStats(nodeId, this.statsOf(nodeId)).catch(() => undefined);
      void write;
    }
  }

  statsOf(nodeId: string) {
    const facts = this.sim.nodeFacts(nodeId);
    const { agentFlags } = this;
    // A gear's run state is the agent's to report: the platform's own record of it is not sent.
    const gears: GearInfo[] = facts.gears.map(({ idle: _idle, ...gear }) => (agentFlags ? { ...gear, ...agentFlags(gear) } : gear));
    return { activeGears: facts.activeGears, maxActiveGears: facts.maxActiveGears, gears, reportedAt: this.clock.now().toISOString() };
  }

  scaleDown(nodeId: string, decidedAt = this.clock.now()): ScaleDownMessage {
    return {
      type: 'scale-down',
      v: 1,
      decisionId: `down:d1_small:${decidedAt.getTime()}`,
      pool: POOL,
      nodeId,
      reason: `pool d1/small under-used; drain ${nodeId}`,
      decidedAt: decidedAt.toISOString(),
    };
  }

  /** A scale-down as the evaluator decides it: the message, with the pool lease taken for it. */
  async decideScaleDown(nodeId: string, decidedAt = this.clock.now()): Promise<ScaleDownMessage> {
    const message = this.scaleDown(nodeId, decidedAt);
    await this.leaseFor(message);
    return message;
  }

  /** Takes the pool lease as the evaluator does before it sends a scale-down. */
  async leaseFor(message: ScaleDownMessage): Promise<void> {
    await this.store.acquireLease(POOL, { holder: message.decisionId, kind: 'scale-down', ttlMs: 15 * 60_000, message: { ...message } }, this.clock.now());
  }

  /** Runs ticks a minute apart until no drain is active (at most `ticks`). */
  async tickUntilIdle(mover: () => GearMover, ticks = 60): Promise<number> {
    for (let i = 0; i < ticks; i++) {
      await this.report();
      const summary = await mover().run(this.budget(50_000));
      if (summary.pending === 0 && (await this.store.listDrains(POOL)).length === 0) return i + 1;
      this.clock.advance(60_000);
    }
    throw new Error(`drains still active after ${ticks} ticks`);
  }
}

export function apps(count: number, perApp: number, prefix = 'g'): GearInfo[] {
  const gears: GearInfo[] = [];
  for (let a = 0; a < count; a++) {
    for (let g = 0; g < perApp; g++) gears.push({ uuid: `${prefix}${a}x${g}`, app: `app-${a}`, size: g === 0 && a % 3 === 0 ? 'medium' : 'small' });
  }
  return gears;
}
