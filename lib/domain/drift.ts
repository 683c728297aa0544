/**
 * Drift (as Karpenter's): a node launched from a template the pool no longer
 * names. The launch records what the host was launched from (`launchedFrom`);
 * once the pool's template says otherwise (a new image after a patch, another
 * instance profile, instance types narrowed) the node is drifted. Scale-down
 * drains a drifted node first among candidates whose drains restart as many
 * tenants (candidates.ts), so a pool renews itself through drains it makes
 * anyway; `status` shows drifted nodes, and `drain NODE --replace` renews one
 * at once. Nodes without a record (adopted, or launched before it was kept)
 * are never called drifted: what they run is not known.
 */
import { createHash } from 'node:crypto';
import type { NodeTemplate } from '../config/index.js';
import type { LaunchedFrom, NodeRecord, PoolRecord } from './model.js';

/** The part of the template that says what the host runs; subnets and instance types say where and on what. */
type LaunchSettings = Pick<NodeTemplate, 'launchTemplate' | 'imageId' | 'securityGroups' | 'instanceProfile' | 'keyName' | 'userData' | 'volume' | 'tags' | 'spot'>;

export function launchedFromTemplate(template: LaunchSettings): LaunchedFrom {
  const { launchTemplate, imageId } = template;
  // An AMI given beside a launch template overrides the template's (the ec2 adapter's RunInstances), so both count.
  const templateRef = launchTemplate ? launchTemplateKey(launchTemplate) : undefined;
  const image = [templateRef, imageId].filter((part) => part !== undefined).join('+') || 'default';
  const settings = {
    securityGroups: [...template.securityGroups].sort(),
    instanceProfile: template.instanceProfile ?? null,
    keyName: template.keyName ?? null,
    userData: template.userData ?? null,
    volume: template.volume ?? null,
    tags: Object.fromEntries(Object.entries(template.tags).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    spot: template.spot,
  };
  return { image, settings: createHash('sha256').update(canonical(settings)).digest('hex').slice(0, 16) };
}

/** Why the node is drifted from the pool's template, or undefined when it is not (or what it runs is not known). */
export function driftOf(node: Pick<NodeRecord, 'launchedFrom' | 'instanceType'>, template: DriftTemplate): string | undefined {
  return driftTest(template)(node);
}

type DriftTemplate = LaunchSettings & Pick<NodeTemplate, 'instanceTypes'>;

/** `driftOf` for many nodes of one template: the template's digest is taken once. */
export function driftTest(template: DriftTemplate): (node: Pick<NodeRecord, 'launchedFrom' | 'instanceType'>) => string | undefined {
  let now: LaunchedFrom | undefined;
  const types = template.instanceTypes.map((type) => type.name);
  return (node) => {
    const launched = node.launchedFrom;
    if (!launched) return undefined;
    now ??= launchedFromTemplate(template);
    if (!sameImage(launched.image, now.image)) return `drifted: image ${launched.image} -> ${now.image}`;
    if (launched.settings !== now.settings) return 'drifted: launch settings changed (instance profile, security groups, key, volume, user data, tags or spot)';
    if (node.instanceType !== undefined && types.length > 0 && !types.includes(node.instanceType)) {
      return `drifted: instance type ${node.instanceType} not in instanceTypes (${types.join(', ')})`;
    }
    return undefined;
  };
}

/**
 * What the template launches, as one string: the launch record's image and settings digest, and the instance types.
 * Two templates with equal identities drift the same nodes.
 */
export function templateIdentity(template: DriftTemplate): string {
  const { image, settings } = launchedFromTemplate(template);
  return `${image}|${settings}|${template.instanceTypes.map((type) => type.name).join(',')}`;
}

/**
 * The pool record's `templateSeen` when the pool's template (as this evaluation read it) is not the one it kept: a
 * node drifted from it has been drifted since now at the latest. Nothing when it is the same.
 */
export function templateSeenPatch(template: DriftTemplate, pool: Pick<PoolRecord, 'templateSeen'>, now: Date): Pick<PoolRecord, 'templateSeen'> {
  const identity = templateIdentity(template);
  return pool.templateSeen?.identity === identity ? {} : { templateSeen: { identity, since: now.toISOString() } };
}

/** When the pool record first saw `template` as it is (epoch ms), or undefined: it has not, or saw another. */
export function templateSeenSince(template: DriftTemplate, pool: Pick<PoolRecord, 'templateSeen'>): number | undefined {
  const seen = pool.templateSeen;
  if (!seen || seen.identity !== templateIdentity(template)) return undefined;
  const since = Date.parse(seen.since);
  return Number.isFinite(since) ? since : undefined;
}

/**
 * Since when (epoch ms) a node has been drifted from the pool's template, or undefined when it is not drifted or
 * the pool record has not seen this template yet. The template's `since` or the node's launch, the later: a node may
 * have drifted earlier (the template changed twice), never later, so a grace counted from it ends late, not early.
 */
export function driftedSinceTest(
  template: DriftTemplate,
  pool: Pick<PoolRecord, 'templateSeen'>,
): (node: Pick<NodeRecord, 'launchedFrom' | 'instanceType' | 'createdAt'>) => number | undefined {
  const drifted = driftTest(template);
  let seenMs: number | undefined | null = null;
  return (node) => {
    if (drifted(node) === undefined) return undefined;
    if (seenMs === null) seenMs = templateSeenSince(template, pool);
    const launched = Date.parse(node.createdAt);
    if (seenMs === undefined || !Number.isFinite(launched)) return undefined;
    return Math.max(seenMs, launched);
  };
}

/** `$Latest` or `$Default`: a launch template version that names no number (lib/app/launch-templates.ts reads the number). */
export function isSymbolicVersion(version: string): boolean {
  return version.startsWith('$');
}

/** `<id or name>@<version>`, as a launch record names a launch template. */
export function launchTemplateKey(launchTemplate: NonNullable<NodeTemplate['launchTemplate']>): string {
  return `${launchTemplate.id ?? launchTemplate.name}@${launchTemplate.version}`;
}

/** `template` at the version the evaluator last read its `$Latest` or `$Default` as (PoolRecord.launchTemplateRead), when that read is of this template. */
export function templateAtRead<T extends Pick<NodeTemplate, 'launchTemplate'>>(template: T, read: { template: string; version: string } | undefined): T {
  const launchTemplate = template.launchTemplate;
  if (!read || !launchTemplate || !isSymbolicVersion(launchTemplate.version) || read.template !== launchTemplateKey(launchTemplate)) return template;
  return { ...template, launchTemplate: { ...launchTemplate, version: read.version } };
}

/**
 * Whether two launch records' images (`<template>@<version>`, an AMI, or both joined by `+`) are the same. A symbolic
 * version on either side matches any version of the same template: a node launched at `$Latest` by a version that did
 * not record the number ran some version, not known which, and a template whose `$Latest` could not be read is
 * compared by its template and AMI alone. Never called drifted on a guess.
 */
function sameImage(launched: string, now: string): boolean {
  if (launched === now) return true;
  const before = launched.split('+');
  const after = now.split('+');
  if (before.length !== after.length) return false;
  return before.every((part, i) => {
    const other = after[i]!;
    const [ref, version] = splitVersion(part);
    const [otherRef, otherVersion] = splitVersion(other);
    if (version === undefined || otherVersion === undefined) return part === other;
    return ref === otherRef && (version === otherVersion || isSymbolicVersion(version) || isSymbolicVersion(otherVersion));
  });
}

function splitVersion(part: string): [string, string | undefined] {
  const at = part.lastIndexOf('@');
  return at < 0 ? [part, undefined] : [part.slice(0, at), part.slice(at + 1)];
}

/** JSON with object keys in a fixed order, so equal settings give equal digests whatever order the file wrote them in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
