/**
 * The commands that read or change the state: status, explain, evaluate
 * --dry-run, drain, cancel-drain, protect, unprotect, forget, disruption, report-stats. Loaded by main.ts only
 * when one of them runs, so `validate-config` and `--help` start without the
 * AWS SDK and dynalite.
 */
import { parseDuration } from '../domain/duration.js';
import type { Config } from '../config/index.js';
import type { Clock } from '../ports/clock.js';
import { positiveInt, print, widthOf, type Context, type Io } from './context.js';
import { CONTROL_COMMANDS, runControlCommand } from './control-commands.js';
import { dryRunView, renderDryRun } from './evaluate.js';
import { EXIT, usageError, type ExitCode } from './exit.js';
import { explainView, renderExplain } from './explain.js';
import { audit, requireReason } from './audit.js';
import { cancelDrain, forgetNode, setProtected, type CancelView } from './nodes.js';
import { safeDrain } from './safe-drain.js';
import { reportStatsCommand } from './report-stats.js';
import { disruptionReport, renderDisruption } from './disruption.js';
import { sinceOf } from './controls.js';
import { when, wrap } from './render.js';
import { findPool, readSnapshot, type PoolState, type Snapshot } from './snapshot.js';
import { renderStatus, statusView } from './status.js';
import { clockAt, describeTarget, loadTargetConfig, openTarget, resolveTarget, StateBusyError, type OpenTarget, type TargetSpec } from './target.js';

/** A command that reads or changes the state of a target (every command but validate-config). */
export async function runStateCommand(command: string, args: string[], context: Context): Promise<ExitCode> {
  const { io, values } = context;

  const spec = resolveTarget(
    { local: values.local, stateDir: values['state-dir'], stage: values.stage, region: values.region, table: values.table, config: values.config, at: values.at },
    io.env,
    io.cwd,
    io.root,
  );
  const at = values.at ?? (spec.kind === 'local' && io.env.set.localNow ? io.env.deployment.localNow : undefined);
  const clock = clockAt(at);
  const { config, source } = loadTargetConfig(spec, io.root);
  if (spec.kind === 'deployed' && spec.chosenBy && !values.json) io.stderr.write(`nodescaler: ${describeTarget(spec)}, chosen by ${spec.chosenBy}\n`);

  if (CONTROL_COMMANDS.has(command)) {
    const configSource = spec.configJson !== undefined ? { json: spec.configJson } : { file: source };
    return withTarget(io, spec, clock, (target) => runControlCommand(command, args, context, target, config, clock, configSource));
  }

  switch (command) {
    case 'status':
      return status(spec, config, clock, args[0], context);
    case 'explain': {
      const limit = positiveInt(values.limit, '--limit', 10);
      return withTarget(io, spec, clock, async (target) => {
        const snapshot = await readSnapshot(target.store, config, clock.now());
        const pools = selectPools(snapshot.pools, args[0], snapshot);
        const view = await explainView(target.store, snapshot, pools, describeTarget(spec), limit);
        print(context, view, () => renderExplain(view, context));
        return EXIT.ok;
      });
    }
    case 'evaluate': {
      if (!values['dry-run']) {
        throw usageError('evaluate runs only as --dry-run', 'the threshold evaluator itself decides on its schedule (stats and a one-minute tick): nodescaler evaluate --dry-run');
      }
      return withTarget(io, spec, clock, async (target) => {
        const snapshot = await readSnapshot(target.store, config, clock.now());
        const view = dryRunView(snapshot, selectPools(snapshot.pools, args[0], snapshot), describeTarget(spec));
        print(context, view, () => renderDryRun(view, context));
        return EXIT.ok;
      });
    }
    case 'drain': {
      const why = requireReason(values.reason, 'drain');
      return withTarget(io, spec, clock, async (target) => {
        const view = await safeDrain(target, config, clock, args[0]!, why, values.replace === true);
        if (view.action === 'drain --replace') {
          print(context, { target: describeTarget(spec), ...view }, () => [
            ...wrap(`${view.nodeId}: ${view.fit.line}.`, context.width),
            ...wrap(
              `Replacement requested: scale-up ${view.replacementDecisionId} (1 node) sent to the scale queue; the evaluator starts the drain of ${view.nodeId} once the new node has joined. nodescaler status shows both.`,
              context.width,
            ),
          ]);
          return EXIT.ok;
        }
        print(context, { target: describeTarget(spec), ...view }, () => [
          ...wrap(`drain of ${view.nodeId} requested: scale-down ${view.decisionId} sent to ${view.queue}${view.fit ? ` (${view.fit.line})` : ''}`, context.width),
          ...wrap(
            `The gear mover creates drain ${view.drainId} when it takes the message${spec.kind === 'local' ? ` (locally: npm run invoke -- gearMover ${view.queue})` : ''}; nodescaler status shows its progress.`,
            context.width,
          ),
        ]);
        return EXIT.ok;
      });
    }
    case 'cancel-drain': {
      const why = requireReason(values.reason, 'cancel-drain');
      return withTarget(io, spec, clock, async (target) => {
        const by = await target.identity.whoAmI();
        const view = await cancelDrain(target, config, clock, args[0]!, why, by);
        const pool = (await target.store.getNode(view.nodeId))?.pool ?? '*';
        if (view.changed) await audit(target, config, clock, { pool, action: 'cancel-drain', subject: view.nodeId, reason: why, by, details: { nodeId: view.nodeId, drainId: view.drainId } });
        const p = view.progress;
        print(context, { target: describeTarget(spec), ...view }, () => [
          ...wrap(
            view.waiting
              ? cancelledWaitingLine(view, clock)
              : view.changed
              ? `drain ${view.drainId} of ${view.nodeId} stopping (${view.reason}): no move starts any more; ${p.moving} in flight settle, then the gear mover re-opens the node (${p.moved} of ${p.total} gears moved stay where they are).`
              : `drain ${view.drainId} of ${view.nodeId} was already stopping since ${when(view.stoppingSince, clock.now())}: ${view.reason}`,
            context.width,
          ),
          // A cancel is no failure and no hold: the evaluator may choose the same node at its next scale-down.
          ...wrap(`To keep the node from the next scale-down: nodescaler protect ${view.nodeId} --reason ... (or: nodescaler pause POOL --scale-down --reason ...).`, context.width),
          ...(spec.kind === 'local' ? wrap('Locally the gear mover runs with: npm run invoke -- gearMover events/tick.json', context.width) : []),
        ]);
        return EXIT.ok;
      });
    }
    case 'forget': {
      const why = requireReason(values.reason, 'forget');
      return withTarget(io, spec, clock, async (target) => {
        const by = await target.identity.whoAmI();
        const view = await forgetNode(target, config, clock, args[0]!, why);
        await audit(target, config, clock, { pool: view.pool, action: 'forget', subject: view.nodeId, reason: why, by, details: { nodeId: view.nodeId, was: view.was } });
        print(context, { target: describeTarget(spec), ...view }, () =>
          wrap(`node ${view.nodeId} of pool ${view.pool} forgotten (it was ${view.was}): no longer listed or counted; its host and gears were not touched. If its agent still reports, its stats are ignored.`, context.width),
        );
        return EXIT.ok;
      });
    }
    case 'protect':
    case 'unprotect': {
      const why = requireReason(values.reason, command);
      return withTarget(io, spec, clock, async (target) => {
        const by = await target.identity.whoAmI();
        const view = await setProtected(target, config, args[0]!, command === 'protect');
        if (view.changed) await audit(target, config, clock, { pool: view.pool, action: command, subject: view.nodeId, reason: why, by, details: { nodeId: view.nodeId, version: view.version } });
        const lines = [
          view.changed
            ? `node ${view.nodeId} ${view.protected ? 'protected: never chosen for scale-down, never terminated' : 'unprotected'} (version ${view.version})`
            : `node ${view.nodeId} was already ${view.protected ? 'protected' : 'unprotected'}; nothing changed`,
        ];
        if (command === 'protect' && view.state === 'draining') {
          lines.push(`note: ${view.nodeId} is draining; protection does not stop a drain in progress (nodescaler cancel-drain ${view.nodeId} does), but the host is never terminated`);
        }
        if (command === 'unprotect' && view.protectedByConfig) {
          io.stderr.write(`nodescaler: warning: ${view.nodeId} stays protected by pools[].protectedNodes in the configuration\n`);
        }
        print(context, { target: describeTarget(spec), ...view }, () => lines.flatMap((line) => wrap(line, context.width)));
        return EXIT.ok;
      });
    }
    case 'disruption': {
      const topApps = positiveInt(values.limit, '--limit', 10);
      return withTarget(io, spec, clock, async (target) => {
        const now = clock.now();
        const report = await disruptionReport(target, config, args[0], sinceOf(values.since, now, '7d'), now, { topApps, app: values.app });
        print(context, { target: describeTarget(spec), ...report }, () => renderDisruption(report, context.width));
        return EXIT.ok;
      });
    }
    case 'report-stats':
      return withTarget(io, spec, clock, async (target) => {
        const view = await reportStatsCommand(target, config, clock, values.pool, (line) => io.stderr.write(`nodescaler: ${line}\n`));
        print(context, { target: describeTarget(spec), ...view }, () =>
          wrap(
            `${view.sent.length} node-stats sent to ${view.queue}${view.skipped.length > 0 ? `; ${view.skipped.length} node(s) skipped (warnings above)` : ''}`,
            context.width,
          ),
        );
        return EXIT.ok;
      });
    default:
      throw usageError(`unknown command ${JSON.stringify(command)}`);
  }
}

async function status(spec: TargetSpec, config: Config, clock: Clock, pool: string | undefined, context: Context): Promise<ExitCode> {
  const { io, values } = context;
  const watch = values.watch === true;
  if (!watch && (values.interval !== undefined || values.iterations !== undefined)) throw usageError('--interval and --iterations go with --watch');
  const interval = values.interval === undefined ? 5000 : parseDuration(values.interval);
  if (interval === undefined || interval < 1000) throw usageError(`--interval ${JSON.stringify(values.interval)}: expected a duration of at least 1s, such as 5s or 1m`);
  const iterations = values.iterations === undefined ? Infinity : positiveInt(values.iterations, '--iterations', 1);
  const sleep = io.sleep ?? defaultSleep;
  const clear = watch && io.stdout.isTTY === true && !values.json;
  for (let i = 0; i < iterations; i++) {
    // Opened and closed around each read: the local state is free for npm run invoke in between.
    // While another process writes it, a watch skips that refresh instead of ending.
    const refresh = withTarget(io, spec, clock, async (target) => {
      const snapshot = await readSnapshot(target.store, config, clock.now());
      const pools = selectPools(snapshot.pools, pool, snapshot);
      const view = statusView({ ...snapshot, pools }, describeTarget(spec));
      if (clear) io.stdout.write('\u001b[2J\u001b[H');
      else if (watch && i > 0 && !values.json) io.stdout.write('\n');
      if (values.json) io.stdout.write(`${JSON.stringify(view, null, watch ? undefined : 2)}\n`);
      else io.stdout.write(`${renderStatus(view, { style: context.style, width: widthOf(io), allGears: values.all === true, allPools: values.all === true || pool !== undefined }).join('\n')}\n`);
      if (watch && !values.json) io.stdout.write(context.style.dim(`\nrefreshing every ${interval / 1000}s; Ctrl-C stops\n`));
      return EXIT.ok;
    });
    try {
      await refresh;
    } catch (error) {
      if (!(watch && error instanceof StateBusyError)) throw error;
      io.stderr.write(context.style.dim(`${clock.now().toISOString().slice(11, 19)}Z: the local state is busy (another command is writing it); trying again in ${interval / 1000}s\n`));
    }
    if (!watch || i + 1 >= iterations) break;
    if (!(await sleep(interval))) break;
  }
  return EXIT.ok;
}

function selectPools(pools: PoolState[], id: string | undefined, snapshot: Snapshot): PoolState[] {
  return id === undefined ? pools : [findPool(snapshot, id)];
}

async function withTarget(io: Io, spec: TargetSpec, clock: Clock, work: (target: OpenTarget) => Promise<ExitCode>): Promise<ExitCode> {
  const target = await openTarget(spec, clock, io.root);
  try {
    return await work(target);
  } finally {
    await target.close();
  }
}


function defaultSleep(ms: number): Promise<boolean> {
  return new Promise((resolve) => setTimeout(() => resolve(true), ms));
}

/** What a cancel of a drain that had not begun did: it never starts; a replacement asked for it still joins. */
function cancelledWaitingLine(view: CancelView, clock: Clock): string {
  if (!view.changed) return `drain ${view.drainId} of ${view.nodeId} was already cancelled since ${when(view.stoppingSince, clock.now())}: ${view.reason}`;
  const after =
    view.waiting === 'replacement'
      ? `it will not start; replacement ${view.replacementDecisionId} still joins, and scale-down takes a node back when the pool does not need it`
      : 'the gear mover refuses its message; the node stays active';
  return `drain ${view.drainId} of ${view.nodeId} cancelled before it began (${view.reason}): ${after}.`;
}
