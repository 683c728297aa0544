/**
 * A price read never holds up the evaluator: both price readers' clients
 * give up on an endpoint that does not answer (the Price List is in another
 * region; a VPC may have no route to it), and the read then fails as a
 * TransientError, which the evaluator logs and counts while the pool keeps
 * its last prices (lib/app/market-prices.ts). The SDK's own default waits
 * without end.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { EC2Client } from '@aws-sdk/client-ec2';
import { PricingClient } from '@aws-sdk/client-pricing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRICE_READ_HTTP, priceReadClientConfig } from '../../lib/adapters/aws-clients.js';
import { Ec2SpotPrices, ec2SpotPricesFor } from '../../lib/adapters/ec2/spot-prices.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { AwsOnDemandPrices, awsOnDemandPricesFor } from '../../lib/adapters/pricing/on-demand-prices.js';
import { loadSettings } from '../../lib/config/index.js';
import { TransientError } from '../../lib/errors.js';
import { listenLocally } from '../support/local-endpoint.js';

const credentials = { accessKeyId: 'x', secretAccessKey: 'y' };
const settings = loadSettings({ AWS_REGION: 'eu-west-1', NODESCALER_CONFIG: JSON.stringify({ handler: 'log', pools: [{ district: 'd1', profile: 'small', max: 3, naming: { base: 'n' } }] }) });

/** The HTTP limits a reader's client was built with, as its request handler resolved them. */
async function limitsOf(reader: unknown) {
  const handler = (reader as { client: { config: { requestHandler: { configProvider: Promise<Record<string, unknown>> } } } }).client.config.requestHandler;
  const resolved = await handler.configProvider;
  return { connectionTimeout: resolved.connectionTimeout, requestTimeout: resolved.requestTimeout, throwOnRequestTimeout: resolved.throwOnRequestTimeout };
}

describe('price reads are bounded in time', () => {
  let silent: Server;
  let endpoint: string;
  let close: () => Promise<void>;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    // Accepts every connection and never answers.
    silent = createServer((socket) => sockets.push(socket));
    ({ endpoint, close } = await listenLocally(silent));
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await close();
  });

  it("builds both readers' clients with the price read's limits, one attempt each", async () => {
    expect(await limitsOf(awsOnDemandPricesFor(settings))).toEqual(PRICE_READ_HTTP);
    expect(await limitsOf(ec2SpotPricesFor(settings, new VirtualClock('2026-11-30T00:00:00Z')))).toEqual(PRICE_READ_HTTP);
    expect(await (awsOnDemandPricesFor(settings) as unknown as { client: PricingClient }).client.config.maxAttempts()).toBe(1);
  });

  it('fails a read of an endpoint that never answers as a TransientError, instead of waiting on it', async () => {
    const onDemand = new AwsOnDemandPrices(new PricingClient({ ...priceReadClientConfig('us-east-1'), endpoint, credentials }), 'eu-west-1');
    const spot = new Ec2SpotPrices(new EC2Client({ ...priceReadClientConfig('eu-west-1'), endpoint, credentials }), new VirtualClock('2026-11-30T00:00:00Z'));
    const [listed, quoted] = await Promise.all([onDemand.onDemandPrices(['m5.xlarge']).catch((error: unknown) => error), spot.currentSpotPrices(['m5.xlarge']).catch((error: unknown) => error)]);
    for (const failure of [listed, quoted]) {
      expect(failure).toBeInstanceOf(TransientError);
      expect((failure as Error).message).toMatch(/TimeoutError/);
    }
    expect(sockets.length).toBeGreaterThanOrEqual(2);
  });
});
