/**
 * `nodescaler disruption [POOL] [--since 7d]`: what the drains started in the
 * period cost the tenants, from the drains' own records (lib/domain/
 * disruption-report.ts): drains by cause and outcome, gears moved, tenant
 * restarts, and the applications restarted most.
 */
import type { Config } from '../config/index.js';
import { DRAIN_CAUSES, summarizeDisruption, type DisruptionCounts, type DisruptionReport } from '../domain/disruption-report.js';
import { DRAIN_STATES, poolIdOf, type PoolId } from '../domain/model.js';
import { notFound } from './exit.js';
import { renderTable, wrap } from './render.js';
import type { OpenTarget } from './target.js';

/** The configured pools and those only the state knows (adopted nodes of a pool the configuration lacks), or the one named. */
async function poolsToRead(target: OpenTarget, config: Config, pool: string | undefined): Promise<PoolId[]> {
  const configured = config.pools.map((p) => poolIdOf(p.district, p.profile));
  const recorded = (await target.store.listPools()).map((record) => record.pool);
  const known = [...new Set([...configured, ...recorded])];
  if (pool === undefined) return known;
  if (!known.includes(pool)) throw notFound(`unknown pool ${JSON.stringify(pool)}`, `pools: ${known.join(', ')} (a pool is district/profile)`);
  return [pool];
}

/** The report, and when the period reaches past what the table keeps, the time before which ended drains have expired. */
export type DisruptionView = DisruptionReport & { expiredBefore?: string };

export async function disruptionReport(
  target: OpenTarget,
  config: Config,
  pool: string | undefined,
  since: Date,
  now: Date,
  options: { topApps: number; app?: string },
): Promise<DisruptionView> {
  const pools = await poolsToRead(target, config, pool);
  const from = since.toISOString();
  const drains = await Promise.all(pools.flatMap((id) => DRAIN_STATES.map((state) => target.store.listDrains(id, state, from))));
  const report = summarizeDisruption(drains.flat(), since, now, options);
  // An ended drain is kept drainHistoryTtl after it ends: a longer period would read as fewer moves than there were.
  const expiredBefore = now.getTime() - config.drainHistoryTtl;
  return since.getTime() < expiredBefore ? { ...report, expiredBefore: new Date(expiredBefore).toISOString() } : report;
}

export function renderDisruption(report: DisruptionView, width: number | undefined): string[] {
  const { totals } = report;
  const lines = [`drains started since ${report.since}`];
  if (report.expiredBefore) lines.push(...wrap(`(drains that ended before ${report.expiredBefore} have expired: drainHistoryTtl keeps an ended drain that long)`, width));
  if (totals.drains === 0) return [...lines, ...wrap('none: no drain started in this period, so no gear was moved', width), ...appMovesLines(report, width)];
  const row = (name: string, c: DisruptionCounts) => [
    name,
    String(c.drains),
    DRAIN_CAUSES.filter((cause) => c.byCause[cause] > 0).map((cause) => `${c.byCause[cause]} ${cause}`).join(', '),
    String(c.byOutcome.emptied),
    String(c.gearsMoved),
    String(c.tenantRestarts),
    String(c.gearsMovedAgain),
    String(c.failedMoves),
  ];
  lines.push(
    ...renderTable(
      [
        { header: 'POOL' },
        { header: 'DRAINS', align: 'right' },
        { header: 'CAUSES', flex: true },
        { header: 'NODES EMPTIED', align: 'right' },
        { header: 'GEARS MOVED', align: 'right' },
        { header: 'RESTARTS', align: 'right' },
        { header: 'MOVED AGAIN', align: 'right' },
        { header: 'FAILED MOVES', align: 'right' },
      ],
      [...report.pools.map((p) => row(p.pool, p)), ...(report.pools.length > 1 ? [row('total', totals)] : [])],
      width,
    ),
  );
  const stopped = (['called-off', 'outgrown', 'repriced', 'cancelled', 'failed'] as const).filter((o) => totals.byOutcome[o] > 0).map((o) => `${totals.byOutcome[o]} ${o}`);
  const ended = [`${totals.byOutcome.emptied} emptied their node`, ...(totals.byOutcome.running > 0 ? [`${totals.byOutcome.running} still running`] : []), ...stopped];
  lines.push(...wrap(`Drains: ${ended.join(', ')}.`, width));
  const perNode = totals.byOutcome.emptied > 0 ? ` (${(totals.tenantRestarts / totals.byOutcome.emptied).toFixed(1)} per node emptied)` : '';
  const kinds = [`${totals.tenantRestarts} restarted a tenant's application${perNode}`, `${totals.idleMoved} were idle`, ...(totals.unknownMoved > 0 ? [`${totals.unknownMoved} unmarked by their agent`] : [])];
  lines.push(...wrap(`Of the ${totals.gearsMoved} gears moved, ${kinds.join(', ')}; ${totals.gearsMovedAgain} were moved more than once.`, width));
  if (report.apps.length > 0) {
    lines.push('', `applications moved most (${report.apps.length} shown)`);
    lines.push(
      ...renderTable(
        [{ header: 'APPLICATION', flex: true }, { header: 'POOL' }, { header: 'RESTARTS', align: 'right' }, { header: 'MOVES', align: 'right' }, { header: 'LAST MOVED' }],
        report.apps.map((a) => [a.app, a.pool, String(a.restarts), String(a.moves), a.lastMovedAt]),
        width,
      ),
    );
  }
  return [...lines, ...appMovesLines(report, width)];
}

/** The moves of the application `--app` named: what an operator answers a tenant with. */
function appMovesLines(report: DisruptionReport, width: number | undefined): string[] {
  const moves = report.appMoves;
  if (moves === undefined) return [];
  if (moves.length === 0) return ['', ...wrap('that application: no gear of it was moved by a drain started in this period', width)];
  const restart = (r: boolean | null) => (r === null ? 'not marked' : r ? 'yes' : 'no');
  return [
    '',
    `moves of application ${moves[0]!.app} (${moves.length})`,
    ...renderTable(
      [{ header: 'AT' }, { header: 'GEAR', flex: true }, { header: 'FROM' }, { header: 'TO' }, { header: 'CAUSE' }, { header: 'RESTART' }],
      moves.map((m) => [m.at, m.gear, m.from, m.to, m.cause, restart(m.restart)]),
      width,
    ),
  ];
}
