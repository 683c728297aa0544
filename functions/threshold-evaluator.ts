import middy from '@middy/core';
import type { ScheduledEvent, SQSEvent } from 'aws-lambda';
import { ThresholdEvaluator } from '../lib/app/evaluate.js';
import { stateStoreFor } from '../lib/adapters/dynamodb/from-settings.js';
import { lambdaRuntime, messageParser, sqsBatch } from '../lib/adapters/lambda/runtime.js';
import { injectedPorts } from '../lib/adapters/local/injection.js';
import { isScheduledEvent } from '../lib/adapters/lambda/scheduled.js';
import { platformFor } from '../lib/adapters/platform/from-settings.js';
import { sqsQueueFor } from '../lib/adapters/sqs/from-settings.js';
import { loadSettingsFromProcess } from '../lib/config/index.js';
import { systemClock } from '../lib/ports/clock.js';

const settings = loadSettingsFromProcess();
const local = injectedPorts();
const runtime = lambdaRuntime('thresholdEvaluator', settings);
const log = local.log ?? runtime.log;
const clock = local.clock ?? systemClock;
const evaluator = new ThresholdEvaluator(
  {
    store: local.store ?? stateStoreFor(settings.deployment),
    queue: local.queue ?? sqsQueueFor(settings.deployment),
    clock,
    metrics: local.metrics ?? runtime.metrics,
    log,
    platform: local.platform ?? platformFor(settings, clock),
  },
  settings.config,
);
const parseStats = messageParser(['node-stats'], clock);

/** Stats queue batches (partial batch response) and the one-minute tick. */
export const handler = middy(async (event: SQSEvent | ScheduledEvent) => {
  if (isScheduledEvent(event)) {
    const outcomes = await evaluator.tick();
    return { pools: outcomes.length };
  }
  return sqsBatch(event, evaluator, parseStats, log);
}).use(runtime.observability);
