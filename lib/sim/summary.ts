import { formatMoveCauses } from './move-causes.js';
import type { PolicyResult } from './results.js';

/** Adds savings against static-peak (when it ran) to every row. */
export function withSavings(results: PolicyResult[]): PolicyResult[] {
  const staticPeak = results.find((r) => r.policy === 'static-peak');
  if (!staticPeak) return results;
  return results.map((r) => ({ ...r, savingsPerMonth: staticPeak.nodeCostPerMonth - r.nodeCostPerMonth }));
}

/** The summary table's rows, as printed and as the README shows them. */
export function summaryRows(results: PolicyResult[]): Array<Record<string, string | number>> {
  return results.map((r) => ({
    policy: r.policy,
    nodeHours: r.nodeHours.toFixed(1),
    'x oracle': r.ratioToOracle.toFixed(3),
    'unplaced %': (r.unplacedShare * 100).toFixed(3),
    ups: r.scaleUps,
    downs: r.scaleDowns,
    maxNodes: r.maxNodes,
    gearMoves: r.gearMoves,
    'moves/gear-day': r.movesPerGearDay.toFixed(3),
    p95: r.movesPerGearP95,
    max: r.movesPerGearMax,
    'twice/7d': r.gearsMovedTwiceIn7d,
    disruptive: r.disruptiveMoves,
    drains: r.drainsStarted,
    aborted: r.drainsAborted,
    '$ nodes/mo': r.nodeCostPerMonth.toFixed(0),
    '$ saved/mo': r.savingsPerMonth === undefined ? '-' : r.savingsPerMonth.toFixed(0),
    '$ self/mo': r.autoscalerCostPerMonth === undefined ? '-' : r.autoscalerCostPerMonth.toFixed(2),
    '$ self/node-mo': r.autoscalerCostPerNodeMonth === undefined ? '-' : r.autoscalerCostPerNodeMonth.toFixed(4),
    deadLetters: r.deadLetters,
    violations: r.invariantViolations,
  }));
}

/** Rows as an aligned text table (first column left, the others right). */
export function formatTable(rows: Array<Record<string, string | number>>): string {
  const columns = Object.keys(rows[0] ?? {});
  const widths = columns.map((c) => rows.reduce((w, r) => Math.max(w, String(r[c]).length), c.length));
  const line = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...rows.map((r) => line(columns.map((c) => String(r[c]))))].join('\n');
}

export interface GoalCheck {
  text: string;
  met: boolean;
}

/**
 * The product's promise (README, "The goal line"): with default settings,
 * node-hours <= 1.05 x clairvoyant-4h, gear moves <= 1.5 x clairvoyant-4h,
 * unplaced <= 0.1 % of gear-minutes, no invariant violation, fewer node-hours
 * and fewer moves than karpenter, fewer node-hours and no more waiting
 * gear-minutes than cluster-autoscaler. A check whose reference did not run
 * is left out and named.
 */
export function goalChecks(results: PolicyResult[]): GoalCheck[] | undefined {
  const ours = results.find((r) => r.policy === 'nodescaler');
  if (!ours) return undefined;
  const ref = (policy: PolicyResult['policy']) => results.find((r) => r.policy === policy);
  const checks: GoalCheck[] = [];
  const clairvoyant = ref('clairvoyant-4h');
  if (clairvoyant) {
    const hours = ours.nodeHours / Math.max(clairvoyant.nodeHours, 1e-9);
    checks.push({ text: `node-hours ${hours.toFixed(3)} x clairvoyant-4h <= 1.05`, met: hours <= 1.05 });
    const moves = clairvoyant.gearMoves > 0 ? ours.gearMoves / clairvoyant.gearMoves : ours.gearMoves === 0 ? 0 : Infinity;
    checks.push({ text: `gear moves ${moves.toFixed(2)} x clairvoyant-4h <= 1.5`, met: moves <= 1.5 });
  }
  checks.push({ text: `unplaced ${(ours.unplacedShare * 100).toFixed(3)} % <= 0.1 %`, met: ours.unplacedShare <= 0.001 });
  checks.push({ text: `invariant violations ${ours.invariantViolations} = 0`, met: ours.invariantViolations === 0 });
  const karpenter = ref('karpenter');
  if (karpenter) {
    checks.push({ text: `node-hours < karpenter's (${ours.nodeHours.toFixed(0)} vs ${karpenter.nodeHours.toFixed(0)})`, met: ours.nodeHours < karpenter.nodeHours });
    checks.push({ text: `moves < karpenter's (${ours.gearMoves} vs ${karpenter.gearMoves})`, met: ours.gearMoves < karpenter.gearMoves });
  }
  const ca = ref('cluster-autoscaler');
  if (ca) {
    checks.push({ text: `node-hours < cluster-autoscaler's (${ours.nodeHours.toFixed(0)} vs ${ca.nodeHours.toFixed(0)})`, met: ours.nodeHours < ca.nodeHours });
    checks.push({
      text: `waiting gear-min <= cluster-autoscaler's (${ours.unplacedGearMinutes.toFixed(0)} vs ${ca.unplacedGearMinutes.toFixed(0)})`,
      met: ours.unplacedGearMinutes <= ca.unplacedGearMinutes,
    });
  }
  return checks;
}

export function goalLine(results: PolicyResult[]): string | undefined {
  const checks = goalChecks(results);
  if (!checks) return undefined;
  const met = checks.filter((c) => c.met).length;
  const missing = ['clairvoyant-4h', 'karpenter', 'cluster-autoscaler'].filter((p) => !results.some((r) => r.policy === p));
  return (
    `goal (${met}/${checks.length} met${missing.length > 0 ? `; not checked without ${missing.join(', ')}` : ''}): ` +
    checks.map((c) => `${c.text} ${c.met ? 'MET' : 'MISSED'}`).join('; ')
  );
}

/** nodescaler's moves by cause (lib/sim/move-causes.ts), one line; undefined when the run did not break them down. */
export function moveCausesLine(results: PolicyResult[]): string | undefined {
  const causes = results.find((r) => r.policy === 'nodescaler')?.moveCauses;
  return causes ? formatMoveCauses(causes) : undefined;
}
