/**
 * The DynamoDB adapter's error translation: its own codes (a lost condition,
 * a missing table, a bad request), and for everything else the one shared
 * list of what is worth retrying (lib/adapters/aws-errors.ts). Its own
 * narrower list once left timeouts, dropped connections and 5xx statuses as
 * untyped errors.
 */
import {
  ConditionalCheckFailedException,
  InternalServerError,
  ProvisionedThroughputExceededException,
  ResourceNotFoundException,
  TransactionConflictException,
} from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { awsErrorInfo } from '../../lib/adapters/aws-errors.js';
import { translateError } from '../../lib/adapters/dynamodb/items.js';
import { ConflictError, NotFoundError, TransientError, ValidationError } from '../../lib/errors.js';

const meta = (httpStatusCode: number) => ({ $metadata: { httpStatusCode } });
const translate = (error: unknown) => translateError(error, 'node n1 changed', 'nodescaler-test-state');

describe('DynamoDB errors', () => {
  it.each([
    ['throttled', new ProvisionedThroughputExceededException({ message: 'rate exceeded', ...meta(400) })],
    ['a server fault', new InternalServerError({ message: 'internal', ...meta(500) })],
    ['a transaction conflict', new TransactionConflictException({ message: 'conflict', ...meta(400) })],
    ['a timeout', Object.assign(new Error('socket timed out'), { name: 'TimeoutError' })],
    ['a dropped connection', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })],
    ['a 503 without a known code', Object.assign(new Error('Service Unavailable'), { name: 'UnknownError', ...meta(503) })],
    ['an error the SDK marks retryable', Object.assign(new Error('try again'), { name: 'SomethingNew', $retryable: {} })],
  ])('%s is a TransientError, as for every other AWS adapter', (_what, error) => {
    const translated = translate(error);
    expect(translated).toBeInstanceOf(TransientError);
    expect((translated as TransientError).retryable).toBe(true);
    expect((translated as TransientError).message).toBe(`DynamoDB ${awsErrorInfo(error).detail}`);
    expect((translated as TransientError).cause).toBe(error);
    // One list: whatever the shared classification calls transient, the store retries, and the reverse.
    expect(awsErrorInfo(error).transient).toBe(true);
  });

  it('a lost condition is a ConflictError carrying the item as it is now, without its key attributes', () => {
    const error = new ConditionalCheckFailedException({ message: 'The conditional request failed', ...meta(400) });
    Object.assign(error, { Item: marshall({ pk: 'NODE#n1', sk: 'NODE', nodeId: 'n1', state: 'draining', version: 4 }) });
    const translated = translate(error);
    expect(translated).toBeInstanceOf(ConflictError);
    expect((translated as ConflictError).message).toBe('node n1 changed');
    expect((translated as ConflictError).current).toEqual({ nodeId: 'n1', state: 'draining', version: 4 });
  });

  it('a missing table is NotFoundError, a bad request a ValidationError; neither is retried', () => {
    const missing = translate(new ResourceNotFoundException({ message: 'Requested resource not found', ...meta(400) }));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as NotFoundError).message).toBe('table "nodescaler-test-state" not found');
    const bad = translate(Object.assign(new Error('One or more parameter values were invalid'), { name: 'ValidationException', $fault: 'client', ...meta(400) }));
    expect(bad).toBeInstanceOf(ValidationError);
    expect((bad as ValidationError).retryable).toBe(false);
  });

  it('an access denial stays what it is: not retried as transient', () => {
    const denied = Object.assign(new Error('not authorized'), { name: 'AccessDeniedException', $fault: 'client', ...meta(400) });
    expect(translate(denied)).toBe(denied);
  });
});
