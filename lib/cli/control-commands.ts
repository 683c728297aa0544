/**
 * The control commands of the CLI (pause, resume, set, unset, overrides,
 * shadow-report, audit): their options read, the work of lib/cli/controls.ts
 * called on the open target, the result printed (JSON with --json).
 */
import type { Config } from '../config/index.js';
import { ALL_POOLS, OVERRIDE_KEYS, describePause, type OverrideKey, type OverrideValue } from '../domain/controls.js';
import type { Clock } from '../ports/clock.js';
import { print, type Context } from './context.js';
import { auditTrail, pause, readConfigInput, resume, setOverride, shadowReport, sinceOf } from './controls.js';
import { EXIT, type ExitCode } from './exit.js';
import { renderTable, wrap } from './render.js';
import { describeTarget, type OpenTarget, type TargetSpec } from './target.js';

export const CONTROL_COMMANDS = new Set(['pause', 'resume', 'set', 'unset', 'overrides', 'shadow-report', 'audit']);

const HONOURED =
  'The evaluator applies it on its next evaluation of each pool (the one-minute tick at the latest); a decision already queued is refused by the provisioner or the gear mover before its first effect.';

export async function runControlCommand(
  command: string,
  args: string[],
  context: Context,
  target: OpenTarget,
  config: Config,
  clock: Clock,
  configSource: { json?: string; file?: string },
): Promise<ExitCode> {
  const { values, width } = context;
  const spec: TargetSpec = target.spec;
  const header = describeTarget(spec);
  switch (command) {
    case 'pause': {
      const view = await pause(target, config, clock, { pool: args[0], scaleUp: values['scale-up'], scaleDown: values['scale-down'], reason: values.reason, until: values.until });
      print(context, { target: header, ...view }, () => [...wrap(describePause(view.pause), width), ...wrap(HONOURED, width)]);
      return EXIT.ok;
    }
    case 'resume': {
      const view = await resume(target, config, clock, { pool: args[0], scaleUp: values['scale-up'], scaleDown: values['scale-down'], reason: values.reason });
      const where = view.pool === ALL_POOLS ? 'every pool (stage-wide pause)' : view.pool;
      print(context, { target: header, ...view }, () => [
        ...wrap(view.removed.length === 0 ? `nothing was paused for ${where}; nothing changed` : `resumed ${where}: ${view.removed.map((p) => p.actions).join(', ')} pause removed`, width),
        ...view.stillPaused.flatMap((p) => wrap(`still ${describePause(p)}`, width)),
      ]);
      return EXIT.ok;
    }
    case 'set':
    case 'unset': {
      const input = readConfigInput(configSource);
      const view = await setOverride(target, config, clock, input, { pool: args[0]!, key: args[1]!, value: command === 'set' ? args[2]! : undefined, reason: values.reason });
      const was = view.previous === undefined ? `the file's ${text(fileValue(config, view.pool, view.key))}` : text(view.previous);
      print(context, { target: header, ...view }, () =>
        wrap(
          command === 'set'
            ? `${view.pool} ${view.key} = ${text(view.value)} (was ${was}); overrides version ${view.version}. The evaluator uses it from its next evaluation.`
            : `${view.pool} ${view.key} back to the file's ${text(fileValue(config, view.pool, view.key))} (override ${view.previous === undefined ? 'was not set' : `${text(view.previous)} removed`}); overrides version ${view.version}`,
          width,
        ),
      );
      return EXIT.ok;
    }
    case 'overrides': {
      const { overrides } = await target.store.listControls();
      const shown = overrides.filter((o) => args[0] === undefined || o.pool === args[0]).sort((a, b) => a.pool.localeCompare(b.pool));
      const rows = shown.flatMap((o) =>
        Object.entries(o.values).map(([key, value]) => [o.pool, key, text(value), text(fileValue(config, o.pool, key as OverrideKey)), String(o.version), o.updatedBy, o.updatedAt, o.reason]),
      );
      print(context, { target: header, overrides: shown }, () =>
        rows.length === 0
          ? [`no runtime overrides (${header}): every pool runs with its configuration file`]
          : renderTable(
              [{ header: 'POOL' }, { header: 'KEY' }, { header: 'VALUE' }, { header: 'FILE' }, { header: 'VERSION', align: 'right' }, { header: 'BY' }, { header: 'AT' }, { header: 'REASON', flex: true }],
              rows,
              width,
            ),
      );
      return EXIT.ok;
    }
    case 'shadow-report': {
      const now = clock.now();
      const report = await shadowReport(target, config, now, sinceOf(values.since, now, '1d'));
      const t = report.totals;
      print(context, { target: header, ...report }, () => [
        `shadow decisions since ${report.since}`,
        ...(report.pools.length === 0
          ? ['none: no pool in shadow mode decided anything (mode: shadow, or nodescaler set POOL mode shadow)']
          : renderTable(
              [{ header: 'POOL' }, { header: 'SCALE-UPS', align: 'right' }, { header: 'NODES ADDED', align: 'right' }, { header: 'DRAINS', align: 'right' }, { header: 'GEAR MOVES', align: 'right' }, { header: 'NODE-HOURS SAVED', align: 'right' }],
              [...report.pools, { pool: 'total', ...t }].map((r) => [r.pool, String(r.scaleUps), String(r.nodesAdded), String(r.drains), String(r.gearMoves), r.nodeHoursSaved.toFixed(1)]),
              width,
            )),
        ...wrap(`It would have added ${t.nodesAdded} node(s), drained ${t.drains} (moving ${t.gearMoves} gear(s): each a tenant restart) and saved about ${t.nodeHoursSaved.toFixed(1)} node-hours.`, width),
      ]);
      return EXIT.ok;
    }
    case 'audit': {
      const now = clock.now();
      const entries = await auditTrail(target, config, args[0], sinceOf(values.since, now, '7d'));
      print(context, { target: header, entries }, () =>
        entries.length === 0
          ? ['no operator action in the decision log for this period']
          : renderTable([{ header: 'AT' }, { header: 'POOL' }, { header: 'BY' }, { header: 'ACTION', flex: true }], entries.map((e) => [e.at, e.pool, e.by ?? '', e.reason]), width),
      );
      return EXIT.ok;
    }
    default:
      throw new Error(`not a control command: ${command}`);
  }
}

function fileValue(config: Config, pool: string, key: OverrideKey): unknown {
  if (OVERRIDE_KEYS[key].where === 'root') {
    const [section, field] = key.split('.') as ['scaleUp' | 'scaleDown', string];
    return (config[section] as unknown as Record<string, unknown>)[field];
  }
  const entry = config.pools.find((p) => `${p.district}/${p.profile}` === pool) as unknown as Record<string, unknown> | undefined;
  return key === 'mode' ? (entry?.mode ?? config.mode) : entry?.[key];
}

function text(value: OverrideValue | unknown): string {
  return Array.isArray(value) ? (value.length === 0 ? '[]' : value.join(',')) : String(value);
}
