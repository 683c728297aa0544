import { GetCommandInvocationCommand, SSMClient, SendCommandCommand, type GetCommandInvocationCommandOutput } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { OpenShiftBrokerPlatform, parseNodeFacts } from '../../lib/adapters/platform/openshift-broker.js';
import { brokerDocument } from '../support/broker-emulator.js';
import { TransientError, ValidationError } from '../../lib/errors.js';

const BROKER = 'i-0b10c0ffee0123456';
const ssm = mockClient(SSMClient);
afterAll(() => ssm.restore());

function platform(): OpenShiftBrokerPlatform {
  return new OpenShiftBrokerPlatform(new SSMClient({ region: 'us-east-1' }), {
    brokerInstanceId: BROKER,
    documentName: 'nodescaler-dev-broker-admin',
    commandTimeoutMs: 20 * 60_000,
    brokerDir: '/var/www/openshift/broker',
    sleep: async () => {},
    clock: { now: () => new Date('2026-03-01T12:00:00Z') },
  });
}

function invocation(status: string, stdout = '', stderr = ''): Partial<GetCommandInvocationCommandOutput> {
  return { CommandId: 'cmd-7', InstanceId: BROKER, Status: status as GetCommandInvocationCommandOutput['Status'], StandardOutputContent: stdout, StandardErrorContent: stderr };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

beforeEach(() => {
  ssm.reset();
  ssm.on(SendCommandCommand).resolves({ Command: { CommandId: 'cmd-7' } });
});

describe('OpenShiftBrokerPlatform.readNodeFacts', () => {
  it('runs the document\'s node-facts query on the broker with the exact SendCommand input and returns its figures', async () => {
    ssm.on(GetCommandInvocationCommand).resolves(invocation('Success', 'FACTS\t37\t100\n'));
    await expect(platform().readNodeFacts('node-3.example.com')).resolves.toStrictEqual({ activeGears: 37, maxActiveGears: 100 });
    expect(ssm.commandCalls(SendCommandCommand).map((call) => call.args[0].input)).toStrictEqual([
      {
        InstanceIds: [BROKER],
        DocumentName: 'nodescaler-dev-broker-admin',
        Comment: 'nodescaler node-facts node-3.example.com',
        TimeoutSeconds: 60,
        Parameters: { action: ['node-facts'], node: ['node-3.example.com'], brokerDir: ['/var/www/openshift/broker'], executionTimeout: ['120'] },
      },
    ]);
    expect(ssm.commandCalls(GetCommandInvocationCommand).map((call) => call.args[0].input)).toStrictEqual([{ CommandId: 'cmd-7', InstanceId: BROKER }]);
  });

  it('reads both facts from the node proxy, after checking a district holds the node', () => {
    const script = brokerDocument().runCommand.join('\n');
    expect(script).toContain('if District.where("servers.name" => node).exists?');
    expect(script).toContain('%w(gears_active_count max_active_gears)');
  });

  it('returns undefined for a node no district holds', async () => {
    ssm.on(GetCommandInvocationCommand).resolves(invocation('Success', 'UNKNOWN\n'));
    await expect(platform().readNodeFacts('node-9.example.com')).resolves.toBeUndefined();
  });

  it('refuses a fact the node did not answer instead of guessing a number', async () => {
    ssm.on(GetCommandInvocationCommand).resolves(invocation('Success', 'FACTS\t\t100\n'));
    const error = await rejection(platform().readNodeFacts('node-3.example.com'));
    expect(error).toBeInstanceOf(TransientError);
    expect((error as Error).message).toContain('did not report gears_active_count and max_active_gears');
  });

  it('turns a failed command into a TransientError naming the node', async () => {
    ssm.on(GetCommandInvocationCommand).resolves(invocation('Failed', '', 'mcollective: no response from node-3.example.com\n'));
    const error = await rejection(platform().readNodeFacts('node-3.example.com'));
    expect(error).toBeInstanceOf(TransientError);
    expect((error as Error).message).toBe('broker command node facts of node-3.example.com ended Failed: mcollective: no response from node-3.example.com');
  });

  it('validates the node name before sending anything', async () => {
    expect(await rejection(platform().readNodeFacts("node'; rm -rf /"))).toBeInstanceOf(ValidationError);
    expect(ssm.commandCalls(SendCommandCommand)).toHaveLength(0);
  });

  it('parseNodeFacts: non-integer figures and missing lines are errors', () => {
    expect(parseNodeFacts('n', 'FACTS\t0\t50')).toStrictEqual({ activeGears: 0, maxActiveGears: 50 });
    expect(() => parseNodeFacts('n', 'FACTS\t1.5\t50')).toThrow(TransientError);
    expect(() => parseNodeFacts('n', '')).toThrow(TransientError);
  });
});
