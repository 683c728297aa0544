import type { SpotQuote } from '../domain/node-price.js';

/**
 * The spot market's current prices, as the cloud quotes them: for each listed
 * instance type, the price in effect now in each zone that sells it (Linux).
 * A type not sold as spot in the region is absent from the result; prices
 * that cannot be read as a positive number are left out, not guessed.
 * Errors: `TransientError` (throttling, 5xx, network: read again later),
 * `ValidationError` (access denied, a bad request: fix the role or the types).
 */
export interface SpotPrices {
  currentSpotPrices(instanceTypes: readonly string[]): Promise<SpotQuote[]>;
}
