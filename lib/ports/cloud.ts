import type { PoolId } from '../domain/model.js';

/** Where a host may be launched: one instance type in one subnet. Unset = the template's own choice. */
export interface Offering {
  instanceType?: string;
  subnetId?: string;
}

export interface HostSpec {
  pool: PoolId;
  district: string;
  profile: string;
  /** `<base>_<N>`: the cloud-side name (EC2 `Name` tag). */
  cloudName: string;
  /** `<base>-<N>.<domain>`: the node's host name and id. */
  hostName: string;
  decisionId: string;
  /** Stable per (decision, node, attempt): a redelivered request never creates a second host. */
  idempotencyToken: string;
  /** The offering to launch; a handler that creates nothing only reports it. */
  offering?: Offering;
  /** Why the host is needed (the decision's reason), for handlers that tell a person. */
  reason?: string;
  /** The launch template version to launch, read for the template's `$Latest` or `$Default` (lib/app/launch-templates.ts); unset: as the template says. */
  launchTemplateVersion?: string;
}

export interface HostInfo {
  /** Empty for handlers that create nothing (log, spool, notify). */
  instanceId?: string;
  instanceType?: string;
  subnetId?: string;
  /** The availability zone it runs in: a spot node is priced at its zone's spot price (lib/domain/node-price.ts). */
  zone?: string;
  privateIp?: string;
  volumeId?: string;
  state: 'pending' | 'running' | 'stopping' | 'stopped' | 'shutting-down' | 'terminated' | 'requested';
  launchedAt?: string;
  tags?: Record<string, string>;
}

/** A host that may go: what a handler that creates nothing tells its reader. */
export interface ReleaseSpec {
  pool: PoolId;
  district: string;
  profile: string;
  hostName: string;
  cloudName?: string;
  instanceId?: string;
  reason: string;
}

/**
 * Where hosts come from: EC2, or a handler that only reports the need (log,
 * spool, notify). Like Karpenter's CloudProvider: a fake implements the same
 * contract for tests and the simulator.
 * Errors: `CapacityUnavailableError` (quota, no capacity: try another
 * offering), `TransientError` (throttling), `ValidationError` (bad template).
 */
export interface Cloud {
  /** Creates one host; idempotent on `spec.idempotencyToken`. */
  createHost(spec: HostSpec): Promise<HostInfo>;
  /** Terminates a host; an already terminated or unknown instance is success. */
  terminateHost(instanceId: string): Promise<void>;
  /** Current view of hosts; unknown ids are absent from the result. */
  describeHosts(instanceIds: readonly string[]): Promise<Map<string, HostInfo>>;
  /** Hosts carrying our tags, for the orphan sweeper. */
  listManagedHosts(): Promise<HostInfo[]>;
  /** Deletes a detached volume; `ConflictError` while it is still attached, success if already gone. */
  deleteVolume(volumeId: string): Promise<void>;
  /**
   * Handlers that create nothing (log, spool, notify) report that a host they
   * asked for may be released; idempotent. Clouds with instances leave it out.
   */
  reportRelease?(spec: ReleaseSpec): Promise<void>;
}

/**
 * The part of `Cloud` that releasing hosts uses (the decommissioner). A
 * function that never launches a host takes this, so its bundle does without
 * the launch code (for EC2: the RunInstances request, the user data and the
 * stats agent it installs, about 35 KiB).
 */
export type ReleasingCloud = Omit<Cloud, 'createHost'>;

/** A launch template, by the id or the name a pool's template gives. */
export interface LaunchTemplateRef {
  id?: string;
  name?: string;
}

/**
 * What `$Latest` and `$Default` of a launch template are now, as version
 * numbers: the evaluator compares them with what each node was launched from
 * (lib/domain/drift.ts), and the provisioner launches the number it read.
 * Errors: `TransientError` (throttling, 5xx, network), `ValidationError`
 * (access denied, no such template).
 */
export interface LaunchTemplateVersions {
  versionsOf(template: LaunchTemplateRef): Promise<{ latest: string; default: string }>;
}
