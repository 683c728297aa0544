import type { Context } from 'aws-lambda';
import type { Log, LogAttributes } from '../../ports/log.js';

/** The levels a function may log at; `SILENT` turns logging off (tests). */
export type LogLevelName = 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'CRITICAL' | 'SILENT';

const LEVELS: Record<LogLevelName, number> = { TRACE: 6, DEBUG: 8, INFO: 12, WARN: 16, ERROR: 20, CRITICAL: 24, SILENT: 28 };

/** Where a line goes: `err` for WARN and above, as Powertools' console does. */
export type LineWriter = (stream: 'out' | 'err', line: string) => void;

const processWriter: LineWriter = (stream, line) => {
  (stream === 'err' ? process.stderr : process.stdout).write(line);
};

/**
 * One function's structured log: one JSON object per line, in the shape of
 * the Powertools Logger it replaced (`level`, `message`, `timestamp`,
 * `service`, then, once `addContext` ran, `cold_start`, `function_arn`,
 * `function_memory_size`, `function_name`, `function_request_id`, then the
 * attributes), so log queries written for either read both.
 *
 * Why not Powertools: its Logger was about 4 ms of every cold start (23 KiB
 * to compile, and a console, a buffer and async-local stores built at load),
 * the largest single share of what our code adds to a function's start
 * (docs/BENCHMARKS.md, "Cold start"); nodescaler uses none of what that
 * buys (sampling, buffering, child loggers, persistent keys).
 *
 * The level comes from configuration alone (`NODESCALER_LOG_LEVEL`). Never
 * throws: an attribute JSON cannot hold (a cycle, a bigint, an Error) is
 * written in a form it can.
 */
export class JsonLogger implements Log {
  private readonly threshold: number;
  private context: Record<string, unknown> = {};
  private coldStart = true;

  constructor(
    private readonly serviceName: string,
    logLevel: LogLevelName = 'INFO',
    private readonly write: LineWriter = processWriter,
  ) {
    this.threshold = LEVELS[logLevel] ?? LEVELS.INFO;
  }

  /** The invocation's keys on every later line; `cold_start` is true for the first invocation only. */
  addContext(context: Context): void {
    this.context = {
      cold_start: this.coldStart,
      function_arn: context.invokedFunctionArn,
      function_memory_size: context.memoryLimitInMB,
      function_name: context.functionName,
      function_request_id: context.awsRequestId,
    };
    this.coldStart = false;
  }

  // Fields, not methods: a caller may pass `log.warn` along unbound (an `onRetry` callback).
  readonly debug = (message: string, attributes?: LogAttributes): void => this.log('DEBUG', message, attributes);
  readonly info = (message: string, attributes?: LogAttributes): void => this.log('INFO', message, attributes);
  readonly warn = (message: string, attributes?: LogAttributes): void => this.log('WARN', message, attributes);
  readonly error = (message: string, attributes?: LogAttributes): void => this.log('ERROR', message, attributes);

  private log(level: Exclude<LogLevelName, 'SILENT'>, message: string, attributes?: LogAttributes): void {
    if (LEVELS[level] < this.threshold) return;
    const base = { level, message, timestamp: new Date().toISOString(), service: this.serviceName, ...this.context };
    let text: string;
    try {
      text = JSON.stringify({ ...base, ...attributes }, jsonSafe());
    } catch (error) {
      // An attribute no replacer foresaw (a throwing getter or toJSON): the line still says what happened.
      text = JSON.stringify({ ...base, attributes_unwritable: String(error) });
    }
    try {
      this.write(LEVELS[level] >= LEVELS.WARN ? 'err' : 'out', `${text}\n`);
    } catch {
      // A log line must never fail the work it describes.
    }
  }
}

/** The logger of one function (`serviceName`), at the configured level. */
export function createLogger(serviceName: string, logLevel: LogLevelName = 'INFO', write?: LineWriter): JsonLogger {
  return new JsonLogger(serviceName, logLevel, write);
}

/** A JSON.stringify replacer for one line: errors as Powertools formats them, bigints as text, a cycle as `[Circular]`. */
function jsonSafe(): (this: unknown, key: string, value: unknown) => unknown {
  const ancestors: unknown[] = [];
  return function (this: unknown, _key: string, value: unknown) {
    if (typeof value === 'bigint') return value.toString();
    if (typeof value !== 'object' || value === null) return value;
    // `this` holds `value`: every object deeper than the holder has been left.
    while (ancestors.length > 0 && ancestors.at(-1) !== this) ancestors.pop();
    if (ancestors.includes(value)) return '[Circular]';
    ancestors.push(value);
    const written = value instanceof Error ? formatError(value) : value instanceof Map ? Object.fromEntries(value) : value instanceof Set ? [...value] : value;
    // JSON descends into what is returned: its children are held by it.
    if (written !== value) ancestors.push(written);
    return written;
  };
}

/** An Error's fields as Powertools writes them; a `cause` that is an Error is formatted in turn by the replacer. */
function formatError(error: Error): Record<string, unknown> {
  const { name, message, stack } = error;
  const formatted: Record<string, unknown> = { name, location: codeLocation(stack), message, stack };
  if (error.cause !== undefined) formatted.cause = error.cause;
  for (const [key, value] of Object.entries(error)) if (!(key in formatted)) formatted[key] = value;
  return formatted;
}

/** `file:line` of the first stack frame, as Powertools' `location`. */
function codeLocation(stack: string | undefined): string {
  const match = stack ? /\(([^()]*?):(\d+?):(\d+?)\)\\?$/m.exec(stack) : null;
  return match ? `${match[1]}:${Number(match[2])}` : '';
}
