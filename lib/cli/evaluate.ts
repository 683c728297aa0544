/**
 * `nodescaler evaluate --dry-run [POOL]`: the threshold evaluator's decision
 * for every pool on the current state (decidePool, with the inputs the
 * evaluator assembles), printed, nothing written and nothing sent.
 */
import type { PoolId } from '../domain/model.js';
import { decisionWord, nowView, type NowView } from './explain.js';
import { clockTime, ratio, wrap, type Style } from './render.js';
import type { PoolState, Snapshot } from './snapshot.js';

export interface DryRunView {
  target: string;
  at: string;
  dryRun: true;
  pools: Array<{ pool: PoolId; configured: boolean; utilization: number | null; decision: NowView['decision'] | null }>;
}

export function dryRunView(snapshot: Snapshot, pools: readonly PoolState[], target: string): DryRunView {
  return {
    target,
    at: snapshot.now.toISOString(),
    dryRun: true,
    pools: pools.map((pool) => {
      const view = nowView(snapshot, pool);
      return { pool: pool.pool, configured: pool.config !== undefined, utilization: view?.utilization ?? null, decision: view?.decision ?? null };
    }),
  };
}

export function renderDryRun(view: DryRunView, options: { style: Style; width?: number }): string[] {
  const { style: s, width } = options;
  const now = new Date(view.at);
  const lines = wrap(`${s.bold('nodescaler evaluate --dry-run')} · ${view.target} · ${clockTime(view.at, now)} · nothing written, nothing sent`, width);
  for (const pool of view.pools) {
    const util = pool.decision ? `utilization ${pool.utilization === null ? 'inf' : ratio(pool.utilization)}` : '';
    const kind = pool.decision ? decisionWord(pool.decision.kind, s) : s.yellow('not evaluated');
    lines.push('', ...wrap(`${s.bold(pool.pool)}  ${util}${util ? '  ' : ''}would do: ${kind}`, width));
    lines.push(...wrap(pool.decision ? pool.decision.reason : 'not in the configuration: the evaluator does not evaluate it', width, '    '));
    if (pool.decision?.heldBack) lines.push(...wrap(s.yellow(`held back, nothing sent: ${pool.decision.heldBack}`), width, '    '));
  }
  lines.push('', ...wrap(s.dim('The evaluator decides on its own schedule (stats and a one-minute tick); `nodescaler explain POOL` shows every condition.'), width));
  return lines;
}
