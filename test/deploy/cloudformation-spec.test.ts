/**
 * The packaged template as CloudFormation would read it at deploy time:
 * resource types, property names and shapes, required properties,
 * attributes and references, checked against CloudFormation's resource
 * schemas (support/cloudformation-spec.ts). `serverless package` checks none
 * of this; a deploy fails on it minutes in and rolls back.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { templateProblems } from './support/cloudformation-spec.js';
import { loadPackagedStack, template, type Json } from './support/packaged-stack.js';

beforeAll(loadPackagedStack);

describe('the packaged template against CloudFormation resource schemas', () => {
  it('declares every resource, property, attribute and reference as CloudFormation defines them (both branches of every Fn::If)', () => {
    expect(Object.keys(template.Resources).length).toBeGreaterThan(50);
    expect(templateProblems(template)).toEqual([]);
  });

  it('names what a deploy would reject: a misspelt or mistyped property, a missing required one, an unknown attribute or reference', () => {
    const broken = structuredClone(template) as Json;
    const queue = broken.Resources.ScaleQueue.Properties;
    queue.VisiblityTimeout = queue.VisibilityTimeout;
    queue.FifoQueue = 'yes';
    const table = broken.Resources.StateTable.Properties;
    delete table.KeySchema;
    table.TimeToLiveSpecification = [table.TimeToLiveSpecification];
    table.BillingMode = { 'Fn::If': ['NoSuchCondition', 'PAY_PER_REQUEST', { Ref: 'AWS::NoValue' }] };
    broken.Resources.Dashboard.DependsOn = ['NoSuchResource'];
    broken.Outputs.Broken = { Value: { 'Fn::GetAtt': ['StateTable', 'Arnn'] } };
    broken.Outputs.BrokenSub = { Value: { 'Fn::Sub': '${DrainQueue.Arn}/${DrainQueue.Url}/${NoSuchQueue}' } };
    broken.Resources.Extra = { Type: 'AWS::SQS::Queues', Properties: {} };

    const problems = templateProblems(broken);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Resources\.ScaleQueue\.Properties\.VisiblityTimeout: no such property of AWS::SQS::Queue \(known: .*VisibilityTimeout/),
        'Resources.ScaleQueue.Properties.FifoQueue: true or false, not "yes"',
        'Resources.StateTable.Properties.KeySchema: required by AWS::DynamoDB::Table, missing',
        expect.stringMatching(/^Resources\.StateTable\.Properties\.TimeToLiveSpecification: a TimeToLiveSpecification, not \[/),
        'Resources.StateTable.Properties.BillingMode: Fn::If on condition NoSuchCondition, which the template does not define',
        'Resources.Dashboard.DependsOn: NoSuchResource is no resource',
        'Outputs.Broken.Value: Fn::GetAtt StateTable.Arnn: AWS::DynamoDB::Table has no attribute Arnn (it has Arn, StreamArn)',
        'Outputs.BrokenSub.Value: Fn::Sub ${DrainQueue.Url}: AWS::SQS::Queue has no attribute Url',
        'Outputs.BrokenSub.Value: Fn::Sub names ${NoSuchQueue}, which is no resource, parameter or pseudo parameter',
        'Resources.Extra: no resource type AWS::SQS::Queues',
      ]),
    );
    expect(problems).toHaveLength(10);
  });

  it('checks each branch of an Fn::If as the property it stands in: a wrong shape in the branch a stage never takes still fails', () => {
    const broken = structuredClone(template) as Json;
    const role = broken.Resources.ThresholdEvaluatorRole.Properties;
    role.MaxSessionDuration = { 'Fn::If': ['HasBroker', 3600, 'an hour'] };
    expect(templateProblems(broken)).toEqual(['Resources.ThresholdEvaluatorRole.Properties.MaxSessionDuration.Fn::If.2: a number, not "an hour"']);
  });
});
