import type middy from '@middy/core';
import type { Context } from 'aws-lambda';
import type { Config } from '../config/index.js';
import type { InvocationDeadline } from '../ports/deadline.js';

/**
 * What a handler factory takes: its use case's ports, the configuration, and
 * on Lambda the observability middleware (lib/adapters/lambda/runtime.ts). An
 * environment module (lib/wiring/aws|local|sim.ts) builds them; a test builds
 * them itself.
 */
export interface HandlerDeps<P> {
  ports: P;
  config: Config;
  /** Request ids on log lines and metrics flushed after every invocation; absent where the ports log and count by themselves. */
  observability?: middy.MiddlewareObj<unknown, unknown, Error, Context>;
  /** The invocation's end, read by the adapters that wait (the broker's); the handler sets it from the Lambda context. */
  deadline?: InvocationDeadline;
}

/** Time kept back from the Lambda deadline for what follows a wait: recording its outcome, the batch response. */
export const DEADLINE_MARGIN_MS = 5_000;

/** At the start of an invocation: no adapter waits past its end (less the margin). */
export function startInvocation(deps: HandlerDeps<unknown>, context: Context | undefined): void {
  if (context && typeof context.getRemainingTimeInMillis === 'function') deps.deadline?.start(context.getRemainingTimeInMillis() - DEADLINE_MARGIN_MS);
}

/** The handler with its middleware, when the environment gives one. */
export function withObservability<H extends middy.MiddyfiedHandler<any, any, Error, Context>>(handler: H, deps: HandlerDeps<unknown>): H {
  return deps.observability ? (handler.use(deps.observability) as H) : handler;
}
