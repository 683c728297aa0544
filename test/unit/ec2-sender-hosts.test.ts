import { DescribeInstancesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { Ec2SenderHosts } from '../../lib/adapters/ec2/sender-hosts.js';
import { TransientError, ValidationError } from '../../lib/errors.js';

describe('Ec2SenderHosts (the evaluator\'s one EC2 read: who sent node-stats)', () => {
  const ec2 = mockClient(EC2Client);
  const hosts = new Ec2SenderHosts(new EC2Client({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' }, maxAttempts: 1 }));
  beforeEach(() => ec2.reset());
  afterAll(() => ec2.restore());

  it('sends exactly one DescribeInstances filtered by instance id, and returns the state and tags of what EC2 knows', async () => {
    ec2.on(DescribeInstancesCommand).resolves({
      Reservations: [
        {
          Instances: [
            { InstanceId: 'i-0123456789abcdef0', State: { Name: 'running' }, Tags: [{ Key: 'nodescaler:pool', Value: 'd1/small' }, { Key: 'Name', Value: 'd1-small_3' }] },
          ],
        },
      ],
    });
    const found = await hosts.describeHosts(['i-0123456789abcdef0', 'i-00000000000000bad']);
    expect(ec2.commandCalls(DescribeInstancesCommand).map((call) => call.args[0].input)).toEqual([
      { Filters: [{ Name: 'instance-id', Values: ['i-0123456789abcdef0', 'i-00000000000000bad'] }] },
    ]);
    expect([...found]).toEqual([['i-0123456789abcdef0', { instanceId: 'i-0123456789abcdef0', state: 'running', tags: { 'nodescaler:pool': 'd1/small', Name: 'd1-small_3' } }]]);
  });

  it('translates throttling to a TransientError (the message is redelivered) and access denied to a ValidationError', async () => {
    ec2
      .on(DescribeInstancesCommand)
      .rejectsOnce(Object.assign(new Error('Rate exceeded'), { name: 'RequestLimitExceeded', $fault: 'client', $metadata: { httpStatusCode: 503 } }))
      .rejectsOnce(Object.assign(new Error('not authorized'), { name: 'UnauthorizedOperation', $fault: 'client', $metadata: { httpStatusCode: 403 } }));
    await expect(hosts.describeHosts(['i-0123456789abcdef0'])).rejects.toBeInstanceOf(TransientError);
    await expect(hosts.describeHosts(['i-0123456789abcdef0'])).rejects.toBeInstanceOf(ValidationError);
    expect(await hosts.describeHosts([])).toEqual(new Map());
    expect(ec2.commandCalls(DescribeInstancesCommand)).toHaveLength(2);
  });
});
