/**
 * The audit trail of operator actions: each one a decision-log entry of kind
 * `operator`, with who (the target's identity: an AWS principal ARN, or the
 * local user), when, why (`--reason`, required) and what changed. Stage-wide
 * actions (a pause of every pool) are logged under the pool id `*`.
 */
import type { Config } from '../config/index.js';
import { ALL_POOLS } from '../domain/controls.js';
import type { DecisionLogEntry, PoolId } from '../domain/model.js';
import type { Clock } from '../ports/clock.js';
import { usageError } from './exit.js';
import type { OpenTarget } from './target.js';

export type OperatorAction = 'drain' | 'drain --replace' | 'cancel-drain' | 'protect' | 'unprotect' | 'pause' | 'resume' | 'set' | 'unset' | 'forget';

/** The reason an operator action must give; a usage error (exit 2) naming the command when it is missing. */
export function requireReason(reason: string | undefined, command: string): string {
  const text = reason?.trim();
  if (!text) throw usageError(`${command} needs --reason TEXT`, 'the reason is kept with who ran the command in the decision log (nodescaler audit shows it)');
  return text.slice(0, 1024);
}

/** Appends the entry; returns it as stored. */
export async function audit(
  target: OpenTarget,
  config: Config,
  clock: Clock,
  entry: { pool: PoolId | typeof ALL_POOLS; action: OperatorAction; subject: string; reason: string; by: string; details?: Record<string, unknown> },
): Promise<DecisionLogEntry> {
  const record: DecisionLogEntry = {
    pool: entry.pool,
    at: clock.now().toISOString(),
    kind: 'operator',
    reason: `${entry.action} ${entry.subject}: ${entry.reason}`,
    by: entry.by,
    details: { action: entry.action, reason: entry.reason, ...entry.details },
  };
  await target.store.appendDecision(record, config.decisionLogTtl);
  return record;
}
