/**
 * The workflow engine: launch, drain and release are each a record with an
 * explicit, stored phase, and a workflow is four functions over it.
 *
 *   view   what the current phase needs, read from the state table (and,
 *          for a drain, the node it empties)
 *   next   pure: the view -> exactly one step
 *   write  applies a step's conditional write; `ConflictError` when the
 *          record changed since the view was read
 *   act    performs one effect outside the table (a cloud, platform, DNS or
 *          queue call) and returns the write that records its result; throws
 *          only our typed errors (lib/errors.ts)
 *
 * An effect that must never run twice has its intent written first, so a
 * crash between the call and the result write is found on the next run and
 * resolved (looked up by its idempotency key) instead of repeated. Because
 * every step starts from what is stored, an invocation that dies at any
 * point leaves a record the next tick or delivery resumes.
 *
 * `execute` applies steps until the workflow waits or ends, or the
 * invocation's time budget runs short.
 */
import { ConflictError } from '../errors.js';

export type Step<W, E> =
  /** A conditional write on the workflow's record (a phase change, a recorded fact). */
  | { kind: 'write'; write: W }
  /** One call outside the table; `intent` is written before it when the call must not run twice. */
  | { kind: 'effect'; effect: E; intent?: W }
  /** Nothing to do until something outside changes (a move running, a volume attached): the next tick looks again. */
  | { kind: 'wait'; reason: string }
  /** The workflow is over (or not this executor's to run). */
  | { kind: 'end'; outcome: string };

/** What an effect returns: the write recording its result, or a reason to wait. */
export type EffectResult<W> = { record: W } | { wait: string };

export interface Workflow<V, W, E> {
  next(view: V): Step<W, E>;
  /** Applies `write` by conditional write and returns the view after it; `ConflictError` on a lost race. */
  write(view: V, write: W): Promise<V>;
  /** Performs `effect`; throws only typed errors. */
  act(view: V, effect: E): Promise<EffectResult<W>>;
  /** Reads the view again after a lost race; undefined when the record is gone. Absent: a lost race is thrown. */
  reread?(view: V): Promise<V | undefined>;
}

/** How much of the invocation is left for work, in ms (the handler takes its safety margin off). */
export interface Budget {
  timeLeft(): number;
}

export interface Limits {
  budget: Budget;
  /** A step is begun only with at least this much time left. */
  minStepMs: number;
  /** Steps in a row before the caller's other work gets its turn. */
  maxSteps: number;
}

export type Outcome<V> =
  | { status: 'ended'; outcome: string; view: V }
  | { status: 'waiting'; reason: string; view: V }
  /** Out of budget or of steps in a row: resumed by the next run. */
  | { status: 'paused'; view: V };

/** Runs `workflow` from `start`, one step at a time, until it waits, ends or `limits` stop it. */
export async function execute<V, W, E>(workflow: Workflow<V, W, E>, start: V, limits?: Limits): Promise<Outcome<V>> {
  let view = start;
  for (let steps = 0; ; steps++) {
    if (limits && (steps >= limits.maxSteps || limits.budget.timeLeft() < limits.minStepMs)) return { status: 'paused', view };
    const step = workflow.next(view);
    if (step.kind === 'end') return { status: 'ended', outcome: step.outcome, view };
    if (step.kind === 'wait') return { status: 'waiting', reason: step.reason, view };
    try {
      if (step.kind === 'write') {
        view = await workflow.write(view, step.write);
        continue;
      }
      if (step.intent !== undefined) view = await workflow.write(view, step.intent);
      const result = await workflow.act(view, step.effect);
      if ('wait' in result) return { status: 'waiting', reason: result.wait, view };
      view = await workflow.write(view, result.record);
    } catch (error) {
      if (!(error instanceof ConflictError) || !workflow.reread) throw error;
      // Another invocation wrote first: carry on from what it wrote.
      const latest = await workflow.reread(view);
      if (latest === undefined) return { status: 'ended', outcome: 'gone', view };
      view = latest;
    }
  }
}
