/**
 * One retry layer: the SDK clients whose calls the use cases retry
 * themselves (`cloudRetry`) are built to make one attempt per call; the
 * clients nothing of ours retries keep the SDK's default.
 */
import { describe, expect, it } from 'vitest';
import { ec2CloudFor, ec2HostsFor } from '../../lib/adapters/ec2/cloud.js';
import { route53DnsFor } from '../../lib/adapters/route53/dns.js';
import { s3SpoolCloudFor } from '../../lib/adapters/s3/spool-cloud.js';
import { snsNotifierFor } from '../../lib/adapters/sns/notifier.js';
import { snsNotifyCloudFor } from '../../lib/adapters/sns/notify-cloud.js';
import { parseConfig, parseDeployment, type Settings } from '../../lib/config/index.js';

const settings: Settings = {
  deployment: parseDeployment({ NODESCALER_STAGE: 'test', AWS_REGION: 'eu-west-1' }),
  config: parseConfig({
    handler: 'ec2',
    dns: { hostedZoneId: 'Z0NODESCALER' },
    spool: { bucket: 'spool-bucket' },
    notify: { topicArn: 'arn:aws:sns:eu-west-1:123456789012:nodescaler' },
    pools: [{ district: 'd1', profile: 'small', max: 3, naming: { base: 'd1-small', domain: 'example.com' }, template: { imageId: 'ami-0abc', instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }], subnets: ['subnet-aaa'] } }],
  }),
};

/** The `maxAttempts` an adapter's SDK client resolves to (the client is the adapter's `client`). */
async function maxAttemptsOf(adapter: unknown): Promise<number> {
  const client = (adapter as { client: { config: { maxAttempts: () => Promise<number> } } }).client;
  return client.config.maxAttempts();
}

describe('SDK clients and our retry', () => {
  it.each([
    ['EC2 (launch and release)', () => ec2CloudFor(settings)],
    ['EC2 (release only)', () => ec2HostsFor(settings)],
    ['Route 53', () => route53DnsFor(settings)],
    ['S3 spool', () => s3SpoolCloudFor(settings)],
    ['SNS notify handler', () => snsNotifyCloudFor(settings)],
  ])('%s: one attempt per call, retried by cloudRetry alone', async (_name, build) => {
    expect(await maxAttemptsOf(build())).toBe(1);
  });

  it('the operator notifier, which nothing of ours retries, keeps the SDK default of 3 attempts', async () => {
    expect(await maxAttemptsOf(snsNotifierFor(settings))).toBe(3);
  });
});
