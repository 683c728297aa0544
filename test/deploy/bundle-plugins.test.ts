/**
 * The esbuild plugins of the Lambda bundles (infra/esbuild-plugins.cjs) drop
 * code, never behaviour: the same program bundled with and without them sends
 * byte-identical AWS requests and reports identical validation errors.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as esbuild from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

/** Requests of several protocols (EC2 query, Route 53 REST-XML, SSM and DynamoDB JSON), captured instead of sent. */
const PROGRAM = `
import { Readable } from 'node:stream';
import { EC2Client, RunInstancesCommand, DescribeInstancesCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { Route53Client, ChangeResourceRecordSetsCommand } from '@aws-sdk/client-route-53';
import { SSMClient, SendCommandCommand } from '@aws-sdk/client-ssm';
import { DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { z } from 'zod';
const requests = [];
const requestHandler = { handle: async (request) => {
  requests.push([request.method, request.path, request.headers['x-amz-target'] ?? '', typeof request.body === 'string' ? request.body : ''].join(' '));
  return { response: { statusCode: 400, headers: {}, body: Readable.from([Buffer.from('{}')]) } };
} };
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
  () => new DynamoDBClient(options).send(new UpdateItemCommand({ TableName: 't', Key: { pk: { S: 'NODE#a' }, sk: { S: 'NODE' } },
    UpdateExpression: 'SET #s = :s', ConditionExpression: '#v = :v', ExpressionAttributeNames: { '#s': 'state', '#v': 'version' },
    ExpressionAttributeValues: { ':s': { S: 'draining' }, ':v': { N: '3' } }, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' })),
];
for (const send of sends) await send().catch(() => {});
const invalid = z.strictObject({ min: z.int().min(0), name: z.string() }).safeParse({ min: -1, nmae: 'x' });
console.log(JSON.stringify({ requests, zod: invalid.error.issues.map((issue) => issue.message) }));
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
  return { bytes: Object.values(built.metafile.outputs)[0]!.bytes, output: JSON.parse(result.stdout) as { requests: string[]; zod: string[] } };
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'nodescaler-plugins-'));
  writeFileSync(join(dir, 'program.mjs'), PROGRAM);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('infra/esbuild-plugins.cjs', () => {
  it('leaves every request and every validation message as it was, and makes the bundle much smaller', async () => {
    const [withPlugins, without] = await Promise.all([run(true), run(false)]);
    expect(without.output.requests).toHaveLength(6);
    expect(withPlugins.output).toEqual(without.output);
    expect(withPlugins.output.requests[0]).toContain('BlockDeviceMapping.1.Ebs.VolumeSize=50');
    expect(withPlugins.output.zod.join(' ')).toMatch(/Too small|Unrecognized key/i);
    // EC2 schemas of unused operations, zod's other locales, the non-Lambda credential chain: gone.
    expect(withPlugins.bytes).toBeLessThan(without.bytes * 0.6);
  }, 60_000);
});
