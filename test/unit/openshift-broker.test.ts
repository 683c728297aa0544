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
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import {
  LIST_PAGE_SIZE,
  OpenShiftBrokerPlatform,
  moveComment,
  parseGearListing,
  parseMoveReport,
} from '../../lib/adapters/platform/openshift-broker.js';
import { NotFoundError, TransientError, ValidationError } from '../../lib/errors.js';

const BROKER = 'i-0b10c0ffee0123456';
const DOCUMENT = 'nodescaler-dev-broker-admin';
const ssm = mockClient(SSMClient);
afterAll(() => ssm.restore());
const metadata = { httpStatusCode: 400, attempts: 1, totalRetryDelay: 0 };

function platform(): OpenShiftBrokerPlatform {
  return new OpenShiftBrokerPlatform(new SSMClient({ region: 'us-east-1' }), {
    brokerInstanceId: BROKER,
    documentName: DOCUMENT,
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
        DocumentName: DOCUMENT,
        Comment: 'nodescaler deactivate-node node-3.example.com',
        TimeoutSeconds: 60,
        Parameters: { action: ['deactivate-node'], node: ['node-3.example.com'], brokerDir: ['/var/www/openshift/broker'], executionTimeout: ['120'], district: ['d1'] },
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
    expect(sendInputs()[0]?.Parameters).toMatchObject({ action: [command], district: ['d1'], node: ['n1.example.com'] });
  });

  it('treats the tool\'s "already deactivated" as success, and "doesn\'t belong to district" as not found (origin-server\'s words)', async () => {
    const error = (message: string) => `Success for node...\nERROR OUTPUT:\nError for node 'n1.example.com': ${message}\nEXIT\t1\n`;
    ssm.on(GetCommandInvocationCommand).resolves(invocation('Failed', error('Node with server identity: n1.example.com is already deactivated')));
    await platform().deactivateNode('d1', 'n1.example.com');
    ssm.on(GetCommandInvocationCommand).resolves(invocation('Failed', error("Node with server identity: n1.example.com doesn't belong to district: 5f0c")));
    expect(await rejection(platform().activateNode('d1', 'n1.example.com'))).toBeInstanceOf(NotFoundError);
  });

  it('refuses unsafe arguments before sending anything', async () => {
    expect(await rejection(platform().deactivateNode('d1', "n1; rm -rf /'"))).toBeInstanceOf(ValidationError);
    expect(await rejection(platform().deactivateNode('d1 $(reboot)', 'n1'))).toBeInstanceOf(ValidationError);
    const zone = await rejection(platform().addNode('d1', 'n1.example.com', { region: 'east', zone: 'a b' }));
    expect(zone).toBeInstanceOf(ValidationError);
    expect((zone as ValidationError).message).toContain('openshiftRegion.zone');
    // '-' is the document's "none": never a region's name.
    expect(await rejection(platform().addNode('d1', 'n1.example.com', { region: '-', zone: 'a' }))).toBeInstanceOf(ValidationError);
    expect(sendInputs()).toHaveLength(0);
  });

  it('adds a node in its region and zone with the exact SendCommand parameters', async () => {
    ssm.on(GetCommandInvocationCommand).resolves(invocation('Success'));
    await platform().addNode('d1', 'n1.example.com', { region: 'east', zone: 'east-b' });
    expect(sendInputs()[0]?.Parameters).toStrictEqual({
      action: ['add-node'],
      node: ['n1.example.com'],
      brokerDir: ['/var/www/openshift/broker'],
      executionTimeout: ['120'],
      district: ['d1'],
      region: ['east'],
      zone: ['east-b'],
    });
  });

  it("names openshiftRegion when the broker lacks the region or zone (district.rb's words), as configuration to fix", async () => {
    const error = (message: string) => `ERROR OUTPUT:\nError for node 'n1.example.com': ${message}\nEXIT\t1\n`;
    ssm.on(GetCommandInvocationCommand).resolves(invocation('Failed', error("Region object not found, you can create new region 'east' using oo-admin-ctl-region.")));
    const refused = await rejection(platform().addNode('d1', 'n1.example.com', { region: 'east', zone: 'east-b' }));
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).message).toContain('openshiftRegion');
    expect((refused as ValidationError).message).toContain("Region object not found, you can create new region 'east'");
    expect((refused as ValidationError).message).toContain('east/east-b');
  });

});

describe('OpenShiftBrokerPlatform: gears', () => {
  it('lists gears with the document\'s list-gears query, page by page', async () => {
    const page1 = ['GEAR\taaa111\tshop-acme\tsmall', 'some rails warning', `NEXT\t${LIST_PAGE_SIZE}`].join('\n');
    const page2 = ['GEAR\tbbb222\tblog-acme\tmedium', 'END\t151'].join('\n');
    ssm.on(GetCommandInvocationCommand).resolvesOnce(invocation('Success', page1)).resolvesOnce(invocation('Success', page2));
    const gears = await platform().listGears('node-3.example.com');
    expect(gears).toEqual([
      { uuid: 'aaa111', app: 'shop-acme', size: 'small' },
      { uuid: 'bbb222', app: 'blog-acme', size: 'medium' },
    ]);
    expect(sendInputs().map((input) => input.Parameters)).toEqual([
      { action: ['list-gears'], node: ['node-3.example.com'], offset: ['0'], brokerDir: ['/var/www/openshift/broker'], executionTimeout: ['120'] },
      { action: ['list-gears'], node: ['node-3.example.com'], offset: [String(LIST_PAGE_SIZE)], brokerDir: ['/var/www/openshift/broker'], executionTimeout: ['120'] },
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
        DocumentName: DOCUMENT,
        Comment: moveComment('aaa111', 'drain:x/aaa111/1'),
        TimeoutSeconds: 60,
        Parameters: { action: ['move'], node: ['node-7.example.com'], gear: ['aaa111'], brokerDir: ['/var/www/openshift/broker'], executionTimeout: ['1200'] },
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
        { key: 'DocumentName', value: DOCUMENT },
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
    // oo-admin-move exits 1 when a move fails; where the gear is then decides (here: still on its source).
    ssm.reset();
    ssm.on(SendCommandCommand).resolves({ Command: { CommandId: 'cmd-2' } });
    ssm.on(GetCommandInvocationCommand)
      .resolvesOnce(invocation('Failed', '{"aaa111":{"result":false,"message":"Error moving app \'shop\' (rsync)","destination":"n7"}}\nEXIT\t1\n'))
      .resolvesOnce(invocation('Success', 'AT\tn3\n'));
    expect(await p.moveStatus({ commandId: 'cmd-1' })).toEqual({ state: 'failed', error: "Error moving app 'shop' (rsync)" });
    expect(sendInputs().at(-1)?.Parameters).toMatchObject({ action: ['gear-location'], gear: ['aaa111'] });
    expect(parseMoveReport('{"aaa111":{"result":false,"message":"Gear creation failed.  The server n7 that was chosen to run your gear has already exceeded its capacity."}}')).toMatchObject({ result: false, uuid: 'aaa111' });
  });

  it('translates throttling into a TransientError', async () => {
    ssm.on(SendCommandCommand).rejects(new ThrottlingException({ message: 'Rate exceeded', Message: 'Rate exceeded', $metadata: metadata }));
    const error = await rejection(platform().startMove({ uuid: 'aaa111', app: 'shop', size: 'small' }, 'n3', 'n7'));
    expect(error).toBeInstanceOf(TransientError);
  });
});
