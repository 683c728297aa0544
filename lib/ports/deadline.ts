import type { Clock } from './clock.js';

/**
 * The end of the current invocation, for adapters that wait (the broker's
 * awaited commands): no wait may outlast the function, whose remaining time
 * only the handler knows. One per cold start; the handler sets it at the
 * start of every invocation from the Lambda context. Unset (a CLI, a test
 * without a handler): no limit beyond the adapter's own timeouts.
 */
export class InvocationDeadline {
  private endsAt: number | undefined;

  constructor(private readonly clock: Clock) {}

  /** The invocation has `remainingMs` left from now (the handler's safety margin already taken off). */
  start(remainingMs: number): void {
    this.endsAt = this.clock.now().getTime() + remainingMs;
  }

  /** Milliseconds left, Infinity when unset. */
  remaining(): number {
    return this.endsAt === undefined ? Infinity : this.endsAt - this.clock.now().getTime();
  }
}
