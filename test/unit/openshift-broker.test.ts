import {
  GetCommandInvocationCommand,
  InvocationDoesNotExist,
  ListCommandsCommand,
  SSMClient,
  SendCommandCommand,
  ThrottlingException,
  type GetCommandInvocationCommandOutput,
} from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  LIST_GEARS_RUBY,
  LIST_PAGE_SIZE,
  OpenShiftBrokerPlatform,
  moveComment,
  parseGearListing,
  parseMoveReport,
  shellQuote,
} from '../../lib/adapters/platform/openshift-broker.js';
import { NotFoundError, TransientError, ValidationError } from '../../lib/errors.js';

const BROKER = 'i-0b10c0ffee0123456';
const ssm = mockClient(SSMClient);
const metadata = { httpStatusCode: 400, attempts: 1, totalRetryDelay: 0 };

function platform(): OpenShiftBrokerPlatform {
  return new OpenShiftBrokerPlatform(new SSMClient({ region: 'us-east-1' }), {
    brokerInstanceId: BROKER,
    commandTimeoutMs: 20 * 60_000,
    brokerDir: '/var/www/openshift/broker',
    sleep: async () => {},
    clock: { now: () => new Date('2026-03-01T12:00:00Z') },
  });
}

function sendInputs() {
  return ssm.commandCalls(SendCommandCommand).map((call) => call.args[0].input);
}

function invocation(status: string, stdout = '', stderr = ''): Partial<GetCommandInvocationCommandOutput> {
  return { CommandId: 'cmd-1', InstanceId: BROKER, Status: status as GetCommandInvocationCommandOutput['Status'], StandardOutputContent: stdout, StandardErrorContent: stderr };
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
  ssm.on(SendCommandCommand).resolves({ Command: { CommandId: 'cmd-1' } });
});

describe('OpenShiftBrokerPlatform: district commands', () => {
  it('runs oo-admin-ctl-district deactivate-node on the broker with the exact SendCommand input, and waits for it', async () => {
    ssm.on(GetCommandInvocationCommand).rejectsOnce(new InvocationDoesNotExist({ message: 'not yet', $metadata: metadata })).resolves(invocation('Success'));
    await platform().deactivateNode('d1', 'node-3.example.com');
    expect(sendInputs()).toStrictEqual([
      {
        InstanceIds: [BROKER],
        DocumentName: 'AWS-RunShellScript',
        Comment: 'nodescaler deactivate-node node-3.example.com',
        TimeoutSeconds: 60,
        Parameters: {
          commands: ["oo-admin-ctl-district -c deactivate-node -n 'd1' -i 'node-3.example.com'"],
          executionTimeout: ['120'],
        },
      },
    ]);
    expect(ssm.commandCalls(GetCommandInvocationCommand).map((call) => call.args[0].input)).toStrictEqual([
      { CommandId: 'cmd-1', InstanceId: BROKER },
      { CommandId: 'cmd-1', InstanceId: BROKER },
    ]);
  });

  it.each([
    ['activate-node', (p: OpenShiftBrokerPlatform) => p.activateNode('d1', 'n1.example.com')],
    ['add-node', (p: OpenShiftBrokerPlatform) => p.addNode('d1', 'n1.example.com')],
    ['remove-node', (p: OpenShiftBrokerPlatform) => p.removeNode('d1', 'n1.example.com')],
  ])('runs %s', async (command, call) => {
    ssm.on(GetCommandInvocationCommand).resolves(invocation('Success'));
    await call(platform());
    expect(sendInputs()[0]?.Parameters?.commands).toEqual([`oo-admin-ctl-district -c ${command} -n 'd1' -i 'n1.example.com'`]);
  });

  it('treats "already done" as success, so every district command is idempotent', async () => {
    ssm.on(GetCommandInvocationCommand).resolves(invocation('Failed', '', 'Node with server identity: n1.example.com is already deactivated'));
    await platform().deactivateNode('d1', 'n1.example.com');
    ssm.on(GetCommandInvocationCommand).resolves(invocation('Failed', 'Node with server identity: n1.example.com does not exist in district d1'));
    await platform().removeNode('d1', 'n1.example.com');
    expect(await rejection(platform().activateNode('d1', 'n1.example.com'))).toBeInstanceOf(NotFoundError);
  });

  it('refuses unsafe arguments before sending anything', async () => {
    expect(await rejection(platform().deactivateNode('d1', "n1; rm -rf /'"))).toBeInstanceOf(ValidationError);
    expect(await rejection(platform().deactivateNode('d1 $(reboot)', 'n1'))).toBeInstanceOf(ValidationError);
    expect(sendInputs()).toHaveLength(0);
  });

  it('quotes shell words safely', () => {
    expect(shellQuote("it's")).toBe("'it'\\''s'");
    expect(shellQuote('$(x) `y` "z"')).toBe('\'$(x) `y` "z"\'');
  });
});

describe('OpenShiftBrokerPlatform: gears', () => {
  it('lists gears with the documented oo-ruby script, page by page', async () => {
    const page1 = ['GEAR\taaa111\tshop-acme\tsmall', 'some rails warning', `NEXT\t${LIST_PAGE_SIZE}`].join('\n');
    const page2 = ['GEAR\tbbb222\tblog-acme\tmedium', 'END\t151'].join('\n');
    ssm.on(GetCommandInvocationCommand).resolvesOnce(invocation('Success', page1)).resolvesOnce(invocation('Success', page2));
    const gears = await platform().listGears('node-3.example.com');
    expect(gears).toEqual([
      { uuid: 'aaa111', app: 'shop-acme', size: 'small' },
      { uuid: 'bbb222', app: 'blog-acme', size: 'medium' },
    ]);
    const commands = sendInputs().map((input) => input.Parameters?.commands?.[0]);
    expect(commands).toEqual([
      `oo-ruby -e ${shellQuote(LIST_GEARS_RUBY)} '/var/www/openshift/broker' 'node-3.example.com' 0 ${LIST_PAGE_SIZE}`,
      `oo-ruby -e ${shellQuote(LIST_GEARS_RUBY)} '/var/www/openshift/broker' 'node-3.example.com' ${LIST_PAGE_SIZE} ${LIST_PAGE_SIZE}`,
    ]);
  });

  it('rejects a listing cut short (no END line) as transient', () => {
    expect(() => parseGearListing('GEAR\ta\tb\tsmall\n')).toThrow(TransientError);
    expect(parseGearListing('END\t0\n')).toEqual({ gears: [] });
  });
});

describe('OpenShiftBrokerPlatform: moves', () => {
  it('starts oo-admin-move --json with the exact SendCommand input, and returns the command id as the handle', async () => {
    const handle = await platform().startMove({ uuid: 'aaa111', app: 'shop', size: 'small' }, 'node-3.example.com', 'node-7.example.com', { idempotencyKey: 'drain:x/aaa111/1' });
    expect(handle).toEqual({ commandId: 'cmd-1' });
    expect(sendInputs()).toStrictEqual([
      {
        InstanceIds: [BROKER],
        DocumentName: 'AWS-RunShellScript',
        Comment: moveComment('aaa111', 'drain:x/aaa111/1'),
        TimeoutSeconds: 60,
        Parameters: { commands: ["oo-admin-move --gear_uuid 'aaa111' -i 'node-7.example.com' --json"], executionTimeout: ['1200'] },
      },
    ]);
    expect(ssm.commandCalls(ListCommandsCommand)).toHaveLength(0);
  });

  it('finds the command an earlier attempt sent (mayExist) instead of moving the gear twice', async () => {
    const comment = moveComment('aaa111', 'drain:x/aaa111/1');
    ssm.on(ListCommandsCommand).resolves({ Commands: [{ CommandId: 'other', Comment: 'nodescaler move zzz' }, { CommandId: 'cmd-earlier', Comment: comment }] });
    const handle = await platform().startMove({ uuid: 'aaa111', app: 'shop', size: 'small' }, 'n3', 'n7', { idempotencyKey: 'drain:x/aaa111/1', mayExist: true });
    expect(handle).toEqual({ commandId: 'cmd-earlier' });
    expect(sendInputs()).toHaveLength(0);
    expect(ssm.commandCalls(ListCommandsCommand)[0]!.args[0].input).toStrictEqual({
      InstanceId: BROKER,
      Filters: [
        { key: 'InvokedAfter', value: '2026-02-28T12:00:00.000Z' },
        { key: 'DocumentName', value: 'AWS-RunShellScript' },
      ],
      MaxResults: 50,
    });
  });

  it('reads the move report on a later step: running, succeeded, failed, target full', async () => {
    const p = platform();
    ssm.on(GetCommandInvocationCommand).resolves(invocation('InProgress'));
    expect(await p.moveStatus({ commandId: 'cmd-1' })).toEqual({ state: 'running' });
    ssm.on(GetCommandInvocationCommand).resolves(invocation('Success', 'URL: ...\n{"aaa111":{"result":true,"destination":"n7"}}'));
    expect(await p.moveStatus({ commandId: 'cmd-1' })).toEqual({ state: 'succeeded' });
    // oo-admin-move exits 0 when a move fails: only the report counts.
    ssm.on(GetCommandInvocationCommand).resolves(invocation('Success', '{"aaa111":{"result":false,"message":"Failed to move gear: rsync error"}}'));
    expect(await p.moveStatus({ commandId: 'cmd-1' })).toEqual({ state: 'failed', error: 'Failed to move gear: rsync error' });
    ssm.on(GetCommandInvocationCommand).resolves(invocation('TimedOut', '', 'killed'));
    expect(await p.moveStatus({ commandId: 'cmd-1' })).toEqual({ state: 'failed', error: 'oo-admin-move TimedOut: killed' });
    expect(parseMoveReport('{"aaa111":{"result":false,"message":"Node n7 has reached max_active_gears capacity"}}')).toMatchObject({ targetFull: true });
  });

  it('translates throttling into a TransientError', async () => {
    ssm.on(SendCommandCommand).rejects(new ThrottlingException({ message: 'Rate exceeded', Message: 'Rate exceeded', $metadata: metadata }));
    const error = await rejection(platform().startMove({ uuid: 'aaa111', app: 'shop', size: 'small' }, 'n3', 'n7'));
    expect(error).toBeInstanceOf(TransientError);
  });
});
