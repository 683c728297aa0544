/**
 * The typed error family. Adapters translate SDK errors into these, and the
 * handlers decide retry versus dead-letter from `retryable` alone, never from
 * an SDK error name (the Karpenter way: error class drives retry).
 */

export type ErrorCode = 'validation' | 'conflict' | 'capacity-unavailable' | 'not-found' | 'transient';

export abstract class NodescalerError extends Error {
  abstract readonly code: ErrorCode;
  /** True when the same call may succeed later without any change to its input. */
  abstract readonly retryable: boolean;
  /**
   * The class name, written out: logs report it as errorName, and the Lambda
   * bundles are minified without keeping function names (infra/esbuild.yml).
   */
  abstract override readonly name: string;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export interface ValidationIssue {
  /** Dotted path of the offending field, e.g. `pools.1.min`; empty for the whole value. */
  path: string;
  message: string;
  /** The offending value, when there is one to show. */
  value?: unknown;
}

/** Input that can never succeed as it is: bad message, bad config, illegal transition. */
export class ValidationError extends NodescalerError {
  override readonly name = 'ValidationError';
  readonly code = 'validation' as const;
  readonly retryable = false;
  readonly issues: readonly ValidationIssue[];

  constructor(issues: readonly ValidationIssue[] | ValidationIssue, context?: string) {
    const list = Array.isArray(issues) ? issues : [issues as ValidationIssue];
    super(formatIssues(list, context));
    this.issues = list;
  }

  /** Path of the first offending field, the one a log line names. */
  get field(): string {
    return this.issues[0]?.path ?? '';
  }
}

/**
 * A conditional write lost: the item is not in the expected state or version.
 * Carries the item as it is now, so the caller can decide without a second read.
 */
export class ConflictError<T = unknown> extends NodescalerError {
  override readonly name = 'ConflictError';
  readonly code = 'conflict' as const;
  readonly retryable = true;

  constructor(
    message: string,
    readonly current: T | undefined,
  ) {
    super(message);
  }
}

/** The cloud cannot provide this offering now (quota, insufficient capacity, no free addresses). */
export class CapacityUnavailableError extends NodescalerError {
  override readonly name = 'CapacityUnavailableError';
  readonly code = 'capacity-unavailable' as const;
  readonly retryable = true;

  constructor(
    message: string,
    readonly reason: string,
    readonly offering?: { instanceType?: string; subnetId?: string },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export class NotFoundError extends NodescalerError {
  override readonly name = 'NotFoundError';
  readonly code = 'not-found' as const;
  readonly retryable = false;

  constructor(
    readonly kind: string,
    readonly id: string,
  ) {
    super(`${kind} ${JSON.stringify(id)} not found`);
  }
}

/** Throttling, timeouts, 5xx: worth retrying with backoff. */
export class TransientError extends NodescalerError {
  override readonly name = 'TransientError';
  readonly code = 'transient' as const;
  readonly retryable = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export function isRetryable(error: unknown): boolean {
  return error instanceof NodescalerError ? error.retryable : true;
}

export function formatValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    // JSON.stringify throws on cycles, BigInt and very deep nesting (stack
    // overflow); String() can overflow the stack too, or throw for objects
    // without a usable toString. Formatting an error must never throw.
    try {
      text = String(value);
    } catch {
      text = '[unprintable value]';
    }
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function formatIssues(issues: readonly ValidationIssue[], context?: string): string {
  const lines = issues.map((issue) => {
    const where = issue.path === '' ? '(root)' : issue.path;
    const shown = 'value' in issue ? ` (got ${formatValue(issue.value)})` : '';
    return `${where}: ${issue.message}${shown}`;
  });
  const head = context ? `${context}: ` : '';
  return lines.length === 1 ? `${head}${lines[0]}` : `${head}${lines.length} problems\n  - ${lines.join('\n  - ')}`;
}

/** `Name: message` of an error, for log attributes and reasons. */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
