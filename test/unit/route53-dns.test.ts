import { ChangeResourceRecordSetsCommand, InvalidChangeBatch, ListResourceRecordSetsCommand, NoSuchHostedZone, Route53Client, ThrottlingException, PriorRequestNotComplete } from '@aws-sdk/client-route-53';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { Route53Dns } from '../../lib/adapters/route53/dns.js';
import { TransientError, ValidationError } from '../../lib/errors.js';

const r53 = mockClient(Route53Client);
afterAll(() => r53.restore());
const dns = () => new Route53Dns(new Route53Client({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }), { hostedZoneId: 'Z1', ttl: 300 });
const meta = { httpStatusCode: 400, requestId: 'r' };
const change = (action: 'UPSERT' | 'DELETE', ttl = 300, ip = '10.0.0.7') => ({
  HostedZoneId: 'Z1',
  ChangeBatch: {
    Comment: `nodescaler: ${action === 'UPSERT' ? 'register' : 'delete'} n-7.example.com`,
    Changes: [{ Action: action, ResourceRecordSet: { Name: 'n-7.example.com', Type: 'A', TTL: ttl, ResourceRecords: [{ Value: ip }] } }],
  },
});
const sent = () => r53.commandCalls(ChangeResourceRecordSetsCommand).map((call) => call.args[0].input);

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

beforeEach(() => {
  r53.reset();
  r53.on(ChangeResourceRecordSetsCommand).resolves({ ChangeInfo: { Id: 'c', Status: 'PENDING', SubmittedAt: new Date() } });
});

describe('Route53Dns', () => {
  it('UPSERTs and DELETEs one A record with the exact change batch', async () => {
    await dns().upsertHost('n-7.example.com', '10.0.0.7');
    await dns().deleteHost('n-7.example.com', '10.0.0.7');
    expect(sent()).toStrictEqual([change('UPSERT'), change('DELETE')]);
  });

  it('treats deleting a record that is gone as success', async () => {
    r53.on(ChangeResourceRecordSetsCommand).rejects(
      new InvalidChangeBatch({ message: 'Tried to delete', messages: ["Tried to delete resource record set [name='n-7.example.com.', type='A'] but it was not found"], $metadata: meta }),
    );
    await dns().deleteHost('n-7.example.com', '10.0.0.7');
    expect(sent()).toHaveLength(1);
  });

  it('deletes with the values the zone holds when they changed since (TTL edited)', async () => {
    r53
      .on(ChangeResourceRecordSetsCommand)
      .rejectsOnce(new InvalidChangeBatch({ message: 'x', messages: ['Tried to delete resource record set but the values provided do not match the current values'], $metadata: meta }))
      .resolves({ ChangeInfo: { Id: 'c', Status: 'PENDING', SubmittedAt: new Date() } });
    r53.on(ListResourceRecordSetsCommand).resolves({
      ResourceRecordSets: [{ Name: 'n-7.example.com.', Type: 'A', TTL: 60, ResourceRecords: [{ Value: '10.0.0.7' }] }],
      IsTruncated: false,
      MaxItems: 1,
    });
    await dns().deleteHost('n-7.example.com', '10.0.0.7');
    expect(r53.commandCalls(ListResourceRecordSetsCommand)[0]!.args[0].input).toStrictEqual({ HostedZoneId: 'Z1', StartRecordName: 'n-7.example.com', StartRecordType: 'A', MaxItems: 1 });
    expect(sent()[1]).toStrictEqual({
      HostedZoneId: 'Z1',
      ChangeBatch: { Comment: 'nodescaler: delete n-7.example.com', Changes: [{ Action: 'DELETE', ResourceRecordSet: { Name: 'n-7.example.com.', Type: 'A', TTL: 60, ResourceRecords: [{ Value: '10.0.0.7' }] } }] },
    });
  });

  it('throttling is transient; a missing zone or a refused change is a ValidationError', async () => {
    r53.on(ChangeResourceRecordSetsCommand).rejectsOnce(new ThrottlingException({ message: 'Rate exceeded', $metadata: meta })).rejectsOnce(new PriorRequestNotComplete({ message: 'busy', $metadata: meta }));
    expect(await rejection(dns().upsertHost('n-7.example.com', '10.0.0.7'))).toBeInstanceOf(TransientError);
    expect(await rejection(dns().upsertHost('n-7.example.com', '10.0.0.7'))).toBeInstanceOf(TransientError);
    r53.on(ChangeResourceRecordSetsCommand).rejects(new NoSuchHostedZone({ message: 'No hosted zone found with ID: Z1', $metadata: meta }));
    const error = await rejection(dns().upsertHost('n-7.example.com', '10.0.0.7'));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe('dns.hostedZoneId');
    r53.on(ChangeResourceRecordSetsCommand).rejects(new InvalidChangeBatch({ message: 'RRSet of type CNAME', messages: ['RRSet of type CNAME with DNS name n-7.example.com. is not permitted'], $metadata: meta }));
    expect(await rejection(dns().deleteHost('n-7.example.com', '10.0.0.7'))).toBeInstanceOf(ValidationError);
  });
});
