import type { OnDemandQuote, SpotQuote } from '../domain/market-prices.js';

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

/**
 * The cloud's on-demand list prices in one region (`region`, the stage's):
 * for each listed instance type the region sells, its price per hour (Linux,
 * shared tenancy). A type the region does not sell is absent from the result;
 * prices that cannot be read as a positive number are left out, not guessed.
 * Errors: as `SpotPrices`.
 */
export interface OnDemandPrices {
  readonly region: string;
  onDemandPrices(instanceTypes: readonly string[]): Promise<OnDemandQuote[]>;
}
