/**
 * `npm run bench -- stats-batch`: what one stats batch of the threshold
 * evaluator reads from the state table at 2,000 nodes (20 pools of 100, each
 * node with its stats), in DynamoDB read capacity (estimated from each
 * record's size: lib/adapters/memory/metered-store.ts), and the records and
 * bytes read, which the batch holds in memory while it decides.
 *
 * Cases: a batch whose pool is due (the common case: it reads that pool),
 * one whose pool was evaluated within evaluationInterval (reads no node),
 * and one that decides a scale-up (reads every pool once: maxNodesTotal and
 * the resource limits count all nodes). Before issue 18 (2h) every batch
 * that evaluated any pool read every node, as the scale-up case does now:
 * the ratio of the two is printed.
 */
import { emptyMeter, meteredStore, type ReadMeter } from '../lib/adapters/memory/metered-store.js';
import { InMemoryStateStore } from '../lib/adapters/memory/state-store.js';
import { MemoryLog } from '../lib/adapters/memory/log.js';
import { InMemoryMetrics } from '../lib/adapters/memory/metrics.js';
import { ThresholdEvaluator } from '../lib/app/evaluate.js';
import { parseConfig } from '../lib/config/index.js';
import type { NodeStatsMessage } from '../lib/messages/index.js';
import type { Queue } from '../lib/ports/queue.js';

const POOLS = 20;
const PER_POOL = 100;
const BATCH = 10;

const queue: Queue = { send: async () => ({ failed: [] }) } as unknown as Queue;

export async function statsBatchBench(): Promise<void> {
  const profiles = Array.from({ length: POOLS }, (_, i) => `p${i}`);
  const config = parseConfig({
    limits: { maxNodesTotal: 10_000 },
    scaleUp: { forecast: { enabled: false } },
    pools: [
      ...profiles.map((profile) => ({ district: 'd1', profile, max: 500, gearsPerNode: 100, naming: { base: profile } })),
      { district: 'd1', profile: 'hot', max: 10, gearsPerNode: 100, naming: { base: 'hot' } },
    ],
  });
  const store = new InMemoryStateStore();
  const start = new Date('2026-11-24T04:00:00.000Z');
  let now = start;
  const message = (nodeId: string, profile: string, activeGears: number): NodeStatsMessage => ({
    type: 'node-stats', v: 1, nodeId, district: 'd1', profile, activeGears, maxActiveGears: 100, reportedAt: now.toISOString(),
  });
  const seed = new ThresholdEvaluator({ store, queue, clock: { now: () => now }, metrics: new InMemoryMetrics(), log: new MemoryLog() }, config);
  for (const profile of profiles) {
    // Adopted by their first stats, as a cluster nodescaler takes over.
    await seed.handleBatch(Array.from({ length: PER_POOL }, (_, n) => ({ id: `s${n}`, message: message(`${profile}-${n}.example.com`, profile, 50) })));
  }
  await seed.handleBatch([0, 1].map((n) => ({ id: `h${n}`, message: message(`hot-${n}.example.com`, 'hot', 50) })));
  now = new Date(start.getTime() + 5 * 60_000);

  const measure = async (label: string, profile: string, gears: number): Promise<ReadMeter & { label: string }> => {
    const meter = emptyMeter();
    const evaluator = new ThresholdEvaluator({ store: meteredStore(store, meter), queue, clock: { now: () => now }, metrics: new InMemoryMetrics(), log: new MemoryLog() }, config);
    const count = profile === 'hot' ? 2 : BATCH;
    const items = Array.from({ length: count }, (_, n) => ({ id: `b${n}`, message: message(`${profile}-${n}.example.com`, profile, gears) }));
    const { outcomes } = await evaluator.handleBatch(items);
    return { ...meter, label: `${label} (${outcomes.map((o) => o.kind).join(', ')})` };
  };

  const due = await measure('pool due', 'p3', 50);
  now = new Date(now.getTime() + 10_000);
  const skipped = await measure('pool evaluated 10s ago', 'p3', 50);
  const scaleUp = await measure('scale-up', 'hot', 99);

  console.log(`stats-batch: one batch of ${BATCH} stats at ${POOLS * PER_POOL + 2} nodes in ${POOLS + 1} pools`);
  const rows = [due, skipped, scaleUp].map((m) => [m.label, m.rcu.toFixed(1), String(m.calls.get('listNodes') ?? 0), String(m.records), (m.bytes / 1024).toFixed(1)]);
  const table = [['case', 'RCU (est.)', 'node lists', 'records read', 'KiB read (held)'], ...rows];
  const widths = table[0]!.map((_, col) => Math.max(...table.map((line) => line[col]!.length)));
  for (const [i, line] of table.entries()) {
    console.log(line.map((cell, col) => (col === 0 ? cell.padEnd(widths[col]!) : cell.padStart(widths[col]!))).join('  '));
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
  console.log('');
  console.log(`before 2h, every batch that evaluated a pool read every node (the scale-up row): ${(scaleUp.rcu / due.rcu).toFixed(1)}x the RCUs and ${(scaleUp.bytes / due.bytes).toFixed(1)}x the bytes of a due pool's batch now`);
}
