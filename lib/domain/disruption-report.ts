/**
 * What the drains of a period cost the tenants (`nodescaler disruption`): a
 * gear move stops a gear, copies it and starts it elsewhere, so an operator
 * answering a tenant ("was my application restarted on Tuesday?") or weighing
 * the hosts saved against the restarts needs the moves by pool, by cause and
 * by application, next to the nodes the drains emptied. Counted from the
 * drains' own records, which the gear mover writes as it moves: the decision
 * log and the metrics say what was decided, these what happened. Pure
 * functions of data.
 */
import { isRenewalDrain } from './controls.js';
import type { DrainRecord, PoolId } from './model.js';

/** Why a drain ran: the evaluator's scale-down, its renewal of drifted or expired nodes, an operator, or an urgent one. */
export type DrainCause = 'scale-down' | 'renewal' | 'operator' | 'urgent';
export const DRAIN_CAUSES: readonly DrainCause[] = ['scale-down', 'renewal', 'operator', 'urgent'];

/** How a drain ended: it emptied its node, is still running, or stopped (called off, outgrown, repriced, cancelled) or failed. */
export type DrainOutcome = 'emptied' | 'running' | 'called-off' | 'outgrown' | 'repriced' | 'cancelled' | 'failed';
export const DRAIN_OUTCOMES: readonly DrainOutcome[] = ['emptied', 'running', 'called-off', 'outgrown', 'repriced', 'cancelled', 'failed'];

export interface DisruptionCounts {
  drains: number;
  byCause: Record<DrainCause, number>;
  byOutcome: Record<DrainOutcome, number>;
  /** Gears a drain moved (each stopped and started again elsewhere). */
  gearsMoved: number;
  /** Moved gears their node's agent marked disruptive: each move restarted its tenant's application. */
  tenantRestarts: number;
  /** Moved gears their agent listed stopped or idled (and not disruptive): nothing ran to restart. */
  idleMoved: number;
  /** Moved gears the agent said nothing of either way (an agent that does not mark them, or the broker's listing). */
  unknownMoved: number;
  /** Moves that failed for good (the gear stayed, or the platform lost track of it: docs/RUNBOOK.md). */
  failedMoves: number;
  /** Gears moved more than once in the period, by any drains. */
  gearsMovedAgain: number;
}

export interface AppDisruption {
  app: string;
  pool: PoolId;
  moves: number;
  restarts: number;
  lastMovedAt: string;
}

/** One gear moved, for the application asked about: when, from and to which node, why, and whether it restarted it. */
export interface AppMove {
  at: string;
  pool: PoolId;
  app: string;
  gear: string;
  from: string;
  to: string;
  cause: DrainCause;
  drainId: string;
  /** As the agent marked the gear: true restarted the application, false did not (idle, or a sibling kept serving), null not marked. */
  restart: boolean | null;
}

export interface DisruptionReport {
  since: string;
  until: string;
  pools: Array<{ pool: PoolId } & DisruptionCounts>;
  totals: DisruptionCounts;
  /** Applications by restarts, then moves, then name: the tenants an operator hears from first. */
  apps: AppDisruption[];
  /** Every move of the application asked about (`app`), oldest first; absent when none was asked about. */
  appMoves?: AppMove[];
}

export function drainCause(drain: Pick<DrainRecord, 'kind' | 'decisionId' | 'urgentSince'>): DrainCause {
  if (drain.urgentSince !== undefined || drain.kind === 'interruption') return 'urgent';
  if (isRenewalDrain(drain)) return 'renewal';
  if (drain.kind === 'manual') return 'operator';
  // A redrain finishes a node the decommissioner handed back: the cause of the drain it continues, a scale-down.
  return 'scale-down';
}

export function drainOutcome(drain: Pick<DrainRecord, 'state' | 'calledOffAt' | 'outgrownAt' | 'repricedAt' | 'cancelledAt'>): DrainOutcome {
  if (drain.state === 'completed') return 'emptied';
  if (drain.state === 'active') return 'running';
  if (drain.calledOffAt) return 'called-off';
  if (drain.outgrownAt) return 'outgrown';
  if (drain.repricedAt) return 'repriced';
  if (drain.cancelledAt) return 'cancelled';
  return 'failed';
}

/**
 * The drains started in [since, until), by pool, with their moves counted, and the applications they moved. A move
 * counts as its state stands: `moved` is a gear stopped and started elsewhere, whatever the drain's outcome.
 */
export function summarizeDisruption(drains: readonly DrainRecord[], since: Date, until: Date, options: { topApps?: number; app?: string } = {}): DisruptionReport {
  const { topApps = 10, app: asked } = options;
  const appMoves: AppMove[] = [];
  const from = since.toISOString();
  const to = until.toISOString();
  const inPeriod = drains.filter((drain) => drain.startedAt >= from && drain.startedAt < to);
  const byPool = new Map<PoolId, DisruptionCounts>();
  const moveCounts = new Map<string, number>();
  const apps = new Map<string, AppDisruption>();
  for (const drain of inPeriod) {
    const row = byPool.get(drain.pool) ?? emptyCounts();
    byPool.set(drain.pool, row);
    row.drains++;
    row.byCause[drainCause(drain)]++;
    row.byOutcome[drainOutcome(drain)]++;
    for (const move of drain.moves) {
      if (move.state === 'failed') row.failedMoves++;
      if (move.state !== 'moved') continue;
      const { gear } = move;
      row.gearsMoved++;
      // As status and the TenantRestarts metric count them: the agent's mark decides.
      if (gear.disruptive === true) row.tenantRestarts++;
      else if (gear.idle) row.idleMoved++;
      else if (gear.disruptive === undefined) row.unknownMoved++;
      const times = (moveCounts.get(gear.uuid) ?? 0) + 1;
      moveCounts.set(gear.uuid, times);
      if (times === 2) row.gearsMovedAgain++;
      const key = `${drain.pool}\u0000${gear.app}`;
      const app = apps.get(key) ?? { app: gear.app, pool: drain.pool, moves: 0, restarts: 0, lastMovedAt: '' };
      apps.set(key, app);
      app.moves++;
      if (gear.disruptive === true) app.restarts++;
      const at = move.finishedAt ?? drain.updatedAt;
      if (at > app.lastMovedAt) app.lastMovedAt = at;
      if (gear.app === asked) {
        const restart = gear.disruptive ?? (gear.idle ? false : null);
        appMoves.push({ at, pool: drain.pool, app: gear.app, gear: gear.uuid, from: drain.nodeId, to: move.target, cause: drainCause(drain), drainId: drain.drainId, restart });
      }
    }
  }
  const pools = [...byPool.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([pool, counts]) => ({ pool, ...counts }));
  const ranked = [...apps.values()].sort((a, b) => b.restarts - a.restarts || b.moves - a.moves || a.app.localeCompare(b.app) || a.pool.localeCompare(b.pool));
  const report: DisruptionReport = { since: from, until: to, pools, totals: sumCounts(pools), apps: ranked.slice(0, topApps) };
  if (asked !== undefined) report.appMoves = appMoves.sort((a, b) => a.at.localeCompare(b.at) || a.gear.localeCompare(b.gear));
  return report;
}

function emptyCounts(): DisruptionCounts {
  return {
    drains: 0,
    byCause: Object.fromEntries(DRAIN_CAUSES.map((cause) => [cause, 0])) as Record<DrainCause, number>,
    byOutcome: Object.fromEntries(DRAIN_OUTCOMES.map((outcome) => [outcome, 0])) as Record<DrainOutcome, number>,
    gearsMoved: 0,
    tenantRestarts: 0,
    idleMoved: 0,
    unknownMoved: 0,
    failedMoves: 0,
    gearsMovedAgain: 0,
  };
}

function sumCounts(rows: readonly DisruptionCounts[]): DisruptionCounts {
  const total = emptyCounts();
  for (const row of rows) {
    total.drains += row.drains;
    for (const cause of DRAIN_CAUSES) total.byCause[cause] += row.byCause[cause];
    for (const outcome of DRAIN_OUTCOMES) total.byOutcome[outcome] += row.byOutcome[outcome];
    total.gearsMoved += row.gearsMoved;
    total.tenantRestarts += row.tenantRestarts;
    total.idleMoved += row.idleMoved;
    total.unknownMoved += row.unknownMoved;
    total.failedMoves += row.failedMoves;
    total.gearsMovedAgain += row.gearsMovedAgain;
  }
  return total;
}
