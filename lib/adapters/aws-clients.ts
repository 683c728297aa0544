/**
 * How every SDK client of ours is built: where it sends (region, and an
 * endpoint only for a local DynamoDB), how long it may wait, and whose retry
 * runs. The adapters' factories and the CLI take their options from here, so
 * no client is built with the SDK's defaults by accident.
 */

import { StandardRetryStrategy } from '@smithy/core/retry';
import type { RetryErrorInfo, RetryStrategyV2, StandardRetryToken as RetryToken } from '@smithy/types';

/**
 * Options for an SDK client whose calls the use cases wrap in their own
 * retry (`retryTransient`, `cloudRetry` in the configuration): with the SDK's
 * default 3 attempts inside our 4, one RunInstances could be sent 12 times
 * in one invocation. One retry layer, ours; its waits run on the injected
 * sleep, so the simulator and tests see them.
 */
export const RETRIED_BY_CALLER = { maxAttempts: 1 } as const;

/**
 * The HTTP limits of every call to AWS. The SDK waits on a socket without
 * end by default (its request timeout only warns), so a connection AWS
 * stops answering on (a NAT gateway dropping it, a VPC endpoint in trouble)
 * would hold the invocation until Lambda stopped it: the evaluator's 60 s
 * gone, no failure logged or stored, the message back on its queue with
 * nothing said why. Past these the call fails with a TimeoutError, which
 * every adapter turns into a TransientError and the one retry layer retries.
 * Even the SDK's 3 attempts (DynamoDB, SQS, SSM) fit the shortest function
 * timeout with room to record the failure: 3 x (3 + 10) s < 60 s. A call
 * that timed out may still have been carried out, as one the function's own
 * timeout cut short always could: a launch carries its client token, a write
 * is conditional on the record's version and re-read on a conflict, and a
 * broker command is sent by the SDK once (`ThrottlingOnlyRetry`) and looked
 * up by its key before it is sent again.
 */
export const AWS_CALL_HTTP = { connectionTimeout: 3_000, requestTimeout: 10_000, throwOnRequestTimeout: true } as const;

/**
 * The limits of a read of prices for the evaluator: a read is worth a few
 * seconds of its minute, never the minute (the Price List is in another
 * region, which a VPC's routes may not reach). Past these the read fails
 * (TransientError) and the pool keeps its last prices.
 */
export const PRICE_READ_HTTP = { connectionTimeout: 3_000, requestTimeout: 5_000, throwOnRequestTimeout: true } as const;

export interface AwsClientOptions {
  /**
   * Who retries a failed call: the SDK (`sdk`, the default: 3 attempts), the
   * use cases' one retry layer (`caller`: one attempt, `RETRIED_BY_CALLER`),
   * or the SDK only when AWS throttled the call (`throttling-only`:
   * `ThrottlingOnlyRetry`).
   */
  retry?: 'sdk' | 'caller' | 'throttling-only';
  /** A local DynamoDB (dynalite) instead of AWS's. */
  endpoint?: string;
}

/** An SDK client's options for `region`, within the limits of `AWS_CALL_HTTP`. */
export function awsClientConfig(region: string, options: AwsClientOptions = {}) {
  return {
    region,
    requestHandler: AWS_CALL_HTTP,
    ...(options.retry === 'caller' ? RETRIED_BY_CALLER : {}),
    ...(options.retry === 'throttling-only' ? { retryStrategy: new ThrottlingOnlyRetry() } : {}),
    ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
  };
}

/** A price reader's options: one attempt, as everywhere the caller retries, within `PRICE_READ_HTTP`. */
export function priceReadClientConfig(region: string) {
  return { region, ...RETRIED_BY_CALLER, requestHandler: PRICE_READ_HTTP };
}

/**
 * The SDK's standard retry, but only of a call AWS refused before taking it
 * (throttling). For a call that must not be carried out twice and has no
 * token that makes a repeat harmless: SSM's SendCommand of a gear move, where
 * a repeat after a timeout or a 5xx (which AWS may have taken) would start a
 * second `oo-admin-move` of the same gear. Those errors reach the caller,
 * which looks the command up by its key before it sends it again.
 */
export class ThrottlingOnlyRetry implements RetryStrategyV2 {
  private readonly standard: StandardRetryStrategy;

  constructor(maxAttempts = 3) {
    this.standard = new StandardRetryStrategy(maxAttempts);
  }

  acquireInitialRetryToken(scope: string): Promise<RetryToken> {
    return this.standard.acquireInitialRetryToken(scope);
  }

  refreshRetryTokenForRetry(token: RetryToken, errorInfo: RetryErrorInfo): Promise<RetryToken> {
    if (errorInfo.errorType !== 'THROTTLING') return Promise.reject(new Error(`not retried: ${errorInfo.errorType} (the call may have been taken)`));
    return this.standard.refreshRetryTokenForRetry(token, errorInfo);
  }

  recordSuccess(token: RetryToken): void {
    this.standard.recordSuccess(token);
  }
}
