/**
 * Lambda events and contexts for tests, shaped as Lambda delivers them.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Context, SQSEvent, SQSRecord, SQSRecordAttributes, ScheduledEvent } from 'aws-lambda';
import { lambdaRuntime } from '../../lib/adapters/lambda/runtime.js';
import type { Settings } from '../../lib/config/index.js';
import { LOCAL_SENDER } from '../../lib/domain/stats-sender.js';

export const TEST_REGION = 'us-east-1';
export const TEST_ACCOUNT = '123456789012';
export const STATS_QUEUE_ARN = `arn:aws:sqs:${TEST_REGION}:${TEST_ACCOUNT}:nodescaler-dev-stats`;

export type SqsRecordOverrides = Omit<Partial<SQSRecord>, 'attributes'> & { attributes?: Partial<SQSRecordAttributes> };

/**
 * One SQS record. A string `body` is used as is (so malformed JSON can be
 * sent); anything else is JSON-encoded. `md5OfBody` matches the body unless
 * overridden; `attributes` overrides merge into the defaults.
 */
export function sqsRecord(body: unknown, overrides: SqsRecordOverrides = {}): SQSRecord {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const sent = Date.now() - 1_000;
  const { attributes, ...rest } = overrides;
  const record: SQSRecord = {
    messageId: randomUUID(),
    receiptHandle: `AQEB${randomBytes(96).toString('base64')}`,
    body: text,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(sent),
      // A trusted in-process sender (lib/domain/stats-sender.ts LOCAL_SENDER); tests of the sender check set their own.
      SenderId: LOCAL_SENDER,
      ApproximateFirstReceiveTimestamp: String(sent + 12),
      ...attributes,
    } as SQSRecordAttributes,
    messageAttributes: {},
    md5OfBody: createHash('md5').update(text, 'utf8').digest('hex'),
    eventSource: 'aws:sqs',
    eventSourceARN: STATS_QUEUE_ARN,
    awsRegion: TEST_REGION,
    ...rest,
  };
  return record;
}

export function sqsEvent(records: readonly SQSRecord[]): SQSEvent {
  return { Records: [...records] };
}

/** An EventBridge schedule tick at `time` (EventBridge writes whole seconds). */
export function scheduledEvent(time: Date, ruleName = 'nodescaler-dev-tick'): ScheduledEvent {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: TEST_ACCOUNT,
    time: time.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region: TEST_REGION,
    resources: [`arn:aws:events:${TEST_REGION}:${TEST_ACCOUNT}:rule/${ruleName}`],
    detail: {},
  };
}

/**
 * A Lambda context whose deadline is `remainingMs` from now (by `Date.now()`,
 * so fake timers move it). The deprecated callbacks do nothing.
 */
export function lambdaContext(options: { remainingMs?: number; functionName?: string; memoryMb?: number } = {}): Context {
  const functionName = options.functionName ?? 'nodescaler-dev-test';
  const deadline = Date.now() + (options.remainingMs ?? 30_000);
  const requestId = randomUUID();
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${TEST_REGION}:${TEST_ACCOUNT}:function:${functionName}`,
    memoryLimitInMB: String(options.memoryMb ?? 512),
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `${new Date().toISOString().slice(0, 10).replaceAll('-', '/')}/[$LATEST]${randomBytes(16).toString('hex')}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}

/** A function's Lambda runtime (logger, metrics, middleware) writing nowhere: handler tests assert on state, not on output. */
export function quietRuntime(service: string, settings: Settings) {
  return lambdaRuntime(service, settings, () => {});
}
