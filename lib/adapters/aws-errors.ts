/**
 * What the AWS adapters need to know about an SDK v3 error before they map it
 * onto the typed errors of lib/errors.ts: its code (`name`), its message, and
 * whether retrying the same call later may succeed (throttling, 5xx, network,
 * timeouts). Each adapter maps its service's own codes first.
 */

const THROTTLING = new Set([
  'RequestLimitExceeded',
  'Throttling',
  'ThrottlingException',
  'RequestThrottled',
  'RequestThrottledException',
  'TooManyRequestsException',
  'SlowDown',
  'PriorRequestNotComplete',
  'ProvisionedThroughputExceededException',
  // SQS, SNS and S3 with a KMS key: KMS throttled the service's own call.
  'KmsThrottled',
  // DynamoDB: another transaction holds an item of this request; the same request later may go through.
  'TransactionConflictException',
]);
const SERVER = new Set(['InternalError', 'InternalFailure', 'InternalServerError', 'ServiceUnavailable', 'Unavailable', 'ServiceFailure']);
const TIMEOUT = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException', 'AbortError']);
const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH']);

export interface AwsErrorInfo {
  name: string;
  message: string;
  /** `name: message`, for error messages. */
  detail: string;
  status?: number;
  /** Worth retrying unchanged: throttling, server fault, timeout, network. */
  transient: boolean;
  /** The service called the request itself bad. */
  clientFault: boolean;
}

export function awsErrorInfo(error: unknown): AwsErrorInfo {
  const e = (typeof error === 'object' && error !== null ? error : {}) as {
    name?: unknown;
    message?: unknown;
    code?: unknown;
    Code?: unknown;
    $fault?: unknown;
    $retryable?: unknown;
    $metadata?: { httpStatusCode?: unknown };
  };
  const rawName = typeof e.Code === 'string' && e.Code !== '' ? e.Code : typeof e.name === 'string' ? e.name : 'Error';
  const name = rawName;
  const message = typeof e.message === 'string' ? e.message : String(error);
  const status = typeof e.$metadata?.httpStatusCode === 'number' ? e.$metadata.httpStatusCode : undefined;
  const transient =
    THROTTLING.has(name) ||
    SERVER.has(name) ||
    TIMEOUT.has(name) ||
    (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) ||
    (e.$retryable !== undefined && e.$retryable !== null) ||
    status === 429 ||
    (status !== undefined && status >= 500) ||
    e.$fault === 'server';
  const info: AwsErrorInfo = {
    name,
    message,
    detail: message !== '' && message !== name ? `${name}: ${message}` : name,
    transient,
    clientFault: e.$fault === 'client' || (status !== undefined && status >= 400 && status < 500),
  };
  if (status !== undefined) info.status = status;
  return info;
}

/**
 * Options for an SDK client whose calls the use cases wrap in their own
 * retry (`retryTransient`, `cloudRetry` in the configuration): with the SDK's
 * default 3 attempts inside our 4, one RunInstances could be sent 12 times
 * in one invocation. One retry layer, ours; its waits run on the injected
 * sleep, so the simulator and tests see them.
 */
export const RETRIED_BY_CALLER = { maxAttempts: 1 } as const;

/**
 * Options for a client that reads prices for the evaluator: a read is worth a
 * few seconds of its minute, never the minute. The SDK waits on a socket
 * without end by default (EC2: 15 minutes), so an unreachable endpoint (the
 * Price List is in another region, past a VPC's routes) would hang every
 * evaluation until Lambda stopped it, and no failure would ever be stored.
 * Past these the read fails with a TimeoutError (transient) and the pool
 * keeps its last prices. One attempt, as everywhere (`RETRIED_BY_CALLER`).
 */
export function priceReadClientConfig(region: string) {
  return { region, ...RETRIED_BY_CALLER, requestHandler: PRICE_READ_HTTP };
}

/** The HTTP limits of a price read (`priceReadClientConfig`). */
export const PRICE_READ_HTTP = { connectionTimeout: 3_000, requestTimeout: 5_000, throwOnRequestTimeout: true } as const;
