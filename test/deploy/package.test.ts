/**
 * The deployment, offline: `serverless package` (osls + serverless-esbuild)
 * runs once for this file, and the CloudFormation template and the function
 * zips it writes are checked; then `npm run invoke` runs functions locally
 * with no AWS account, against embedded state that carries over between runs.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbStateStore } from '../../lib/adapters/dynamodb/state-store.js';
import { readStateTableResource, TABLE_KEYS } from '../../lib/adapters/dynamodb/table-definition.js';
import { startLocalDynamo } from '../../lib/adapters/local/dynalite.js';
import { readZip } from '../support/zip.js';

const ROOT = resolve(import.meta.dirname, '../..');
const STAGE = 'dev';

/** The node-stats bodies of events/node-stats.json, the sample the invocations below send. */
const SAMPLE_STATS = (JSON.parse(readFileSync(join(ROOT, 'events/node-stats.json'), 'utf8')).Records as Array<{ body: string }>).map(
  (record) => JSON.parse(record.body) as { nodeId: string; district: string; profile: string; activeGears: number; gears?: Array<{ uuid: string }> },
);

/** The functions of the issue, with what each consumes and the role it must run as. */
const FUNCTIONS = {
  thresholdEvaluator: { source: 'functions/threshold-evaluator.ts', role: 'ThresholdEvaluatorRole', consumes: ['StatsQueue'] },
  nodeProvisioner: { source: 'functions/node-provisioner.ts', role: 'NodeProvisionerRole', consumes: ['ScaleQueue'] },
  gearMover: { source: 'functions/gear-mover.ts', role: 'GearMoverRole', consumes: ['DrainQueue', 'EventsQueue'] },
  decommissioner: { source: 'functions/decommissioner.ts', role: 'DecommissionerRole', consumes: ['DecommissionQueue'] },
} as const;
type FunctionName = keyof typeof FUNCTIONS;
const ALL_FUNCTIONS = Object.keys(FUNCTIONS) as FunctionName[];
/** All four are deployed (the first test fails if a handler is missing). */
const LANDED: readonly FunctionName[] = ALL_FUNCTIONS;

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any
interface Resource {
  Type: string;
  Properties: Json;
  Condition?: string;
  DependsOn?: string[];
}

/** `Fn::GetAtt [X, Arn]` / `!Ref X` -> X. */
const logicalId = (value: Json): string | undefined => value?.['Fn::GetAtt']?.[0] ?? value?.Ref;
const lambdaId = (name: string) => `${name[0]!.toUpperCase()}${name.slice(1)}LambdaFunction`;

let template: { Resources: Record<string, Resource>; Conditions?: Record<string, Json> };
let resources: Record<string, Resource>;
let packageDir: string;
const ofType = (type: string) => Object.entries(resources).filter(([, resource]) => resource.Type === type);
/** A function's bundle, from its zip. */
const bundleOf = (name: FunctionName) => readZip(join(packageDir, `${name}.zip`)).get(FUNCTIONS[name].source.replace(/\.ts$/, '.mjs'))!.toString('utf8');

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end without blocking the event loop (packaging and invocations overlap). */
function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (status) => {
      resolve({ status, stdout, stderr });
    });
  });
}

/** The environment of a machine with no AWS settings at all. */
function noAws(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, AWS_CONFIG_FILE: '/nonexistent', AWS_SHARED_CREDENTIALS_FILE: '/nonexistent' };
  for (const key of Object.keys(env)) if (/^AWS_(ACCESS|SECRET|SESSION|PROFILE|REGION|DEFAULT)/.test(key) || key.startsWith('NODESCALER_')) delete env[key];
  return env;
}

/** `npm run invoke -- <args>`; `direct` runs the same script without npm's own start-up (the later steps of a sequence). */
const invoke = (stateDir: string, ...args: string[]) =>
  run('npm', ['run', '--silent', 'invoke', '--', ...args, '--state-dir', stateDir], noAws());
const invokeDirect = (stateDir: string, ...args: string[]) =>
  run(process.execPath, [join(ROOT, 'scripts/invoke.mjs'), ...args, '--state-dir', stateDir], noAws());

/** Two sequences of `npm run invoke`, each in its own state directory, run while the package is built. */
interface Invocations {
  /** The issue's command as is, then the gear mover's tick over the same state. */
  plain: { stateDir: string; stats: Ran; statsAt: Ran; gearMoverTick: Ran; decommissionerTick: Ran };
  /** Stats at 10:00:30, a tick at 10:02:45 (one scale-up in the scale queue file), the provisioner on that file. */
  timed: { stateDir: string; stats: Ran; tick: Ran; scaleQueueAfterTick: string; provision: Ran };
}
let invocations: Promise<Invocations>;
const stateDirs: string[] = [];

/**
 * A stage whose configuration names every scope (broker, hosted zone, spool
 * bucket, notify topic): `serverless print` resolves serverless.yml with it
 * (no build), for the statements config/dev.yml leaves out.
 */
const FULL_CONFIG = `
handler: ec2
platform: { kind: openshift-broker, brokerInstanceId: i-0b0b0b0b0b0b0b0b0 }
dns: { hostedZoneId: Z0123456789ABCDEFGHIJ }
spool: { bucket: nodescaler-spool, prefix: requests/ }
notify: { topicArn: 'arn:aws:sns:us-east-1:123456789012:nodescaler-requests' }
pools:
  - district: d1
    profile: small
    max: 10
    template: { imageId: ami-0123456789abcdef0, instanceTypes: [{ name: m5.xlarge, vcpus: 4, memoryGiB: 16 }], subnets: [subnet-0123456789abcdef0], securityGroups: [sg-0123456789abcdef0] }
  - district: d2
    profile: small
    max: 10
    template: { launchTemplate: { id: lt-0123456789abcdef0 }, imageId: ami-0123456789abcdef0, instanceTypes: [{ name: m5.xlarge, vcpus: 4, memoryGiB: 16 }], subnets: [subnet-0123456789abcdef0], securityGroups: [sg-0123456789abcdef0] }
`;
let printed: Promise<Ran>;

async function runInvocations(): Promise<Invocations> {
  const plainDir = mkdtempSync(join(tmpdir(), 'nodescaler-invoke-'));
  const timedDir = mkdtempSync(join(tmpdir(), 'nodescaler-invoke-'));
  stateDirs.push(plainDir, timedDir);
  const plain = (async () => {
    const stats = await invoke(plainDir, 'thresholdEvaluator', 'events/node-stats.json');
    // The sample stats are dated 2026-11-21T10:00Z: on the real clock they are too old to count, at their own time they do.
    const statsAt = await invokeDirect(plainDir, 'thresholdEvaluator', 'events/node-stats.json', '--at', '2026-11-21T10:00:30Z');
    const gearMoverTick = await invokeDirect(plainDir, 'gearMover', 'events/tick.json');
    const decommissionerTick = await invokeDirect(plainDir, 'decommissioner', 'events/tick.json');
    return { stateDir: plainDir, stats, statsAt, gearMoverTick, decommissionerTick };
  })();
  const timed = (async () => {
    const stats = await invokeDirect(timedDir, 'thresholdEvaluator', 'events/node-stats.json', '--at', '2026-11-21T10:00:30Z');
    const tick = await invokeDirect(timedDir, 'thresholdEvaluator', 'events/tick.json', '--at', '2026-11-21T10:02:45Z');
    const scaleFile = join(timedDir, 'queues', 'scale.json');
    const scaleQueueAfterTick = existsSync(scaleFile) ? readFileSync(scaleFile, 'utf8') : '';
    const provision = await invokeDirect(timedDir, 'nodeProvisioner', scaleFile, '--at', '2026-11-21T10:03:00Z');
    return { stateDir: timedDir, stats, tick, scaleQueueAfterTick, provision };
  })();
  return { plain: await plain, timed: await timed };
}

beforeAll(async () => {
  invocations = runInvocations();
  invocations.catch(() => {}); // awaited (and reported) by the invoke tests
  packageDir = mkdtempSync(join(tmpdir(), 'nodescaler-package-'));
  writeFileSync(join(packageDir, 'full.yml'), FULL_CONFIG);
  printed = run(
    join(ROOT, 'node_modules/.bin/serverless'),
    ['print', '--stage', 'prod', `--param=configFile=${join(packageDir, 'full.yml')}`, '--format', 'json'],
    { ...process.env, SLS_TELEMETRY_DISABLED: '1' },
  );
  printed.catch(() => {});
  const packaged = await run(
    join(ROOT, 'node_modules/.bin/serverless'),
    ['package', '--stage', STAGE, '--package', packageDir, `--param=esbuildWorkFolder=.esbuild/test-${process.pid}`],
    { ...process.env, SLS_TELEMETRY_DISABLED: '1' },
  );
  rmSync(join(ROOT, `.esbuild/test-${process.pid}`), { recursive: true, force: true });
  if (packaged.status !== 0) throw new Error(`serverless package failed (${packaged.status}):\n${packaged.stdout}\n${packaged.stderr}`);
  template = JSON.parse(readFileSync(join(packageDir, 'cloudformation-template-update-stack.json'), 'utf8'));
  resources = template.Resources;
});

afterAll(async () => {
  await invocations.catch(() => undefined);
  await printed.catch(() => undefined);
  for (const dir of [packageDir, ...stateDirs]) rmSync(dir, { recursive: true, force: true });
});

describe('serverless package (offline): functions', () => {
  it('deploys the four functions, each from its own bundle, nodejs22.x on arm64', () => {
    for (const name of ALL_FUNCTIONS) expect(existsSync(join(ROOT, FUNCTIONS[name].source)), FUNCTIONS[name].source).toBe(true);
    expect(ofType('AWS::Lambda::Function')).toHaveLength(4);
    const functions = ofType('AWS::Lambda::Function');
    expect(functions.map(([id]) => id).sort()).toEqual(LANDED.map(lambdaId).sort());
    for (const name of LANDED) {
      const { Properties } = resources[lambdaId(name)]!;
      expect(Properties.Runtime).toBe('nodejs22.x');
      expect(Properties.Architectures).toEqual(['arm64']);
      expect(Properties.Handler).toBe(`${FUNCTIONS[name].source.replace(/\.ts$/, '')}.handler`);
      expect(Properties.Code.S3Key).toMatch(new RegExp(`/${name}\\.zip$`));
      expect(existsSync(join(packageDir, `${name}.zip`))).toBe(true);
    }
  });

  it('gives every function the deployment settings lib/config/load.ts reads; its stage configuration is in its bundle, the zip holds nothing else', () => {
    for (const name of LANDED) {
      const variables = resources[lambdaId(name)]!.Properties.Environment.Variables;
      expect(variables).toMatchObject({ NODESCALER_STAGE: STAGE, NODESCALER_TABLE: resources.StateTable!.Properties.TableName });
      expect(variables.NODESCALER_STATS_QUEUE_URL).toEqual({ Ref: 'StatsQueue' });
      expect(variables.NODESCALER_SCALE_QUEUE_URL).toEqual({ Ref: 'ScaleQueue' });
      expect(variables.NODESCALER_DRAIN_QUEUE_URL).toEqual({ Ref: 'DrainQueue' });
      expect(variables.NODESCALER_DECOMMISSION_QUEUE_URL).toEqual({ Ref: 'DecommissionQueue' });
      // Set, either would win over the configuration packaged in the bundle.
      expect(variables.NODESCALER_CONFIG_FILE).toBeUndefined();
      expect(variables.NODESCALER_CONFIG).toBeUndefined();
      expect(variables.NODESCALER_LOCAL_STATE_DIR).toBeUndefined();
      const files = [...readZip(join(packageDir, `${name}.zip`)).keys()];
      expect(files).toEqual([FUNCTIONS[name].source.replace(/\.ts$/, '.mjs')]);
      // config/dev.yml, validated and defaulted (durations in milliseconds), with its source named (as minified code).
      const bundle = bundleOf(name);
      for (const text of [`source:"config/${STAGE}.yml"`, 'base:"d1-small"', 'unneededTime:3e5']) expect(bundle.includes(text), `${name}: ${text}`).toBe(true);
    }
  });

  it('bundles only the AWS clients the stage configuration makes a function use, no YAML parser, no configuration schema, no zod and no local-only code', () => {
    // config/dev.yml: handler log and the simulated platform, so no cloud and no broker client at all.
    // Service ids the SDK clients carry in their bundled code (a positive control for the checks below).
    // (includes(): a failing toContain would print the whole bundle.)
    const has = (name: FunctionName, text: string) => bundleOf(name).includes(text);
    expect(has('thresholdEvaluator', 'AmazonSQS')).toBe(true);
    expect(has('gearMover', 'AmazonSQS')).toBe(true);
    for (const name of LANDED) {
      expect(has(name, 'DynamoDB_20120810'), name).toBe(true);
      for (const service of ['AmazonEC2', 'AmazonSSM', 'AmazonS3', 'AmazonSimpleNotificationService', 'AWSDnsV20130401']) {
        // statsAuth (on by default): the evaluator looks node-stats senders up in EC2 (DescribeInstances only).
        expect(has(name, service), `${name}: ${service}`).toBe(name === 'thresholdEvaluator' && service === 'AmazonEC2');
      }
      // The YAML parser (lib/config/parse.ts is a stub in a bundle), by one of its error messages.
      expect(has(name, 'Missing newline after block sequence props'), name).toBe(false);
      // The configuration schema (lib/config/schema.ts), by its messages.
      expect(has(name, 'at least one pool is required'), name).toBe(false);
      // zod (deployment settings and messages are plain validators), by its English locale's messages.
      expect(has(name, 'Invalid discriminator value'), name).toBe(false);
      // Local-only code (functions/local/, lib/adapters/local/invoke.ts, file-queue.ts), by its strings.
      for (const local of ['cannot open the local state', 'arn:aws:sqs:local:', 'dynalite']) expect(has(name, local), `${name}: ${local}`).toBe(false);
    }
  });

  it('runs every handler on a one-minute schedule (the tick that resumes work in flight)', () => {
    for (const name of LANDED) {
      const rules = ofType('AWS::Events::Rule').filter(([, rule]) =>
        (rule.Properties.Targets ?? []).some((target: Json) => logicalId(target.Arn) === lambdaId(name)),
      );
      expect(rules.map(([, rule]) => rule.Properties.ScheduleExpression), name).toEqual(['rate(1 minute)']);
    }
  });
});

describe('serverless package (offline): queues and event sources', () => {
  const queues = () => ofType('AWS::SQS::Queue');
  const deadLetterTargets = () => new Set(queues().map(([, q]) => logicalId(q.Properties.RedrivePolicy?.deadLetterTargetArn)).filter(Boolean));

  it('gives every queue a dead-letter queue with a small maxReceiveCount; a dead-letter queue is nothing else', () => {
    const targets = deadLetterTargets();
    const sources = queues().filter(([id]) => !targets.has(id));
    expect(sources.map(([id]) => id).sort()).toEqual(['DecommissionQueue', 'DrainQueue', 'EventsQueue', 'ScaleQueue', 'StatsQueue']);
    for (const [id, queue] of sources) {
      const redrive = queue.Properties.RedrivePolicy;
      expect(redrive, id).toBeDefined();
      expect(redrive.maxReceiveCount, id).toBeGreaterThanOrEqual(1);
      expect(redrive.maxReceiveCount, id).toBeLessThanOrEqual(5);
      const dlq = resources[logicalId(redrive.deadLetterTargetArn)!]!;
      expect(dlq.Type).toBe('AWS::SQS::Queue');
      expect(Boolean(dlq.Properties.FifoQueue), `${id}: a FIFO queue needs a FIFO dead-letter queue`).toBe(Boolean(queue.Properties.FifoQueue));
      expect(dlq.Properties.MessageRetentionPeriod).toBe(1_209_600);
    }
    expect(targets.size).toBe(sources.length); // one dead-letter queue per queue
    for (const [id, queue] of queues()) expect(queue.Properties.SqsManagedSseEnabled, id).toBe(true);
  });

  it('makes scale and drain FIFO without content-based deduplication (the senders set decisionId / drainId); stats, decommission and events standard', () => {
    for (const id of ['ScaleQueue', 'DrainQueue']) {
      expect(resources[id]!.Properties).toMatchObject({ FifoQueue: true, ContentBasedDeduplication: false });
      expect(resources[id]!.Properties.QueueName).toMatch(/\.fifo$/);
    }
    for (const id of ['StatsQueue', 'DecommissionQueue', 'EventsQueue']) expect(resources[id]!.Properties.FifoQueue).toBeUndefined();
  });

  it('consumes each queue with ReportBatchItemFailures, a visibility timeout >= 6x the consumer timeout, and receive rights on that queue only', () => {
    const mappings = ofType('AWS::Lambda::EventSourceMapping');
    const expected = LANDED.flatMap((name) => FUNCTIONS[name].consumes.map((queue) => `${lambdaId(name)}<-${queue}`));
    expect(mappings.map(([, m]) => `${logicalId(m.Properties.FunctionName)}<-${logicalId(m.Properties.EventSourceArn)}`).sort()).toEqual(expected.sort());
    for (const [id, mapping] of mappings) {
      expect(mapping.Properties.FunctionResponseTypes, id).toEqual(['ReportBatchItemFailures']);
      const fn = resources[logicalId(mapping.Properties.FunctionName)!]!;
      const queueId = logicalId(mapping.Properties.EventSourceArn)!;
      const queue = resources[queueId]!;
      expect(queue.Properties.VisibilityTimeout, id).toBeGreaterThanOrEqual(6 * fn.Properties.Timeout);
      if (queue.Properties.FifoQueue) expect(mapping.Properties.BatchSize, id).toBeLessThanOrEqual(10);
      const receive = statementsOf(logicalId(fn.Properties.Role)!).filter((s) => actionsOf(s).includes('sqs:ReceiveMessage'));
      expect(receive.flatMap(resourcesOf).map(logicalId), id).toEqual(expect.arrayContaining([queueId]));
    }
  });

  it('routes EC2 state changes, spot interruption warnings and rebalance recommendations to the events queue, which only those rules may send to', () => {
    const rules = ofType('AWS::Events::Rule').filter(([, rule]) => rule.Properties.EventPattern);
    const detailTypes = rules.flatMap(([, rule]) => rule.Properties.EventPattern['detail-type']);
    expect(detailTypes.sort()).toEqual(['EC2 Instance Rebalance Recommendation', 'EC2 Instance State-change Notification', 'EC2 Spot Instance Interruption Warning']);
    for (const [, rule] of rules) {
      expect(rule.Properties.EventPattern.source).toEqual(['aws.ec2']);
      expect(rule.Properties.Targets.map((t: Json) => logicalId(t.Arn))).toEqual(['EventsQueue']);
    }
    const policy = resources.EventsQueuePolicy!.Properties.PolicyDocument.Statement[0];
    expect(policy).toMatchObject({ Effect: 'Allow', Principal: { Service: 'events.amazonaws.com' }, Action: 'sqs:SendMessage' });
    expect(policy.Condition.ArnEquals['aws:SourceArn'].map(logicalId).sort()).toEqual(rules.map(([id]) => id).sort());
  });
});

describe('serverless package (offline): state table', () => {
  it('is on demand with PITR and TTL, and has exactly the keys and index of infra/state-table.yml (the one the tests and the local runtime create)', () => {
    const table = resources.StateTable!;
    expect(table.Type).toBe('AWS::DynamoDB::Table');
    expect(table.Properties.BillingMode).toBe('PAY_PER_REQUEST');
    expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: TABLE_KEYS.ttl, Enabled: true });
    const definition = readStateTableResource();
    expect(table.Properties.KeySchema).toEqual(definition.KeySchema);
    expect(table.Properties.AttributeDefinitions).toEqual(definition.AttributeDefinitions);
    expect(table.Properties.GlobalSecondaryIndexes).toEqual(definition.GlobalSecondaryIndexes);
    expect(table.Properties.GlobalSecondaryIndexes.map((index: Json) => index.IndexName)).toContain(TABLE_KEYS.poolIndex);
  });
});

describe('serverless package (offline): least-privilege IAM', () => {
  const READ_ONLY = /^[a-z0-9-]+:(Describe|Get|List)[A-Za-z]*$/;

  it('runs each function as its own role; there is no shared default role', () => {
    expect(resources.IamRoleLambdaExecution).toBeUndefined();
    const roles = LANDED.map((name) => logicalId(resources[lambdaId(name)]!.Properties.Role));
    expect(roles).toEqual(LANDED.map((name) => FUNCTIONS[name].role));
    for (const name of LANDED) {
      const logs = statementsOf(FUNCTIONS[name].role).filter((s) => actionsOf(s).includes('logs:PutLogEvents'));
      expect(JSON.stringify(logs.flatMap(resourcesOf))).toContain(`log-group:/aws/lambda/nodescaler-${STAGE}-${name}:*`);
    }
  });

  it('grants no "*" action and no "*" resource on a write action, in any policy of the stack', () => {
    const all = allPolicyStatements();
    expect(all.length).toBeGreaterThan(20);
    for (const { where, statement } of all) {
      expect(statement.NotAction, where).toBeUndefined();
      expect(statement.NotResource, where).toBeUndefined();
      if (statement.Effect !== 'Allow') continue; // a Deny (the deployment bucket's TLS-only policy) may be broad
      for (const action of actionsOf(statement)) expect(action, where).not.toMatch(/(^\*$|:\*$)/);
      if (statement.Principal) continue; // resource policies apply to their own resource
      const writes = actionsOf(statement).filter((action) => !READ_ONLY.test(action));
      if (writes.length > 0) expect(resourcesOf(statement), `${where}: ${writes.join(', ')}`).not.toContain('*');
    }
  });

  it('scopes the state table to its ARN and index, and each queue action to the queues the function uses', () => {
    for (const name of LANDED) {
      const table = statementsOf(FUNCTIONS[name].role).filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')));
      expect(table.flatMap(resourcesOf)).toEqual([{ 'Fn::GetAtt': ['StateTable', 'Arn'] }, { 'Fn::Sub': '${StateTable.Arn}/index/*' }]);
      expect(table.flatMap(actionsOf)).not.toContain('dynamodb:Scan');
    }
    const sendsOf = (role: string) =>
      statementsOf(role)
        .filter((s) => actionsOf(s).includes('sqs:SendMessage'))
        .flatMap(resourcesOf)
        .map(logicalId)
        .sort();
    expect(sendsOf('ThresholdEvaluatorRole')).toEqual(['DrainQueue', 'ScaleQueue']);
    expect(sendsOf('GearMoverRole')).toEqual(['DecommissionQueue']);
    expect(sendsOf('NodeProvisionerRole')).toEqual([]);
    expect(sendsOf('DecommissionerRole')).toEqual([]);
    // The evaluator reads EC2 only to learn who sent node-stats (statsAuth): DescribeInstances and nothing else.
    expect(statementsOf('ThresholdEvaluatorRole').flatMap(actionsOf).filter((a) => a.startsWith('ec2:'))).toEqual(['ec2:DescribeInstances']);
  });

  it('limits EC2 mutations to resources tagged nodescaler:pool, and iam:PassRole to the node role', () => {
    const ec2Writes = allPolicyStatements().filter(({ statement }) => actionsOf(statement).some((a) => a.startsWith('ec2:') && !READ_ONLY.test(a)));
    expect(ec2Writes.length).toBeGreaterThanOrEqual(3);
    for (const { where, statement } of ec2Writes) {
      const taggable = resourcesOf(statement).some((r: Json) => /:(instance|volume)\/\*"/.test(JSON.stringify(r)));
      if (!taggable) {
        // What RunInstances uses but does not create (image, subnet, security group...).
        expect(actionsOf(statement), where).toEqual(['ec2:RunInstances']);
        continue;
      }
      const condition = JSON.stringify(statement.Condition ?? {});
      expect(condition, where).toMatch(/"(aws:RequestTag|ec2:ResourceTag|aws:ResourceTag)\/nodescaler:pool":"false"/);
    }
    const terminate = ec2Writes.find(({ statement }) => actionsOf(statement).includes('ec2:TerminateInstances'))!;
    expect(terminate.statement.Condition).toEqual({ Null: { 'ec2:ResourceTag/nodescaler:pool': 'false' }, StringEquals: { 'ec2:ResourceTag/nodescaler:stage': STAGE } });
    const pass = allPolicyStatements().filter(({ statement }) => actionsOf(statement).includes('iam:PassRole'));
    expect(pass).toHaveLength(1);
    expect(pass[0]!.statement.Resource).toEqual({ 'Fn::Sub': 'arn:${AWS::Partition}:iam::${AWS::AccountId}:role/nodescaler-node' });
  });

  it('lets only the functions that talk to the broker run commands, and only the nodescaler document on the broker host (never AWS-RunShellScript)', () => {
    const commanders = Object.values(FUNCTIONS)
      .filter(({ role }) => statementsOf(role).some((s) => actionsOf(s).includes('ssm:SendCommand')))
      .map(({ role }) => role);
    expect(commanders.sort()).toEqual(['DecommissionerRole', 'GearMoverRole', 'NodeProvisionerRole', 'ThresholdEvaluatorRole']);
    for (const role of commanders) {
      const send = statementsOf(role).find((s) => actionsOf(s).includes('ssm:SendCommand'));
      expect(actionsOf(send)).toEqual(['ssm:SendCommand']);
      expect(resourcesOf(send)).toEqual([
        { 'Fn::Sub': 'arn:${AWS::Partition}:ec2:${AWS::Region}:${AWS::AccountId}:instance/' },
        { 'Fn::Sub': `arn:\${AWS::Partition}:ssm:\${AWS::Region}:\${AWS::AccountId}:document/nodescaler-${STAGE}-broker-admin` },
      ]);
    }
    expect(JSON.stringify(allPolicyStatements())).not.toContain('AWS-RunShellScript');
  });

  it('defines the broker document: every parameter checked by a pattern or a list, and only the admin tools and the gear queries run', () => {
    const document = resources.BrokerAdminDocument!;
    expect(document.Type).toBe('AWS::SSM::Document');
    expect(document.Condition).toBe('HasBroker');
    expect(document.Properties.Name).toBe(`nodescaler-${STAGE}-broker-admin`);
    const { parameters, mainSteps } = document.Properties.Content;
    for (const [name, parameter] of Object.entries(parameters as Record<string, Json>)) {
      expect(parameter.allowedPattern ?? parameter.allowedValues, name).toBeDefined();
      if (parameter.allowedPattern) expect(parameter.allowedPattern, name).toMatch(/^\^.*\$$/);
    }
    expect(parameters.action.allowedValues).toEqual(['add-node', 'remove-node', 'deactivate-node', 'activate-node', 'move', 'list-gears', 'node-facts', 'node-district', 'gear-location']);
    expect(mainSteps).toHaveLength(1);
    const script = (mainSteps[0].inputs.runCommand as string[]).join('\n');
    const shellPart = script.slice(0, script.indexOf("<<'RUBY'"));
    const commands = [...shellPart.matchAll(/(?:^|\$\(|;|\|)\s*(?:exec\s+)?([a-z][a-z-]+)\s/gm)].map((m) => m[1]);
    expect(new Set(commands)).toEqual(new Set(['set', 'export', 'case', 'oo-admin-ctl-district', 'printf', 'grep', 'tail', 'cut', 'exit', 'oo-admin-move', 'if', 'then', 'else', 'fi', 'oo-ruby']));
    // Parameters reach the tools quoted, as single words.
    for (const name of Object.keys(parameters)) if (name !== 'executionTimeout') expect(script).toContain(`'{{ ${name} }}'`);
  });

  it('terminates and deletes only resources tagged for this stage, and launches only with the stage tag', () => {
    for (const role of ['NodeProvisionerRole', 'DecommissionerRole']) {
      const release = statementsOf(role).find((s) => actionsOf(s).includes('ec2:TerminateInstances'));
      expect(release.Condition, role).toEqual({ Null: { 'ec2:ResourceTag/nodescaler:pool': 'false' }, StringEquals: { 'ec2:ResourceTag/nodescaler:stage': STAGE } });
    }
    const launch = statementsOf('NodeProvisionerRole').find((s) => s.Sid === 'LaunchTaggedHostsOnly');
    expect(launch.Condition.StringEquals).toEqual({ 'aws:RequestTag/nodescaler:stage': STAGE });
  });

  it('limits RunInstances to the images, subnets, security groups and launch templates the stage configuration names', async () => {
    const result = await printed;
    expect(result.status, result.stderr).toBe(0);
    const resolved = JSON.parse(result.stdout) as { resources: { Conditions: Record<string, Json>; Resources: Record<string, Resource> } };
    expect(resolved.resources.Conditions.HasLaunch).toEqual({ 'Fn::Not': [{ 'Fn::Equals': ['true', ''] }] });
    const statements = (resolved.resources.Resources.NodeProvisionerRole!.Properties.Policies[0].PolicyDocument.Statement as Json[]).flatMap((entry) =>
      entry['Fn::If'] ? [entry['Fn::If'][1]] : [entry],
    );
    const launches = statements.filter((s) => [s.Action].flat().includes('ec2:RunInstances'));
    const scoped = launches.flatMap((s) => [s.Resource].flat()).map((r: Json) => r['Fn::Sub'] as string);
    expect(scoped.filter((r) => /:(image|subnet|security-group|launch-template)\//.test(r)).sort()).toEqual([
      'arn:${AWS::Partition}:ec2:${AWS::Region}:${AWS::AccountId}:launch-template/lt-0123456789abcdef0',
      'arn:${AWS::Partition}:ec2:${AWS::Region}:${AWS::AccountId}:security-group/sg-0123456789abcdef0',
      'arn:${AWS::Partition}:ec2:${AWS::Region}:${AWS::AccountId}:subnet/subnet-0123456789abcdef0',
      'arn:${AWS::Partition}:ec2:${AWS::Region}::image/ami-0123456789abcdef0',
    ]);
    for (const r of scoped) expect(r).not.toMatch(/:(image|subnet|security-group|launch-template)\/\*$/);
    // config/dev.yml (handler log) launches nothing: the statement is left out.
    expect(template.Conditions?.HasLaunch).toEqual({ 'Fn::Not': [{ 'Fn::Equals': ['', ''] }] });
  });

  it('scopes Route 53, SSM, S3 and SNS to the zone, broker, spool prefix and topic the stage configuration names', async () => {
    const result = await printed;
    expect(result.status, result.stderr).toBe(0);
    const resolved = JSON.parse(result.stdout) as { resources: { Conditions: Record<string, Json>; Resources: Record<string, Resource> } };
    const conditions = resolved.resources.Conditions;
    for (const [name, value] of [
      ['HasBroker', 'i-0b0b0b0b0b0b0b0b0'],
      ['HasHostedZone', 'Z0123456789ABCDEFGHIJ'],
      ['HasSpool', 'nodescaler-spool'],
      ['HasNotify', 'arn:aws:sns:us-east-1:123456789012:nodescaler-requests'],
    ]) {
      expect(conditions[name!]).toEqual({ 'Fn::Not': [{ 'Fn::Equals': [value, ''] }] });
    }
    const statement = (role: string, sid: string) =>
      (resolved.resources.Resources[role]!.Properties.Policies[0].PolicyDocument.Statement as Json[])
        .flatMap((entry) => (entry['Fn::If'] ? [entry['Fn::If'][1]] : [entry]))
        .find((entry) => entry.Sid === sid);
    expect(statement('NodeProvisionerRole', 'NodeDnsRecords').Resource).toEqual({ 'Fn::Sub': 'arn:${AWS::Partition}:route53:::hostedzone/Z0123456789ABCDEFGHIJ' });
    expect(statement('NodeProvisionerRole', 'SpoolRequests').Resource).toEqual({ 'Fn::Sub': 'arn:${AWS::Partition}:s3:::nodescaler-spool/requests/*' });
    expect(statement('NodeProvisionerRole', 'NotifyRequests').Resource).toBe('arn:aws:sns:us-east-1:123456789012:nodescaler-requests');
    for (const role of ['ThresholdEvaluatorRole', 'GearMoverRole', 'DecommissionerRole']) {
      expect(statement(role, 'BrokerCommands').Resource[0]).toEqual({ 'Fn::Sub': 'arn:${AWS::Partition}:ec2:${AWS::Region}:${AWS::AccountId}:instance/i-0b0b0b0b0b0b0b0b0' });
    }
  });

  it('leaves out the Route 53, SSM, S3 and SNS statements whose scope the stage configuration does not name', () => {
    // config/dev.yml names no hosted zone, broker, spool bucket or notify topic.
    for (const condition of ['HasBroker', 'HasHostedZone', 'HasSpool', 'HasNotify']) {
      expect(template.Conditions?.[condition]).toEqual({ 'Fn::Not': [{ 'Fn::Equals': ['', ''] }] });
    }
  });
});

describe('serverless package (offline): monitoring', () => {
  const alarms = () => ofType('AWS::CloudWatch::Alarm');
  const alarmTopic = { Ref: 'AlarmTopic' };

  it('alarms on any message in any dead-letter queue', () => {
    const dlqs = ofType('AWS::SQS::Queue').filter(([id]) => id.endsWith('DeadLetterQueue')).map(([id]) => id);
    expect(dlqs).toHaveLength(5);
    for (const dlq of dlqs) {
      const alarm = alarms().find(([, a]) => a.Properties.Dimensions?.some((d: Json) => logicalId(d.Value) === dlq));
      expect(alarm, dlq).toBeDefined();
      expect(alarm![1].Properties).toMatchObject({ MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' });
    }
  });

  it('alarms on capacity exhausted, aborted drains and lost gears (per pool), function errors and stats that stopped arriving; every alarm notifies the alarm topic', () => {
    const expressionOf = (id: string) => resources[id]!.Properties.Metrics?.[0]?.Expression as string;
    expect(expressionOf('CapacityExhaustedAlarm')).toMatch(/SUM\(CapacityExhausted\) FROM SCHEMA\("nodescaler", pool, service\) GROUP BY pool/);
    expect(expressionOf('DrainsAbortedAlarm')).toMatch(/SUM\(DrainsAborted\)/);
    expect(expressionOf('GearsLostAlarm')).toMatch(/SUM\(GearsLost\)/);
    // Security: node-stats from a sender that may not report for the node (lib/app/stats-sender.ts counts StatsRejected).
    expect(expressionOf('StatsRejectedAlarm')).toBe('SELECT SUM(StatsRejected) FROM SCHEMA("nodescaler", reason, service)');
    expect(resources.StatsRejectedAlarm!.Properties).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', TreatMissingData: 'notBreaching' });
    for (const name of ALL_FUNCTIONS) {
      const alarm = alarms().find(([, a]) => a.Properties.MetricName === 'Errors' && a.Properties.Dimensions[0].Value === `nodescaler-${STAGE}-${name}`);
      expect(alarm, name).toBeDefined();
    }
    expect(resources.StatsSilentAlarm!.Properties).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'NumberOfMessagesSent',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': ['StatsQueue', 'QueueName'] } }],
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'breaching',
    });
    expect(resources.AlarmTopic!.Type).toBe('AWS::SNS::Topic');
    for (const [id, alarm] of alarms()) expect(alarm.Properties.AlarmActions, id).toEqual([alarmTopic]);
  });

  it('has a dashboard: utilization and nodes per pool, actions, drains, errors, dead-letter depth, every alarm', () => {
    const [text, variables] = resources.Dashboard!.Properties.DashboardBody['Fn::Sub'] as [string, Record<string, string>];
    // Substitute what CloudFormation would, then the body must be valid dashboard JSON.
    const body = JSON.parse(
      text.replace(/\$\{([A-Za-z0-9:]+)(?:\.([A-Za-z]+))?\}/g, (_, name: string, attribute?: string) => variables[name] ?? (attribute ? `${name}-${attribute}` : name)),
    );
    const widgets: Json[] = body.widgets;
    const all = JSON.stringify(widgets);
    for (const metric of ['PoolUtilization', 'Nodes', 'ScaleUps', 'ScaleDowns', 'GearMoves', 'DrainDuration', 'DrainsAborted', 'GearsLost', 'CapacityExhausted', 'DecisionLatency']) {
      expect(all).toContain(`MetricName=\\"${metric}\\"`);
    }
    expect(all).toContain('"AWS/Lambda","Errors"');
    for (const dlq of ['Stats', 'Scale', 'Drain', 'Decommission', 'Events']) expect(all).toContain(`${dlq}DeadLetterQueue-QueueName`);
    const alarmWidget = widgets.find((w) => w.type === 'alarm');
    expect(alarmWidget.properties.alarms).toHaveLength(alarms().length);
  });

  it('shows the gears the broker refused (GearsRefused) next to utilization and nodes, and the hosts kept for gears beside it; no widget overlaps another', () => {
    const [text, variables] = resources.Dashboard!.Properties.DashboardBody['Fn::Sub'] as [string, Record<string, string>];
    const body = JSON.parse(text.replace(/\$\{([A-Za-z0-9:]+)(?:\.([A-Za-z]+))?\}/g, (_, name: string, attribute?: string) => variables[name] ?? (attribute ? `${name}-${attribute}` : name)));
    const widgets: Json[] = body.widgets;
    const searching = (metric: string) => widgets.filter((w) => JSON.stringify(w.properties.metrics ?? []).includes(`MetricName=\\"${metric}\\"`));
    const [refused] = searching('GearsRefused');
    expect(searching('GearsRefused')).toHaveLength(1);
    // Summed per 5 minutes over every pool's series, as the alarms read counts.
    expect(refused.properties).toMatchObject({ view: 'timeSeries', stat: 'Sum', period: 300 });
    expect(refused.properties.metrics).toEqual([[{ expression: `SEARCH('{nodescaler,pool,service} MetricName=\"GearsRefused\"', 'Sum', 300)`, id: 'refused', label: '' }]]);
    expect(refused.properties.title).toMatch(/refused/);
    // The row right under utilization and nodes: demand the pool did not meet, read with the load that caused it.
    const [utilization] = searching('PoolUtilization');
    expect(refused).toMatchObject({ x: utilization.x, y: utilization.y + utilization.height });
    const [kept] = searching('ReleasesHandedBack');
    expect(kept).toMatchObject({ y: refused.y, x: refused.x + refused.width });
    for (const metric of ['DecommissionRefused', 'OrphanHostsKept']) expect(searching(metric)).toEqual([kept]);
    // CloudWatch stacks overlapping widgets; every cell belongs to one widget at most.
    const cells = new Map<string, number>();
    widgets.forEach((w, i) => {
      for (let x = w.x; x < w.x + w.width; x++) for (let y = w.y; y < w.y + w.height; y++) {
        expect(cells.get(`${x},${y}`), `widgets ${cells.get(`${x},${y}`)} and ${i} overlap at ${x},${y}`).toBeUndefined();
        cells.set(`${x},${y}`, i);
      }
    });
    expect(widgets.every((w) => w.x + w.width <= 24)).toBe(true);
  });
});

describe('serverless package (offline): operators (policies for people, stack outputs)', () => {
  const policy = (id: string) => resources[id]!;
  /** The SDK commands a source file imports, e.g. GetCommand -> dynamodb:GetItem for lib-dynamodb. */
  const commandsImportedBy = (file: string, from: string) => {
    const source = readFileSync(join(ROOT, file), 'utf8');
    const list = new RegExp(`import \\{([^}]*)\\} from '${from}'`).exec(source)?.[1] ?? '';
    return list.split(',').map((name) => name.trim()).filter((name) => /^[A-Z]\w*Command$/.test(name));
  };
  const DOCUMENT_ACTIONS: Record<string, string> = { GetCommand: 'dynamodb:GetItem', PutCommand: 'dynamodb:PutItem', QueryCommand: 'dynamodb:Query', UpdateCommand: 'dynamodb:UpdateItem' };
  const SQS_ACTIONS: Record<string, string> = { GetQueueUrlCommand: 'sqs:GetQueueUrl', SendMessageBatchCommand: 'sqs:SendMessage' };
  const table = [{ 'Fn::GetAtt': ['StateTable', 'Arn'] }, { 'Fn::Sub': '${StateTable.Arn}/index/*' }];

  it('gives read-only people reads of the state table and nothing else', () => {
    expect(policy('ReadOnlyOperatorPolicy')).toMatchObject({ Type: 'AWS::IAM::ManagedPolicy', Properties: { ManagedPolicyName: `nodescaler-${STAGE}-read-only` } });
    const statements = flatten(policy('ReadOnlyOperatorPolicy').Properties.PolicyDocument.Statement);
    expect(statements.flatMap(actionsOf).sort()).toEqual(['dynamodb:GetItem', 'dynamodb:Query']);
    expect(statements.flatMap(resourcesOf)).toEqual(table);
  });

  it('gives operators exactly what the CLI sends: the state store\'s commands on the table and manual drains on the drain queue', () => {
    expect(policy('OperatorPolicy').Properties.ManagedPolicyName).toBe(`nodescaler-${STAGE}-operator`);
    const statements = flatten(policy('OperatorPolicy').Properties.PolicyDocument.Statement);
    const actions = statements.flatMap(actionsOf);
    // The store and the item modules it delegates to (controls: pause, resume, overrides; the decision log's range reads).
    const storeModules = ['state-store', 'controls', 'decision-log'].map((name) => `lib/adapters/dynamodb/${name}.ts`);
    const storeCommands = [...new Set(storeModules.flatMap((file) => commandsImportedBy(file, '@aws-sdk/lib-dynamodb')))];
    expect(storeCommands.sort()).toEqual(Object.keys(DOCUMENT_ACTIONS).sort());
    const queueCommands = [...commandsImportedBy('lib/cli/target.ts', '@aws-sdk/client-sqs'), ...commandsImportedBy('lib/adapters/sqs/queue.ts', '@aws-sdk/client-sqs')];
    for (const command of [...storeCommands, ...queueCommands]) expect(actions, command).toContain(DOCUMENT_ACTIONS[command] ?? SQS_ACTIONS[command]);
    expect(actions).not.toContain('dynamodb:DeleteItem');
    expect(actions.filter((action) => !/^(dynamodb|sqs):/.test(action))).toEqual([]);
    for (const statement of statements) {
      if (actionsOf(statement).some((action) => action.startsWith('sqs:'))) {
        expect(resourcesOf(statement)).toEqual([{ 'Fn::GetAtt': ['DrainQueue', 'Arn'] }, { 'Fn::GetAtt': ['ScaleQueue', 'Arn'] }]);
      }
      else expect(table).toEqual(expect.arrayContaining(resourcesOf(statement)));
    }
  });

  it('outputs where things are: the table, the queues, the alarm topic, the dashboard URL and both policies', () => {
    const outputs = (template as unknown as { Outputs: Record<string, { Value: Json }> }).Outputs;
    expect(outputs.StateTableName!.Value).toEqual({ Ref: 'StateTable' });
    expect(outputs.DrainQueueUrl!.Value).toEqual({ Ref: 'DrainQueue' });
    expect(outputs.StatsQueueUrl!.Value).toEqual({ Ref: 'StatsQueue' });
    expect(outputs.AlarmTopicArn!.Value).toEqual({ Ref: 'AlarmTopic' });
    expect(outputs.DashboardUrl!.Value['Fn::Sub']).toMatch(/^https:\/\/\$\{AWS::Region\}\.console\.aws\.amazon\.com\/cloudwatch\/.*#dashboards:name=\$\{Dashboard\}$/);
    expect(outputs.ReadOnlyOperatorPolicyArn!.Value).toEqual({ Ref: 'ReadOnlyOperatorPolicy' });
    expect(outputs.OperatorPolicyArn!.Value).toEqual({ Ref: 'OperatorPolicy' });
  });
});

describe('npm run invoke (serverless invoke local, stage local): no AWS account', () => {
  let ran: Invocations;
  beforeAll(async () => {
    ran = await invocations;
  });
  const withStore = async <T>(stateDir: string, use: (store: DynamoDbStateStore) => Promise<T>): Promise<T> => {
    const local = await startLocalDynamo({ path: join(stateDir, 'dynamodb'), tableName: 'nodescaler-local-state' });
    try {
      return await use(new DynamoDbStateStore(DynamoDbStateStore.documentClient(local.client), local.tableName));
    } finally {
      await local.close();
    }
  };

  it('npm run invoke -- thresholdEvaluator events/node-stats.json: drops the sample stats as too old on the real clock, takes them at their time (--at) and persists the nodes', async () => {
    const { stateDir, stats: old, statsAt: stats } = ran.plain;
    expect(old.status, `${old.stdout}\n${old.stderr}`).toBe(0);
    expect(old.stdout).toMatch(/"batchItemFailures": \[\]/);
    expect(old.stderr).toMatch(/"message":"node-stats dropped: too old to count".*"field":"reportedAt","value":"2026-11-21T10:00:/);
    expect(old.stdout).not.toMatch(/"message":"node adopted"/);
    expect(stats.status, `${stats.stdout}\n${stats.stderr}`).toBe(0);
    expect(stats.stdout).toMatch(/"batchItemFailures": \[\]/);
    expect(stats.stdout).toMatch(/"message":"node adopted".*"nodeId":"d1-small-1\.example\.com"/);
    expect(stats.stderr).toContain(`thresholdEvaluator: local state ${stateDir}`);
    const nodes = await withStore(stateDir, (store) => store.listNodes('d1/small'));
    expect(nodes.map((n) => [n.nodeId, n.state, n.stats?.activeGears])).toEqual(
      SAMPLE_STATS.filter((m) => `${m.district}/${m.profile}` === 'd1/small').map((m) => [m.nodeId, 'active', m.activeGears]),
    );
  });

  it('runs the gear mover and the decommissioner over the same state: the simulated platform starts from the nodes and gears the stats reported', () => {
    const { stateDir, gearMoverTick, decommissionerTick } = ran.plain;
    expect(gearMoverTick.status, `${gearMoverTick.stdout}\n${gearMoverTick.stderr}`).toBe(0);
    expect(gearMoverTick.stdout).toMatch(/"drains": 0/);
    expect(decommissionerTick.status, `${decommissionerTick.stdout}\n${decommissionerTick.stderr}`).toBe(0);
    // The stats taken at their time (--at) found fewer free slots than headroomGears: their scale-up waits for the provisioner.
    expect(decommissionerTick.stderr).toContain(`decommissioner: local state ${stateDir}; waiting: scale: 1 `);
    const platform = JSON.parse(readFileSync(join(stateDir, 'platform.json'), 'utf8'));
    const gears = Object.fromEntries(platform.nodes.map((n: Json) => [n.nodeId, n.gears.length]));
    expect(gears).toEqual(Object.fromEntries(SAMPLE_STATS.map((m) => [m.nodeId, m.activeGears])));
    // A node that listed its gears keeps their ids; the others get placeholders.
    const listed = SAMPLE_STATS.find((m) => m.gears?.length)!;
    expect(platform.nodes.find((n: Json) => n.nodeId === listed.nodeId).gears.map((g: Json) => g.uuid)).toEqual(listed.gears!.map((g) => g.uuid));
  });

  it('builds each invocation on the previous one: stats and a tick leave one scale-up in the scale queue file, the provisioner takes that file', async () => {
    const { stateDir, stats, tick, scaleQueueAfterTick, provision } = ran.timed;
    const scaleFile = join(stateDir, 'queues', 'scale.json');
    expect(stats.status, `${stats.stdout}\n${stats.stderr}`).toBe(0);
    expect(tick.status, `${tick.stdout}\n${tick.stderr}`).toBe(0);
    expect(tick.stderr).toContain(`waiting: scale: 1 (${scaleFile})`);
    const queued = JSON.parse(scaleQueueAfterTick).Records;
    expect(queued).toHaveLength(1);
    // One decision, whether the stats (at 10:00:30) or the tick (at 10:02:45, once the sustain window
    // passed) took it: the later invocation finds it in flight and sends nothing more.
    const decision = JSON.parse(queued[0].body);
    expect(decision).toMatchObject({ type: 'scale-up', pool: 'd1/small' });
    expect(decision.count).toBeGreaterThanOrEqual(1);
    expect(decision.decidedAt).toMatch(/^2026-11-21T10:0(0:3\d|2:4[5-9])\./);
    expect(queued[0].attributes).toMatchObject({ MessageGroupId: 'd1/small', MessageDeduplicationId: decision.decisionId });


    // The provisioner takes the queue file as its event; what it handled leaves the file, as SQS deletes it.
    expect(provision.status, `${provision.stdout}\n${provision.stderr}`).toBe(0);
    expect(provision.stdout).toMatch(/"batchItemFailures": \[\]/);
    expect(provision.stdout).toContain(`"decisionId":"${decision.decisionId}"`);
    expect(provision.stderr).toContain('scale queue: 1 handled, 0 to redeliver, 0 dead-lettered');
    expect(JSON.parse(readFileSync(scaleFile, 'utf8')).Records).toEqual([]);
    const claim = await withStore(stateDir, (store) => store.getScaleUp(decision.decisionId));
    expect(claim).toBeDefined();
  });
});

// ---------------------------------------------------------------------------
// IAM statements of the template.

interface Located {
  where: string;
  statement: Json;
}

/** A policy document's statements, with both branches of any `Fn::If` (AWS::NoValue dropped). */
function flatten(statements: Json[]): Json[] {
  return statements.flatMap((statement) => {
    const branches = statement?.['Fn::If'];
    if (!branches) return [statement];
    return flatten([branches[1], branches[2]].filter((branch: Json) => branch?.Ref !== 'AWS::NoValue'));
  });
}

function allPolicyStatements(): Located[] {
  const found: Located[] = [];
  for (const [id, resource] of Object.entries(resources)) {
    const documents: Array<[string, Json]> = [];
    if (resource.Type === 'AWS::IAM::Role') {
      for (const policy of resource.Properties.Policies ?? []) documents.push([`${id}/${policy.PolicyName}`, policy.PolicyDocument]);
    } else if (['AWS::IAM::Policy', 'AWS::IAM::ManagedPolicy', 'AWS::SQS::QueuePolicy', 'AWS::SNS::TopicPolicy', 'AWS::S3::BucketPolicy'].includes(resource.Type)) {
      documents.push([id, resource.Properties.PolicyDocument]);
    }
    for (const [where, document] of documents) {
      for (const statement of flatten(document.Statement ?? [])) found.push({ where: `${where}/${statement.Sid ?? '?'}`, statement });
    }
  }
  return found;
}

function statementsOf(role: string): Json[] {
  return (resources[role]?.Properties.Policies ?? []).flatMap((policy: Json) => flatten(policy.PolicyDocument.Statement));
}

function actionsOf(statement: Json): string[] {
  return [statement.Action ?? []].flat();
}

function resourcesOf(statement: Json): Json[] {
  return [statement.Resource ?? []].flat();
}
