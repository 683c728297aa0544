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
