import { CapacityUnavailableError, ConflictError, type NodescalerError } from '../../errors.js';
import type { Cloud, HostInfo, HostSpec } from '../../ports/cloud.js';
import type { Clock } from '../../ports/clock.js';

export interface SimulatedCloudOptions {
  /** Time from launch to `running`. */
  bootDelayMs: number;
  /** Most hosts pending or running at once; past it, `InsufficientInstanceCapacity`. Default: unlimited. */
  maxHosts?: number;
  /** Instance types this cloud offers; another type is `Unsupported`. Default: any. */
  instanceTypes?: readonly string[];
  /** Time from termination to the gear volume being detached (deletable). Default: 0. */
  volumeDetachMs?: number;
  /** Source of the fake ids; default: a counter (ids in launch order). */
  random?: () => number;
  /** The availability zone of a host launched into `subnetId`, if the simulation has zones. Default: none. */
  zoneOfSubnet?: (subnetId: string) => string | undefined;
}

export type SimulatedHost = HostInfo & { instanceId: string; hostName: string; cloudName: string; pool: string; idempotencyToken: string };

interface HostRecord {
  spec: HostSpec;
  instanceId: string;
  instanceType: string;
  subnetId?: string;
  privateIp: string;
  volumeId: string;
  launchedAt: number;
  terminatedAt?: number;
  /** What never changes of its description, built once: every live host is described every minute. */
  launchedAtIso: string;
  tags: Readonly<Record<string, string>>;
}

type Operation = 'createHost' | 'terminateHost' | 'describeHosts' | 'listManagedHosts' | 'deleteVolume';

/**
 * `Cloud` for the local runtime and tests: hosts boot after `bootDelayMs` on
 * the injected clock, capacity runs out at `maxHosts`, and every call is
 * idempotent the way EC2 is (`createHost` on its token, termination and
 * volume deletion of what is gone already). `failNext` injects an error into
 * the next call of an operation.
 */
export class SimulatedCloud implements Cloud {
  /** Every call, in order, for assertions. */
  readonly calls: Array<{ op: Operation; arg: unknown }> = [];
  private readonly records = new Map<string, HostRecord>();
  /** Hosts not terminated. */
  private readonly live = new Set<HostRecord>();
  private readonly byToken = new Map<string, string>();
  private readonly volumes = new Map<string, { instanceId: string; deleted: boolean }>();
  private readonly failures = new Map<Operation, NodescalerError[]>();
  private counter = 0;

  constructor(
    private readonly clock: Clock,
    private readonly options: SimulatedCloudOptions,
  ) {}

  /** The next call of `op` throws `error` (once per queued error). */
  failNext(op: Operation, error: NodescalerError): void {
    const queue = this.failures.get(op) ?? [];
    queue.push(error);
    this.failures.set(op, queue);
  }

  async createHost(spec: HostSpec): Promise<HostInfo> {
    this.enter('createHost', spec);
    const known = this.byToken.get(spec.idempotencyToken);
    if (known !== undefined) return this.info(this.records.get(known)!);
    const offering = spec.offering ?? {};
    const instanceType = offering.instanceType ?? this.options.instanceTypes?.[0] ?? 'sim.large';
    if (this.options.instanceTypes && !this.options.instanceTypes.includes(instanceType)) {
      throw new CapacityUnavailableError(`Unsupported: ${instanceType} is not offered`, 'Unsupported', offering);
    }
    // Pending or running: the hosts not terminated (counting them from `hosts()` made each launch cost every host ever launched).
    const live = this.live.size;
    if (this.options.maxHosts !== undefined && live >= this.options.maxHosts) {
      throw new CapacityUnavailableError(
        `InsufficientInstanceCapacity: no capacity for ${instanceType} (${live} of ${this.options.maxHosts} hosts in use)`,
        'InsufficientInstanceCapacity',
        offering,
      );
    }
    this.counter += 1;
    const record: HostRecord = {
      spec,
      instanceId: `i-${this.hex(17)}`,
      instanceType,
      privateIp: `10.${(this.counter >> 16) & 255}.${(this.counter >> 8) & 255}.${this.counter & 255}`,
      volumeId: `vol-${this.hex(17)}`,
      launchedAt: this.clock.now().getTime(),
      launchedAtIso: this.clock.now().toISOString(),
      tags: Object.freeze({
        Name: spec.cloudName,
        'nodescaler:pool': spec.pool,
        'nodescaler:district': spec.district,
        'nodescaler:profile': spec.profile,
        'nodescaler:decision': spec.decisionId,
        'nodescaler:node': spec.hostName,
      }),
      ...(offering.subnetId === undefined ? {} : { subnetId: offering.subnetId }),
    };
    this.records.set(record.instanceId, record);
    this.live.add(record);
    this.byToken.set(spec.idempotencyToken, record.instanceId);
    this.volumes.set(record.volumeId, { instanceId: record.instanceId, deleted: false });
    return this.info(record);
  }

  async terminateHost(instanceId: string): Promise<void> {
    this.enter('terminateHost', instanceId);
    const record = this.records.get(instanceId);
    if (record && record.terminatedAt === undefined) {
      record.terminatedAt = this.clock.now().getTime();
      this.live.delete(record);
    }
  }

  async describeHosts(instanceIds: readonly string[]): Promise<Map<string, HostInfo>> {
    this.enter('describeHosts', [...instanceIds]);
    const found = new Map<string, HostInfo>();
    for (const id of instanceIds) {
      const record = this.records.get(id);
      if (record) found.set(id, this.info(record));
    }
    return found;
  }

  async listManagedHosts(): Promise<HostInfo[]> {
    this.enter('listManagedHosts', undefined);
    return [...this.live].map((record) => this.info(record));
  }

  async deleteVolume(volumeId: string): Promise<void> {
    this.enter('deleteVolume', volumeId);
    const volume = this.volumes.get(volumeId);
    if (!volume || volume.deleted) return;
    const record = this.records.get(volume.instanceId)!;
    const detachedAt = record.terminatedAt === undefined ? undefined : record.terminatedAt + (this.options.volumeDetachMs ?? 0);
    if (detachedAt === undefined || this.clock.now().getTime() < detachedAt) {
      throw new ConflictError(`VolumeInUse: volume ${volumeId} is attached to ${volume.instanceId}`, undefined);
    }
    volume.deleted = true;
  }

  /** Every host ever launched, with its state now; `{ live: true }`: only those not terminated (cheap in long runs). */
  hosts(options: { live?: boolean } = {}): SimulatedHost[] {
    return [...(options.live ? this.live : this.records.values())].map((record) => ({
      ...this.info(record),
      instanceId: record.instanceId,
      hostName: record.spec.hostName,
      cloudName: record.spec.cloudName,
      pool: record.spec.pool,
      idempotencyToken: record.spec.idempotencyToken,
    }));
  }

  /** Host names and states of the hosts not terminated, without building full host descriptions (the replay asks every minute). */
  liveHostStates(): Array<{ hostName: string; pool: string; state: 'pending' | 'running'; instanceId: string }> {
    const now = this.clock.now().getTime();
    const out: Array<{ hostName: string; pool: string; state: 'pending' | 'running'; instanceId: string }> = [];
    for (const record of this.live) {
      out.push({ hostName: record.spec.hostName, pool: record.spec.pool, state: now >= record.launchedAt + this.options.bootDelayMs ? 'running' : 'pending', instanceId: record.instanceId });
    }
    return out;
  }

  /** Hosts that finished booting and are not terminated: the ones that join the platform. */
  runningHosts(): SimulatedHost[] {
    return this.hosts().filter((host) => host.state === 'running');
  }

  /** Volumes not deleted yet. */
  liveVolumes(): string[] {
    return [...this.volumes.entries()].filter(([, volume]) => !volume.deleted).map(([id]) => id);
  }

  private info(record: HostRecord): HostInfo {
    const now = this.clock.now().getTime();
    const state: HostInfo['state'] =
      record.terminatedAt !== undefined ? 'terminated' : now >= record.launchedAt + this.options.bootDelayMs ? 'running' : 'pending';
    const volume = this.volumes.get(record.volumeId);
    const info: HostInfo = {
      instanceId: record.instanceId,
      instanceType: record.instanceType,
      privateIp: record.privateIp,
      state,
      launchedAt: record.launchedAtIso,
      tags: record.tags,
    };
    if (record.subnetId !== undefined) {
      info.subnetId = record.subnetId;
      const zone = this.options.zoneOfSubnet?.(record.subnetId);
      if (zone !== undefined) info.zone = zone;
    }
    if (state !== 'terminated' && volume && !volume.deleted) info.volumeId = record.volumeId;
    return info;
  }

  private enter(op: Operation, arg: unknown): void {
    this.calls.push({ op, arg });
    const error = this.failures.get(op)?.shift();
    if (error) throw error;
  }

  /** `length` hex digits: random ones, then the launch counter, so ids never collide. */
  private hex(length: number): string {
    const counter = this.counter.toString(16).padStart(6, '0');
    const random = this.options.random;
    if (!random) return counter.padStart(length, '0');
    let text = '';
    while (text.length < length - counter.length) text += Math.floor(random() * 16).toString(16);
    return text + counter;
  }
}
