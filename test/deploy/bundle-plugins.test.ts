/**
 * The esbuild plugins of the Lambda bundles (infra/esbuild-plugins.cjs) drop
 * code, never behaviour: the same program bundled with and without them sends
 * byte-identical AWS requests and reports identical validation errors. With a
 * stage, each function holds the stage's configuration and only the AWS
 * clients that configuration makes it use.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as esbuild from 'esbuild';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * Requests of several protocols (EC2 query, Route 53 REST-XML, SSM, Pricing
 * and DynamoDB JSON), captured instead of sent; and the errors SSM and the
 * Price List answer with, as our adapters read them (name, fault, message).
 */
const PROGRAM = `
import { Readable } from 'node:stream';
import { EC2Client, RunInstancesCommand, DescribeInstancesCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { Route53Client, ChangeResourceRecordSetsCommand } from '@aws-sdk/client-route-53';
import { SSMClient, SendCommandCommand, GetCommandInvocationCommand } from '@aws-sdk/client-ssm';
import { PricingClient, GetProductsCommand, DescribeServicesCommand } from '@aws-sdk/client-pricing';
import { DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';
z.config(en());
const requests = [];
const ANSWERS = {
  'AmazonSSM.GetCommandInvocation': [400, { __type: 'InvocationDoesNotExist', message: 'no invocation yet' }],
  'AWSPriceListService.GetProducts': [400, { __type: 'ThrottlingException', Message: 'Rate exceeded' }],
  'AWSPriceListService.DescribeServices': [500, { __type: 'InternalErrorException', Message: 'try again' }],
};
const requestHandler = { handle: async (request) => {
  const target = request.headers['x-amz-target'] ?? '';
  requests.push([request.method, request.path, target, typeof request.body === 'string' ? request.body : ''].join(' '));
  const [statusCode, body] = ANSWERS[target] ?? [400, {}];
  return { response: { statusCode, headers: { 'content-type': 'application/x-amz-json-1.1' }, body: Readable.from([Buffer.from(JSON.stringify(body))]) } };
} };
const errors = [];
const caught = (error) => errors.push([error.name, error.$fault, error.message, error.$metadata?.httpStatusCode]);
const options = { region: 'us-east-1', requestHandler, maxAttempts: 1 };
const ec2 = new EC2Client(options);
const tags = [{ Key: 'nodescaler:pool', Value: 'd1/small' }, { Key: 'Name', Value: 'd1-small_1' }];
const sends = [
  () => ec2.send(new RunInstancesCommand({ ImageId: 'ami-1', MinCount: 1, MaxCount: 1, ClientToken: 'up:d1_small:1#1', InstanceType: 'm5.xlarge',
    SubnetId: 'subnet-1', SecurityGroupIds: ['sg-1'], IamInstanceProfile: { Name: 'nodescaler-node' }, UserData: 'IyEvYmluL3No',
    TagSpecifications: [{ ResourceType: 'instance', Tags: tags }, { ResourceType: 'volume', Tags: tags }],
    BlockDeviceMappings: [{ DeviceName: '/dev/xvdc', Ebs: { VolumeSize: 50, VolumeType: 'gp3', DeleteOnTermination: false } }],
    InstanceMarketOptions: { MarketType: 'spot', SpotOptions: { SpotInstanceType: 'one-time', InstanceInterruptionBehavior: 'terminate' } } })),
  () => ec2.send(new DescribeInstancesCommand({ InstanceIds: ['i-1'], Filters: [{ Name: 'tag-key', Values: ['nodescaler:pool'] }] })),
  () => ec2.send(new TerminateInstancesCommand({ InstanceIds: ['i-1'] })),
  () => new Route53Client(options).send(new ChangeResourceRecordSetsCommand({ HostedZoneId: 'Z1', ChangeBatch: { Changes: [{ Action: 'UPSERT',
    ResourceRecordSet: { Name: 'd1-small-1.example.com', Type: 'A', TTL: 300, ResourceRecords: [{ Value: '10.0.0.1' }] } }] } })),
  () => new SSMClient(options).send(new SendCommandCommand({ InstanceIds: ['i-broker'], DocumentName: 'AWS-RunShellScript', Parameters: { commands: ['oo-admin-move --gear_uuid x'] } })),
  () => new SSMClient(options).send(new GetCommandInvocationCommand({ CommandId: 'c-1', InstanceId: 'i-broker' })).catch(caught),
  () => new PricingClient(options).send(new GetProductsCommand({ ServiceCode: 'AmazonEC2', Filters: [{ Type: 'TERM_MATCH', Field: 'instanceType', Value: 'm5.xlarge' }] })).catch(caught),
  () => new PricingClient(options).send(new DescribeServicesCommand({ ServiceCode: 'AmazonEC2' })).catch(caught),
  () => new DynamoDBClient(options).send(new UpdateItemCommand({ TableName: 't', Key: { pk: { S: 'NODE#a' }, sk: { S: 'NODE' } },
    UpdateExpression: 'SET #s = :s', ConditionExpression: '#v = :v', ExpressionAttributeNames: { '#s': 'state', '#v': 'version' },
    ExpressionAttributeValues: { ':s': { S: 'draining' }, ':v': { N: '3' } }, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' })),
];
for (const send of sends) await send().catch(() => {});
const invalid = z.strictObject({ min: z.int().check(z.gte(0)), name: z.string() }).safeParse({ min: -1, nmae: 'x' });
console.log(JSON.stringify({ requests, errors, zod: invalid.error.issues.map((issue) => issue.message) }));
`;

let dir: string;
const run = async (withPlugins: boolean) => {
  const { esbuildOptions } = await import('../../scripts/bundle-functions.mjs');
  const options = esbuildOptions();
  const outfile = join(dir, withPlugins ? 'with.mjs' : 'without.mjs');
  const built = await esbuild.build({
    ...options,
    ...(withPlugins ? {} : { plugins: [] }),
    entryPoints: [join(dir, 'program.mjs')],
    outfile,
    metafile: true,
    logLevel: 'error',
    nodePaths: [join(ROOT, 'node_modules')],
  });
  const env = { PATH: process.env.PATH, AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'us-east-1' };
  const result = spawnSync(process.execPath, ['--no-warnings', outfile], { env, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(result.stderr);
  return { bytes: Object.values(built.metafile.outputs)[0]!.bytes, output: JSON.parse(result.stdout) as { requests: string[]; errors: unknown[][]; zod: string[] } };
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'nodescaler-plugins-'));
  writeFileSync(join(dir, 'program.mjs'), PROGRAM);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('infra/esbuild-plugins.cjs', () => {
  it('leaves every request, every error our adapters read and every validation message as it was, and makes the bundle much smaller', async () => {
    const [withPlugins, without] = await Promise.all([run(true), run(false)]);
    expect(without.output.requests).toHaveLength(9);
    expect(withPlugins.output).toEqual(without.output);
    // SSM's and the Price List's error classes are left out (ERRORS_BY_NAME): the errors keep their names, faults and messages.
    expect(withPlugins.output.errors).toEqual([
      ['InvocationDoesNotExist', 'client', 'no invocation yet', 400],
      ['ThrottlingException', 'client', 'Rate exceeded', 400],
      ['InternalErrorException', 'server', 'try again', 500],
    ]);
    expect(withPlugins.output.requests[0]).toContain('BlockDeviceMapping.1.Ebs.VolumeSize=50');
    expect(withPlugins.output.zod.join(' ')).toMatch(/Too small|Unrecognized key/i);
    // EC2 schemas of unused operations, the non-Lambda credential chain: gone.
    expect(withPlugins.bytes).toBeLessThan(without.bytes * 0.6);
  });
});

/**
 * middy, plain and streaming, as our handlers and a streaming handler use it;
 * notes whether importing it loaded Node's web streams.
 */
const MIDDY_PROGRAM = `
import { Writable } from 'node:stream';
import middy from '@middy/core';
const webStreamsAtStart = process.moduleLoadList.includes('NativeModule internal/webstreams/readablestream');
const chunks = [];
globalThis.awslambda = { streamifyResponse: (handler) => handler, HttpResponseStream: { from: (stream) => stream } };
const sink = () => new Writable({ write(chunk, _encoding, done) { chunks.push(String(chunk)); done(); } });
const plain = middy(async (event) => ({ doubled: event.n * 2 })).use({ after: (request) => { request.response.seen = true; } });
const streaming = middy(async () => new ReadableStream({ start(controller) { controller.enqueue('web '); controller.enqueue('stream'); controller.close(); } }), { streamifyResponse: true });
const notAStream = middy(async () => ({ some: 'object' }), { streamifyResponse: true });
const answer = await plain({ n: 21 }, {});
await streaming({}, sink(), {});
const refused = await notAStream({}, sink(), {}).then(() => 'accepted', (error) => error.message);
console.log(JSON.stringify({ webStreamsAtStart, answer, streamed: chunks.join(''), refused }));
`;

describe('infra/esbuild-plugins.cjs: middy-lazy-web-streams', () => {
  it('keeps middy plain and streaming as they are, without loading web streams at start', async () => {
    writeFileSync(join(dir, 'middy-program.mjs'), MIDDY_PROGRAM);
    const { esbuildOptions } = await import('../../scripts/bundle-functions.mjs');
    const options = esbuildOptions();
    const runBundle = async (withPlugins: boolean) => {
      const outfile = join(dir, withPlugins ? 'middy-with.mjs' : 'middy-without.mjs');
      await esbuild.build({ ...options, ...(withPlugins ? {} : { plugins: [] }), entryPoints: [join(dir, 'middy-program.mjs')], outfile, logLevel: 'error', nodePaths: [join(ROOT, 'node_modules')] });
      const result = spawnSync(process.execPath, ['--no-warnings', outfile], { env: { PATH: process.env.PATH }, encoding: 'utf8' });
      if (result.status !== 0) throw new Error(result.stderr);
      return JSON.parse(result.stdout) as { webStreamsAtStart: boolean; answer: unknown; streamed: string; refused: string };
    };
    const [withPlugins, without] = await Promise.all([runBundle(true), runBundle(false)]);
    expect(without.webStreamsAtStart).toBe(true);
    expect(withPlugins.webStreamsAtStart).toBe(false);
    const behaviour = ({ answer, streamed, refused }: typeof without) => ({ answer, streamed, refused });
    expect(behaviour(withPlugins)).toEqual(behaviour(without));
    expect(withPlugins.answer).toEqual({ doubled: 42, seen: true });
    expect(withPlugins.streamed).toBe('web stream');
    expect(withPlugins.refused).toBe('handler response not a ReadableStream');
  });
});

/** Stage configurations: everything the functions can reach, and a request-only one. */
const POOL = `pools:
  - district: d1
    profile: small
    max: 10
    template: { imageId: ami-0123456789abcdef0, instanceTypes: [{ name: m5.xlarge, vcpus: 4, memoryGiB: 16 }], subnets: [subnet-0123456789abcdef0] }
`;
const FULL = `handler: ec2
platform: { kind: openshift-broker, brokerInstanceId: i-0b0b0b0b0b0b0b0b0 }
dns: { hostedZoneId: Z0123456789ABCDEFGHIJ }
spool: { bucket: nodescaler-spool }
notify: { topicArn: 'arn:aws:sns:us-east-1:123456789012:nodescaler-requests' }
${POOL}`;
const SPOOL = `handler: spool
spool: { bucket: nodescaler-spool }
${POOL}`;
const FUNCTION_ENTRIES = {
  thresholdEvaluator: 'functions/threshold-evaluator.ts',
  nodeProvisioner: 'functions/node-provisioner.ts',
  gearMover: 'functions/gear-mover.ts',
  decommissioner: 'functions/decommissioner.ts',
};

describe('infra/esbuild-plugins.cjs with a stage (stage-configuration, stage-adapters)', () => {
  const bundleStage = async (name: string, yaml: string, entries: Record<string, string> = FUNCTION_ENTRIES) => {
    const { bundleFunctions } = await import('../../scripts/bundle-functions.mjs');
    const configFile = join(dir, `${name}.yml`);
    writeFileSync(configFile, yaml);
    return bundleFunctions(join(dir, name), entries, { configFile });
  };
  /** Imports a bundle in a fresh process (its cold start) and reports how that went. */
  const load = (bundle: string, extra: Record<string, string> = {}) =>
    spawnSync(process.execPath, ['--no-warnings', '--input-type=module', '-e', 'await import(process.argv[1]);', bundle], {
      env: { PATH: process.env.PATH, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret', NODESCALER_LOG_LEVEL: 'SILENT', ...extra },
      encoding: 'utf8',
    });

  it('refuses to package a stage with handler ec2 and no real platform (it would release hosts whose gears it cannot see)', async () => {
    const error = await bundleStage('ec2-simulated', `handler: ec2\n${POOL}`).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).toContain('platform.kind');
    expect(error?.message).toContain('handler ec2 launches and terminates real hosts');
  });

  it('gives each function the clients of the adapters the configuration uses: EC2 in the evaluator only to look up node-stats senders, the Price List only with handler ec2, S3 only with handler spool', async () => {
    const full = await bundleStage('full', FULL);
    expect(Object.fromEntries(Object.entries(full).map(([name, built]) => [name, built.clients]))).toEqual({
      // statsAuth (on by default): the sending instance's tags, DescribeInstances only; handler ec2: the region's on-demand prices.
      thresholdEvaluator: ['client-dynamodb', 'client-ec2', 'client-pricing', 'client-sqs', 'client-ssm', 'lib-dynamodb'],
      // handler ec2: the spool's S3 client stays out; notify.topicArn brings the SNS notifier; the broker platform, SSM.
      nodeProvisioner: ['client-dynamodb', 'client-ec2', 'client-route-53', 'client-sns', 'client-ssm', 'lib-dynamodb'],
      gearMover: ['client-dynamodb', 'client-sqs', 'client-ssm', 'lib-dynamodb'],
      decommissioner: ['client-dynamodb', 'client-ec2', 'client-route-53', 'client-sns', 'client-ssm', 'lib-dynamodb'],
    });
    // The decommissioner releases hosts and never launches one: no RunInstances, no user data with the stats agent.
    const text = (bundle: string) => readFileSync(bundle, 'utf8');
    expect(text(full.decommissioner!.bundle).includes('TerminateInstances')).toBe(true);
    for (const launch of ['RunInstances', 'nodescaler-agent']) {
      expect(text(full.nodeProvisioner!.bundle).includes(launch), launch).toBe(true);
      expect(text(full.decommissioner!.bundle).includes(launch), launch).toBe(false);
    }
    // The bench's baseline: the commands each bundle sends, found in its metafile, in a bare bundle that loads.
    expect(full.decommissioner!.commands['client-ec2']).toEqual(['DeleteVolumeCommand', 'DescribeInstancesCommand', 'TerminateInstancesCommand']);
    expect(full.nodeProvisioner!.commands['client-ec2']).toContain('RunInstancesCommand');
    expect(full.thresholdEvaluator!.commands['client-sqs']).toEqual(['SendMessageBatchCommand']);
    expect(full.thresholdEvaluator!.commands['client-ec2']).toEqual(['DescribeInstancesCommand']);
    expect(full.thresholdEvaluator!.commands['client-pricing']).toEqual(['GetProductsCommand']);
    expect(text(full.decommissioner!.bare).includes('TerminateInstances')).toBe(true);
    expect(text(full.decommissioner!.bareClients).includes('TerminateInstances')).toBe(false);
    const bareStarted = load(full.decommissioner!.bare);
    expect(bareStarted.status, bareStarted.stderr).toBe(0);
    const spool = await bundleStage('spool', SPOOL, { nodeProvisioner: FUNCTION_ENTRIES.nodeProvisioner, gearMover: FUNCTION_ENTRIES.gearMover });
    expect(spool.nodeProvisioner!.clients).toEqual(['client-dynamodb', 'client-s3', 'lib-dynamodb']);
    expect(spool.gearMover!.clients).toEqual(['client-dynamodb', 'client-sqs', 'lib-dynamodb']);
    // Every bundle starts with its packaged configuration (no configuration variable set).
    for (const built of [...Object.values(full), ...Object.values(spool)]) {
      const started = load(built.bundle);
      expect(started.status, started.stderr).toBe(0);
    }
  });

  it('gives the evaluator and the provisioner the launch template read (DescribeLaunchTemplates) only for a launch template at $Latest or $Default', async () => {
    const latest = FULL.replace('template: { imageId: ami-0123456789abcdef0,', 'template: { launchTemplate: { id: lt-0123456789abcdef0 },');
    expect(latest).not.toBe(FULL);
    const built = await bundleStage('latest', latest, { thresholdEvaluator: FUNCTION_ENTRIES.thresholdEvaluator, nodeProvisioner: FUNCTION_ENTRIES.nodeProvisioner });
    expect(built.thresholdEvaluator!.commands['client-ec2']).toEqual(['DescribeInstancesCommand', 'DescribeLaunchTemplatesCommand']);
    expect(built.nodeProvisioner!.commands['client-ec2']).toContain('DescribeLaunchTemplatesCommand');
    for (const bundle of Object.values(built)) {
      const started = load(bundle.bundle);
      expect(started.status, started.stderr).toBe(0);
    }
    // Pinned to a version number: nothing to read.
    const pinned = latest.replace('launchTemplate: { id: lt-0123456789abcdef0 }', 'launchTemplate: { id: lt-0123456789abcdef0, version: 4 }');
    const { thresholdEvaluator } = await bundleStage('pinned', pinned, { thresholdEvaluator: FUNCTION_ENTRIES.thresholdEvaluator });
    expect(thresholdEvaluator!.commands['client-ec2']).toEqual(['DescribeInstancesCommand']);
  });

  it('gives the evaluator the spot price read (DescribeSpotPriceHistory) only when handler ec2 launches a spot pool', async () => {
    const spot = FULL.replace('subnets: [subnet-0123456789abcdef0] }', 'subnets: [subnet-0123456789abcdef0], spot: true }');
    expect(spot).not.toBe(FULL);
    const { thresholdEvaluator } = await bundleStage('spot', spot, { thresholdEvaluator: FUNCTION_ENTRIES.thresholdEvaluator });
    expect(thresholdEvaluator!.commands['client-ec2']).toEqual(['DescribeInstancesCommand', 'DescribeSpotPriceHistoryCommand']);
    const started = load(thresholdEvaluator!.bundle);
    expect(started.status, started.stderr).toBe(0);
  });

  it('warns loudly at packaging when statsAuth is off (any host could report for any node), and the evaluator then holds no EC2 client', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const { thresholdEvaluator } = await bundleStage('stats-auth-off', `statsAuth: { enabled: false }\n${SPOOL}`, { thresholdEvaluator: FUNCTION_ENTRIES.thresholdEvaluator });
      const printed = warn.mock.calls.map((call) => String(call[0])).join('\n');
      expect(printed).toMatch(/!!! nodescaler .*stats-auth-off\.yml: WARNING: statsAuth\.enabled is false: node-stats are NOT bound to their sender/);
      expect(thresholdEvaluator!.clients).not.toContain('client-ec2');
      // Hosts launched by another handler: no price list read, so no Pricing client either.
      expect(thresholdEvaluator!.clients).not.toContain('client-pricing');
    } finally {
      warn.mockRestore();
    }
  });

  it('runs the packaged configuration only: NODESCALER_CONFIG or NODESCALER_CONFIG_FILE stop the cold start with a clear error', async () => {
    const { nodeProvisioner } = await bundleStage('spool-only', SPOOL, { nodeProvisioner: FUNCTION_ENTRIES.nodeProvisioner });
    const packaged = 'a deployed function runs the configuration it was packaged with';
    const inline = load(nodeProvisioner!.bundle, { NODESCALER_CONFIG: JSON.stringify({ pools: [{ district: 'd1', profile: 'small', max: 3 }] }) });
    expect(inline.status).not.toBe(0);
    expect(inline.stderr).toContain(`configuration NODESCALER_CONFIG: (root): ${packaged}`);
    expect(inline.stderr).toMatch(/packaged with \(.*spool-only\.yml\); to change it, edit that file and deploy again/);
    const file = load(nodeProvisioner!.bundle, { NODESCALER_CONFIG_FILE: join(dir, 'spool-only.yml') });
    expect(file.status).not.toBe(0);
    expect(file.stderr).toContain(`configuration ${join(dir, 'spool-only.yml')}: (root): ${packaged}`);
  });
});
