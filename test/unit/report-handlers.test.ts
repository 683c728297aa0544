import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { LogCloud } from '../../lib/adapters/cloud/log-cloud.js';
import { S3SpoolCloud } from '../../lib/adapters/s3/spool-cloud.js';
import { SnsNotifier } from '../../lib/adapters/sns/notifier.js';
import { SnsNotifyCloud } from '../../lib/adapters/sns/notify-cloud.js';
import { parseConfig } from '../../lib/config/index.js';
import { TransientError, ValidationError } from '../../lib/errors.js';
import type { HostSpec } from '../../lib/ports/cloud.js';
import { MemoryLog } from '../../lib/adapters/memory/log.js';

const config = parseConfig({
  pools: [
    {
      district: 'd1',
      profile: 'small',
      max: 5,
      template: { imageId: 'ami-1', instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }], subnets: ['subnet-a'], userData: 'echo hi', volume: {} },
    },
  ],
});
const spec: HostSpec = {
  pool: 'd1/small',
  district: 'd1',
  profile: 'small',
  cloudName: 'node_3',
  hostName: 'node-3.example.com',
  decisionId: 'up:d1_small:1',
  idempotencyToken: 'up:d1_small:1#0',
  offering: { instanceType: 'm5.xlarge', subnetId: 'subnet-a' },
  reason: 'pool d1/small at 0.91 >= 0.80 for 2m; +1 node to 0.70',
};
const release = { pool: 'd1/small', district: 'd1', profile: 'small', hostName: 'node-3.example.com', cloudName: 'node_3', reason: 'decommissioning: drain x complete' };
const s3 = mockClient(S3Client);
const sns = mockClient(SNSClient);
afterAll(() => { s3.restore(); sns.restore(); });
const credentials = { accessKeyId: 'x', secretAccessKey: 'x' };
const meta = { httpStatusCode: 503, requestId: 'r' };

beforeEach(() => {
  s3.reset();
  sns.reset();
  s3.on(PutObjectCommand).resolves({});
  sns.on(PublishCommand).resolves({ MessageId: 'm' });
});

describe('handler log', () => {
  it('logs the full specification, creates nothing, and reports the host as requested', async () => {
    const log = new MemoryLog();
    const host = await new LogCloud(log, config).createHost(spec);
    expect(host).toStrictEqual({ state: 'requested', instanceType: 'm5.xlarge' });
    expect(log.lines).toHaveLength(1);
    expect(log.lines[0]!.attributes).toMatchObject({
      kind: 'add-node',
      hostName: 'node-3.example.com',
      cloudName: 'node_3',
      reason: spec.reason,
      template: { imageId: 'ami-1', volume: { sizeGiB: 50, type: 'gp3', device: '/dev/xvdc' } },
    });
    await new LogCloud(log, config).reportRelease(release);
    expect(log.lines[1]!.message).toBe('handler log: would release the host of node node-3.example.com in pool d1/small; nothing was terminated');
  });
});

describe('handler spool', () => {
  const spool = () => new S3SpoolCloud(new S3Client({ region: 'us-east-1', credentials }), { bucket: 'ops-spool', prefix: 'nodescaler/' }, config);

  it('writes each specification as JSON under the pool prefix, one key per host and kind', async () => {
    expect(await spool().createHost(spec)).toStrictEqual({ state: 'requested', instanceType: 'm5.xlarge' });
    await spool().reportRelease(release);
    const inputs = s3.commandCalls(PutObjectCommand).map((call) => call.args[0].input);
    expect(inputs.map((input) => [input.Bucket, input.Key, input.ContentType])).toEqual([
      ['ops-spool', 'nodescaler/d1/small/node-3.example.com.add.json', 'application/json'],
      ['ops-spool', 'nodescaler/d1/small/node-3.example.com.remove.json', 'application/json'],
    ]);
    const body = JSON.parse(inputs[0]!.Body as string);
    expect(body).toMatchObject({ kind: 'add-node', v: 1, pool: 'd1/small', hostName: 'node-3.example.com', requestId: 'up:d1_small:1#0', instanceType: 'm5.xlarge', subnetId: 'subnet-a' });
    expect(body.userData).toContain("NODESCALER_CLOUD_NAME='node_3'");
    expect(JSON.parse(inputs[1]!.Body as string)).toStrictEqual({ kind: 'remove-node', v: 1, ...release });
  });

  it('maps S3 errors: SlowDown is transient, a missing bucket names spool.bucket', async () => {
    s3.on(PutObjectCommand).rejectsOnce(Object.assign(new Error('Please reduce your request rate.'), { name: 'SlowDown', $fault: 'server', $metadata: meta }));
    await expect(spool().createHost(spec)).rejects.toBeInstanceOf(TransientError);
    s3.on(PutObjectCommand).rejects(Object.assign(new Error('The specified bucket does not exist'), { name: 'NoSuchBucket', $fault: 'client', $metadata: { httpStatusCode: 404 } }));
    await expect(spool().createHost(spec)).rejects.toSatisfy((error: unknown) => error instanceof ValidationError && error.field === 'spool.bucket');
  });
});

describe('handler notify', () => {
  it('publishes a readable message saying what is needed and why', async () => {
    const notify = new SnsNotifyCloud(new SNSClient({ region: 'us-east-1', credentials }), 'arn:aws:sns:us-east-1:123456789012:ops', config);
    await notify.createHost(spec);
    const input = sns.commandCalls(PublishCommand)[0]!.args[0].input;
    expect(input.TopicArn).toBe('arn:aws:sns:us-east-1:123456789012:ops');
    expect(input.Subject).toBe('nodescaler: add node node-3.example.com to d1/small');
    expect(input.Message).toBe(
      [
        'nodescaler asks for a new node in pool d1/small (district d1, profile small).',
        'Host name: node-3.example.com    cloud name (Name tag): node_3',
        'Why: pool d1/small at 0.91 >= 0.80 for 2m; +1 node to 0.70',
        'Offering: m5.xlarge in subnet-a',
        'Image: ami-1',
        'Instance types, in order of preference: m5.xlarge',
        'Gear volume: 50 GiB gp3 at /dev/xvdc',
        'Decision: up:d1_small:1 (request up:d1_small:1#0)',
        'The node joins its district when it first reports its stats to nodescaler.',
      ].join('\n'),
    );
    expect(input.MessageGroupId).toBeUndefined();
  });

  it('sets group and deduplication ids on a FIFO topic, so a retried notice arrives once', async () => {
    const notifier = new SnsNotifier(new SNSClient({ region: 'us-east-1', credentials }), 'arn:aws:sns:us-east-1:123456789012:ops.fifo');
    await notifier.notify({ subject: 'x'.repeat(120), message: 'm', pool: 'd1/small', dedupKey: 'exhausted:up:1' });
    await notifier.notify({ subject: 'x'.repeat(120), message: 'm', pool: 'd1/small', dedupKey: 'exhausted:up:1' });
    const [first, second] = sns.commandCalls(PublishCommand).map((call) => call.args[0].input);
    expect(first!.Subject).toHaveLength(100);
    expect(first!.MessageGroupId).toBe('d1/small');
    expect(first!.MessageDeduplicationId).toMatch(/^[0-9a-f]{64}$/);
    expect(second!.MessageDeduplicationId).toBe(first!.MessageDeduplicationId);
  });
});
