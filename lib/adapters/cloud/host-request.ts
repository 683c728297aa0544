/**
 * The event specification the report-only handlers (log, spool, notify)
 * hand on: everything an operator or an external system needs to create,
 * or release, the host nodescaler asked for. One shape for all three, so
 * what `log` prints is what `spool` writes.
 */
import type { Config, NodeTemplate } from '../../config/index.js';
import { findPoolConfig } from '../../config/index.js';
import { nodeUserData } from '../../domain/provisioning.js';
import type { Cloud, HostInfo, HostSpec, ReleaseSpec } from '../../ports/cloud.js';

export interface AddNodeRequest {
  kind: 'add-node';
  v: 1;
  pool: string;
  district: string;
  profile: string;
  hostName: string;
  cloudName: string;
  decisionId: string;
  /** Stable per host request: a consumer can drop a request it has seen. */
  requestId: string;
  reason?: string;
  /** The offering nodescaler would launch first. */
  instanceType?: string;
  subnetId?: string;
  template?: Omit<NodeTemplate, 'userData'>;
  /** The user data an EC2 launch would carry (the node's identity), as text. */
  userData: string;
}

export interface RemoveNodeRequest {
  kind: 'remove-node';
  v: 1;
  pool: string;
  district: string;
  profile: string;
  hostName: string;
  cloudName?: string;
  instanceId?: string;
  reason: string;
}

export function addNodeRequest(config: Pick<Config, 'pools'>, spec: HostSpec): AddNodeRequest {
  const template = findPoolConfig(config, spec.pool)?.template;
  const request: AddNodeRequest = {
    kind: 'add-node',
    v: 1,
    pool: spec.pool,
    district: spec.district,
    profile: spec.profile,
    hostName: spec.hostName,
    cloudName: spec.cloudName,
    decisionId: spec.decisionId,
    requestId: spec.idempotencyToken,
    userData: nodeUserData(spec, template?.userData),
  };
  if (spec.reason !== undefined) request.reason = spec.reason;
  if (spec.offering?.instanceType !== undefined) request.instanceType = spec.offering.instanceType;
  if (spec.offering?.subnetId !== undefined) request.subnetId = spec.offering.subnetId;
  if (template) {
    const { userData: _userData, ...rest } = template;
    request.template = rest;
  }
  return request;
}

export function removeNodeRequest(spec: ReleaseSpec): RemoveNodeRequest {
  return { kind: 'remove-node', v: 1, ...spec };
}

/** A short line for an e-mail subject (SNS allows 100 characters). */
export function requestSubject(request: AddNodeRequest | RemoveNodeRequest): string {
  const text = request.kind === 'add-node' ? `nodescaler: add node ${request.hostName} to ${request.pool}` : `nodescaler: release node ${request.hostName} of ${request.pool}`;
  return text.length > 100 ? `${text.slice(0, 97)}...` : text;
}

/** The request as a text an operator reads in an e-mail. */
export function requestText(request: AddNodeRequest | RemoveNodeRequest): string {
  if (request.kind === 'remove-node') {
    return [
      `nodescaler has emptied node ${request.hostName} of pool ${request.pool} (district ${request.district}, profile ${request.profile}).`,
      `It holds no gears and has been removed from its district: its host can be released.`,
      request.instanceId ? `Instance: ${request.instanceId}` : undefined,
      request.cloudName ? `Cloud name: ${request.cloudName}` : undefined,
      `Why: ${request.reason}`,
    ]
      .filter((line) => line !== undefined)
      .join('\n');
  }
  const t = request.template;
  const lines = [
    `nodescaler asks for a new node in pool ${request.pool} (district ${request.district}, profile ${request.profile}).`,
    `Host name: ${request.hostName}    cloud name (Name tag): ${request.cloudName}`,
    request.reason ? `Why: ${request.reason}` : undefined,
    request.instanceType || request.subnetId ? `Offering: ${request.instanceType ?? 'any type'} in ${request.subnetId ?? 'any subnet'}` : undefined,
    t?.launchTemplate ? `Launch template: ${t.launchTemplate.id ?? t.launchTemplate.name} (version ${t.launchTemplate.version})` : undefined,
    t?.imageId ? `Image: ${t.imageId}` : undefined,
    t && t.instanceTypes.length > 0 ? `Instance types, in order of preference: ${t.instanceTypes.map((type) => type.name).join(', ')}` : undefined,
    t && t.securityGroups.length > 0 ? `Security groups: ${t.securityGroups.join(', ')}` : undefined,
    t?.instanceProfile ? `Instance profile: ${t.instanceProfile}` : undefined,
    t?.volume ? `Gear volume: ${t.volume.sizeGiB} GiB ${t.volume.type} at ${t.volume.device}` : undefined,
    `Decision: ${request.decisionId} (request ${request.requestId})`,
    'The node joins its district when it first reports its stats to nodescaler.',
  ];
  return lines.filter((line) => line !== undefined).join('\n');
}

/**
 * A handler that only passes requests on (spool, notify): it owns no
 * instance, so there is nothing to terminate, describe, list or delete.
 */
export abstract class RequestOnlyCloud implements Cloud {
  abstract createHost(spec: HostSpec): Promise<HostInfo>;
  abstract reportRelease(spec: ReleaseSpec): Promise<void>;

  async terminateHost(): Promise<void> {}

  async describeHosts(): Promise<Map<string, HostInfo>> {
    return new Map();
  }

  async listManagedHosts(): Promise<HostInfo[]> {
    return [];
  }

  async deleteVolume(): Promise<void> {}
}
