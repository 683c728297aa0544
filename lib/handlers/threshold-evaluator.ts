import middy from '@middy/core';
import type { ScheduledEvent, SQSEvent } from 'aws-lambda';
import { ThresholdEvaluator, type EvaluatorPorts } from '../app/evaluate.js';
import { messageParser, sqsBatch } from '../adapters/lambda/runtime.js';
import { isScheduledEvent } from '../adapters/lambda/scheduled.js';
import { withObservability, type HandlerDeps } from './deps.js';

/** Stats queue batches (partial batch response) and the one-minute tick. */
export function thresholdEvaluatorHandler(deps: HandlerDeps<EvaluatorPorts>) {
  const evaluator = new ThresholdEvaluator(deps.ports, deps.config);
  const parseStats = messageParser(['node-stats'], deps.ports.clock);
  return withObservability(
    middy(async (event: SQSEvent | ScheduledEvent) => {
      if (isScheduledEvent(event)) {
        const outcomes = await evaluator.tick();
        return { pools: outcomes.length };
      }
      return sqsBatch(event, evaluator, parseStats, deps.ports.log);
    }),
    deps,
  );
}
