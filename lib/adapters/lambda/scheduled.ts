import type { SQSEvent, ScheduledEvent } from 'aws-lambda';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An EventBridge schedule tick: `source: 'aws.events'`, `detail-type: 'Scheduled Event'`. */
export function isScheduledEvent(event: unknown): event is ScheduledEvent {
  return (
    isObject(event) &&
    event.source === 'aws.events' &&
    event['detail-type'] === 'Scheduled Event' &&
    typeof event.time === 'string'
  );
}

/** An SQS event source batch: a non-empty `Records` array, every record from `aws:sqs` with a string body. */
export function isSqsEvent(event: unknown): event is SQSEvent {
  if (!isObject(event) || !Array.isArray(event.Records) || event.Records.length === 0) return false;
  return event.Records.every(
    (record: unknown) =>
      isObject(record) &&
      record.eventSource === 'aws:sqs' &&
      typeof record.messageId === 'string' &&
      typeof record.body === 'string',
  );
}
