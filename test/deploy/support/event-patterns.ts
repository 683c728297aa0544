/**
 * The stack's EventBridge rules against the events AWS services send (the
 * EventBridge schema registry, in the same database as the resource schemas:
 * cloudformation-spec.ts). A pattern EventBridge accepts may match nothing:
 * a detail-type spelt otherwise than the service spells it, a `detail` field
 * the event does not carry. The rule deploys, nothing ever arrives, and no
 * alarm can tell a quiet week from a rule that never fires.
 */
import { cloudFormationSpec, type CloudFormationSpec } from './cloudformation-spec.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

interface DetailProperty {
  type: { type: string; reference?: { $ref: string } };
  required?: boolean;
}

/**
 * Events AWS documents that the registry lacks, with their `detail` as documented. EC2's rebalance recommendation:
 * https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/rebalance-recommendations.html ("detail": {"instance-id": ...}).
 */
const DOCUMENTED: Record<string, Record<string, DetailProperty>> = {
  'aws.ec2|EC2 Instance Rebalance Recommendation': { 'instance-id': { type: { type: 'string' }, required: true } },
};

/** The `detail` properties of the event `source` sends as `detailType`; undefined when AWS sends no such event. */
export function eventDetail(source: string, detailType: string, spec: CloudFormationSpec = cloudFormationSpec()): Record<string, DetailProperty> | undefined {
  const key = `${source}|${detailType}`;
  const event = spec.events.get(key);
  if (!event) return DOCUMENTED[key];
  return spec.eventTypes.get(event.rootProperty.$ref)?.properties as Record<string, DetailProperty> | undefined;
}

/** What of each rule's pattern can never match, one line each; empty when every rule can. */
export function eventPatternProblems(template: Json, spec: CloudFormationSpec = cloudFormationSpec()): string[] {
  const problems: string[] = [];
  for (const [id, resource] of Object.entries<Json>(template.Resources ?? {})) {
    const pattern = resource.Type === 'AWS::Events::Rule' ? resource.Properties?.EventPattern : undefined;
    if (!pattern) continue;
    const sources: string[] = [pattern.source ?? []].flat();
    const detailTypes: string[] = [pattern['detail-type'] ?? []].flat();
    if (sources.length === 0 || detailTypes.length === 0) {
      problems.push(`${id}: a pattern without source and detail-type matches every event of the account`);
      continue;
    }
    for (const source of sources) {
      for (const detailType of detailTypes) {
        const detail = eventDetail(source, detailType, spec);
        if (!detail) {
          const known = [...spec.events.values()].filter((event) => event.source === source).map((event) => event.detailType);
          problems.push(`${id}: ${source} sends no "${detailType}" (it sends ${known.length > 0 ? known.map((type) => `"${type}"`).join(', ') : 'nothing the registry knows'})`);
          continue;
        }
        problems.push(...detailProblems(pattern.detail ?? {}, detail, `${id}: detail`, spec));
      }
    }
  }
  return problems;
}

function detailProblems(pattern: Json, properties: Record<string, DetailProperty>, at: string, spec: CloudFormationSpec): string[] {
  const problems: string[] = [];
  for (const [field, inner] of Object.entries<Json>(pattern)) {
    const property = properties[field];
    if (!property) {
      problems.push(`${at}.${field}: the event has no such field (it has ${Object.keys(properties).join(', ')})`);
      continue;
    }
    const nested = property.type.reference && spec.eventTypes.get(property.type.reference.$ref);
    if (inner && typeof inner === 'object' && !Array.isArray(inner) && nested) problems.push(...detailProblems(inner, nested.properties as Record<string, DetailProperty>, `${at}.${field}`, spec));
  }
  return problems;
}
