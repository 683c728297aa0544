import type { Dns } from '../../lib/ports/dns.js';

/** A DNS zone in memory: the records it holds, and every call in order. */
export class RecordingDns implements Dns {
  readonly records = new Map<string, string>();
  readonly calls: Array<{ call: 'upsertHost' | 'deleteHost'; hostName: string; ip: string }> = [];

  async upsertHost(hostName: string, ip: string): Promise<void> {
    this.calls.push({ call: 'upsertHost', hostName, ip });
    this.records.set(hostName, ip);
  }

  async deleteHost(hostName: string, ip: string): Promise<void> {
    this.calls.push({ call: 'deleteHost', hostName, ip });
    this.records.delete(hostName);
  }
}
