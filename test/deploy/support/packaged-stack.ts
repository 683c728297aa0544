/**
 * The deployment as `serverless package` (osls + serverless-esbuild) writes
 * it, shared by the test files of test/deploy/: the CloudFormation template,
 * the function zips, and `serverless print` of a stage whose configuration
 * names every scope.
 *
 * Packaging runs once per test run, not once per file: the first file to ask
 * builds it into the run's temporary folder (TMPDIR, one per run:
 * test/support/run-environment.ts) and the others read what it left. A file
 * calls `loadPackagedStack` in its `beforeAll`; the bindings below are set
 * from then on.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readZip } from '../../support/zip.js';

export const ROOT = resolve(import.meta.dirname, '../../..');
export const STAGE = 'dev';

/** The functions of the issue, with what each consumes and the role it must run as. */
export const FUNCTIONS = {
  thresholdEvaluator: { source: 'functions/threshold-evaluator.ts', role: 'ThresholdEvaluatorRole', consumes: ['StatsQueue'] },
  nodeProvisioner: { source: 'functions/node-provisioner.ts', role: 'NodeProvisionerRole', consumes: ['ScaleQueue'] },
  gearMover: { source: 'functions/gear-mover.ts', role: 'GearMoverRole', consumes: ['DrainQueue', 'EventsQueue'] },
  decommissioner: { source: 'functions/decommissioner.ts', role: 'DecommissionerRole', consumes: ['DecommissionQueue'] },
} as const;
export type FunctionName = keyof typeof FUNCTIONS;
export const ALL_FUNCTIONS = Object.keys(FUNCTIONS) as FunctionName[];
/** All four are deployed (the first test fails if a handler is missing). */
export const LANDED: readonly FunctionName[] = ALL_FUNCTIONS;

export type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any
export interface Resource {
  Type: string;
  Properties: Json;
  Condition?: string;
  DependsOn?: string[];
}

/** `Fn::GetAtt [X, Arn]` / `!Ref X` -> X. */
export const logicalId = (value: Json): string | undefined => value?.['Fn::GetAtt']?.[0] ?? value?.Ref;
export const lambdaId = (name: string) => `${name[0]!.toUpperCase()}${name.slice(1)}LambdaFunction`;

export interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end without blocking the event loop (commands started together overlap). */
export function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<Ran> {
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

/**
 * A stage whose configuration names every scope (broker, hosted zone, spool
 * bucket, notify topic): `serverless print` resolves serverless.yml with it
 * (no build), for the statements config/dev.yml leaves out.
 */
export const FULL_CONFIG = `
handler: ec2
platform: { kind: openshift-broker, brokerInstanceId: i-0b0b0b0b0b0b0b0b0 }
dns: { hostedZoneId: Z0123456789ABCDEFGHIJ }
spool: { bucket: nodescaler-spool, prefix: requests/ }
notify: { topicArn: 'arn:aws:sns:us-east-1:123456789012:nodescaler-requests' }
pools:
  - district: d1
    profile: small
    max: 10
    naming: { base: d1-small }
    template: { imageId: ami-0123456789abcdef0, instanceTypes: [{ name: m5.xlarge, vcpus: 4, memoryGiB: 16 }], subnets: [subnet-0123456789abcdef0], securityGroups: [sg-0123456789abcdef0] }
  - district: d2
    profile: small
    max: 10
    naming: { base: d2-small }
    template: { launchTemplate: { id: lt-0123456789abcdef0 }, imageId: ami-0123456789abcdef0, instanceTypes: [{ name: m5.xlarge, vcpus: 4, memoryGiB: 16 }], subnets: [subnet-0123456789abcdef0], securityGroups: [sg-0123456789abcdef0], spot: true }
`;

export let template: { Resources: Record<string, Resource>; Conditions?: Record<string, Json> };
export let resources: Record<string, Resource>;
export let packageDir: string;
/** `serverless print --stage prod` with FULL_CONFIG. */
export let printed: Ran;

/** What the builder leaves for the other files of the run. */
interface Built {
  packaged: Ran;
  printed: Ran;
}
const BUILT = 'built.json';
const OWNER = 'owner.pid';

let loading: Promise<void> | undefined;

/** Packages (or waits for the file that is packaging) and sets the bindings above; for `beforeAll`. */
export function loadPackagedStack(): Promise<void> {
  loading ??= (async () => {
    const dir = sharedDir();
    const { packaged, printed: print } = (await claim(dir)) ? await build(dir) : await builtBy(dir);
    if (packaged.status !== 0) throw new Error(`serverless package failed (${packaged.status}):\n${packaged.stdout}\n${packaged.stderr}`);
    packageDir = join(dir, 'package');
    template = JSON.parse(readFileSync(join(packageDir, 'cloudformation-template-update-stack.json'), 'utf8'));
    resources = template.Resources;
    printed = print;
  })();
  return loading;
}

/** The run's folder when test/support/run-environment.ts made TMPDIR one; otherwise this file's own (it packages for itself). */
function sharedDir(): string {
  const runDir = tmpdir();
  return basename(runDir).startsWith('nodescaler-vitest-') ? join(runDir, 'serverless-package') : join(mkdtempSync(join(runDir, 'nodescaler-')), 'serverless-package');
}

/** Whether this process builds: creating the folder is atomic, so of the files that ask at once exactly one does. */
async function claim(dir: string): Promise<boolean> {
  try {
    mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  writeFileSync(join(dir, OWNER), String(process.pid));
  return true;
}

async function build(dir: string): Promise<Built> {
  writeFileSync(join(dir, 'full.yml'), FULL_CONFIG);
  const env = { ...process.env, SLS_TELEMETRY_DISABLED: '1' };
  const serverless = join(ROOT, 'node_modules/.bin/serverless');
  const workFolder = `.esbuild/test-${process.pid}`;
  // A command that cannot start is a failed result too: the other files wait for one.
  const settled = (ran: Promise<Ran>) => ran.catch((error: unknown): Ran => ({ status: null, stdout: '', stderr: String(error) }));
  const [printed, packaged] = await Promise.all([
    settled(run(serverless, ['print', '--stage', 'prod', `--param=configFile=${join(dir, 'full.yml')}`, '--format', 'json'], env)),
    settled(run(serverless, ['package', '--stage', STAGE, '--package', join(dir, 'package'), `--param=esbuildWorkFolder=${workFolder}`], env)),
  ]);
  rmSync(join(ROOT, workFolder), { recursive: true, force: true });
  const built: Built = { packaged, printed };
  // Written whole, then renamed: a reader never sees half of it.
  writeFileSync(join(dir, `${BUILT}.tmp`), JSON.stringify(built));
  renameSync(join(dir, `${BUILT}.tmp`), join(dir, BUILT));
  return built;
}

/** What another file of the run built, once it is there; an error if its builder died without leaving it. */
async function builtBy(dir: string): Promise<Built> {
  for (;;) {
    if (existsSync(join(dir, BUILT))) return JSON.parse(readFileSync(join(dir, BUILT), 'utf8')) as Built;
    const owner = existsSync(join(dir, OWNER)) ? Number(readFileSync(join(dir, OWNER), 'utf8')) : undefined;
    if (owner && !alive(owner) && !existsSync(join(dir, BUILT))) throw new Error(`the process that was packaging (${owner}) ended without a result in ${dir}`);
    await sleep(200);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export const ofType = (type: string) => Object.entries(resources).filter(([, resource]) => resource.Type === type);
/** A function's bundle, from its zip. */
export const bundleOf = (name: FunctionName) => readZip(join(packageDir, `${name}.zip`)).get(FUNCTIONS[name].source.replace(/\.ts$/, '.mjs'))!.toString('utf8');

// ---------------------------------------------------------------------------
// IAM statements of the template.

export interface Located {
  where: string;
  statement: Json;
}

/** A policy document's statements, with both branches of any `Fn::If` (AWS::NoValue dropped). */
export function flatten(statements: Json[]): Json[] {
  return taken(statements, {});
}

/** A template condition's value, or undefined where it rests on something unresolved (a parameter). */
function conditionValue(condition: Json, conditions: Record<string, Json>): boolean | undefined {
  if (typeof condition === 'boolean') return condition;
  if (condition?.Condition) return conditionValue(conditions[condition.Condition], conditions);
  const [operator, args] = Object.entries(condition ?? {})[0] ?? [];
  const values = Array.isArray(args) ? args : [];
  if (operator === 'Fn::Equals') return values.every((value) => typeof value === 'string') ? values[0] === values[1] : undefined;
  const inner = values.map((value) => conditionValue(value, conditions));
  if (inner.includes(undefined)) return undefined;
  if (operator === 'Fn::Not') return !inner[0];
  if (operator === 'Fn::And') return inner.every(Boolean);
  if (operator === 'Fn::Or') return inner.some(Boolean);
  return undefined;
}

/** Statements as a stage has them: the branch of each `Fn::If` its conditions take, both where unresolved (or unknown). */
function taken(statements: Json[], conditions: Record<string, Json>): Json[] {
  return statements.flatMap((statement) => {
    const branches = statement?.['Fn::If'];
    if (!branches) return [statement];
    const value = conditionValue({ Condition: branches[0] }, conditions);
    const chosen = value === undefined ? [branches[1], branches[2]] : [value ? branches[1] : branches[2]];
    return taken(chosen.filter((branch: Json) => branch?.Ref !== 'AWS::NoValue'), conditions);
  });
}

/**
 * Every statement of every policy in the stack, with both branches of any `Fn::If`; or, given a stage's
 * `conditions`, only what that stage deploys (the branches it takes, no resource under a false condition).
 */
export function allPolicyStatements(from: Record<string, Resource> = resources, conditions?: Record<string, Json>): Located[] {
  const found: Located[] = [];
  for (const [id, resource] of Object.entries(from)) {
    if (conditions && resource.Condition && conditionValue({ Condition: resource.Condition }, conditions) === false) continue;
    const documents: Array<[string, Json]> = [];
    if (resource.Type === 'AWS::IAM::Role') {
      for (const policy of resource.Properties.Policies ?? []) documents.push([`${id}/${policy.PolicyName}`, policy.PolicyDocument]);
    } else if (['AWS::IAM::Policy', 'AWS::IAM::ManagedPolicy', 'AWS::SQS::QueuePolicy', 'AWS::SNS::TopicPolicy', 'AWS::S3::BucketPolicy'].includes(resource.Type)) {
      documents.push([id, resource.Properties.PolicyDocument]);
    }
    for (const [where, document] of documents) {
      for (const statement of taken(document.Statement ?? [], conditions ?? {})) found.push({ where: `${where}/${statement.Sid ?? '?'}`, statement });
    }
  }
  return found;
}

export function statementsOf(role: string): Json[] {
  return (resources[role]?.Properties.Policies ?? []).flatMap((policy: Json) => flatten(policy.PolicyDocument.Statement));
}

export function actionsOf(statement: Json): string[] {
  return [statement.Action ?? []].flat();
}

export function resourcesOf(statement: Json): Json[] {
  return [statement.Resource ?? []].flat();
}
