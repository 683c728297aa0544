/**
 * Every SDK client of the functions and the CLI is built within the limits of
 * AWS_CALL_HTTP (the SDK's own default waits on a socket without end), and
 * SSM's SendCommand, which a gear move must not have sent twice, is retried
 * by the SDK only when AWS throttled it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { SendCommandCommand, SSMClient } from '@aws-sdk/client-ssm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AWS_CALL_HTTP, awsClientConfig, ThrottlingOnlyRetry } from '../../lib/adapters/aws-clients.js';
import { stateStoreFor } from '../../lib/adapters/dynamodb/from-settings.js';
import { ec2CloudFor, ec2HostsFor } from '../../lib/adapters/ec2/cloud.js';
import { ec2SenderHostsFor } from '../../lib/adapters/ec2/sender-hosts.js';
import { OpenShiftBrokerPlatform, openShiftBrokerPlatformFor } from '../../lib/adapters/platform/openshift-broker.js';
import { route53DnsFor } from '../../lib/adapters/route53/dns.js';
import { s3SpoolCloudFor } from '../../lib/adapters/s3/spool-cloud.js';
import { snsNotifierFor } from '../../lib/adapters/sns/notifier.js';
import { snsNotifyCloudFor } from '../../lib/adapters/sns/notify-cloud.js';
import { sqsQueueFor } from '../../lib/adapters/sqs/from-settings.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { parseConfig, parseDeployment, type Settings } from '../../lib/config/index.js';
import { TransientError } from '../../lib/errors.js';
import { listenLocally } from '../support/local-endpoint.js';

const credentials = { accessKeyId: 'x', secretAccessKey: 'y' };
const settings: Settings = {
  deployment: parseDeployment({ NODESCALER_STAGE: 'test', AWS_REGION: 'eu-west-1' }),
  config: parseConfig({
    handler: 'ec2',
    platform: { kind: 'openshift-broker', brokerInstanceId: 'i-0b10c0ffee0123456' },
    dns: { hostedZoneId: 'Z0NODESCALER' },
    spool: { bucket: 'spool-bucket' },
    notify: { topicArn: 'arn:aws:sns:eu-west-1:123456789012:nodescaler' },
    pools: [{ district: 'd1', profile: 'small', max: 3, naming: { base: 'd1-small', domain: 'example.com' }, template: { imageId: 'ami-0abc', instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }], subnets: ['subnet-aaa'] } }],
  }),
};

type ClientConfig = { requestHandler: { configProvider: Promise<Record<string, unknown>> }; retryStrategy: () => Promise<unknown> };

/** The client an adapter holds as `field` (`client` unless said). */
function clientOf(adapter: unknown, field = 'client'): { config: ClientConfig } {
  return (adapter as Record<string, { config: ClientConfig }>)[field]!;
}

/** The HTTP limits a client's request handler resolved. */
async function limitsOf(client: { config: ClientConfig }) {
  const resolved = await client.config.requestHandler.configProvider;
  return { connectionTimeout: resolved.connectionTimeout, requestTimeout: resolved.requestTimeout, throwOnRequestTimeout: resolved.throwOnRequestTimeout };
}

describe('every SDK client waits within AWS_CALL_HTTP', () => {
  const broker = openShiftBrokerPlatformFor(settings, new VirtualClock('2026-11-30T00:00:00Z'));
  it.each([
    ['DynamoDB state table', () => clientOf(stateStoreFor(settings.deployment))],
    ['SQS queues', () => clientOf(sqsQueueFor(settings.deployment))],
    ['EC2 (launch and release)', () => clientOf(ec2CloudFor(settings))],
    ['EC2 (release only)', () => clientOf(ec2HostsFor(settings))],
    ['EC2 (stats senders)', () => clientOf(ec2SenderHostsFor(settings))],
    ['Route 53', () => clientOf(route53DnsFor(settings))],
    ['S3 spool', () => clientOf(s3SpoolCloudFor(settings))],
    ['SNS notify handler', () => clientOf(snsNotifyCloudFor(settings))],
    ['SNS operator notices', () => clientOf(snsNotifierFor(settings))],
    ['SSM broker reads', () => clientOf(broker)],
    ['SSM broker commands', () => (broker as unknown as { options: { senderClient: { config: ClientConfig } } }).options.senderClient],
  ])('%s', async (_name, client) => {
    expect(await limitsOf(client())).toEqual(AWS_CALL_HTTP);
  });

  it("the broker's commands go through a client that retries only throttling; its reads keep the SDK's retry", async () => {
    const sender = (broker as unknown as { options: { senderClient: { config: ClientConfig } } }).options.senderClient;
    expect(await sender.config.retryStrategy()).toBeInstanceOf(ThrottlingOnlyRetry);
    expect(await clientOf(broker).config.retryStrategy()).not.toBeInstanceOf(ThrottlingOnlyRetry);
  });
});

/** A local SSM endpoint that answers each SendCommand with the next of `answers` (then success), or never when the answer is 'silence'. */
describe('ThrottlingOnlyRetry: a SendCommand AWS may have taken is not sent again', () => {
  let server: Server;
  let endpoint: string;
  let close: () => Promise<void>;
  let answers: Array<'throttled' | 'server-error' | 'silence'> = [];
  let requests = 0;
  const held: ServerResponse[] = [];

  beforeAll(async () => {
    server = createServer((request: IncomingMessage, response: ServerResponse) => {
      request.resume();
      request.on('end', () => {
        requests++;
        const answer = answers.shift();
        if (answer === 'silence') {
          held.push(response);
          return;
        }
        const [status, body] =
          answer === 'throttled' ? [400, { __type: 'ThrottlingException', Message: 'Rate exceeded' }] : answer === 'server-error' ? [500, { __type: 'InternalServerError', Message: 'We encountered an internal error' }] : [200, { Command: { CommandId: 'cmd-1' } }];
        response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
        response.end(JSON.stringify(body));
      });
    });
    ({ endpoint, close } = await listenLocally(server));
  });
  afterAll(async () => {
    for (const response of held) response.destroy();
    await close();
  });
  beforeEach(() => {
    answers = [];
    requests = 0;
  });

  const send = (client: SSMClient) => client.send(new SendCommandCommand({ InstanceIds: ['i-0b10c0ffee0123456'], DocumentName: 'nodescaler-test-broker-admin' }));
  const throttlingOnly = () => new SSMClient({ ...awsClientConfig('us-east-1', { retry: 'throttling-only' }), endpoint, credentials });

  it('sends a throttled command again (AWS did not take it)', async () => {
    answers = ['throttled'];
    const output = await send(throttlingOnly());
    expect(output.Command?.CommandId).toBe('cmd-1');
    expect(requests).toBe(2);
  });

  it('sends a command answered with a server error once, where the SDK by itself sends it three times', async () => {
    answers = ['server-error', 'server-error', 'server-error'];
    await expect(send(throttlingOnly())).rejects.toMatchObject({ name: 'InternalServerError' });
    expect(requests).toBe(1);
    answers = ['server-error', 'server-error', 'server-error'];
    requests = 0;
    await expect(send(new SSMClient({ ...awsClientConfig('us-east-1'), endpoint, credentials }))).rejects.toMatchObject({ name: 'InternalServerError' });
    expect(requests).toBe(3);
  });

  it('sends a command that timed out once', async () => {
    answers = ['silence', 'silence', 'silence'];
    // The strategy is what is tested here, so the wait is shortened.
    const client = new SSMClient({ ...awsClientConfig('us-east-1', { retry: 'throttling-only' }), requestHandler: { requestTimeout: 200, throwOnRequestTimeout: true }, endpoint, credentials });
    await expect(send(client)).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(requests).toBe(1);
  });

  it("a gear move whose SendCommand got a server error reaches the broker once, and fails as transient (the drain looks it up by its key)", async () => {
    answers = ['server-error', 'server-error', 'server-error'];
    const platform = new OpenShiftBrokerPlatform(new SSMClient({ ...awsClientConfig('us-east-1'), endpoint, credentials }), {
      senderClient: throttlingOnly(),
      brokerInstanceId: 'i-0b10c0ffee0123456',
      documentName: 'nodescaler-test-broker-admin',
      commandTimeoutMs: 20 * 60_000,
      brokerDir: '/var/www/openshift/broker',
    });
    const failure = await platform.startMove({ uuid: 'gear1', app: 'app1', size: 'small' }, 'node-a.example.com', 'node-b.example.com', { idempotencyKey: 'k1' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TransientError);
    expect(requests).toBe(1);
  });
});
