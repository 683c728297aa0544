import {
  ChangeResourceRecordSetsCommand,
  ListResourceRecordSetsCommand,
  type Change,
  type ResourceRecordSet,
  Route53Client,
} from '@aws-sdk/client-route-53';
import type { Settings } from '../../config/index.js';
import { NodescalerError, TransientError, ValidationError } from '../../errors.js';
import type { Dns } from '../../ports/dns.js';
import { awsClientConfig } from '../aws-clients.js';
import { awsErrorInfo } from '../aws-errors.js';

export interface Route53Options {
  hostedZoneId: string;
  /** TTL of the A records, in seconds. */
  ttl: number;
}

/**
 * `Dns` on Route 53: one A record per host name, pointing at the host's
 * private address. UPSERT, so a retry is harmless; a DELETE of a record that
 * is gone is success, and one whose values changed since (TTL edited, say)
 * is retried with the values the zone holds now.
 *
 * Errors: throttling (`Throttling`, `PriorRequestNotComplete`), 5xx, network
 * -> `TransientError`; a missing zone or a change Route 53 refuses ->
 * `ValidationError`.
 */
export class Route53Dns implements Dns {
  constructor(
    private readonly client: Route53Client,
    private readonly options: Route53Options,
  ) {}

  async upsertHost(hostName: string, ip: string): Promise<void> {
    await this.change({ Action: 'UPSERT', ResourceRecordSet: this.record(hostName, ip) }, `register ${hostName}`);
  }

  async deleteHost(hostName: string, ip: string): Promise<void> {
    try {
      await this.change({ Action: 'DELETE', ResourceRecordSet: this.record(hostName, ip) }, `delete ${hostName}`);
    } catch (error) {
      const messages = changeBatchMessages(error);
      if (messages.some((message) => /not found/i.test(message))) return;
      if (!messages.some((message) => /do not match/i.test(message))) throw translateRoute53Error(error, `ChangeResourceRecordSets DELETE ${hostName}`);
      const current = await this.current(hostName);
      if (!current) return;
      await this.change({ Action: 'DELETE', ResourceRecordSet: current }, `delete ${hostName}`);
    }
  }

  private record(hostName: string, ip: string): ResourceRecordSet {
    return { Name: hostName, Type: 'A', TTL: this.options.ttl, ResourceRecords: [{ Value: ip }] };
  }

  private async change(change: Change, comment: string): Promise<void> {
    try {
      await this.client.send(
        new ChangeResourceRecordSetsCommand({
          HostedZoneId: this.options.hostedZoneId,
          ChangeBatch: { Comment: `nodescaler: ${comment}`, Changes: [change] },
        }),
      );
    } catch (error) {
      if (change.Action === 'DELETE' && changeBatchMessages(error).length > 0) throw error;
      throw translateRoute53Error(error, `ChangeResourceRecordSets ${change.Action} ${change.ResourceRecordSet?.Name}`);
    }
  }

  /** The A record of `hostName` as the zone holds it now, if any. */
  private async current(hostName: string): Promise<ResourceRecordSet | undefined> {
    try {
      const page = await this.client.send(
        new ListResourceRecordSetsCommand({ HostedZoneId: this.options.hostedZoneId, StartRecordName: hostName, StartRecordType: 'A', MaxItems: 1 }),
      );
      const record = page.ResourceRecordSets?.[0];
      const same = record && record.Type === 'A' && trimDot(record.Name ?? '').toLowerCase() === trimDot(hostName).toLowerCase();
      return same ? record : undefined;
    } catch (error) {
      throw translateRoute53Error(error, `ListResourceRecordSets ${hostName}`);
    }
  }
}

function trimDot(name: string): string {
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

/** The messages of an `InvalidChangeBatch` error; empty for any other error. */
function changeBatchMessages(error: unknown): string[] {
  const e = error as { name?: unknown; message?: unknown; messages?: unknown } | null;
  if (e?.name !== 'InvalidChangeBatch') return [];
  const messages = Array.isArray(e.messages) ? e.messages.filter((m): m is string => typeof m === 'string') : [];
  return typeof e.message === 'string' ? [...messages, e.message] : messages;
}

export function translateRoute53Error(error: unknown, operation: string): NodescalerError {
  if (error instanceof NodescalerError) return error;
  const info = awsErrorInfo(error);
  if (info.transient) return new TransientError(`${operation} failed: ${info.detail}`, { cause: error });
  if (info.name === 'NoSuchHostedZone') {
    return new ValidationError({ path: 'dns.hostedZoneId', message: `Route 53 has no such hosted zone (${info.detail})` }, operation);
  }
  if (info.clientFault) return new ValidationError({ path: '', message: `Route 53 rejected the request (${info.detail})` }, operation);
  return new TransientError(`${operation} failed: ${info.detail}`, { cause: error });
}

/** Route 53 records in the stage's `dns.hostedZoneId`, if it has one (the client is built here: see ec2CloudFor in lib/adapters/ec2/cloud.ts). */
export function route53DnsFor(settings: Settings): Route53Dns | undefined {
  const { config, deployment } = settings;
  return config.dns ? new Route53Dns(new Route53Client(awsClientConfig(deployment.region, { retry: 'caller' })), config.dns) : undefined;
}
