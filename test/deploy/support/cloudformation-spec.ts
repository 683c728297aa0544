/**
 * The template against CloudFormation's own resource schemas, offline: what
 * `serverless package` cannot tell and a deploy would, after minutes, roll
 * back on (a misspelt property, a missing required one, a list where an
 * object goes, an attribute `Fn::GetAtt` cannot read, a `Ref` to nothing).
 *
 * The schemas are the AWS CDK's database of the CloudFormation registry
 * (`@aws-cdk/aws-service-spec`, a devDependency: db.json.gz), read directly.
 * Intrinsic functions are taken as standing for any value of the type they
 * are in, except `Fn::If`, whose branches are each checked as that type.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A property's type in the database. */
interface SpecType {
  type: 'string' | 'number' | 'integer' | 'boolean' | 'json' | 'date-time' | 'null' | 'tag' | 'array' | 'map' | 'ref' | 'union';
  element?: SpecType;
  reference?: { $ref: string };
  types?: SpecType[];
}
interface SpecProperty {
  type: SpecType;
  required?: boolean;
}
interface SpecResource {
  cloudFormationType: string;
  properties: Record<string, SpecProperty>;
  attributes: Record<string, unknown>;
}
interface SpecTypeDefinition {
  $id: string;
  name: string;
  properties: Record<string, SpecProperty>;
}

/** An event AWS services send to EventBridge, from the schema registry (`source|detail-type`). */
export interface SpecEvent {
  source: string;
  detailType: string;
  rootProperty: { $ref: string };
}

export interface CloudFormationSpec {
  resources: Map<string, SpecResource>;
  types: Map<string, SpecTypeDefinition>;
  /** The events by `source|detail-type`, and the type definitions of their `detail`. */
  events: Map<string, SpecEvent>;
  eventTypes: Map<string, SpecTypeDefinition>;
}

let loaded: CloudFormationSpec | undefined;

/** The resource schemas and the events' schemas, read once per process (some 15 MB of JSON). */
export function cloudFormationSpec(): CloudFormationSpec {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  const file = join(dirname(require.resolve('@aws-cdk/aws-service-spec/package.json')), 'db.json.gz');
  const db = JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')) as { schema: Record<string, { entities: Json[] }> };
  const resources = new Map<string, SpecResource>(db.schema.resource!.entities.map((entity: SpecResource) => [entity.cloudFormationType, entity]));
  const types = new Map<string, SpecTypeDefinition>(db.schema.typeDefinition!.entities.map((entity: SpecTypeDefinition) => [entity.$id, entity]));
  const events = new Map<string, SpecEvent>(db.schema.event!.entities.map((entity: SpecEvent) => [`${entity.source}|${entity.detailType}`, entity]));
  const eventTypes = new Map<string, SpecTypeDefinition>(db.schema.eventTypeDefinition!.entities.map((entity: SpecTypeDefinition) => [entity.$id, entity]));
  loaded = { resources, types, events, eventTypes };
  return loaded;
}

const PSEUDO_PARAMETERS = new Set(['AWS::AccountId', 'AWS::NotificationARNs', 'AWS::NoValue', 'AWS::Partition', 'AWS::Region', 'AWS::StackId', 'AWS::StackName', 'AWS::URLSuffix']);

/** What is wrong with a template, one line each (`Resources.X.Properties.Y: ...`); empty when CloudFormation's schemas accept it. */
export function templateProblems(template: Json, spec: CloudFormationSpec = cloudFormationSpec()): string[] {
  const problems: string[] = [];
  const resources: Record<string, Json> = template.Resources ?? {};
  const parameters = new Set(Object.keys(template.Parameters ?? {}));
  const conditions = new Set(Object.keys(template.Conditions ?? {}));

  const checkReferences = (value: Json, at: string): void => {
    if (Array.isArray(value)) return value.forEach((item, i) => checkReferences(item, `${at}.${i}`));
    if (value === null || typeof value !== 'object') return;
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'Ref' && typeof inner === 'string' && !resources[inner] && !parameters.has(inner) && !PSEUDO_PARAMETERS.has(inner)) {
        problems.push(`${at}: Ref to ${inner}, which is no resource, parameter or pseudo parameter`);
      }
      if (key === 'Fn::GetAtt') {
        const [logical, attribute] = Array.isArray(inner) ? inner : String(inner).split(/\.(.*)/);
        const target = resources[logical];
        if (!target) problems.push(`${at}: Fn::GetAtt of ${logical}, which is no resource`);
        else {
          const known = spec.resources.get(target.Type)?.attributes;
          if (known && typeof attribute === 'string' && !(attribute in known)) {
            problems.push(`${at}: Fn::GetAtt ${logical}.${attribute}: ${target.Type} has no attribute ${attribute} (it has ${Object.keys(known).join(', ')})`);
          }
        }
      }
      if (key === 'Fn::If' && Array.isArray(inner) && typeof inner[0] === 'string' && !conditions.has(inner[0])) {
        problems.push(`${at}: Fn::If on condition ${inner[0]}, which the template does not define`);
      }
      if (key === 'Fn::Sub') {
        const text = Array.isArray(inner) ? inner[0] : inner;
        const variables = Array.isArray(inner) ? Object.keys(inner[1] ?? {}) : [];
        for (const [, name] of String(text).matchAll(/\$\{([^!}][^}]*)\}/g)) {
          const logical = name!.split('.')[0]!;
          if (variables.includes(name!) || PSEUDO_PARAMETERS.has(name!) || parameters.has(logical)) continue;
          if (!resources[logical]) problems.push(`${at}: Fn::Sub names \${${name}}, which is no resource, parameter or pseudo parameter`);
          else if (name!.includes('.')) {
            const attribute = name!.slice(logical.length + 1);
            const known = spec.resources.get(resources[logical].Type)?.attributes;
            if (known && !(attribute in known)) problems.push(`${at}: Fn::Sub \${${name}}: ${resources[logical].Type} has no attribute ${attribute}`);
          }
        }
      }
      checkReferences(inner, `${at}.${key}`);
    }
  };

  const isIntrinsic = (value: Json) =>
    value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 1 && /^(Ref|Condition|Fn::[A-Za-z0-9]+)$/.test(Object.keys(value)[0]!);

  const checkValue = (value: Json, type: SpecType, at: string): void => {
    if (isIntrinsic(value)) {
      const branches = value['Fn::If'];
      if (Array.isArray(branches)) for (const [i, branch] of [branches[1], branches[2]].entries()) {
        if (!(branch && typeof branch === 'object' && branch.Ref === 'AWS::NoValue')) checkValue(branch, type, `${at}.Fn::If.${i + 1}`);
      }
      return;
    }
    switch (type.type) {
      case 'string':
      case 'date-time':
        if (typeof value === 'object') problems.push(`${at}: a string, not ${JSON.stringify(value).slice(0, 80)}`);
        return;
      case 'number':
      case 'integer':
        if (typeof value === 'object' || typeof value === 'boolean' || Number.isNaN(Number(value))) problems.push(`${at}: a number, not ${JSON.stringify(value).slice(0, 80)}`);
        else if (type.type === 'integer' && !Number.isInteger(Number(value))) problems.push(`${at}: an integer, not ${value}`);
        return;
      case 'boolean':
        if (!(typeof value === 'boolean' || value === 'true' || value === 'false')) problems.push(`${at}: true or false, not ${JSON.stringify(value).slice(0, 80)}`);
        return;
      case 'json':
        if (value === null || (typeof value !== 'object' && typeof value !== 'string')) problems.push(`${at}: a JSON object, not ${JSON.stringify(value)}`);
        return;
      case 'null':
        return;
      case 'tag':
        checkObject(value, { Key: { type: { type: 'string' }, required: true }, Value: { type: { type: 'string' }, required: true } }, at);
        return;
      case 'array':
        if (!Array.isArray(value)) problems.push(`${at}: a list, not ${JSON.stringify(value).slice(0, 80)}`);
        else value.forEach((item, i) => checkValue(item, type.element!, `${at}.${i}`));
        return;
      case 'map':
        if (value === null || typeof value !== 'object' || Array.isArray(value)) problems.push(`${at}: a map, not ${JSON.stringify(value).slice(0, 80)}`);
        else for (const [key, item] of Object.entries(value)) checkValue(item, type.element!, `${at}.${key}`);
        return;
      case 'ref': {
        const definition = spec.types.get(type.reference!.$ref);
        if (!definition) problems.push(`${at}: the schema's type ${type.reference!.$ref} is unknown`);
        else checkObject(value, definition.properties, at, definition.name);
        return;
      }
      case 'union': {
        // Accepted when any alternative accepts it.
        const before = problems.length;
        const failures: string[][] = [];
        for (const alternative of type.types!) {
          checkValue(value, alternative, at);
          failures.push(problems.splice(before));
          if (failures.at(-1)!.length === 0) return;
        }
        problems.push(...failures.reduce((fewest, next) => (next.length < fewest.length ? next : fewest)));
        return;
      }
    }
  };

  const checkObject = (value: Json, properties: Record<string, SpecProperty>, at: string, typeName?: string): void => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      problems.push(`${at}: ${typeName ? `a ${typeName}` : 'an object'}, not ${JSON.stringify(value).slice(0, 80)}`);
      return;
    }
    for (const [key, item] of Object.entries(value)) {
      const property = properties[key];
      if (!property) problems.push(`${at}.${key}: no such property${typeName ? ` of ${typeName}` : ''} (known: ${Object.keys(properties).sort().join(', ')})`);
      else checkValue(item, property.type, `${at}.${key}`);
    }
    for (const [key, property] of Object.entries(properties)) {
      if (property.required && !(key in value)) problems.push(`${at}.${key}: required${typeName ? ` by ${typeName}` : ''}, missing`);
    }
  };

  for (const [logical, resource] of Object.entries(resources)) {
    const at = `Resources.${logical}`;
    const schema = spec.resources.get(resource.Type);
    if (!schema) {
      if (!String(resource.Type).startsWith('Custom::')) problems.push(`${at}: no resource type ${resource.Type}`);
      continue;
    }
    if (resource.Condition !== undefined && !conditions.has(resource.Condition)) problems.push(`${at}.Condition: ${resource.Condition} is not defined`);
    for (const dependency of [resource.DependsOn ?? []].flat()) {
      if (!resources[dependency]) problems.push(`${at}.DependsOn: ${dependency} is no resource`);
    }
    checkObject(resource.Properties ?? {}, schema.properties, `${at}.Properties`, resource.Type);
    checkReferences(resource, at);
  }
  checkReferences(template.Outputs ?? {}, 'Outputs');
  checkReferences(template.Conditions ?? {}, 'Conditions');
  return problems;
}
