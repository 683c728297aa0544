import middy from '@middy/core';
import type { Context, ScheduledEvent, SQSEvent } from 'aws-lambda';
import { ThresholdEvaluator, type EvaluatorPorts } from '../app/evaluate.js';
import { messageParser, sqsBatch } from '../adapters/lambda/runtime.js';
import { functionEvent } from './event-shape.js';
import { startInvocation, withObservability, type HandlerDeps } from './deps.js';


const CONTRACT = { name: 'thresholdEvaluator', messages: ['node-stats', 'gears-refused', 'district-capacity'] };
/** Stats queue batches (partial batch response) and the one-minute tick. */
export function thresholdEvaluatorHandler(deps: HandlerDeps<EvaluatorPorts>) {
  const evaluator = new ThresholdEvaluator(deps.ports, deps.config);
  const parseStats = messageParser(['node-stats', 'gears-refused', 'district-capacity'], deps.ports.clock);
  return withObservability(
    middy(async (raw: SQSEvent | ScheduledEvent, context?: Context) => {
      startInvocation(deps, context);
      const { kind, event } = functionEvent(raw, CONTRACT, deps.ports.log);
      if (kind === 'schedule') {
        const outcomes = await evaluator.tick();
        return { pools: outcomes.length };
      }
      return sqsBatch(event, evaluator, parseStats, deps.ports.log);
    }),
    deps,
  );
}
