/**
 * The spot market behind the `SpotPrices` port, for use-case tests: quotes
 * per type and zone that a test sets, failures it scripts, and every request
 * recorded. The EC2 adapter itself is tested against the SDK mock
 * (test/unit/ec2-spot-prices.test.ts).
 */
import type { SpotQuote } from '../../lib/domain/node-price.js';
import type { NodescalerError } from '../../lib/errors.js';
import type { SpotPrices } from '../../lib/ports/spot-prices.js';

export class ScriptedSpotMarket implements SpotPrices {
  /** $ per hour by type, then zone. */
  readonly prices = new Map<string, Record<string, number>>();
  /** The types of each request, in order. */
  readonly requests: string[][] = [];
  private readonly failures: NodescalerError[] = [];

  quote(instanceType: string, byZone: Record<string, number>): this {
    this.prices.set(instanceType, byZone);
    return this;
  }

  /** The next request fails with `error`. */
  failNext(error: NodescalerError): this {
    this.failures.push(error);
    return this;
  }

  async currentSpotPrices(instanceTypes: readonly string[]): Promise<SpotQuote[]> {
    this.requests.push([...instanceTypes]);
    const failure = this.failures.shift();
    if (failure) throw failure;
    return instanceTypes.flatMap((instanceType) => Object.entries(this.prices.get(instanceType) ?? {}).map(([zone, dollars]) => ({ instanceType, zone, dollars })));
  }
}
