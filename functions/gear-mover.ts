import middy from '@middy/core';
import type { Context, ScheduledEvent, SQSEvent } from 'aws-lambda';
import { GearMover } from '../lib/app/drain.js';
import { stateStoreFor } from '../lib/adapters/dynamodb/from-settings.js';
import { lambdaRuntime, messageParser, sqsBatch } from '../lib/adapters/lambda/runtime.js';
import { isScheduledEvent } from '../lib/adapters/lambda/scheduled.js';
import { injectedPorts } from '../lib/adapters/local/injection.js';
import { platformFor } from '../lib/adapters/platform/from-settings.js';
import { sqsQueueFor } from '../lib/adapters/sqs/from-settings.js';
import { loadSettingsFromProcess } from '../lib/config/index.js';
import { systemClock } from '../lib/ports/clock.js';

/** Work stops this long before the Lambda deadline: one step (a broker command, a few writes) fits in it. */
export const SAFETY_MARGIN_MS = 10_000;
/** Longest stretch of work in one invocation: under the one-minute tick, so ticks do not pile up on the same drains. */
export const MAX_WORK_MS = 50_000;

const settings = loadSettingsFromProcess();
const local = injectedPorts();
const runtime = lambdaRuntime('gearMover', settings);
const log = local.log ?? runtime.log;
const clock = local.clock ?? systemClock;
const mover = new GearMover(
  {
    store: local.store ?? stateStoreFor(settings.deployment),
    queue: local.queue ?? sqsQueueFor(settings.deployment),
    platform: local.platform ?? platformFor(settings, clock),
    clock,
    metrics: local.metrics ?? runtime.metrics,
    log,
    // With an injected (virtual) clock nothing moves while we wait: one pass, and the next tick goes on.
    ...(local.clock ? {} : { wait: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)) }),
  },
  settings.config,
);
const parse = messageParser(['scale-down', 'ec2-spot-interruption', 'ec2-rebalance', 'ec2-state-change'], clock);

/**
 * The drain queue (scale-down), the events queue (EC2 events from
 * EventBridge) and the one-minute tick. Messages are handled first (partial
 * batch response); the time left then advances every drain in progress,
 * urgent ones first, and the tick resumes the rest. Never chains through SQS.
 */
export const handler = middy(async (event: SQSEvent | ScheduledEvent, context: Context) => {
  const stopAt = Date.now() + MAX_WORK_MS;
  const budget = { timeLeft: () => Math.min(context.getRemainingTimeInMillis() - SAFETY_MARGIN_MS, stopAt - Date.now()) };
  if (isScheduledEvent(event)) return mover.run(budget);
  const response = await sqsBatch(event, mover, parse, log);
  try {
    await mover.run(budget);
  } catch (error) {
    // The messages are handled; drains resume on the next tick.
    log.error('advancing drains failed; resumed on the next tick', { error: error instanceof Error ? error.message : String(error) });
  }
  return response;
}).use(runtime.observability);
