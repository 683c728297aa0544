import type middy from '@middy/core';
import type { Context } from 'aws-lambda';
import type { Config } from '../config/index.js';

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
}

/** The handler with its middleware, when the environment gives one. */
export function withObservability<H extends middy.MiddyfiedHandler<any, any, Error, Context>>(handler: H, deps: HandlerDeps<unknown>): H {
  return deps.observability ? (handler.use(deps.observability) as H) : handler;
}
