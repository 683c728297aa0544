/**
 * The operator controls of one pool as `status` and `explain` show them:
 * pauses in force (who, why, until when), shadow mode, runtime overrides,
 * the schedule raising min now, and drains waiting for their replacement.
 */
import { describePause, isSent, pausesOf, type Mode, type OverrideValue, type PauseRecord, type PendingDrain } from '../domain/controls.js';
import type { PoolState, Snapshot } from './snapshot.js';
import { type Style, wrap } from './render.js';

export interface ControlsView {
  mode: Mode;
  paused: Array<PauseRecord & { text: string }>;
  overrides: Record<string, OverrideValue>;
  schedule: { min: number; cron: string; until: string } | null;
  pendingDrains: PendingDrain[];
}

export function controlsView(snapshot: Snapshot, pool: PoolState): ControlsView {
  const { controls, now } = snapshot;
  return {
    mode: pool.effective?.mode ?? snapshot.config.mode ?? 'active',
    paused: pausesOf(controls.pauses, pool.pool, now).map((p) => ({ ...p, text: describePause(p) })),
    overrides: { ...pool.effective?.overridden },
    schedule: pool.effective?.schedule ?? null,
    pendingDrains: controls.pendingDrains.filter((p) => p.pool === pool.pool),
  };
}

export function renderControls(view: ControlsView | undefined, options: { style: Style; width?: number }, indent = '  '): string[] {
  if (!view) return [];
  const { style: s, width } = options;
  const lines: string[] = [];
  for (const pause of view.paused) lines.push(...wrap(`${s.yellow('paused')}: ${pause.text}`, width, indent));
  if (view.mode === 'shadow') lines.push(...wrap(`${s.yellow('shadow mode')}: decisions are logged as what they would do, nothing acts (nodescaler shadow-report)`, width, indent));
  const overrides = Object.entries(view.overrides);
  if (overrides.length > 0) {
    lines.push(...wrap(`overrides: ${overrides.map(([key, value]) => `${key}=${Array.isArray(value) ? value.join(',') : String(value)}`).join(', ')} (nodescaler overrides)`, width, indent));
  }
  if (view.schedule) lines.push(...wrap(`scheduled: min ${view.schedule.min} (cron "${view.schedule.cron}") until ${view.schedule.until}`, width, indent));
  for (const pending of view.pendingDrains) {
    const replacement = pending.replacementDecisionId === undefined ? '' : ` (replacement ${pending.replacementDecisionId} joined)`;
    const what =
      pending.cancelledAt !== undefined
        ? `cancelled by ${pending.cancelledBy ?? 'an operator'} at ${pending.cancelledAt} before it began; ${isSent(pending) ? 'the gear mover refuses its message' : 'it will not start'}`
        : !isSent(pending)
          ? `after replacement ${pending.replacementDecisionId} joins`
          : `sent at ${pending.sentAt ?? pending.at}${replacement}, for the gear mover to begin; counted as draining meanwhile`;
    lines.push(...wrap(`waiting: drain of ${pending.nodeId} ${what} (by ${pending.by} at ${pending.at}: ${pending.reason})`, width, indent));
  }
  return lines;
}
