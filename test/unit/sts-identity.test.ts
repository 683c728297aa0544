import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { LocalUserIdentity } from '../../lib/adapters/local/identity.js';
import { StsIdentity } from '../../lib/adapters/sts/identity.js';
import { TransientError, ValidationError } from '../../lib/errors.js';

const sts = mockClient(STSClient);
afterAll(() => sts.restore());
const client = () => new STSClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
const ARN = 'arn:aws:sts::123456789012:assumed-role/nodescaler-operator/alice';

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

beforeEach(() => sts.reset());

describe('StsIdentity', () => {
  it('asks STS GetCallerIdentity, with an empty request, once per command, and answers the ARN', async () => {
    sts.on(GetCallerIdentityCommand).resolves({ Arn: ARN, Account: '123456789012', UserId: 'AROA:alice' });
    const identity = new StsIdentity(client());
    expect(await identity.whoAmI()).toBe(ARN);
    expect(await identity.whoAmI()).toBe(ARN);
    expect(sts.commandCalls(GetCallerIdentityCommand).map((call) => call.args[0].input)).toStrictEqual([{}]);
  });

  it('makes throttling a TransientError and asks again on the next call', async () => {
    sts.on(GetCallerIdentityCommand).rejectsOnce(Object.assign(new Error('Rate exceeded'), { name: 'Throttling', $metadata: { httpStatusCode: 400 } })).resolves({ Arn: ARN });
    const identity = new StsIdentity(client());
    const error = await rejection(identity.whoAmI());
    expect(error).toBeInstanceOf(TransientError);
    expect((error as TransientError).retryable).toBe(true);
    expect(await identity.whoAmI()).toBe(ARN);
    expect(sts.commandCalls(GetCallerIdentityCommand)).toHaveLength(2);
  });

  it('passes refused credentials through as the SDK error (the CLI explains it), and refuses an answer without an ARN', async () => {
    sts.on(GetCallerIdentityCommand).rejects(Object.assign(new Error('The security token included in the request is invalid.'), { name: 'InvalidClientTokenId', $metadata: { httpStatusCode: 403 } }));
    expect(await rejection(new StsIdentity(client()).whoAmI())).toMatchObject({ name: 'InvalidClientTokenId' });
    sts.reset();
    sts.on(GetCallerIdentityCommand).resolves({});
    expect(await rejection(new StsIdentity(client()).whoAmI())).toBeInstanceOf(ValidationError);
  });
});

describe('LocalUserIdentity', () => {
  it('names the operating-system user', async () => {
    expect(await new LocalUserIdentity(() => 'alice').whoAmI()).toBe('local user alice');
  });
});
