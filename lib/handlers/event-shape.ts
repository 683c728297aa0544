/**
 * What a function takes, checked before anything reads the event: an SQS
 * batch from its queue(s) or its one-minute schedule. Anything else (an
 * EventBridge event sent straight to the function, `{}` from a console test,
 * an SNS or API Gateway event) fails at once with a ValidationError naming
 * what the function expects and what it got, instead of a TypeError from
 * deep inside (`Cannot read properties of undefined`). Nothing has been
 * read or written by then: an asynchronous invocation goes to the
 * function's failure destination unchanged.
 */
import type { SQSEvent, ScheduledEvent } from 'aws-lambda';
import { isScheduledEvent, isSqsEvent } from '../adapters/lambda/scheduled.js';
import { ValidationError } from '../errors.js';
import type { Log } from '../ports/log.js';

export type FunctionEvent = { kind: 'schedule'; event: ScheduledEvent } | { kind: 'sqs'; event: SQSEvent };

export interface EventContract {
  /** The function, as serverless.yml names it. */
  name: string;
  /** The message types its queues carry, for the error. */
  messages: readonly string[];
}

/** The event as one of the two shapes the function takes; a ValidationError (logged) for anything else. */
export function functionEvent(event: unknown, contract: EventContract, log: Log): FunctionEvent {
  if (isScheduledEvent(event)) return { kind: 'schedule', event };
  if (isSqsEvent(event)) return { kind: 'sqs', event };
  const got = describeEvent(event);
  const error = new ValidationError(
    {
      path: 'event',
      message: `${contract.name} takes an SQS batch (Records from its queue: ${contract.messages.join(', ')} messages) or its one-minute schedule (an EventBridge "Scheduled Event" from aws.events); got ${got}`,
    },
    'unsupported event',
  );
  log.error('event of a shape this function does not take; nothing done', { function: contract.name, got, errorName: error.name, retryable: false });
  throw error;
}

/** A short, safe description of an event: its kind and the fields that tell it, never its whole body. */
export function describeEvent(event: unknown): string {
  if (event === null || event === undefined) return String(event);
  if (Array.isArray(event)) return `an array of ${event.length}`;
  if (typeof event !== 'object') return `a ${typeof event}`;
  const body = event as Record<string, unknown>;
  if (typeof body['detail-type'] === 'string' || typeof body.source === 'string') {
    const source = short(body.source);
    const detailType = short(body['detail-type']);
    const hint = body.source === 'aws.ec2' ? '; EC2 events reach the gear mover through its events queue (an EventBridge rule with an SQS target)' : '';
    return `an EventBridge event (source ${source}, detail-type ${detailType}) sent to the function directly${hint}`;
  }
  if (Array.isArray(body.Records)) {
    if (body.Records.length === 0) return 'an event with an empty Records list';
    const first = body.Records[0] as Record<string, unknown> | null;
    const source = first && typeof first === 'object' ? (first.eventSource ?? first.EventSource) : undefined;
    return `Records that are not SQS records (the first has eventSource ${short(source)})`;
  }
  const keys = Object.keys(body);
  if (keys.length === 0) return 'an empty object ({})';
  return `an object with keys ${keys.slice(0, 8).map((key) => JSON.stringify(key.slice(0, 40))).join(', ')}${keys.length > 8 ? `, and ${keys.length - 8} more` : ''}`;
}

function short(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value.slice(0, 80)) : value === undefined ? 'none' : `a ${typeof value}`;
}
