import middy from '@middy/core';
import type { Context, ScheduledEvent, SQSEvent } from 'aws-lambda';
import { GearMover, type GearMoverPorts } from '../app/drain.js';
import { messageParser, sqsBatch } from '../adapters/lambda/runtime.js';
import { functionEvent } from './event-shape.js';
import { startInvocation, withObservability, type HandlerDeps } from './deps.js';

const CONTRACT = { name: 'gearMover', messages: ['scale-down', 'ec2-spot-interruption', 'ec2-rebalance', 'ec2-state-change'] };
/** Work stops this long before the Lambda deadline: one step (a broker command, a few writes) fits in it. */
export const SAFETY_MARGIN_MS = 10_000;
/** Longest stretch of work in one invocation: under the one-minute tick, so ticks do not pile up on the same drains. */
export const MAX_WORK_MS = 50_000;

/**
 * The drain queue (scale-down), the events queue (EC2 events from
 * EventBridge) and the one-minute tick. Messages are handled first (partial
 * batch response); the time left then advances every drain in progress,
 * urgent ones first (unless no message did anything), and the tick resumes
 * the rest. Never chains through SQS.
 * Whether an invocation waits for moves in flight is the ports' `wait`, which
 * the environment gives (a real timer on Lambda) or not (one pass per invocation).
 */
export function gearMoverHandler(deps: HandlerDeps<GearMoverPorts>) {
  const { log } = deps.ports;
  const mover = new GearMover(deps.ports, deps.config);
  const parse = messageParser(['scale-down', 'ec2-spot-interruption', 'ec2-rebalance', 'ec2-state-change'], deps.ports.clock);
  return withObservability(
    middy(async (raw: SQSEvent | ScheduledEvent, context: Context) => {
      const { kind, event } = functionEvent(raw, CONTRACT, log);
      startInvocation(deps, context);
      const stopAt = Date.now() + MAX_WORK_MS;
      const budget = { timeLeft: () => Math.min(context.getRemainingTimeInMillis() - SAFETY_MARGIN_MS, stopAt - Date.now()) };
      if (kind === 'schedule') return mover.run(budget);
      let acted = false;
      const batch = {
        handleBatch: async (items: Parameters<GearMover['handleBatch']>[0]) => {
          const outcome = await mover.handleBatch(items);
          acted = outcome.acted;
          return outcome;
        },
      };
      const response = await sqsBatch(event, batch, parse, log);
      // A batch of events for hosts nodescaler does not own (EventBridge sends every interruption in the account)
      // costs their lookups only: reading every pool to advance drains is the tick's work, or a batch's that acted.
      if (!acted) return response;
      try {
        await mover.run(budget);
      } catch (error) {
        // The messages are handled; drains resume on the next tick.
        log.error('advancing drains failed; resumed on the next tick', { error: error instanceof Error ? error.message : String(error) });
      }
      return response;
    }),
    deps,
  );
}
