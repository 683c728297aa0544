/**
 * What the renewal diagnostics (diag-expiry.ts, diag-drift.ts) read back from a replay's state table: every node the
 * pool ever had, how late the due ones lived, and why the decision log says renewals waited.
 */
import type { NodeRecord } from '../lib/domain/model.js';
import type { StateStore } from '../lib/ports/state-store.js';

/** Every node the pool ever had: released nodes leave its listing, but the table still has them by name (`<base>-<n>.<domain>`, n counting up). */
export async function everyNode(store: StateStore, pool: string): Promise<Map<string, NodeRecord>> {
  const live = await store.listNodes(pool);
  const nodes = new Map<string, NodeRecord>(live.map((node) => [node.nodeId, node]));
  const sample = live[0]?.nodeId ?? '';
  for (let n = 1, misses = 0; misses < 50; n++) {
    const nodeId = sample.replace(/-\d+\./, `-${n}.`);
    const found = nodes.get(nodeId) ?? (await store.getNode(nodeId));
    if (found) nodes.set(nodeId, found);
    misses = found ? 0 : misses + 1;
  }
  return nodes;
}

/** When the node left (released), or `endMs` if it was still there. */
export function goneAt(node: NodeRecord, endMs: number): number {
  return node.state === 'terminated' ? Date.parse(node.stateChangedAt) : endMs;
}

/** `median m, p90 p, max x` of hours, sorted here. */
export function hoursSummary(hours: number[]): string {
  const sorted = [...hours].sort((a, b) => a - b);
  const at = (q: number) => (sorted.length === 0 ? '-' : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(2));
  return `median ${at(0.5)}, p90 ${at(0.9)}, max ${sorted.length ? sorted.at(-1)!.toFixed(2) : '-'}; more than 1 h: ${sorted.filter((h) => h > 1).length}`;
}

/** Prints how many decisions the pool took and the minutes a renewal waited, grouped by why (nodes, gears and times named apart). */
export async function printRenewalWaits(store: StateStore, pool: string): Promise<void> {
  const decisions = await store.listDecisionsSince(pool, '2000-01-01T00:00:00.000Z');
  const waits = new Map<string, number>();
  for (const decision of decisions) {
    const why = /renewal of \d+ [a-z ]+ node\(s\) waits: (.*)$/.exec(decision.reason)?.[1];
    if (why === undefined) continue;
    const kind = why
      .replace(/[\w.-]+\.sim\.local/g, 'NODE')
      .replace(/gear \S+ \([^)]*\)/g, 'gear G')
      .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'T')
      .replace(/ until \d\d:\d\d/g, ' until T')
      .slice(0, 140);
    waits.set(kind, (waits.get(kind) ?? 0) + 1);
  }
  console.log(`decisions ${decisions.length}; minutes a renewal waited, by why:`);
  for (const [kind, minutes] of [...waits].sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(`${String(minutes).padStart(7)}  ${kind}`);
}
