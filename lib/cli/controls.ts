/**
 * The operator controls of the CLI, each written to the state table (no
 * deploy) and audited:
 *
 * - `pause [POOL] [--scale-up|--scale-down] --reason T [--until TIME]` and
 *   `resume`: the evaluator holds the paused action back on its next
 *   evaluation (within the one-minute tick), the provisioner and the gear
 *   mover refuse a decision already queued.
 * - `set POOL KEY VALUE --reason T`, `unset POOL KEY --reason T` and
 *   `overrides`: runtime overrides of a pool, validated by the file's own
 *   schema with every override of the pool applied, versioned.
 * - `shadow-report [--since 1d]` and `audit [POOL] [--since 7d]`: what the
 *   decision log holds of shadow decisions and operator actions.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { parseConfig, findPoolConfig, type Config } from '../config/index.js';
import {
  ALL_POOLS,
  OVERRIDE_KEYS,
  isOverrideKey,
  pausesOf,
  summarizeShadow,
  type OverrideKey,
  type OverrideRecord,
  type OverrideValue,
  type PauseActions,
  type PauseRecord,
  type ShadowSummary,
} from '../domain/controls.js';
import { parseDuration } from '../domain/duration.js';
import { poolIdOf, type DecisionLogEntry } from '../domain/model.js';
import { ConflictError } from '../errors.js';
import type { Clock } from '../ports/clock.js';
import { audit, requireReason } from './audit.js';
import { notFound, usageError } from './exit.js';
import type { OpenTarget } from './target.js';

const WRITE_ATTEMPTS = 5;

/** The pool named on the command line (a configured one), or every pool. */
function poolArg(config: Config, pool: string | undefined): string {
  if (pool === undefined || pool === ALL_POOLS) return ALL_POOLS;
  if (!findPoolConfig(config, pool)) {
    throw notFound(`unknown pool ${JSON.stringify(pool)}`, `pools: ${config.pools.map((p) => poolIdOf(p.district, p.profile)).join(', ')} (a pool is district/profile)`);
  }
  return pool;
}

export function actionsOf(scaleUp: boolean | undefined, scaleDown: boolean | undefined): PauseActions {
  if (scaleUp && scaleDown) return 'all';
  return scaleUp ? 'scale-up' : scaleDown ? 'scale-down' : 'all';
}

/** `--until`: an ISO time, or a duration from now (`2h`); it must lie ahead. */
export function untilOf(text: string | undefined, now: Date): string | undefined {
  if (text === undefined) return undefined;
  const ms = parseDuration(text);
  const at = ms !== undefined ? now.getTime() + ms : /^\d{4}-\d{2}-\d{2}T/.test(text) ? Date.parse(text) : NaN;
  if (!Number.isFinite(at)) throw usageError(`--until ${JSON.stringify(text)}: expected an ISO time such as 2026-11-21T18:00:00Z or a duration such as 2h`);
  if (at <= now.getTime()) throw usageError(`--until ${JSON.stringify(text)}: lies in the past (now ${now.toISOString()})`);
  return new Date(at).toISOString();
}

export interface PauseView {
  action: 'pause';
  pause: PauseRecord;
  /** The pause it replaced, if the same pool and actions were paused already. */
  replaced?: PauseRecord;
}

export async function pause(
  target: OpenTarget,
  config: Config,
  clock: Clock,
  args: { pool?: string; scaleUp?: boolean; scaleDown?: boolean; reason?: string; until?: string },
): Promise<PauseView> {
  const reason = requireReason(args.reason, 'pause');
  const pool = poolArg(config, args.pool);
  const now = clock.now();
  const until = untilOf(args.until, now);
  const by = await target.identity.whoAmI();
  const record: PauseRecord = { pool, actions: actionsOf(args.scaleUp, args.scaleDown), reason, by, at: now.toISOString(), ...(until ? { until } : {}) };
  const replaced = (await target.store.listControls()).pauses.find((p) => p.pool === pool && p.actions === record.actions);
  await target.store.putPause(record);
  await audit(target, config, clock, { pool, action: 'pause', subject: subjectOf(record), reason, by, details: { actions: record.actions, ...(until ? { until } : {}) } });
  return { action: 'pause', pause: record, ...(replaced ? { replaced } : {}) };
}

export interface ResumeView {
  action: 'resume';
  pool: string;
  removed: PauseRecord[];
  /** What still holds: a narrower pause left after resuming one action of an `all` pause, or the stage's own. */
  stillPaused: PauseRecord[];
}

/** Removes the pool's pauses of the named actions (all without a flag); resuming one action of an `all` pause keeps the other paused. */
export async function resume(target: OpenTarget, config: Config, clock: Clock, args: { pool?: string; scaleUp?: boolean; scaleDown?: boolean; reason?: string }): Promise<ResumeView> {
  const reason = requireReason(args.reason, 'resume');
  const pool = poolArg(config, args.pool);
  const actions = actionsOf(args.scaleUp, args.scaleDown);
  const by = await target.identity.whoAmI();
  const { store } = target;
  const now = clock.now();
  const removed: PauseRecord[] = [];
  const kinds: PauseActions[] = actions === 'all' ? ['all', 'scale-up', 'scale-down'] : [actions, 'all'];
  for (const kind of kinds) {
    const gone = await store.deletePause(pool, kind);
    if (!gone) continue;
    removed.push(gone);
    // Resuming scale-down of a pool paused for both keeps scale-up paused, as it was.
    if (kind === 'all' && actions !== 'all') await store.putPause({ ...gone, actions: actions === 'scale-up' ? 'scale-down' : 'scale-up' });
  }
  const remaining = (await store.listControls()).pauses;
  const stillPaused = pool === ALL_POOLS ? remaining.filter((p) => p.pool === ALL_POOLS) : pausesOf(remaining, pool, now);
  if (removed.length > 0) {
    await audit(target, config, clock, { pool, action: 'resume', subject: subjectOf({ pool, actions }), reason, by, details: { actions, removed: removed.map((p) => p.actions) } });
  }
  return { action: 'resume', pool, removed, stillPaused };
}

function subjectOf(pause: Pick<PauseRecord, 'pool' | 'actions'>): string {
  const what = pause.actions === 'all' ? 'scale-up and scale-down' : pause.actions;
  return `${what} of ${pause.pool === ALL_POOLS ? 'every pool' : pause.pool}`;
}

// ---------------------------------------------------------------------------
// Overrides.

/** The text of a value as the schema should see it: numbers and booleans as such, lists comma-separated; the schema judges. */
export function overrideValue(key: OverrideKey, text: string): OverrideValue {
  const type = OVERRIDE_KEYS[key].type;
  if (type === 'list') return text.trim() === '' ? [] : text.split(',').map((item) => item.trim());
  if ((type === 'int' || type === 'number') && /^-?\d+(\.\d+)?$/.test(text.trim())) return Number(text);
  if (type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

/** The configuration file as written (durations as text): what the schema validates. */
export function readConfigInput(source: { json?: string; file?: string }): Record<string, unknown> {
  const value = source.json !== undefined ? JSON.parse(source.json) : parse(readFileSync(source.file!, 'utf8'));
  return value as Record<string, unknown>;
}

/**
 * The file's input with a pool's overrides written in: pool keys on its
 * entry, thresholds at the top level (what that pool runs with). Validating
 * this with parseConfig checks each value and every cross-field rule
 * (min <= max, target < threshold, ...), as for the file itself.
 */
export function withOverrides(input: Record<string, unknown>, pool: string, values: OverrideRecord['values']): Record<string, unknown> {
  const out: Record<string, unknown> = { ...input };
  const pools = Array.isArray(input.pools) ? [...(input.pools as Array<Record<string, unknown>>)] : [];
  const index = pools.findIndex((p) => p && poolIdOf(String(p.district), String(p.profile)) === pool);
  for (const [key, value] of Object.entries(values) as Array<[OverrideKey, OverrideValue]>) {
    if (OVERRIDE_KEYS[key].where === 'pool') {
      if (index >= 0) pools[index] = { ...pools[index], [key]: value };
      continue;
    }
    const [section, field] = key.split('.') as [string, string];
    out[section] = { ...((out[section] as Record<string, unknown> | undefined) ?? {}), [field]: value };
  }
  out.pools = pools;
  return out;
}

export interface SetView {
  action: 'set' | 'unset';
  pool: string;
  key: OverrideKey;
  value?: OverrideValue;
  previous?: OverrideValue;
  version: number;
  record: OverrideRecord;
}

export async function setOverride(
  target: OpenTarget,
  config: Config,
  clock: Clock,
  input: Record<string, unknown>,
  args: { pool: string; key: string; value?: string; reason?: string },
): Promise<SetView> {
  const command = args.value === undefined ? 'unset' : 'set';
  const reason = requireReason(args.reason, command);
  const pool = poolArg(config, args.pool);
  if (pool === ALL_POOLS) throw usageError(`${command} needs a pool (district/profile)`);
  if (!isOverrideKey(args.key)) throw usageError(`unknown key ${JSON.stringify(args.key)}: one of ${Object.keys(OVERRIDE_KEYS).join(', ')}`);
  const key = args.key;
  const value = args.value === undefined ? undefined : overrideValue(key, args.value);
  const by = await target.identity.whoAmI();
  for (let attempt = 1; ; attempt++) {
    const current = (await target.store.listControls()).overrides.find((o) => o.pool === pool);
    const values = { ...current?.values };
    const previous = values[key];
    if (value === undefined) delete values[key];
    else values[key] = value;
    // A ValidationError (exit 2) lists every problem with its path and value; nothing is written.
    parseConfig(withOverrides(input, pool, values), `override ${pool} ${key}${value === undefined ? ' (unset)' : `=${JSON.stringify(value)}`}`);
    try {
      const record = await target.store.putOverrides({ pool, values, updatedAt: clock.now().toISOString(), updatedBy: by, reason }, current?.version ?? 0);
      await audit(target, config, clock, {
        pool,
        action: command,
        subject: `${key}${value === undefined ? '' : `=${JSON.stringify(value)}`} of ${pool}`,
        reason,
        by,
        details: { key, ...(value === undefined ? {} : { value }), ...(previous === undefined ? {} : { previous }), version: record.version },
      });
      return { action: command, pool, key, ...(value === undefined ? {} : { value }), ...(previous === undefined ? {} : { previous }), version: record.version, record };
    } catch (error) {
      // Someone else changed the pool's overrides in between: validate again on theirs.
      if (!(error instanceof ConflictError) || attempt >= WRITE_ATTEMPTS) throw error;
    }
  }
}

// ---------------------------------------------------------------------------
// Reading the log.

/** `--since`: a duration back from now (`1d`) or an ISO time. */
export function sinceOf(text: string | undefined, now: Date, fallback: string): Date {
  const value = text ?? fallback;
  const ms = parseDuration(value);
  const at = ms !== undefined ? now.getTime() - ms : /^\d{4}-\d{2}-\d{2}T/.test(value) ? Date.parse(value) : NaN;
  if (!Number.isFinite(at)) throw usageError(`--since ${JSON.stringify(value)}: expected a duration such as 1d or an ISO time`);
  return new Date(at);
}

export async function shadowReport(target: OpenTarget, config: Config, now: Date, since: Date): Promise<ShadowSummary> {
  const pools = config.pools.map((p) => poolIdOf(p.district, p.profile));
  const entries = (await Promise.all(pools.map((pool) => target.store.listDecisionsSince(pool, since.toISOString())))).flat();
  return summarizeShadow(entries.filter((e) => e.kind === 'shadow'), since, now);
}

/** Operator entries of the pools (or one pool) and of the stage (`*`), oldest first. */
export async function auditTrail(target: OpenTarget, config: Config, pool: string | undefined, since: Date): Promise<DecisionLogEntry[]> {
  // With the recorded pools the configuration lacks: `forget` of an adopted node is logged under its pool.
  const recorded = pool === undefined ? (await target.store.listPools()).map((record) => record.pool) : [];
  const pools = pool === undefined ? [...config.pools.map((p) => poolIdOf(p.district, p.profile)), ...recorded, ALL_POOLS] : [poolArg(config, pool), ALL_POOLS];
  const entries = (await Promise.all([...new Set(pools)].map((id) => target.store.listDecisionsSince(id, since.toISOString())))).flat();
  return entries.filter((e) => e.kind === 'operator').sort((a, b) => a.at.localeCompare(b.at));
}
