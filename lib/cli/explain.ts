/**
 * `nodescaler explain [POOL]`: why a pool does (or does not) scale. Right
 * now: the evaluator's own rules run on the current state (a dry run of
 * decidePool, nothing written) and every scale-down and scale-up condition
 * with what holds it back until when, and the candidates refused with their
 * reasons. Before: the latest entries of the pool's decision log (decisions
 * and non-decisions, their reasons and details) as the functions wrote them.
 */
import { gateDecision } from '../domain/controls.js';
import { controlsView, renderControls, type ControlsView } from './controls-view.js';
import type { RejectedCandidate } from '../domain/decision.js';
import { explainPool, type Check } from '../domain/explain.js';
import type { DecisionLogEntry, PoolId } from '../domain/model.js';
import type { StateStore } from '../ports/state-store.js';
import { clockTime, ratio, when, wrap, type Style } from './render.js';
import { evaluationInput, type PoolState, type Snapshot } from './snapshot.js';

/** Entries read from the log to find the latest action when the shown ones are all no-action. */
const LOOKBACK = 100;

export interface NowView {
  decision: { kind: string; reason: string; count?: number; nodeId?: string; rejected?: RejectedCandidate[]; heldBack?: string };
  utilization: number | null;
  scaleDown: Check[];
  candidates: { strategy: string; wouldDrain: string | null; rejected: RejectedCandidate[] };
  scaleUp: Check[];
}

export interface PoolExplainView {
  pool: PoolId;
  configured: boolean;
  /** Null for a pool the configuration does not have: the evaluator does not evaluate it. */
  now: NowView | null;
  /** Pauses, shadow mode, overrides, schedule: what the evaluator applies on top of `now`'s decision. */
  controls: ControlsView;
  /** Newest first. */
  decisions: DecisionLogEntry[];
  /** The newest entry that was not a no-action, if the log holds one within the last LOOKBACK entries. */
  lastAction: DecisionLogEntry | null;
}

export interface ExplainView {
  target: string;
  at: string;
  pools: PoolExplainView[];
}

export async function explainView(store: StateStore, snapshot: Snapshot, pools: readonly PoolState[], target: string, limit: number): Promise<ExplainView> {
  const views = await Promise.all(
    pools.map(async (pool): Promise<PoolExplainView> => {
      const log = await store.listDecisions(pool.pool, Math.max(limit, LOOKBACK));
      // The gears' recent moves, so a candidate refused for maxMovesPerGear shows here as the evaluator sees it.
      const listed = pool.nodes.flatMap((node) => (node.state === 'active' ? (node.stats?.gears ?? []).map((gear) => gear.uuid) : []));
      const moveHistory = listed.length > 0 ? await store.getGearMoves(listed) : undefined;
      return {
        pool: pool.pool,
        configured: pool.config !== undefined,
        now: nowView(snapshot, pool, moveHistory),
        controls: controlsView(snapshot, pool),
        decisions: log.slice(0, limit),
        lastAction: log.find((entry) => entry.kind !== 'no-action') ?? null,
      };
    }),
  );
  return { target, at: snapshot.now.toISOString(), pools: views };
}

export function nowView(snapshot: Snapshot, pool: PoolState, moveHistory?: ReadonlyMap<string, readonly string[]>): NowView | null {
  const input = evaluationInput(snapshot, pool);
  if (!input) return null;
  const explained = explainPool(moveHistory ? { ...input, moveHistory } : input);
  const d = explained.evaluation.decision;
  const u = explained.evaluation.utilization.utilization;
  const gears = d.kind === 'scale-down' ? (pool.nodes.find((n) => n.nodeId === d.nodeId)?.stats?.activeGears ?? 0) : undefined;
  const gate = gateDecision(d, pool.pool, pool.effective?.mode ?? 'active', snapshot.controls.pauses, snapshot.now, gears);
  return {
    decision: {
      kind: d.kind,
      reason: d.reason,
      ...(d.kind === 'scale-up' ? { count: d.count } : {}),
      ...(d.kind === 'scale-down' ? { nodeId: d.nodeId } : {}),
      ...(d.kind !== 'scale-up' && d.rejected?.length ? { rejected: d.rejected } : {}),
      // Paused or in shadow mode: what the evaluator would log instead of acting.
      ...(gate.act ? {} : { heldBack: gate.reason }),
    },
    utilization: Number.isFinite(u) ? Math.round(u * 1000) / 1000 : null,
    scaleDown: explained.scaleDown,
    candidates: { strategy: explained.candidates.strategy, wouldDrain: explained.candidates.nodeId ?? null, rejected: explained.candidates.rejected },
    scaleUp: explained.scaleUp,
  };
}

// ---------------------------------------------------------------------------
// Text.

export function renderExplain(view: ExplainView, options: { style: Style; width?: number }): string[] {
  const { style: s, width } = options;
  const now = new Date(view.at);
  const lines: string[] = [...wrap(`${s.bold('nodescaler explain')} · ${view.target} · ${clockTime(view.at, now)}`, width)];
  for (const pool of view.pools) {
    lines.push('', s.bold(`pool ${pool.pool}`));
    lines.push(...renderControls(pool.controls, options));
    if (pool.now) lines.push(...renderNow(pool.now, now, options));
    else lines.push(...wrap(s.yellow('not in the configuration: the evaluator does not evaluate it (its log is below)'), width, '  '));
    lines.push(...renderLog(pool, now, options));
  }
  return lines;
}

export function decisionWord(kind: string, s: Style): string {
  return kind === 'scale-up' ? s.cyan(kind) : kind === 'scale-down' ? s.cyan(kind) : kind === 'failure' || kind === 'refused' ? s.red(kind) : kind;
}

function renderNow(view: NowView, now: Date, options: { style: Style; width?: number }): string[] {
  const { style: s, width } = options;
  const lines: string[] = ['  right now (the evaluator\'s rules on the current state; nothing written):'];
  lines.push(...wrap(`${decisionWord(view.decision.kind, s)}: ${view.decision.reason}`, width, '    '));
  if (view.decision.heldBack) lines.push(...wrap(s.yellow(`held back, nothing sent: ${view.decision.heldBack}`), width, '    '));
  const checks = (title: string, list: Check[]) => {
    lines.push(`  ${title}:`);
    const nameWidth = Math.max(...list.map((check) => check.name.length));
    for (const check of list) {
      const until = check.until ? `; until ${when(check.until, now)}` : '';
      lines.push(...wrap(`${check.detail}${until}`, width, `    ${s.mark(check.ok)} ${check.name.padEnd(nameWidth)}  `));
    }
  };
  checks('scale-down conditions', view.scaleDown);
  const c = view.candidates;
  lines.push(...wrap(`candidates (${c.strategy}): ${c.wouldDrain ? `would drain ${c.wouldDrain} if every condition held` : 'none can be drained'}`, width, '    '));
  for (const r of c.rejected) lines.push(...wrap(`${s.red('refused')} ${r.nodeId}: ${r.reason}`, width, '      '));
  checks('scale-up conditions', view.scaleUp);
  return lines;
}

function renderLog(pool: PoolExplainView, now: Date, options: { style: Style; width?: number }): string[] {
  const { style: s, width } = options;
  if (pool.decisions.length === 0) return ['  decision log: empty (nothing evaluated yet, or the entries expired)'];
  const lines = [`  decision log (newest first, ${pool.decisions.length} shown):`];
  for (const group of similarRuns(pool.decisions)) {
    const entry = group[0]!;
    const head = `    ${clockTime(entry.at, now)}  `;
    lines.push(...wrap(`${decisionWord(entry.kind, s)}: ${entry.reason}`, width, head));
    const pad = ' '.repeat(head.length);
    for (const detail of detailLines(entry)) lines.push(...wrap(s.dim(detail), width, pad));
    if (group.length > 1) lines.push(...wrap(s.dim(`and ${group.length - 1} more like it back to ${clockTime(group.at(-1)!.at, now)}`), width, pad));
  }
  if (pool.lastAction && !pool.decisions.includes(pool.lastAction)) {
    lines.push(...wrap(`last action: ${clockTime(pool.lastAction.at, now)} ${decisionWord(pool.lastAction.kind, s)}: ${pool.lastAction.reason}`, width, '    '));
  }
  return lines;
}

/**
 * Consecutive entries that say the same but for their numbers (an unchanged
 * pool evaluated every 30 s), grouped so the log reads as what changed.
 */
function similarRuns(entries: readonly DecisionLogEntry[]): DecisionLogEntry[][] {
  const shape = (entry: DecisionLogEntry) => `${entry.kind}|${entry.decisionId ?? ''}|${entry.reason.replace(/\d+(?:\.\d+)?[a-z]*/g, '#')}`;
  const groups: DecisionLogEntry[][] = [];
  for (const entry of entries) {
    const last = groups.at(-1);
    if (last && entry.kind === 'no-action' && shape(last[0]!) === shape(entry)) last.push(entry);
    else groups.push([entry]);
  }
  return groups;
}

/** The details of a log entry an operator asks about: the decision id, clamps, the refused candidates. */
function detailLines(entry: DecisionLogEntry): string[] {
  const d = (entry.details ?? {}) as Record<string, unknown>;
  const lines: string[] = [];
  const facts: string[] = [];
  if (entry.by) facts.push(`by ${entry.by}`);
  if (entry.decisionId) facts.push(`decision ${entry.decisionId}`);
  if (typeof d.trigger === 'string') facts.push(`on ${d.trigger}`);
  if (typeof d.utilization === 'number' || d.utilization === null) facts.push(`utilization ${ratio(d.utilization as number | null)}`);
  if (typeof d.count === 'number') facts.push(`count ${d.count}${typeof d.wanted === 'number' && d.wanted !== d.count ? ` of ${d.wanted} wanted` : ''}`);
  if (Array.isArray(d.clampedBy) && d.clampedBy.length > 0) {
    facts.push(`clamped by ${(d.clampedBy as Array<{ limit?: string; value?: unknown }>).map((c) => `${c.limit}=${String(c.value)}`).join(', ')}`);
  }
  if (facts.length > 0) lines.push(facts.join(' · '));
  if (Array.isArray(d.rejected)) {
    for (const r of d.rejected as Array<{ nodeId?: unknown; reason?: unknown }>) lines.push(`refused ${String(r.nodeId)}: ${String(r.reason)}`);
  }
  return lines;
}
