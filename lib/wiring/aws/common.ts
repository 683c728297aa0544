/**
 * The AWS environment: the ports each deployed function runs on, built once
 * per cold start from the settings (functions/*.ts). One file per function,
 * so that a function's bundle holds only the SDK clients it uses (an unused
 * import of an SDK client would stay in the bundle: the SDK has side effects).
 * A test replaces the Lambda runtime (its log and metrics) or some ports.
 */
import type { lambdaRuntime } from '../../adapters/lambda/runtime.js';
import type { Settings } from '../../config/index.js';
import { systemClock } from '../../ports/clock.js';
import { InvocationDeadline } from '../../ports/deadline.js';

/** The Lambda runtime of one function: its logger as the `Log` port, its metrics, the middleware that flushes them. */
export type LambdaRuntime = Pick<ReturnType<typeof lambdaRuntime>, 'log' | 'metrics'> & Partial<Pick<ReturnType<typeof lambdaRuntime>, 'observability'>>;

/** The configuration, the invocation's deadline (the handler sets it, the broker adapter reads it) and, when the runtime has one, the observability middleware. */
export function common(settings: Settings, runtime: LambdaRuntime) {
  return {
    config: settings.config,
    deadline: new InvocationDeadline(systemClock),
    ...(runtime.observability ? { observability: runtime.observability } : {}),
  };
}
