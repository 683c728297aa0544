/**
 * What every item module of the DynamoDB adapter shares: items handed out
 * without their key attributes, and SDK errors translated into the
 * project's error family.
 */
import { BatchGetCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient, type QueryCommandInput, type QueryCommandOutput, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { ConflictError, NotFoundError, TransientError, ValidationError } from '../../errors.js';
import { awsErrorInfo } from '../aws-errors.js';
import { TABLE_KEYS } from './table-keys.js';

const { partition: PK, sort: SK, poolIndexPartition: GPK, poolIndexSort: GSK, ttl: TTL } = TABLE_KEYS;
const KEY_ATTRIBUTES = [PK, SK, GPK, GSK, TTL];

export function strip<T>(item: Record<string, unknown> | undefined): T | undefined {
  if (!item) return undefined;
  const record = { ...item };
  for (const attribute of KEY_ATTRIBUTES) delete record[attribute];
  return record as T;
}

/**
 * DynamoDB's own codes first (a lost condition, a missing table, a bad
 * request); what is worth retrying is the shared classification
 * (lib/adapters/aws-errors.ts: throttling, 5xx, timeouts, network), so every
 * AWS adapter retries the same errors.
 */
export function translateError(error: unknown, conflict: string, tableName: string): unknown {
  const info = awsErrorInfo(error);
  const name = info.name;
  if (name === 'ConditionalCheckFailedException') {
    const old = (error as { Item?: Parameters<typeof unmarshall>[0] }).Item;
    return new ConflictError(conflict, strip(old ? unmarshall(old) : undefined));
  }
  if (info.transient) return new TransientError(`DynamoDB ${info.detail}`, { cause: error });
  if (name === 'ResourceNotFoundException') return new NotFoundError('table', tableName);
  if (name === 'ValidationException') {
    return new ValidationError({ path: '', message: `DynamoDB rejected the request: ${(error as Error).message}` });
  }
  return error;
}

/** One call to DynamoDB through the store's retry and error translation (`conflict`: the message of a failed condition). */
export type Send = <R>(call: () => Promise<R>, conflict?: string) => Promise<R>;

/** Every item a query matches, page after page, each page one call through `send`. */
export async function queryAll(client: DynamoDBDocumentClient, send: Send, input: Omit<QueryCommandInput, 'ExclusiveStartKey'>): Promise<NonNullable<QueryCommandOutput['Items']>> {
  const items: NonNullable<QueryCommandOutput['Items']> = [];
  let startKey: QueryCommandInput['ExclusiveStartKey'];
  do {
    const page = await send(() => client.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey })));
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** Keys one BatchGetItem takes. */
const BATCH_GET_KEYS = 100;
/** Rounds of unprocessed keys a read retries before it gives up (throttling): the caller retries later. */
const MAX_UNPROCESSED_ROUNDS = 5;

/**
 * Every item of `keys` that exists, in batches of 100 with their unprocessed keys retried; `TransientError` (naming
 * `what`) when keys are still left after a few rounds.
 */
export async function batchGetAll(
  client: DynamoDBDocumentClient,
  tableName: string,
  send: Send,
  keys: ReadonlyArray<Record<string, unknown>>,
  what: string,
  read: { ProjectionExpression?: string; ExpressionAttributeNames?: Record<string, string>; ConsistentRead?: boolean } = {},
): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  for (let i = 0; i < keys.length; i += BATCH_GET_KEYS) {
    let left: Array<Record<string, unknown>> = keys.slice(i, i + BATCH_GET_KEYS);
    for (let round = 0; left.length > 0; round++) {
      if (round >= MAX_UNPROCESSED_ROUNDS) throw new TransientError(`${what}: ${left.length} keys left unprocessed`);
      const page = await send(() => client.send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: left, ...read } } })));
      items.push(...(page.Responses?.[tableName] ?? []));
      left = (page.UnprocessedKeys?.[tableName]?.Keys as Array<Record<string, unknown>> | undefined) ?? [];
    }
  }
  return items;
}

/** Translates `undefined` to attribute removal, so a patch can clear a field. */
export function patchExpression(
  patch: Record<string, unknown>,
  names: Record<string, string>,
  values: Record<string, unknown>,
): { set: string[]; remove: string[] } {
  const set: string[] = [];
  const remove: string[] = [];
  Object.entries(patch).forEach(([field, value], i) => {
    names[`#p${i}`] = field;
    if (value === undefined) remove.push(`#p${i}`);
    else {
      values[`:p${i}`] = value;
      set.push(`#p${i} = :p${i}`);
    }
  });
  return { set, remove };
}

export function updateExpression(set: string[], remove: string[]): string {
  return [set.length ? `SET ${set.join(', ')}` : '', remove.length ? `REMOVE ${remove.join(', ')}` : ''].filter(Boolean).join(' ');
}

/** A conditional update; a failed condition on a missing item is `NotFoundError`, otherwise `ConflictError`. */
export async function conditionalUpdate<T>(
  client: DynamoDBDocumentClient,
  tableName: string,
  send: Send,
  input: Omit<UpdateCommandInput, 'TableName'>,
  subject: { kind: string; id: string; conflict: string },
): Promise<T> {
  try {
    const result = await send(
      () => client.send(new UpdateCommand({ ...input, TableName: tableName, ReturnValues: 'ALL_NEW', ReturnValuesOnConditionCheckFailure: 'ALL_OLD' })),
      subject.conflict,
    );
    return strip<T>(result.Attributes)!;
  } catch (error) {
    if (error instanceof ConflictError && error.current === undefined) throw new NotFoundError(subject.kind, subject.id);
    throw error;
  }
}
