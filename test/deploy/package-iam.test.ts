/**
 * The deployment's permissions, offline: each function's role (least
 * privilege), the broker's command document, the policies for people and
 * the stack's outputs, in the template `serverless package` writes and in
 * `serverless print` of a stage whose configuration names every scope (both
 * once per test run: support/packaged-stack.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  actionsOf,
  allPolicyStatements,
  flatten,
  FUNCTIONS,
  lambdaId,
  LANDED,
  loadPackagedStack,
  logicalId,
  printed,
  resources,
  resourcesOf,
  ROOT,
  STAGE,
  statementsOf,
  template,
  type Json,
  type Resource,
} from './support/packaged-stack.js';
import { actionOf, commandsImported } from './support/sdk-actions.js';

beforeAll(loadPackagedStack);

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
    // The evaluator reads EC2 only to learn who sent node-stats (statsAuth), with a spot pool what its drains save, and
    // with a launch template at $Latest what it stands for (drift).
    expect(statementsOf('ThresholdEvaluatorRole').flatMap(actionsOf).filter((a) => a.startsWith('ec2:'))).toEqual(['ec2:DescribeInstances', 'ec2:DescribeSpotPriceHistory', 'ec2:DescribeLaunchTemplates']);
  });

  /**
   * An evaluator statement granted only under `condition`: true in the printed stage (whose configuration names every
   * scope), false for config/dev.yml (handler log), and the statement as written.
   */
  const expectEvaluatorStatementUnder = (condition: string, statement: Json) => {
    expect(printed.status, printed.stderr).toBe(0);
    const resolved = JSON.parse(printed.stdout) as { resources: { Conditions: Record<string, Json>; Resources: Record<string, Resource> } };
    expect(resolved.resources.Conditions[condition]).toEqual({ 'Fn::Not': [{ 'Fn::Equals': ['true', ''] }] });
    const guarded = (resolved.resources.Resources.ThresholdEvaluatorRole!.Properties.Policies[0].PolicyDocument.Statement as Json[]).find(
      (entry) => entry['Fn::If']?.[1]?.Sid === statement.Sid,
    );
    expect(guarded['Fn::If'][0]).toBe(condition);
    expect(guarded['Fn::If'][1]).toEqual(statement);
    expect(template.Conditions?.[condition]).toEqual({ 'Fn::Not': [{ 'Fn::Equals': ['', ''] }] });
  };

  it('lets the evaluator read spot prices only for a stage whose handler ec2 launches a spot pool', () => {
    expectEvaluatorStatementUnder('HasSpotPools', { Sid: 'SpotPrices', Effect: 'Allow', Action: 'ec2:DescribeSpotPriceHistory', Resource: '*' });
  });

  it('lets the evaluator read launch template versions only for a stage whose handler ec2 launches a template at $Latest or $Default', () => {
    expectEvaluatorStatementUnder('HasLaunchTemplateVersions', { Sid: 'LaunchTemplateVersions', Effect: 'Allow', Action: 'ec2:DescribeLaunchTemplates', Resource: '*' });
  });

  it('lets the evaluator read the Price List (pricing:GetProducts, which has no resource ARNs) only for a stage whose handler is ec2', () => {
    expectEvaluatorStatementUnder('HasOnDemandPrices', { Sid: 'OnDemandPrices', Effect: 'Allow', Action: 'pricing:GetProducts', Resource: '*' });
    // Only the evaluator reads prices.
    for (const role of ['NodeProvisionerRole', 'GearMoverRole', 'DecommissionerRole']) {
      expect(statementsOf(role).flatMap(actionsOf).filter((action) => action.startsWith('pricing:')), role).toEqual([]);
    }
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
    expect(parameters.action.allowedValues).toEqual(['add-node', 'set-region', 'remove-node', 'deactivate-node', 'activate-node', 'move', 'list-gears', 'node-facts', 'node-district', 'gear-location']);
    expect(mainSteps).toHaveLength(1);
    const script = (mainSteps[0].inputs.runCommand as string[]).join('\n');
    const shellPart = script.slice(0, script.indexOf("<<'RUBY'"));
    const commands = [...shellPart.matchAll(/(?:^|\$\(|;|\|)\s*(?:exec\s+)?([a-z][a-z-]+)\s/gm)].map((m) => m[1]);
    expect(new Set(commands)).toEqual(new Set(['set', 'export', 'case', 'oo-admin-ctl-district', 'printf', 'grep', 'tail', 'cut', 'exit', 'oo-admin-move', 'if', 'then', 'else', 'fi', 'oo-ruby']));
    // Parameters reach the tools quoted, as single words.
    for (const name of Object.keys(parameters)) if (name !== 'executionTimeout') expect(script).toContain(`'{{ ${name} }}'`);
    // And the script names no parameter the document does not declare: SSM refuses such a document at deploy (InvalidDocumentContent).
    const named = [...JSON.stringify(mainSteps).matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((match) => match[1]);
    expect(named.length).toBeGreaterThan(5);
    expect(named.filter((name) => !(name! in parameters))).toEqual([]);
  });

  it('terminates and deletes only resources tagged for this stage, and launches only with the stage tag', () => {
    for (const role of ['NodeProvisionerRole', 'DecommissionerRole']) {
      const release = statementsOf(role).find((s) => actionsOf(s).includes('ec2:TerminateInstances'));
      expect(release.Condition, role).toEqual({ Null: { 'ec2:ResourceTag/nodescaler:pool': 'false' }, StringEquals: { 'ec2:ResourceTag/nodescaler:stage': STAGE } });
    }
    const launch = statementsOf('NodeProvisionerRole').find((s) => s.Sid === 'LaunchTaggedHostsOnly');
    expect(launch.Condition.StringEquals).toEqual({ 'aws:RequestTag/nodescaler:stage': STAGE });
  });

  it('limits RunInstances to the images, subnets, security groups and launch templates the stage configuration names', () => {
    const result = printed;
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

  it('scopes Route 53, SSM, S3 and SNS to the zone, broker, spool prefix and topic the stage configuration names', () => {
    const result = printed;
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

describe('serverless package (offline): operators (policies for people, stack outputs)', () => {
  const policy = (id: string) => resources[id]!;
  /** The SDK commands a source file imports from one package, e.g. ['GetCommand', 'QueryCommand'] for lib-dynamodb. */
  const commandsImportedBy = (file: string, pkg: string) =>
    commandsImported(readFileSync(join(ROOT, file), 'utf8'))
      .filter(([from]) => from === pkg)
      .map(([, command]) => command);
  const table = [{ 'Fn::GetAtt': ['StateTable', 'Arn'] }, { 'Fn::Sub': '${StateTable.Arn}/index/*' }];

  it('gives read-only people reads of the state table and nothing else', () => {
    expect(policy('ReadOnlyOperatorPolicy')).toMatchObject({ Type: 'AWS::IAM::ManagedPolicy', Properties: { ManagedPolicyName: `nodescaler-${STAGE}-read-only` } });
    const statements = flatten(policy('ReadOnlyOperatorPolicy').Properties.PolicyDocument.Statement);
    // BatchGetItem: explain reads the candidates' gear lists and move history in batches.
    expect(statements.flatMap(actionsOf).sort()).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query']);
    expect(statements.flatMap(resourcesOf)).toEqual(table);
  });

  it('gives operators exactly what the CLI sends: the state store\'s commands on the table and manual drains on the drain queue', () => {
    expect(policy('OperatorPolicy').Properties.ManagedPolicyName).toBe(`nodescaler-${STAGE}-operator`);
    const statements = flatten(policy('OperatorPolicy').Properties.PolicyDocument.Statement);
    const actions = statements.flatMap(actionsOf);
    // The store and the item modules it delegates to (controls: pause, resume, overrides; the decision log's range reads).
    const storeModules = ['state-store', 'controls', 'decision-log', 'items'].map((name) => `lib/adapters/dynamodb/${name}.ts`);
    const storeCommands = [...new Set(storeModules.flatMap((file) => commandsImportedBy(file, 'lib-dynamodb')))];
    expect(storeCommands.sort()).toEqual(['BatchGetCommand', 'GetCommand', 'PutCommand', 'QueryCommand', 'UpdateCommand']);
    const queueCommands = [...commandsImportedBy('lib/cli/target.ts', 'client-sqs'), ...commandsImportedBy('lib/adapters/sqs/queue.ts', 'client-sqs')];
    expect(queueCommands.length).toBeGreaterThan(0);
    for (const command of storeCommands) expect(actions, command).toContain(actionOf('lib-dynamodb', command));
    for (const command of queueCommands) expect(actions, command).toContain(actionOf('client-sqs', command));
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
