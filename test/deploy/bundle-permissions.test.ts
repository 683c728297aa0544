/**
 * Every AWS request a deployed function's code can send is one its role
 * allows. Nothing local checks this (dynalite, the SDK mocks and the
 * simulated platform ask for no permission), and a missing action fails only
 * on AWS, as AccessDenied, on the path that needs it: session 47 found
 * BatchGetItem missing from every role, which would have stopped every drain.
 *
 * The commands come from the bundles themselves, built as `serverless
 * package` builds them for a stage whose configuration uses every adapter
 * (support/packaged-stack.ts FULL_CONFIG): the SDK commands our own modules in
 * each bundle import. The roles come from `serverless print` of that stage.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionsOf, flatten, FULL_CONFIG, FUNCTIONS, LANDED, loadPackagedStack, printed, ROOT, type FunctionName, type Json } from './support/packaged-stack.js';
import { actionOf, commandsImported } from './support/sdk-actions.js';

let dir: string;
let sent: Record<FunctionName, Set<string>>;

beforeAll(async () => {
  await loadPackagedStack();
  dir = mkdtempSync(join(tmpdir(), 'nodescaler-permissions-'));
  const configFile = join(dir, 'full.yml');
  writeFileSync(configFile, FULL_CONFIG);
  const { bundleFunctions } = await import('../../scripts/bundle-functions.mjs');
  const entries = Object.fromEntries(LANDED.map((name) => [name, FUNCTIONS[name].source]));
  const built = (await bundleFunctions(join(dir, 'out'), entries, { configFile })) as Record<FunctionName, { meta: string }>;
  sent = {} as Record<FunctionName, Set<string>>;
  for (const name of LANDED) {
    const meta = JSON.parse(readFileSync(built[name].meta, 'utf8')) as { outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }> };
    const kept = Object.entries(Object.values(meta.outputs)[0]!.inputs)
      .filter(([, { bytesInOutput }]) => bytesInOutput > 0)
      .map(([input]) => input);
    // A command class tree shaking kept (an adapter module may import more than this function's configuration uses)...
    const inBundle = new Set(kept.flatMap((input) => /@aws-sdk\/([a-z0-9-]+)\/dist-es\/commands\/(\w+Command)\.js$/.exec(input)?.slice(1, 3).join('/') ?? []));
    // ...that our own modules import: the SDK's internal ones (endpoint discovery) are not ours to send.
    const actions = new Set<string>();
    for (const input of kept.filter((file) => /^(lib|functions)\//.test(file))) {
      for (const [pkg, command] of commandsImported(readFileSync(join(ROOT, input), 'utf8'))) {
        const action = inBundle.has(`${pkg}/${command}`) ? actionOf(pkg, command) : null;
        if (action) actions.add(action);
      }
    }
    sent[name] = actions;
  }
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A role's actions in the printed stage (every Fn::If of that stage is true: package-iam.test.ts). */
const allowedTo = (name: FunctionName) => {
  expect(printed.status, printed.stderr).toBe(0);
  const resolved = JSON.parse(printed.stdout) as { resources: { Resources: Record<string, Json> } };
  const role = resolved.resources.Resources[FUNCTIONS[name].role];
  return new Set<string>((role.Properties.Policies as Json[]).flatMap((policy) => flatten(policy.PolicyDocument.Statement).flatMap(actionsOf)));
};

describe('the roles against the bundles (a stage that uses every adapter)', () => {
  it('finds what each function sends: its state table reads and writes, and the services only it talks to', () => {
    for (const name of LANDED) expect([...sent[name]], name).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:Query']));
    expect(sent.nodeProvisioner).toContain('ec2:RunInstances');
    expect(sent.decommissioner).toContain('ec2:TerminateInstances');
    expect(sent.thresholdEvaluator).toContain('sqs:SendMessage');
    expect(sent.gearMover).toContain('ssm:SendCommand');
    expect(sent.decommissioner).not.toContain('ec2:RunInstances');
  });

  it.each(LANDED.map((name) => [name]))('lets %s send every command its bundle can send', (name) => {
    const allowed = allowedTo(name);
    const missing = [...sent[name]].filter((action) => !allowed.has(action));
    expect(missing, `${FUNCTIONS[name].role} lacks what ${FUNCTIONS[name].source} sends`).toEqual([]);
  });

  it('maps SDK commands to IAM actions as IAM names them', () => {
    expect(actionOf('lib-dynamodb', 'BatchGetCommand')).toBe('dynamodb:BatchGetItem');
    expect(actionOf('client-ssm', 'SendCommandCommand')).toBe('ssm:SendCommand');
    expect(actionOf('client-route-53', 'ChangeResourceRecordSetsCommand')).toBe('route53:ChangeResourceRecordSets');
    expect(actionOf('client-sqs', 'SendMessageBatchCommand')).toBe('sqs:SendMessage');
    expect(actionOf('client-sts', 'GetCallerIdentityCommand')).toBeNull();
    expect(() => actionOf('client-kms', 'DecryptCommand')).toThrow('client-kms');
    expect(() => actionOf('lib-dynamodb', 'TransactWriteCommand')).toThrow('lib-dynamodb/TransactWriteCommand');
    expect(commandsImported("import {\n  GetCommand,\n  type GetCommandInput,\n  PutCommand,\n} from '@aws-sdk/lib-dynamodb';")).toEqual([
      ['lib-dynamodb', 'GetCommand'],
      ['lib-dynamodb', 'PutCommand'],
    ]);
  });
});
