/**
 * A local embedded state for the CLI tests, prepared the way `npm run invoke`
 * keeps it (lib/adapters/local/invoke.ts: dynalite on LevelDB, queue files)
 * by a short simulated run of the real use cases on a virtual clock: node
 * stats through the ThresholdEvaluator, the drain queue through the
 * GearMover. Between two steps the state is closed, so a `nodescaler`
 * process can open it.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { startLocalDynamo } from '../../lib/adapters/local/dynalite.js';
import { openLocalState, type LocalState } from '../../lib/adapters/local/invoke.js';
import { SimulatedPlatform } from '../../lib/adapters/local/simulated-platform.js';
import { GearMover } from '../../lib/app/drain.js';
import { ThresholdEvaluator } from '../../lib/app/evaluate.js';
import { loadSettings, type Settings } from '../../lib/config/index.js';
import type { GearInfo } from '../../lib/domain/model.js';
import { parseMessage, type NodeStatsMessage } from '../../lib/messages/index.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';

export const ROOT = resolve(import.meta.dirname, '../..');
export const BIN = join(ROOT, 'bin/nodescaler.mjs');
export const TABLE_FILE = join(ROOT, 'infra/state-table.yml');

/** The nodes of the run: pool d1/small at about 0.2 (scales down), d1/medium one node whose gears fit nowhere. */
export const NODES = [
  { nodeId: 'd1-small-1.example.com', district: 'd1', profile: 'small', gears: 30, max: 100 },
  { nodeId: 'd1-small-2.example.com', district: 'd1', profile: 'small', gears: 25, max: 100 },
  { nodeId: 'd1-small-3.example.com', district: 'd1', profile: 'small', gears: 20, max: 100 },
  { nodeId: 'd1-small-4.example.com', district: 'd1', profile: 'small', gears: 10, max: 100 },
  { nodeId: 'd1-medium-1.example.com', district: 'd1', profile: 'medium', gears: 20, max: 50 },
] as const;

function gearsOf(nodeId: string, count: number): GearInfo[] {
  const short = nodeId.split('.')[0]!;
  return Array.from({ length: count }, (_, i) => ({ uuid: `${short}-g${String(i + 1).padStart(2, '0')}`, app: `app-${i % 4}`, size: 'small' }));
}

/**
 * The configuration of the run, fixed here (the example file's tuning may
 * change): the local stage's kinds (handler log, simulated platform), two
 * pools, the scale-down rules the assertions count on.
 */
export const CONFIG_YAML = `handler: log
platform: { kind: simulated }
scaleUp: { threshold: 0.8, target: 0.7, sustain: 2m, headroomGears: 0 }
scaleDown:
  utilizationThreshold: 0.5
  unneededTime: 5m
  delayAfterAdd: 10m
  delayAfterDelete: 5m
  delayAfterFailure: 30s
  maxConcurrentDrains: 1
  maxConcurrentMoves: 3
  candidateStrategy: least-gears
  payoff: { enabled: false }
statsMaxAge: 5m
evaluationInterval: 30s
leaseTtl: 15m
pools:
  - { district: d1, profile: small, min: 1, max: 10, gearsPerNode: 100, naming: { base: d1-small } }
  - { district: d1, profile: medium, min: 0, max: 5, gearsPerNode: 50, naming: { base: d1-medium } }
`;

export class CliWorld {
  /** The virtual clock of the use cases (the CLI gets it with --at). */
  nowMs: number;
  readonly settings: Settings;
  readonly log = new MemoryLog();
  /** Gear moves take 30 s of virtual time, so a drain is seen in progress. */
  readonly platform: SimulatedPlatform;
  private readonly clock = { now: () => new Date(this.nowMs) };

  /** The configuration file of the run (the CLI gets it with --config). */
  readonly configFile: string;

  constructor(
    readonly dir: string,
    start: string,
  ) {
    this.nowMs = Date.parse(start);
    this.configFile = join(dir, 'nodescaler.yml');
    writeFileSync(this.configFile, CONFIG_YAML);
    this.settings = loadSettings({ NODESCALER_LOCAL_STATE_DIR: dir, NODESCALER_LOCAL_NOW: start, NODESCALER_CONFIG_FILE: this.configFile }, { cwd: ROOT });
    this.platform = new SimulatedPlatform(this.clock, { moveDurationMs: 30_000, moveFailureRate: 0 });
    for (const node of NODES) {
      this.platform.registerNode(node.district, node.profile, node.nodeId, node.max);
      for (const gear of gearsOf(node.nodeId, node.gears)) this.platform.putGear(node.nodeId, gear);
    }
  }

  get at(): string {
    return new Date(this.nowMs).toISOString();
  }

  /** Opens the embedded state, runs `work`, closes it (so the CLI can open it). */
  async withState<T>(work: (state: LocalState) => Promise<T>): Promise<T> {
    const state = await openLocalState(this.settings, { tableFile: TABLE_FILE });
    try {
      return await work(state);
    } finally {
      await state.close();
    }
  }

  /** Every node reports (its gears as the platform holds them) every 30 s from now until `until`; the evaluator takes each batch. */
  async reportUntil(until: string): Promise<void> {
    await this.withState(async (state) => {
      const evaluator = new ThresholdEvaluator({ store: state.ports.store, queue: state.ports.queue, clock: this.clock, metrics: new InMemoryMetrics(), log: this.log }, this.settings.config);
      for (; this.nowMs <= Date.parse(until); this.nowMs += 30_000) {
        const items = NODES.map((node, i) => ({ id: `stats-${this.nowMs}-${i}`, message: this.stats(node) }));
        const { failures } = await evaluator.handleBatch(items);
        if (failures.length > 0) throw new Error(`stats refused: ${String(failures[0]!.error)}`);
      }
      this.nowMs -= 30_000;
    });
  }

  private stats(node: (typeof NODES)[number]): NodeStatsMessage {
    const gears = this.platform.nodeFacts(node.nodeId).gears;
    const parsed = parseMessage(
      JSON.stringify({
        type: 'node-stats',
        v: 1,
        nodeId: node.nodeId,
        district: node.district,
        profile: node.profile,
        activeGears: gears.length,
        maxActiveGears: node.max,
        gears,
        reportedAt: this.at,
      }),
      { now: new Date(this.nowMs) },
    );
    if (!parsed.ok || parsed.message.type !== 'node-stats') throw new Error('bad stats message');
    return parsed.message;
  }

  /**
   * The gear mover's invocation on the drain queue file, as `npm run invoke --
   * gearMover .nodescaler/queues/drain.json` would run it: each scale-down
   * becomes a drain, the file is settled, and one pass advances the drains.
   */
  async runGearMover(options: { deliverDrainQueue: boolean }): Promise<void> {
    await this.withState(async (state) => {
      const mover = new GearMover({ store: state.ports.store, queue: state.ports.queue, platform: this.platform, clock: this.clock, metrics: new InMemoryMetrics(), log: this.log }, this.settings.config);
      if (options.deliverDrainQueue) {
        const records = state.ports.queue.pending('drain');
        for (const record of records) {
          const parsed = parseMessage(record.body, { now: new Date(this.nowMs) });
          if (!parsed.ok || parsed.message.type !== 'scale-down') throw new Error(`not a scale-down: ${record.body}`);
          await mover.handleScaleDown(parsed.message);
        }
        state.ports.queue.settle({ Records: records }, { batchItemFailures: [] });
      }
      await mover.run({ timeLeft: () => 60_000 });
    });
  }

  /** Every item of the state table, in key order, and every file of the state but the table's own (queues, platform): what a dry run must not change. */
  async dump(): Promise<{ items: unknown[]; files: Record<string, string> }> {
    const dynamo = await startLocalDynamo({ path: join(this.dir, 'dynamodb'), tableName: this.settings.deployment.tableName, tableFile: TABLE_FILE });
    try {
      const items: unknown[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const page = await dynamo.client.send(new ScanCommand({ TableName: dynamo.tableName, ...(start ? { ExclusiveStartKey: start as never } : {}) }));
        items.push(...(page.Items ?? []));
        start = page.LastEvaluatedKey as Record<string, unknown> | undefined;
      } while (start);
      const key = (item: unknown) => JSON.stringify([(item as Record<string, { S?: string }>).pk?.S, (item as Record<string, { S?: string }>).sk?.S]);
      items.sort((a, b) => key(a).localeCompare(key(b)));
      const files: Record<string, string> = {};
      for (const sub of ['queues', '.']) {
        const dir = join(this.dir, sub);
        if (!existsSync(dir)) continue;
        for (const name of readdirSync(dir)) if (name.endsWith('.json')) files[join(sub, name)] = readFileSync(join(dir, name), 'utf8');
      }
      return { items, files };
    } finally {
      await dynamo.close();
    }
  }
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node bin/nodescaler.mjs ...args` (or another command) as a child process. */
export function runCli(args: readonly string[], options: { env?: Record<string, string>; command?: string[]; cwd?: string } = {}): Promise<CliResult> {
  const [command, ...prefix] = options.command ?? [process.execPath, BIN];
  return new Promise((resolveRun, reject) => {
    const child = spawn(command!, [...prefix, ...args], { cwd: options.cwd ?? ROOT, env: { PATH: process.env.PATH ?? '', ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolveRun({ code, stdout, stderr }));
  });
}
