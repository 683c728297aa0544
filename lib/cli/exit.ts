/**
 * Exit codes of `nodescaler`, for scripts:
 *
 *   0  ok
 *   1  error: the state or AWS could not be reached, or something unexpected failed
 *   2  invalid input: unknown command or option, a bad argument, an invalid configuration file
 *   3  not found: unknown node or pool, no local state, no such table or queue
 *   4  refused: the request does not fit the current state (drain of a protected or
 *      non-active node, cancel-drain without a drain, too many drains), nothing changed
 */
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  notFound: 3,
  refused: 4,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the CLI reports as one clear message with its exit code (no stack). */
export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCode,
    message: string,
    /** A further line: what to do about it. */
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export function usageError(message: string, hint?: string): CliError {
  return new CliError(EXIT.usage, message, hint);
}

export function notFound(message: string, hint?: string): CliError {
  return new CliError(EXIT.notFound, message, hint);
}

export function refused(message: string, hint?: string): CliError {
  return new CliError(EXIT.refused, message, hint);
}
