/**
 * `npm run bench`: micro-benchmarks of the pure paths, with targets.
 *
 * Each entry of BENCHES measures one thing and returns rows (case, figure,
 * target, PASS/FAIL); the script prints one table and exits non-zero when a
 * figure misses its target. Add an entry to BENCHES to benchmark more.
 *
 *   npm run bench              every entry
 *   npm run bench -- decide    only entries whose name contains "decide"
 *   npm run bench -- suite     the replay trace suite (scripts/bench-suite.ts)
 *   npm run bench -- tune VARIANTS  configuration variants ranked on the suite (scripts/bench-tune.ts)
 *   npm run bench -- heldout   random workload shapes from a seed, not in the suite (scripts/bench-heldout.ts)
 *   npm run bench -- replay    the replay's speed by cluster size (scripts/bench-replay.ts)
 *   npm run bench -- bill      nodescaler's own AWS bill at 20 and 200 nodes (scripts/bench-bill.ts)
 *   npm run bench -- stats-batch  what one stats batch reads at 2,000 nodes (scripts/bench-stats-batch.ts)
 *   npm run bench -- quick     every entry on small inputs with few repetitions, targets
 *                              printed but not enforced (CI runs it so no entry rots;
 *                              test/bench/quick.test.ts)
 */
import { performance } from 'node:perf_hooks';
import { parseConfig, type Config } from '../lib/config/index.js';
import type { PoolEvaluationInput } from '../lib/domain/decision.js';
import { planDrain } from '../lib/domain/drain-plan.js';
import { decidePool } from '../lib/domain/evaluate.js';
import { recordDemand } from '../lib/domain/forecast.js';
import { applyStats } from '../lib/domain/ingest.js';
import { statsToStore } from '../lib/domain/node-stats.js';
import type { DemandSample, NodeRecord, PoolRecord } from '../lib/domain/model.js';
import { parseMessage } from '../lib/messages/index.js';
import { coldStartBench } from './bench-cold-start.js';

interface Row {
  case: string;
  figure: number;
  unit: string;
  /** `>= 10000` or `< 20`: the comparison and the bound. */
  target?: { op: '>=' | '<'; value: number };
}

interface Bench {
  name: string;
  description: string;
  run(options: BenchOptions): Row[];
}

/** `quick`: the smallest inputs and repetitions that still run every path of an entry. */
export interface BenchOptions {
  quick: boolean;
}

const POOL_SIZES = [10, 1_000, 10_000] as const;
const poolSizes = (options: BenchOptions) => (options.quick ? POOL_SIZES.slice(0, 2) : POOL_SIZES);
const repetitions = (options: BenchOptions, full: number) => (options.quick ? Math.min(full, 3) : full);
const NOW = new Date('2025-03-10T10:00:00.000Z');
const MINUTE = 60_000;

// ---------------------------------------------------------------------------
// Fixtures.

function benchConfig(): Config {
  return parseConfig({
    limits: { maxNodesTotal: 100_000, maxCores: 10_000_000, maxMemoryGiB: 10_000_000 },
    pools: [
      {
        district: 'd1',
        profile: 'small',
        max: 100_000,
        protectedNodes: ['node-1.example.com'],
        template: { instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }] },
      },
    ],
  });
}

/** A deterministic pseudo-random sequence, so every run measures the same data. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

function poolNodes(count: number, gearsOf: (i: number) => number): NodeRecord[] {
  const rnd = random(count);
  return Array.from({ length: count }, (_, i) => {
    const created = new Date(NOW.getTime() - (1 + Math.floor(rnd() * 10_000)) * MINUTE).toISOString();
    return {
      nodeId: `node-${i + 1}.example.com`,
      pool: 'd1/small',
      district: 'd1',
      profile: 'small',
      state: 'active',
      version: 3,
      createdAt: created,
      stateChangedAt: created,
      origin: 'provisioned',
      protected: false,
      instanceType: 'm5.xlarge',
      stats: {
        activeGears: gearsOf(i),
        maxActiveGears: 100,
        reportedAt: new Date(NOW.getTime() - Math.floor(rnd() * 120_000)).toISOString(),
      },
    } satisfies NodeRecord;
  });
}

/** A full history around `level` gears, as the evaluator keeps it (two days and two hours: about 330 samples). */
function fullHistory(level: number): DemandSample[] {
  let history: DemandSample[] = [];
  for (let m = -50 * 60; m < 0; m++) {
    const gears = Math.round(level * (1 + 0.02 * Math.sin(m / 120)));
    history = recordDemand(history, new Date(NOW.getTime() + m * MINUTE), gears, { window: 30 * MINUTE, keepDaily: true });
  }
  return history;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

// ---------------------------------------------------------------------------
// Entries.

/** node-stats ingested per second: parseMessage + applyStats into an in-memory node map. */
const ingestBench: Bench = {
  name: 'ingest',
  description: 'node-stats parsed (parseMessage), converted (statsToStore) and applied (applyStats, newer reportedAt wins) to an in-memory node map',
  run(options) {
    return poolSizes(options).map((size) => {
      const map = new Map(poolNodes(size, () => 10).map((n) => [n.nodeId, n]));
      const messages = options.quick ? 2_000 : Math.max(20_000, size * 2);
      // Bodies as SQS delivers them; every report newer than the last, a tenth of them duplicates (not applied).
      const bodies = Array.from({ length: messages }, (_, index) => {
        const i = index % 10 === 9 ? index - 1 : index; // every tenth body repeats the one before (a redelivery)
        return JSON.stringify({
          type: 'node-stats',
          v: 1,
          nodeId: `node-${(i % size) + 1}.example.com`,
          district: 'd1',
          profile: 'small',
          activeGears: i % 100,
          maxActiveGears: 100,
          reportedAt: new Date(NOW.getTime() + i * 10).toISOString(),
        });
      });
      const ingest = () => {
        let applied = 0;
        for (const body of bodies) {
          const parsed = parseMessage(body, { now: NOW });
          if (!parsed.ok || parsed.message.type !== 'node-stats') throw new Error('bench message did not parse');
          const current = map.get(parsed.message.nodeId);
          if (!current) continue;
          const next = applyStats(current, statsToStore(parsed.message));
          if (next !== current) {
            map.set(next.nodeId, next);
            applied++;
          }
        }
        return applied;
      };
      ingest(); // warm-up (the map now holds the newest stats; the timed run measures the same work)
      for (const n of map.values()) map.set(n.nodeId, { ...n, stats: { ...n.stats!, reportedAt: '2000-01-01T00:00:00.000Z' } });
      const start = performance.now();
      ingest();
      const seconds = (performance.now() - start) / 1000;
      return { case: `pool of ${size.toLocaleString('en')} nodes`, figure: messages / seconds, unit: 'stats/s', target: { op: '>=', value: 10_000 } };
    });
  },
};

/** decidePool on pools of every size: the scale-down path (candidate sort) and the scale-up path (limits). */
const decideBench: Bench = {
  name: 'decide',
  description: 'decidePool median time, full day of demand history, median gears per node computed from stats',
  run(options) {
    const config = benchConfig();
    const poolConfig = config.pools[0]!;
    const rows: Row[] = [];
    const scenarios: Array<{ label: string; gears: (i: number) => number; pool: Partial<PoolRecord>; expect: string }> = [
      { label: 'scale-down', gears: (i) => 10 + (i % 30), pool: { lowSince: new Date(NOW.getTime() - 30 * MINUTE).toISOString() }, expect: 'scale-down' },
      // 97..100 gears of 100 (0.985): above the default scale-up threshold (0.98).
      { label: 'scale-up', gears: (i) => 97 + (i % 4), pool: { highSince: new Date(NOW.getTime() - 30 * MINUTE).toISOString() }, expect: 'scale-up' },
    ];
    for (const scenario of scenarios) {
      for (const size of poolSizes(options)) {
        const nodes = poolNodes(size, scenario.gears);
        const history = fullHistory(nodes.reduce((sum, n) => sum + (n.stats?.activeGears ?? 0), 0));
        const input: PoolEvaluationInput = {
          now: NOW,
          config,
          poolConfig,
          pool: { pool: 'd1/small', district: 'd1', profile: 'small', version: 7, demandHistory: history, ...scenario.pool },
          nodes,
          allNodes: nodes,
          drains: [],
        };
        const first = decidePool(input);
        if (first.decision.kind !== scenario.expect) {
          throw new Error(`bench ${scenario.label} ${size}: expected ${scenario.expect}, got ${first.decision.kind}: ${first.decision.reason}`);
        }
        const runs = repetitions(options, size >= 10_000 ? 15 : 51);
        for (let i = 0; i < repetitions(options, 5); i++) decidePool(input); // warm-up
        const times: number[] = [];
        for (let i = 0; i < runs; i++) {
          const start = performance.now();
          decidePool(input);
          times.push(performance.now() - start);
        }
        rows.push({
          case: `${scenario.label}, pool of ${size.toLocaleString('en')} nodes`,
          figure: median(times),
          unit: 'ms',
          ...(size === 10_000 ? { target: { op: '<' as const, value: 20 } } : {}),
        });
      }
    }
    return rows;
  },
};

/** planDrain: where the 200 gears of a draining node go in a 1,000-node district (gear lists on every node, reservations of another drain). */
const planBench: Bench = {
  name: 'plan',
  description: 'planDrain median time: 200 gears (40 apps, mixed sizes) into 1,000 active nodes with 40 listed gears each and 300 reserved slots',
  run(options) {
    const apps = 40;
    const nodes = poolNodes(1_001, (i) => 20 + (i % 40)).map((node, i) => ({
      ...node,
      stats: {
        ...node.stats!,
        reportedAt: NOW.toISOString(),
        gears: Array.from({ length: 40 }, (_, g) => ({ uuid: `n${i}g${g}`, app: `app-${(i * 7 + g) % (apps * 5)}`, size: 'small' })),
      },
    }));
    const source = nodes[0]!;
    const gears = Array.from({ length: 200 }, (_, g) => ({ uuid: `src-${g}`, app: `app-${g % apps}`, size: g % 10 === 0 ? 'medium' : 'small' }));
    const reserved = new Map<string, number>();
    for (let r = 0; r < 300; r++) reserved.set(`node-${2 + ((r * 13) % 999)}.example.com`, 1);
    const input = {
      sourceNodeId: source.nodeId,
      pool: 'd1/small',
      gears,
      nodes,
      reserved,
      fillFraction: 0.8,
      antiAffinity: 'preferred' as const,
      now: NOW,
      statsMaxAge: 5 * MINUTE,
    };
    const first = planDrain(input);
    if (first.unplaced.length > 0 || first.placements.length !== 200) throw new Error(`bench plan: expected 200 placements, got ${first.placements.length}`);
    for (let i = 0; i < repetitions(options, 5); i++) planDrain(input); // warm-up
    const times: number[] = [];
    for (let i = 0; i < repetitions(options, 51); i++) {
      const start = performance.now();
      planDrain(input);
      times.push(performance.now() - start);
    }
    return [{ case: '200 gears into a 1,000-node district', figure: median(times), unit: 'ms', target: { op: '<', value: 10 } }];
  },
};

/** Every benchmark; add new entries here. */
export const BENCHES: Bench[] = [ingestBench, decideBench, planBench, coldStartBench];

// ---------------------------------------------------------------------------
// Runner.

function format(value: number): string {
  if (value >= 1000) return Math.round(value).toLocaleString('en');
  if (value >= 10) return value.toFixed(1);
  return value.toFixed(3);
}

function main(): void {
  const args = process.argv.slice(2);
  const options: BenchOptions = { quick: args.includes('quick') };
  const filters = args.filter((arg) => arg !== 'quick');
  const selected = BENCHES.filter((bench) => filters.length === 0 || filters.some((f) => bench.name.includes(f)));
  if (selected.length === 0) {
    console.error(`no benchmark matches ${filters.join(', ')}; known: ${BENCHES.map((b) => b.name).join(', ')}`);
    process.exitCode = 2;
    return;
  }
  const table: string[][] = [['bench', 'case', 'figure', 'target', 'result']];
  let failed = 0;
  for (const bench of selected) {
    console.log(`${bench.name}: ${bench.description}`);
    for (const row of bench.run(options)) {
      let result = '';
      let target = '';
      if (row.target) {
        const ok = row.target.op === '>=' ? row.figure >= row.target.value : row.figure < row.target.value;
        // Quick runs are too short to measure: their figures only show every path still runs.
        if (!ok && !options.quick) failed++;
        result = options.quick ? (ok ? 'pass' : 'miss (quick)') : ok ? 'PASS' : 'FAIL';
        target = `${row.target.op} ${format(row.target.value)} ${row.unit}`;
      }
      table.push([bench.name, row.case, `${format(row.figure)} ${row.unit}`, target, result]);
    }
  }
  const widths = table[0]!.map((_, col) => Math.max(...table.map((line) => line[col]!.length)));
  console.log('');
  for (const [i, line] of table.entries()) {
    console.log(line.map((cell, col) => (col === 2 ? cell.padStart(widths[col]!) : cell.padEnd(widths[col]!))).join('  ').trimEnd());
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
  console.log('');
  if (options.quick) console.log(`quick run: ${table.length - 1} figures; targets are checked by a full run (npm run bench)`);
  else console.log(failed === 0 ? 'all targets met' : `${failed} target(s) missed`);
  if (failed > 0) process.exitCode = 1;
}

// `npm run bench -- replay [--days N] [--profile DIR]`: the replay's speed and memory by cluster size (scripts/bench-replay.ts).
if (process.argv[2] === 'replay') {
  import('./bench-replay.js')
    .then(({ replayBench }) => replayBench(process.argv.slice(3)))
    .catch((error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exitCode = 2;
    });
} else if (process.argv[2] === 'bill') {
  void import('./bench-bill.js').then((bill) => bill.billBench(process.argv.slice(3)));
} else if (process.argv[2] === 'stats-batch') {
  // `npm run bench -- stats-batch`: what one stats batch reads at 2,000 nodes (scripts/bench-stats-batch.ts).
  void import('./bench-stats-batch.js').then((bench) => bench.statsBatchBench());
} else if (process.argv[2] === 'tune') {
  void import('./bench-tune.js').then((tune) => tune.runTune(process.argv.slice(3)));
} else if (process.argv[2] === 'heldout') {
  void import('./bench-heldout.js').then((heldout) => heldout.runHeldout(process.argv.slice(3)));
} else if (process.argv[2] === 'suite') {
  void import('./bench-suite.js').then((suite) => suite.runSuite(process.argv.slice(3)));
} else {
  main();
}
