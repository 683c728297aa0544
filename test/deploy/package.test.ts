/**
 * The deployment, offline: the functions `serverless package` (osls +
 * serverless-esbuild) writes, their bundles and schedules, the queues and
 * event sources that feed them, and the state table. The package is built
 * once per test run for every file of test/deploy/ (support/packaged-stack.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readStateTableResource, TABLE_KEYS } from '../../lib/adapters/dynamodb/table-definition.js';
import { readZip } from '../support/zip.js';
import {
  actionsOf,
  ALL_FUNCTIONS,
  bundleOf,
  FUNCTIONS,
  lambdaId,
  LANDED,
  loadPackagedStack,
  logicalId,
  ofType,
  packageDir,
  resources,
  resourcesOf,
  ROOT,
  STAGE,
  statementsOf,
  type FunctionName,
  type Json,
} from './support/packaged-stack.js';

beforeAll(loadPackagedStack);

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
