/**
 * One drain on the workflow engine: the view is the drain, its node and
 * (when another drain id is on the node) that drain; `nextDrain` picks the
 * step from the stored phase; the effects are the phases' work
 * (ending.ts: starting, completing, aborting; moving.ts: the moves).
 */
import { timeoutCause } from '../../domain/drain.js';
import { ValidationError } from '../../errors.js';
import { NodeNotInDistrictError } from '../../ports/platform-errors.js';
import { execute, type Budget, type EffectResult, type Workflow } from '../engine.js';
import { MIN_STEP_MS, describe, save, type DrainContext, type StepResult } from './context.js';
import { begin, complete, continueAbort, finishAbort, markCompleted, requestAbort } from './ending.js';
import { progress } from './moving.js';
import { nextDrain, type DrainEffect, type DrainView, type DrainWrite } from './phases.js';
import { claimNode } from './records.js';

/** Steps one drain may take in a row before the others get their turn. */
const MAX_STEPS_IN_A_ROW = 100;

class DrainWorkflow implements Workflow<DrainView, DrainWrite, DrainEffect> {
  /** Something was written (by this run, or by a racing one) since the run began. */
  progressed = false;

  constructor(private readonly ctx: DrainContext) {}

  async view(drainId: string): Promise<DrainView> {
    const { store } = this.ctx.ports;
    const drain = await store.getDrain(drainId);
    if (!drain || drain.state !== 'active') return { drain, node: undefined };
    const node = await store.getNode(drain.nodeId);
    const foreign = node?.state === 'draining' && !drain.abortRequestedAt && node.drainId !== undefined && node.drainId !== drain.drainId;
    const timedOut = timeoutCause(drain, this.ctx.ports.clock.now(), this.ctx.config.scaleDown.drainTimeout);
    return { drain, node, ...(foreign ? { owner: await store.getDrain(node.drainId!) } : {}), ...(timedOut ? { timedOut } : {}) };
  }

  next = nextDrain;

  async act({ drain, node }: DrainView, effect: DrainEffect): Promise<EffectResult<DrainWrite>> {
    const ctx = this.ctx;
    if (effect.kind === 'close') {
      try {
        await ctx.ports.platform.deactivateNode(node!.district, node!.nodeId);
      } catch (error) {
        // In no district (its add-node never ran): it takes no new gears, as closed as deactivate-node would make it.
        // Retrying would fail the same way on every pass, and the drain would never end (found on the broker emulator).
        if (!(error instanceof NodeNotInDistrictError)) throw error;
        ctx.ports.log.warn('node is in no district: already closed to new gears', { drainId: drain!.drainId, nodeId: node!.nodeId, district: node!.district });
      }
      return { record: { kind: 'save', patch: { closedAt: ctx.ports.clock.now().toISOString() } } };
    }
    let result: StepResult;
    switch (effect.kind) {
      case 'begin':
        result = await begin(ctx, drain!, node!);
        break;
      case 'move':
        result = await progress(ctx, drain!, node!);
        break;
      case 'hand-over':
        result = await complete(ctx, drain!, node!);
        break;
      case 'complete':
        result = await markCompleted(ctx, drain!, effect.note);
        break;
      case 'settle':
        result = await continueAbort(ctx, drain!, node!);
        break;
      case 'abort':
        result = await finishAbort(ctx, drain!, node, effect.reason, { failure: effect.failure });
        break;
    }
    if (result === 'waiting') return { wait: `drain ${drain!.drainId}: moves in flight or gears waiting for room` };
    return { record: { kind: result === 'finished' ? 'finished' : 'reread' } };
  }

  async write(view: DrainView, write: DrainWrite): Promise<DrainView> {
    this.progressed = true;
    const { drain, node } = view;
    switch (write.kind) {
      case 'finished':
        return { ...view, finished: true };
      case 'reread':
        return this.view(drain!.drainId);
      case 'save': {
        const saved = await save(this.ctx, drain!, write.patch);
        this.ctx.ports.log.info('node closed to new gears', { drainId: drain!.drainId, nodeId: node!.nodeId, district: node!.district });
        return this.view(saved.drainId);
      }
      case 'claim':
        await claimNode(this.ctx, node!, drain!.drainId);
        return this.view(drain!.drainId);
      case 'request-abort':
        await requestAbort(this.ctx, drain!, write.reason);
        return this.view(drain!.drainId);
    }
  }

  async reread(view: DrainView): Promise<DrainView> {
    this.progressed = true;
    return this.view(view.drain!.drainId);
  }
}

/**
 * Advances one drain while the budget allows. Never throws for the drain's
 * failure: it is logged, and the next tick resumes from what is stored.
 */
export async function advanceDrain(ctx: DrainContext, drainId: string, budget: Budget): Promise<{ finished: boolean; progressed: boolean }> {
  const workflow = new DrainWorkflow(ctx);
  try {
    const outcome = await execute(workflow, await workflow.view(drainId), { budget, minStepMs: MIN_STEP_MS, maxSteps: MAX_STEPS_IN_A_ROW });
    if (outcome.status === 'ended') return { finished: true, progressed: true };
    return { finished: false, progressed: workflow.progressed };
  } catch (error) {
    ctx.ports.log.error('drain step failed; resumed on the next tick', { drainId, error: describe(error), retryable: !(error instanceof ValidationError) });
    return { finished: false, progressed: workflow.progressed };
  }
}
