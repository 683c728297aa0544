import type { Config } from '../../config/index.js';
import type { Cloud, HostInfo, HostSpec, ReleaseSpec } from '../../ports/cloud.js';
import type { Log } from '../../ports/log.js';
import { addNodeRequest, removeNodeRequest } from './host-request.js';

/**
 * Handler `log`, the safe default: logs the full event specification of each
 * host it would create or release, and changes nothing in any cloud. It has
 * no instances, so there is nothing to describe, list, terminate or delete.
 */
export class LogCloud implements Cloud {
  constructor(
    private readonly log: Log,
    private readonly config: Pick<Config, 'pools'>,
  ) {}

  async createHost(spec: HostSpec): Promise<HostInfo> {
    const request = addNodeRequest(this.config, spec);
    this.log.info(`handler log: would create node ${spec.hostName} (${spec.cloudName}) in pool ${spec.pool}; nothing was created`, { ...request });
    const info: HostInfo = { state: 'requested' };
    if (spec.offering?.instanceType !== undefined) info.instanceType = spec.offering.instanceType;
    return info;
  }

  async reportRelease(spec: ReleaseSpec): Promise<void> {
    this.log.info(`handler log: would release the host of node ${spec.hostName} in pool ${spec.pool}; nothing was terminated`, { ...removeNodeRequest(spec) });
  }

  async terminateHost(instanceId: string): Promise<void> {
    this.log.info(`handler log: would terminate instance ${instanceId}; nothing was terminated`, { instanceId });
  }

  async describeHosts(): Promise<Map<string, HostInfo>> {
    return new Map();
  }

  async listManagedHosts(): Promise<HostInfo[]> {
    return [];
  }

  async deleteVolume(volumeId: string): Promise<void> {
    this.log.info(`handler log: would delete volume ${volumeId}; nothing was deleted`, { volumeId });
  }
}
