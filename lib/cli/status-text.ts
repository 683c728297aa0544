/**
 * `nodescaler status` as text: the view (status.ts) rendered for a terminal,
 * one block a pool, its nodes, holds, prices and drains.
 */
import { renderControls } from './controls-view.js';
import { clockTime, plural, ratio, renderTable, when, wrap, type Cell, type Style } from './render.js';
import type { DrainView, PoolView, StatusView } from './status.js';

/** Gears of a drain listed unless every one is asked for. */
const GEARS_SHOWN = 12;

export interface TextOptions {
  style: Style;
  width?: number;
  /** Every gear of every drain, not only the first ones not yet moved. */
  allGears?: boolean;
  /** Pools the configuration lacks (adopted nodes) in full, not in one line. */
  allPools?: boolean;
}

export function renderStatus(view: StatusView, options: TextOptions): string[] {
  const { style: s, width } = options;
  const now = new Date(view.at);
  const lines: string[] = [];
  const limits = view.limits;
  lines.push(...wrap(`${s.bold('nodescaler status')} · ${view.target} · ${clockTime(view.at, now)} · ${limits.nodes} of ${limits.maxNodesTotal} nodes (limits.maxNodesTotal)`, width));
  if (view.pools.length === 0) lines.push('no pool configured or recorded');
  // Pools the configuration lacks hold adopted nodes nodescaler never evaluates: one line, or in full with --all.
  const hidden = options.allPools ? [] : view.pools.filter((pool) => !pool.configured && pool.nodes > 0);
  for (const pool of view.pools) {
    if (hidden.includes(pool) || (!pool.configured && pool.nodes === 0 && !options.allPools)) continue;
    lines.push('');
    lines.push(...renderPool(pool, now, options));
  }
  if (hidden.length > 0) {
    const nodes = hidden.reduce((sum, pool) => sum + pool.nodes, 0);
    lines.push('');
    lines.push(
      ...wrap(
        s.yellow(`${plural(nodes, 'adopted node')} in ${plural(hidden.length, 'pool')} the configuration lacks (${hidden.map((pool) => `${pool.pool}: ${pool.nodes}`).join(', ')}), never evaluated: `) +
          'nodescaler status --all lists them; nodescaler forget NODE --reason TEXT drops one',
        width,
      ),
    );
  }
  return lines;
}

function renderPool(pool: PoolView, now: Date, options: TextOptions): string[] {
  const { style: s, width } = options;
  const lines: string[] = [];
  const byState = Object.entries(pool.nodesByState)
    .filter(([, count]) => (count ?? 0) > 0)
    .map(([state, count]) => `${count} ${s.state(state)}`)
    .join(', ');
  const bounds = pool.configured ? `min ${pool.min} · max ${pool.max}` : s.yellow('not in the configuration: not evaluated');
  lines.push(...wrap(`${s.bold(`pool ${pool.pool}`)} · ${bounds} · ${plural(pool.nodes, 'node')}${byState ? `: ${byState}` : ''}`, width));

  const util = pool.utilization === null ? 'inf' : ratio(pool.utilization);
  const utilText = pool.utilization !== null && pool.utilization >= pool.thresholds.scaleUp ? s.yellow(util) : util;
  const band = `scale up >= ${ratio(pool.thresholds.scaleUp)}, down <= ${ratio(pool.thresholds.scaleDown)}`;
  const slots = `${pool.demand} gears in ${pool.capacity}${pool.provisioningCapacity ? ` (+${pool.provisioningCapacity} provisioning)` : ''} slots, ${pool.freeSlots} free`;
  const since = pool.highSince ? `, high since ${when(pool.highSince, now)}` : pool.lowSince ? `, low since ${when(pool.lowSince, now)}` : '';
  lines.push(...wrap(`utilization ${utilText} (${slots}; ${band})${since}`, width, '  '));
  if (pool.staleNodes.length > 0) lines.push(...wrap(s.yellow(`stale stats: ${pool.staleNodes.join(', ')}`), width, '  '));
  if (pool.driftedNodes.length > 0) {
    const seen = pool.templateSeenSince ? ` (template first seen ${when(pool.templateSeenSince, now)})` : '';
    const drifted = `drifted from the pool's template${seen}: ${pool.driftedNodes.join(', ')}`;
    const how = pool.renewsDrifted ? 'renewed a few at a time, replacements first (scaleDown.renewDrifted)' : 'drained first among equal candidates; nodescaler drain NODE --replace renews one now';
    lines.push(...wrap(`${drifted} (${how})`, width, '  '));
  }
  if (pool.expiredNodes.length > 0) {
    lines.push(...wrap(`expired (expireAfter): ${pool.expiredNodes.join(', ')} (renewed a few at a time, replacements first)`, width, '  '));
  }
  const graced = pool.nodeList.filter((node) => node.gearCapLiftsAt !== null);
  if (graced.length > 0) {
    const each = graced.map((node) => `${node.nodeId} ${when(node.gearCapLiftsAt!, now)}`).join(', ');
    lines.push(...wrap(`renewals move gears at their move limit (expireGrace, driftGrace) from: ${each}`, width, '  '));
  }
  if (pool.nodeHourPrice) lines.push(...wrap(`drains priced at $${pool.nodeHourPrice.dollars} a node-hour (${pool.nodeHourPrice.source})`, width, '  '));
  if (pool.moveCost) {
    const { idle, sibling, disruptive, source } = pool.moveCost;
    lines.push(...wrap(`moves priced at $${disruptive} a restart, $${sibling} a sibling gear's, $${idle} an idle gear's (${source})`, width, '  '));
  }
  for (const failed of pool.priceReadFailures) lines.push(...wrap(s.yellow(`${failed.market} prices not read ${when(failed.at, now)}: ${failed.failure}`), width, '  '));
  const uids = pool.districtUids;
  if (uids) {
    const text = `district UIDs: ${uids.availableCapacity} of ${uids.maxCapacity} left (read ${when(uids.readAt, now)})`;
    lines.push(...wrap(uids.low ? s.yellow(`${text}: new gears are refused once none is left, whatever nodes the pool has`) : text, width, '  '));
  }

  if (pool.lease && !pool.lease.expired) {
    const sent = pool.lease.sentAt ? `sent ${clockTime(pool.lease.sentAt, now)}` : s.yellow('not confirmed sent (the evaluator sends it again)');
    lines.push(...wrap(`in flight: ${s.cyan(pool.lease.kind)} ${pool.lease.holder} since ${clockTime(pool.lease.acquiredAt, now)}, lease until ${when(pool.lease.expiresAt, now)}, ${sent}`, width, '  '));
  } else {
    lines.push(`  in flight: none${pool.lease?.expired ? ` (lease of ${pool.lease.holder} expired ${when(pool.lease.expiresAt, now)})` : ''}`);
  }
  lines.push(...renderControls(pool.controls, options));
  for (const hold of pool.holds) {
    const paint = hold.kind.startsWith('capacity') || hold.kind.startsWith('failure') ? s.red.bind(s) : s.yellow.bind(s);
    lines.push(...wrap(`${paint('blocked')}: ${hold.kind} until ${when(hold.until, now)} (holds ${hold.blocks})`, width, '  '));
  }

  if (pool.nodeList.length > 0) {
    // Zones only where the cloud names them (EC2); the local handlers' nodes have none.
    const zoned = pool.nodeList.some((node) => node.zone !== null);
    const rows: Cell[][] = pool.nodeList.map((node) => {
      const flags = [node.protected ? 'protected' : '', node.stale ? 'stale' : '', node.origin === 'adopted' ? 'adopted' : '', node.drift ? 'drifted' : '', node.expired ? 'expired' : ''].filter(Boolean).join(',');
      return [
        node.nodeId,
        { text: node.state, paint: (t) => s.paintState(node.state, t) },
        ...(zoned ? [node.zone ?? '-'] : []),
        node.activeGears === null ? '-' : `${node.activeGears}/${node.maxActiveGears}${node.idleGears ? ` +${node.idleGears} idle` : ''}`,
        node.utilization === null ? '-' : ratio(node.utilization),
        node.reportedAt === null ? '-' : clockTime(node.reportedAt, now),
        { text: flags || '-', paint: (t) => (node.protected ? s.cyan(t) : node.stale ? s.yellow(t) : t) },
        node.reason ?? '',
      ];
    });
    const table = renderTable(
      [
        { header: 'NODE', keep: true },
        { header: 'STATE' },
        ...(zoned ? [{ header: 'ZONE' }] : []),
        { header: 'GEARS', align: 'right' },
        { header: 'UTIL', align: 'right' },
        { header: 'STATS' },
        { header: 'FLAGS' },
        { header: 'NOTE', flex: true },
      ],
      rows,
      width === undefined ? undefined : width - 2,
    );
    lines.push(...table.map((line, i) => `  ${i === 0 ? s.dim(line) : line}`));
  }

  for (const drain of pool.drains) lines.push(...renderDrain(drain, now, options));
  return lines;
}

function renderDrain(drain: DrainView, now: Date, options: TextOptions): string[] {
  const { style: s, width } = options;
  const p = drain.progress;
  const lines: string[] = [];
  const moved = `${p.moved} of ${p.total} gears moved${drain.tenantRestarts ? ` (${drain.tenantRestarts} restarted a tenant)` : ''}`;
  const counts = [moved, p.moving ? `${p.moving} moving` : '', p.planned ? `${p.planned} planned` : '', p.failed ? s.red(`${p.failed} failed`) : '']
    .filter(Boolean)
    .join(', ');
  const phase = drain.stopping
    ? s.yellow(`stopping since ${clockTime(drain.stopping.since, now)}: ${drain.stopping.reason}`)
    : drain.completedAt
      ? 'node empty, handing over to the decommissioner'
      : !drain.closedAt
        ? 'starting (node not closed yet)'
        : !drain.plannedAt
          ? 'planning'
          : counts;
  const urgent = drain.urgent ? s.red(' URGENT') : '';
  lines.push(...wrap(`${s.bold('drain')} ${drain.drainId} of ${drain.nodeId} (${drain.kind}${urgent}) since ${when(drain.startedAt, now)}: ${phase}`, width, '  '));
  if (drain.stopping || !drain.plannedAt) {
    if (p.total > 0) lines.push(`    ${counts}`);
  }
  if (drain.unplaced) lines.push(...wrap(s.yellow(`${drain.unplaced} gear(s) have no room yet`), width, '    '));
  const shown = options.allGears ? drain.moves : drain.moves.filter((m) => m.state !== 'moved').slice(0, GEARS_SHOWN);
  if (shown.length > 0) {
    const rows: Cell[][] = shown.map((move) => [
      move.uuid,
      move.app,
      move.target,
      { text: move.state, paint: (t) => (move.state === 'failed' ? s.red(t) : move.state === 'moving' ? s.yellow(t) : move.state === 'moved' ? s.green(t) : t) },
      String(move.attempts),
      move.lastError ? move.lastError : move.nextAttemptAt ? `next attempt ${clockTime(move.nextAttemptAt, now)}` : '',
    ]);
    const table = renderTable(
      [{ header: 'GEAR', flex: true }, { header: 'APP' }, { header: 'TARGET' }, { header: 'MOVE' }, { header: 'TRIES', align: 'right' }, { header: 'NOTE', flex: true }],
      rows,
      width === undefined ? undefined : width - 4,
    );
    lines.push(...table.map((line, i) => `    ${i === 0 ? s.dim(line) : line}`));
    const hidden = (options.allGears ? 0 : drain.moves.filter((m) => m.state !== 'moved').length - shown.length) + (options.allGears ? 0 : p.moved);
    if (hidden > 0) lines.push(s.dim(`    … ${hidden} more (${p.moved} moved); --all lists every gear, --json has them too`));
  }
  return lines;
}
